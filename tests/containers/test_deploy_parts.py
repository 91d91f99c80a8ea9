"""Pure parts of the container tooling: the Docker build context's allow-list, the
health check's service detection, the nginx start script's gateway list, the Debian
mirror found in apt sources. No Docker needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from deploy.healthcheck import PROBES, probe_http, running_module
from deploy.images import APP_PATHS, NATS_PATHS, NGINX_PATHS, ROOT, apt_mirror, inputs_hash
from deploy.nginx_start import gateways_from_env, wait_until_resolved


def test_dockerignore_lets_in_exactly_what_the_images_copy():
    lines = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    allowed = {line[1:] for line in lines if line.startswith("!")}
    wanted = set(APP_PATHS) | {".build/wheels"} | {p for p in NATS_PATHS if p.startswith(".build")}
    assert allowed == wanted
    # Whatever the nginx and nats images copy from the repository lies inside the allow-list.
    for path in (*NGINX_PATHS, *NATS_PATHS):
        assert any(path == a or path.startswith(a + "/") for a in allowed), path


def _fake_proc(tmp_path: Path, processes: dict[int, list[str]]) -> Path:
    for pid, argv in processes.items():
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    (tmp_path / "self").mkdir()
    return tmp_path


def test_healthcheck_finds_the_service_the_container_runs(tmp_path: Path):
    proc = _fake_proc(tmp_path, {1: ["python", "-m", "services.session"], 40: ["python", "-m", "deploy.healthcheck"]})
    assert running_module(proc) == "services.session"
    assert set(PROBES) >= {"services.engine", "services.session", "gateway"}


def test_healthcheck_knows_no_unlisted_service(tmp_path: Path):
    proc = _fake_proc(tmp_path, {1: ["/nats-server", "-c", "/etc/nats/nats.conf"]})
    assert running_module(proc) is None


def test_http_probe_reports_an_unreachable_address():
    reason = probe_http("http://127.0.0.1:9/healthz", timeout=1.0)
    assert reason is not None and reason.startswith("GET http://127.0.0.1:9/healthz")


def test_nginx_gateways_come_from_a_comma_list():
    assert gateways_from_env(" gateway:8000, gateway-2:8000 ") == ["gateway:8000", "gateway-2:8000"]
    with pytest.raises(ValueError, match="names no gateway"):
        gateways_from_env(" , ")
    with pytest.raises(ValueError, match="not host:port"):
        gateways_from_env("gateway")


def test_nginx_start_waits_for_gateway_names_to_resolve():
    assert wait_until_resolved(["localhost:8000", "127.0.0.1:8001"], timeout_s=5) == []
    assert wait_until_resolved(["localhost:8000", "no-such-gateway.invalid:8000"], timeout_s=0) == [
        "no-such-gateway.invalid"
    ]


def test_debian_mirror_is_read_from_apt_sources(tmp_path: Path):
    sources = tmp_path / "sources.list.d"
    sources.mkdir()
    (sources / "other.sources").write_text(
        "Types: deb\nURIs: http://mirror.invalid/other\nSuites: nodistro\nComponents: main\n"
    )
    (sources / "debian.sources").write_text(
        "Types: deb\n# a comment\nURIs: http://mirror.invalid/debian\n"
        "Suites: bookworm bookworm-updates\nComponents: main\n\n"
        "Types: deb\nURIs: http://mirror.invalid/debian-security\nSuites: bookworm-security\n"
        "Components: main\n"
    )
    assert apt_mirror("bookworm", [tmp_path / "none.list", sources]) == "http://mirror.invalid/debian"
    one_line = tmp_path / "sources.list"
    one_line.write_text("# old style\ndeb [arch=amd64] http://mirror.invalid/one bookworm main contrib\n")
    assert apt_mirror("bookworm", [one_line]) == "http://mirror.invalid/one"
    assert apt_mirror("trixie", [one_line, sources]) is None


def test_inputs_hash_changes_with_a_file(tmp_path: Path, monkeypatch):
    import deploy.images as images

    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "a.py").write_text("x = 1\n")
    (tmp_path / "app" / "__pycache__").mkdir()
    (tmp_path / "app" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"junk")
    monkeypatch.setattr(images, "ROOT", tmp_path)
    first = inputs_hash(["v1"], ["app"])
    (tmp_path / "app" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"other junk")
    assert inputs_hash(["v1"], ["app"]) == first  # caches do not count
    (tmp_path / "app" / "a.py").write_text("x = 2\n")
    assert inputs_hash(["v1"], ["app"]) != first
    assert inputs_hash(["v2"], ["app"]) != inputs_hash(["v1"], ["app"])


def test_up_on_a_busy_port_refuses_before_anything_starts(capsys):
    """``deploy.containers up`` on a port in use says so at once (it used to start the
    stack, fail after a minute with Docker's 500 and leave the NATS volume behind)."""
    import socket

    from deploy import containers

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert containers.up(port, "cellwar-busy-port-test", build=False) == 1
    err = capsys.readouterr().err
    assert f"port {port} is in use" in err and "--port" in err


def test_the_images_probe_health_without_flapping_on_a_busy_host():
    """A probe every 15 s with 15 s to answer (was 5 s / 5 s: a busy host flapped them)."""
    for name in ("Dockerfile", "Dockerfile.nginx"):
        text = (ROOT / "deploy" / name).read_text()
        assert "HEALTHCHECK --interval=15s --timeout=15s" in text, name
