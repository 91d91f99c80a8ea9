"""The port plan of the runners (deploy/ports.py, README "Ports")."""

from __future__ import annotations

import socket

import pytest

from deploy.ports import (
    CLUSTER_SIZE,
    Bases,
    out_of_range,
    overlapping,
    parse_scale,
    port_free,
    split_addr,
    taken,
)
from deploy.topology import grpc_target


def ports_of(entries):
    return [(host, port) for _, host, port in entries]


def test_default_cluster_ports_are_the_documented_table():
    b = Bases()
    got = {what: port for what, _, port in b.cluster_ports(matchmaker=True)}
    assert got == {
        "nginx": 8000, "gateway-1": 8001, "gateway-2": 8002,
        "nats-1": 4222, "nats-2": 4223, "nats-3": 4224,
        "nats-1 routes": 4232, "nats-2 routes": 4233, "nats-3 routes": 4234,
        "nats-1 monitoring": 4242, "nats-2 monitoring": 4243, "nats-3 monitoring": 4244,
        "engine-1": 50051, "engine-2": 50061,
        "session-1": 50052, "session-2": 50062,
        "matchmaker-1": 50053, "matchmaker-2": 50063,
    }


def test_no_port_is_used_twice_even_at_the_largest_scale():
    sizes = parse_scale(["engine=9", "session=9", "gateway=9", "matchmaker=9"])
    ports = ports_of(Bases().cluster_ports(matchmaker=True, sizes=sizes))
    assert len(ports) == len(set(ports)) == 1 + 9 + 3 * 3 + 3 * 9  # nginx, gateways, NATS (client, routes, monitoring), gRPC


def test_a_cluster_and_the_readmes_second_make_run_never_collide():
    cluster = set(ports_of(Bases().cluster_ports(matchmaker=True)))
    second = Bases.from_env(
        {"CELLWAR_NATS_PORT": "4322", "CELLWAR_HTTP_PORT": "8100",
         "CELLWAR_ENGINE_ADDR": "127.0.0.1:50151", "CELLWAR_SESSION_ADDR": "127.0.0.1:50152",
         "CELLWAR_MATCHMAKER_ADDR": "127.0.0.1:50153"}
    )
    single = set(ports_of(second.single_ports(nats=True, matchmaker=True)))
    assert not cluster & single


def test_bases_come_from_the_make_run_variables():
    b = Bases.from_env(
        {"CELLWAR_HTTP_PORT": "28000", "CELLWAR_NATS_PORT": "28222",
         "CELLWAR_ENGINE_ADDR": "127.0.0.1:28051", "CELLWAR_SESSION_ADDR": "127.0.0.1:28052"}
    )
    assert (b.http, b.nats, b.engine, b.session, b.matchmaker) == (
        28000, 28222, ("127.0.0.1", 28051), ("127.0.0.1", 28052), ("127.0.0.1", 50053)
    )
    assert b.grpc_addr("session", 2) == "127.0.0.1:28062"
    assert (b.nats_port(3), b.nats_route_port(3), b.nats_monitor_port(3)) == (28224, 28234, 28244)
    assert b.gateway_port(2, cluster=True) == 28002 and b.gateway_port(1, cluster=False) == 28000


def test_a_list_in_an_address_variable_takes_its_first_address_as_base():
    b = Bases.from_env({"CELLWAR_ENGINE_ADDR": "127.0.0.1:7001,127.0.0.1:7011"})
    assert b.engine == ("127.0.0.1", 7001)


@pytest.mark.parametrize("bad", ["nats=2", "engine=0", "engine=10", "ginger=2", "engine"])
def test_bad_scale_is_refused(bad):
    with pytest.raises(ValueError):
        parse_scale([bad])


def test_scale_changes_only_what_it_names():
    assert parse_scale(["session=1"]) == {**CLUSTER_SIZE, "session": 1}


