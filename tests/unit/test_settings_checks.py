"""Settings refuse values the services could not use, naming the variable (no silent
default, no retry loop on a value that can never work)."""

from __future__ import annotations

import pytest

from services.common.settings import SettingsError, load_settings, nats_server_url


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in (
        "NATS_URL", "STREAM_REPLICAS", "LOG_FORMAT", "LOG_LEVEL", "TRUSTED_PROXIES", "HTTP_PORT",
        "ENGINE_ADDR", "SESSION_ADDR", "MATCHMAKER_ADDR", "LEASE_TTL_S",
    ):
        monkeypatch.delenv(f"CELLWAR_{name}", raising=False)
    monkeypatch.chdir("/")  # no .env of a developer's checkout


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("http://127.0.0.1:4222", "the scheme must be one of nats, tls"),
        ("ws://127.0.0.1:4222", "the scheme must be one of nats, tls"),  # needs aiohttp
        ("nats://127.0.0.1:99999", "the port must be a number in 1..65535"),
        ("nats://127.0.0.1:x", "the port must be a number in 1..65535"),
        ("nats://:4222", "no host"),
        ("nats://a:4222, ftp://b:1", "'ftp://b:1': the scheme must be one of"),
        (" , ", "no NATS server given"),
    ],
)
def test_a_nats_url_nats_py_cannot_use_is_refused_by_name(monkeypatch, value, said):
    monkeypatch.setenv("CELLWAR_NATS_URL", value)
    with pytest.raises(SettingsError) as err:
        load_settings()
    assert str(err.value).startswith(f"CELLWAR_NATS_URL={value!r}: ")
    assert said in str(err.value)
    assert "Value error" not in str(err.value)


@pytest.mark.parametrize(
    "value", ["nats://127.0.0.1:4222", "127.0.0.1:4222", "nats-0.nats", "tls://a:4443, nats://b:4222"]
)
def test_nats_urls_nats_py_reads_are_taken(monkeypatch, value):
    monkeypatch.setenv("CELLWAR_NATS_URL", value)
    assert load_settings().nats_url == value
    for url in value.split(","):
        assert nats_server_url(url.strip()) == url.strip()


def test_more_stream_replicas_than_jetstream_holds_are_refused(monkeypatch):
    monkeypatch.setenv("CELLWAR_STREAM_REPLICAS", "7")
    with pytest.raises(SettingsError, match=r"CELLWAR_STREAM_REPLICAS='7': .*less than or equal to 5"):
        load_settings()
    monkeypatch.setenv("CELLWAR_STREAM_REPLICAS", "5")
    assert load_settings().stream_replicas == 5


def test_log_format_and_level_are_checked_and_read_in_any_case(monkeypatch):
    monkeypatch.setenv("CELLWAR_LOG_FORMAT", "xml")
    with pytest.raises(SettingsError, match=r"CELLWAR_LOG_FORMAT='xml': Input should be 'json' or 'console'"):
        load_settings()
    monkeypatch.setenv("CELLWAR_LOG_FORMAT", "Console")
    monkeypatch.setenv("CELLWAR_LOG_LEVEL", "WARNING")
    settings = load_settings()
    assert (settings.log_format, settings.log_level) == ("console", "warning")
    monkeypatch.setenv("CELLWAR_LOG_LEVEL", "verbose")
    with pytest.raises(SettingsError, match=r"CELLWAR_LOG_LEVEL='verbose'"):
        load_settings()


def test_trusted_proxies_must_be_addresses_networks_or_star(monkeypatch):
    monkeypatch.setenv("CELLWAR_TRUSTED_PROXIES", "10.0.0.0/8, proxy.local")
    with pytest.raises(SettingsError) as err:
        load_settings()
    assert "'proxy.local' is not an IP address or network (CIDR), nor '*'" in str(err.value)
    monkeypatch.setenv("CELLWAR_TRUSTED_PROXIES", "10.0.0.0/8, 127.0.0.1, ::1, fd00::/8")
    assert load_settings().trusted_proxies == "10.0.0.0/8, 127.0.0.1, ::1, fd00::/8"
    monkeypatch.setenv("CELLWAR_TRUSTED_PROXIES", "*")
    assert load_settings().trusted_proxies == "*"


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("SESSION_ADDR", "nohost", "it is not host:port with a port in 0..65535"),
        ("SESSION_ADDR", "127.0.0.1:x", "it is not host:port"),
        ("ENGINE_ADDR", "127.0.0.1:99999", "it is not host:port with a port in 0..65535"),
        ("ENGINE_ADDR", "a:1, b", "'b' is not host:port"),
        ("ENGINE_ADDR", ",", "no address given (host:port)"),
        ("HTTP_PORT", "99999", "less than or equal to 65535"),  # uvicorn bound 99999 % 65536
        ("LEASE_TTL_S", "inf", "Input should be a finite number"),  # nats-py overflowed on it
    ],
)
def test_addresses_ports_and_infinite_durations_are_refused(monkeypatch, name, value, said):
    monkeypatch.setenv(f"CELLWAR_{name}", value)
    with pytest.raises(SettingsError) as err:
        load_settings()
    assert str(err.value) == f"CELLWAR_{name}={value!r}: " + str(err.value).split(": ", 1)[1]
    assert said in str(err.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SESSION_ADDR", "127.0.0.1:0"),  # a server on any free port
        ("ENGINE_ADDR", "10.0.0.1:50051,10.0.0.2:50051"),
        ("SESSION_ADDR", "ipv4:127.0.0.1:9852,127.0.0.1:9862"),  # make run-cluster's gateways
        ("ENGINE_ADDR", "dns:///engine.cellwar:50051"),
        ("MATCHMAKER_ADDR", "matchmaker:50053"),
    ],
)
def test_grpc_addresses_the_deployments_use_are_taken(monkeypatch, name, value):
    monkeypatch.setenv(f"CELLWAR_{name}", value)
    assert getattr(load_settings(), name.lower()) == value


@pytest.mark.parametrize("module", ["services.engine", "services.session", "services.matchmaker", "gateway"])
def test_a_service_started_with_a_bad_setting_says_one_line_and_exits_2(module):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CELLWAR_")}
    env.update(PYTHONPATH=str(root), CELLWAR_NATS_URL="http://127.0.0.1:4222")
    done = subprocess.run(
        [sys.executable, "-m", module], cwd="/", env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"python -m {module}: CELLWAR_NATS_URL='http://127.0.0.1:4222': "
        "the scheme must be one of nats, tls\n"
    )
