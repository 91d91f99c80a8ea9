"""The runner's own refusals, in process: no nginx for a cluster → the install hint and
exit 1, nothing started; a bad ``--scale``; the rendered NATS cluster config."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

import deploy.nginx
from deploy import run
from deploy.nats import write_cluster_config


@pytest.fixture
def restore_signals():
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def test_a_cluster_without_nginx_says_how_to_install_it(monkeypatch, tmp_path: Path, capsys, restore_signals):
    def missing() -> str:
        raise FileNotFoundError(deploy.nginx.INSTALL_HINT)

    monkeypatch.setattr(deploy.nginx, "nginx_binary", missing)
    monkeypatch.setenv("CELLWAR_DATA_DIR", str(tmp_path))
    assert run.main(["--cluster"]) == 1
    err = capsys.readouterr().err
    assert "make run-cluster failed" in err and "sudo apt-get install -y nginx" in err
    assert not (tmp_path / "cluster.json").exists()
    assert not (tmp_path / "cluster").exists()


def test_a_bad_scale_is_refused_before_anything_starts(monkeypatch, tmp_path: Path, capsys, restore_signals):
    monkeypatch.setattr(deploy.nginx, "nginx_binary", lambda: "/usr/sbin/nginx")
    monkeypatch.setenv("CELLWAR_DATA_DIR", str(tmp_path))
    assert run.main(["--cluster", "--scale", "nats=5"]) == 1
    assert "--scale 'nats=5'" in capsys.readouterr().err
    assert not (tmp_path / "cluster.json").exists()


def test_a_cluster_node_config_routes_to_every_node_and_fsyncs(tmp_path: Path):
    conf = write_cluster_config(
        tmp_path / "n2.conf", name="nats-2", port=4223, route_port=4233, routes=[4232, 4233, 4234],
        store_dir=tmp_path / "js", monitor_port=4243,
    ).read_text()
    assert "server_name: nats-2" in conf
    assert "listen: 127.0.0.1:4223" in conf and "http: 127.0.0.1:4243" in conf
    assert "sync_interval: always" in conf
    assert "listen: 127.0.0.1:4233" in conf
    for port in (4232, 4233, 4234):
        assert f"nats-route://127.0.0.1:{port}" in conf
    assert (tmp_path / "js").is_dir()
