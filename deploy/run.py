"""The local runner behind ``make run``: NATS, engine, session and gateway on one machine.

Starts, in order: ``nats-server`` (JetStream on, data under ``<data_dir>/nats``), the
engine gRPC service, the session gRPC service and the FastAPI gateway, each as a child
process; waits until each answers; prints the URL; on Ctrl-C (SIGINT) or SIGTERM stops
them in reverse order. Data survives a restart: a second run finds the old games.

Configuration comes from ``CELLWAR_*`` environment variables (services/common/settings.py);
logs are printed for people (``CELLWAR_LOG_FORMAT=console``) unless set otherwise.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from deploy.nats import nats_server_binary, write_config
from services.common.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def _port_of(addr: str) -> int:
    return int(addr.rsplit(":", 1)[1])


def _wait_port(host: str, port: int, timeout: float, proc: subprocess.Popen, name: str) -> None:
    """Wait until ``host:port`` accepts TCP connections (seconds); fail if ``proc`` dies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with code {proc.returncode} while starting")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{name} did not open {host}:{port} within {timeout:.0f} s")


def _free(host: str, port: int) -> bool:
    """Nothing listens on ``host:port`` (a socket in TIME_WAIT after a stop does not count:
    SO_REUSEADDR, as the servers themselves bind)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _lock_data_dir(data_dir: Path):
    """Hold an exclusive lock on ``<data_dir>/run.lock`` for the life of this process.

    Two runners on one data folder would run two NATS servers on the same JetStream
    store and corrupt it.

    Raises:
        RuntimeError: another runner holds the lock.
    """
    import fcntl

    data_dir.mkdir(parents=True, exist_ok=True)
    handle = open(data_dir / "run.lock", "w")  # noqa: SIM115 - held until exit
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        handle.close()
        raise RuntimeError(
            f"another `make run` uses {data_dir} (its JetStream store); stop it, "
            "or give this one its own CELLWAR_DATA_DIR and ports"
        ) from exc
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def main(argv: list[str] | None = None) -> int:
    """Run the platform until interrupted. Returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m deploy.run", description=__doc__.splitlines()[0])
    parser.add_argument("--nats-port", type=int, default=int(os.environ.get("CELLWAR_NATS_PORT", 4222)))
    parser.add_argument(
        "--external-nats",
        action="store_true",
        help="use the NATS server at CELLWAR_NATS_URL and start none (also when CELLWAR_NATS_URL is set)",
    )
    args = parser.parse_args(argv)

    os.environ.setdefault("CELLWAR_LOG_FORMAT", "console")
    settings = Settings()
    data_dir = (ROOT / settings.data_dir) if not Path(settings.data_dir).is_absolute() else Path(settings.data_dir)
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    procs: list[tuple[str, subprocess.Popen]] = []

    def start(name: str, cmd: list[str]) -> subprocess.Popen:
        # Own process group: Ctrl-C reaches only this runner, which then stops the
        # children in reverse order (gateway first, NATS last).
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
        procs.append((name, proc))
        return proc

    def stop_all() -> None:
        """Stop the children one by one, newest first (gateway, session, engine, NATS),
        so each still has its backends while it shuts down."""
        for name, proc in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT if name != "nats" else signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                sys.stderr.write(f"{name} did not stop in 15 s; killing it\n")
                proc.kill()
                proc.wait()

    stopping = False

    def on_signal(signum, frame):  # noqa: ARG001
        nonlocal stopping
        if stopping:
            return
        stopping = True
        raise KeyboardInterrupt

    # Installed explicitly: a runner started in the background inherits SIGINT ignored.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        lock = _lock_data_dir(data_dir)  # noqa: F841 - held while running
        external = args.external_nats or "CELLWAR_NATS_URL" in os.environ
        if not external:
            for host_port in (("127.0.0.1", args.nats_port),):
                if not _free(*host_port):
                    raise RuntimeError(
                        f"port {args.nats_port} is taken (another NATS or make run?); "
                        "set CELLWAR_NATS_PORT or stop the other process"
                    )
            conf = write_config(data_dir / "nats.conf", port=args.nats_port, store_dir=data_dir / "nats")
            nats = start("nats", [nats_server_binary(), "-c", str(conf)])
            _wait_port("127.0.0.1", args.nats_port, 30, nats, "nats-server")
            env["CELLWAR_NATS_URL"] = f"nats://127.0.0.1:{args.nats_port}"
        else:
            sys.stderr.write(f"using the NATS server at {settings.nats_url}\n")
        for name, addr, module in (
            ("engine", settings.engine_addr, "services.engine"),
            ("session", settings.session_addr, "services.session"),
            # issue 14 (matchmaker): one instance, after the session it creates games in.
            ("matchmaker", settings.matchmaker_addr, "services.matchmaker"),
        ):
            host, port = addr.rsplit(":", 1)
            if not _free(host, int(port)):
                raise RuntimeError(f"{name} port {addr} is taken; stop the other process or set CELLWAR_{name.upper()}_ADDR")
            proc = start(name, [sys.executable, "-m", module])
            _wait_port(host, int(port), 60, proc, name)
        if not _free(settings.http_host, settings.http_port):
            raise RuntimeError(f"HTTP port {settings.http_port} is taken; set CELLWAR_HTTP_PORT")
        gw = start("gateway", [sys.executable, "-m", "gateway"])
        _wait_port(settings.http_host, settings.http_port, 60, gw, "gateway")
        url = f"http://localhost:{settings.http_port}"
        sys.stderr.write(f"\nCellWar is up: {url}  (API docs: {url}/docs; Ctrl-C stops all)\n\n")
        while True:
            for name, proc in procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with code {proc.returncode}")
            time.sleep(0.5)
    except KeyboardInterrupt:
        sys.stderr.write("\nstopping CellWar...\n")
        stop_all()
        return 0
    except (RuntimeError, FileNotFoundError) as exc:
        sys.stderr.write(f"make run failed: {exc}\n")
        stop_all()
        return 1


if __name__ == "__main__":
    sys.exit(main())