@pytest.mark.parametrize("bad", ["nohost", ":80", "host:0", "host:70000", "host:http"])
def test_bad_addresses_are_refused(bad):
    with pytest.raises(ValueError):
        split_addr(bad)


def test_a_listening_port_is_taken_and_a_closed_one_free():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert not port_free("127.0.0.1", port)
        assert taken([("x", "127.0.0.1", port)]) == [("x", "127.0.0.1", port)]
    assert port_free("127.0.0.1", port)


def test_grpc_targets_list_every_instance_preferring_their_own():
    addrs = ["127.0.0.1:50052", "127.0.0.1:50062"]
    assert grpc_target(addrs) == "ipv4:127.0.0.1:50052,127.0.0.1:50062"
    assert grpc_target(addrs, rotate=1) == "ipv4:127.0.0.1:50062,127.0.0.1:50052"
    assert grpc_target(["localhost:1", "localhost:2"]) == "localhost:1"  # ipv4: needs literals
    assert grpc_target(["127.0.0.1:1"]) == "127.0.0.1:1"


def test_bases_too_close_are_named_before_anything_starts():
    """NATS base 9720 puts nats-1 monitoring (base + 20) on engine base 9740: the runner
    refuses with both names and the port instead of a bind error after three restarts."""
    close = Bases.from_env(
        {"CELLWAR_HTTP_PORT": "9700", "CELLWAR_NATS_PORT": "9720",
         "CELLWAR_ENGINE_ADDR": "127.0.0.1:9740", "CELLWAR_SESSION_ADDR": "127.0.0.1:9760",
         "CELLWAR_MATCHMAKER_ADDR": "127.0.0.1:9780"}
    )
    assert overlapping(close.cluster_ports(matchmaker=True)) == [("nats-1 monitoring", "engine-1", 9740)]
    assert overlapping(Bases().cluster_ports(matchmaker=True)) == []
    assert overlapping(close.single_ports(nats=True, matchmaker=True)) == []


def test_the_runner_refuses_bases_too_close(tmp_path, monkeypatch, capsys):
    from deploy import run

    for key, value in {"CELLWAR_HTTP_PORT": "9700", "CELLWAR_NATS_PORT": "9720",
                       "CELLWAR_ENGINE_ADDR": "127.0.0.1:9740", "CELLWAR_SESSION_ADDR": "127.0.0.1:9760",
                       "CELLWAR_MATCHMAKER_ADDR": "127.0.0.1:9780", "CELLWAR_DATA_DIR": str(tmp_path)}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(run.nginx, "nginx_binary", lambda: "nginx")  # the check comes first
    assert run.main(["--cluster"]) == 1
    err = capsys.readouterr().err
    assert "nats-1 monitoring and engine-1 both on port 9740" in err


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("CELLWAR_HTTP_PORT", "99999", "a port is in 1..65535"),
        ("CELLWAR_NATS_PORT", "-1", "a port is in 1..65535"),
        ("CELLWAR_NATS_PORT", "abc", "not a port number"),
        ("CELLWAR_ENGINE_ADDR", "nohostport", "is not host:port"),
        ("CELLWAR_SESSION_ADDR", "127.0.0.1:x", "is not a number"),
        ("CELLWAR_MATCHMAKER_ADDR", "127.0.0.1:70000", "is not in 1..65535"),
    ],
)
def test_a_bad_base_is_named_by_its_variable(variable, value, words):
    with pytest.raises(ValueError) as err:
        Bases.from_env({variable: value})
    assert str(err.value).startswith(f"{variable}=") and words in str(err.value)


def test_a_base_too_high_for_its_derived_ports_is_named():
    high = Bases.from_env({"CELLWAR_NATS_PORT": "65530"})
    assert out_of_range(high.single_ports(nats=True, matchmaker=True)) == []
    beyond = out_of_range(high.cluster_ports(matchmaker=True))
    assert ("nats-1 monitoring", "127.0.0.1", 65550) in beyond and all(p > 65535 for _, _, p in beyond)
