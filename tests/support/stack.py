"""CellWar services for tests, on loopback, on a real NATS or in memory.

- :func:`start_stack`: the engine and session gRPC servers in this process (port 0); the
  session on a real NATS (``nats_url``) or, without one, on in-memory ports
  (services/session/bootstrap.py ``memory_ports``: no NATS at all).
- :class:`EngineProcess` / :class:`SessionProcess`: ``python -m services.engine`` /
  ``python -m services.session`` as subprocesses (for kill -9 tests), waiting until
  their gRPC health check answers SERVING; :class:`MemorySessionProcess`: a session on
  in-memory ports as a subprocess (``python -m tests.support.memory_session``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.settings import Settings
from services.engine.server import create_server as create_engine_server
from services.session.adapters.memory import MemoryServer
from services.session.bootstrap import bootstrap, memory_ports
from services.session.server import SessionApp
from services.session.server import create_server as create_session_server
from tests.support.nats import free_port

ROOT = Path(__file__).resolve().parents[2]

#: Test defaults: fast ticking so games finish quickly, short leases and presence.
TEST_SETTINGS: dict[str, Any] = {
    "generations_per_second": 400.0,
    "lease_ttl_s": 3.0,
    "presence_ttl_s": 2.0,
    "log_format": "console",
    "shutdown_grace_s": 0.5,
}


@dataclass
class Stack:
    """Engine + session servers running in this process.

    Attributes:
        engine_target / session_target: ``"127.0.0.1:port"``.
        settings: the session's settings (``nats_url``, ``engine_addr`` and
            ``session_addr`` filled in).
        session: the session app (``session.games`` for white-box checks).
        memory: the in-memory server the session runs on (None: on NATS).
    """

    engine_server: grpc.aio.Server
    engine_target: str
    session: SessionApp
    session_target: str
    settings: Settings
    memory: MemoryServer | None = None

    async def stop(self) -> None:
        """Stop the session, then the engine."""
        await self.session.stop(grace=0.2)
        await self.engine_server.stop(0.2)

    async def restart_session(self, **overrides: Any) -> None:
        """Stop the session and start a new one on the same NATS (or in-memory server)
        and engine (new port)."""
        await self.session.stop(grace=0.2)
        settings = self.settings.model_copy(update=overrides)
        if self.memory is not None:
            app = await bootstrap(memory_ports(self.memory, settings=settings), settings)
            port = app.port
        else:
            _, port, app = await create_session_server(
                "127.0.0.1:0",
                nats_url=settings.nats_url,
                engine_target=self.engine_target,
                settings=settings,
            )
        self.session, self.session_target = app, f"127.0.0.1:{port}"
        self.settings = settings.model_copy(update={"session_addr": self.session_target})


def make_settings(nats_url: str, **overrides: Any) -> Settings:
    """Settings for tests: :data:`TEST_SETTINGS` + ``nats_url`` + ``overrides`` (these win
    over ``CELLWAR_*`` environment variables)."""
    return Settings(**{**TEST_SETTINGS, "nats_url": nats_url, **overrides})


#: ``nats_url`` of the settings of a stack in memory (nothing connects to it).
NO_NATS = "nats://no-nats.invalid:1"


async def start_stack(
    nats_url: str | None = None, *, memory: MemoryServer | None = None, **settings_overrides: Any
) -> Stack:
    """Start the engine and session servers in-process on 127.0.0.1 (free ports): the
    session on the NATS ``nats_url``, or without one on in-memory ports (``memory``:
    the in-memory server to share, default a new one).

    ``settings_overrides``: Settings fields, e.g. ``generations_per_second=400``,
    ``instance_id="s-2"``.
    """
    engine_server, engine_port = await create_engine_server("127.0.0.1:0")
    engine_target = f"127.0.0.1:{engine_port}"
    settings = make_settings(nats_url or NO_NATS, engine_addr=engine_target, **settings_overrides)
    if nats_url is None:
        memory = memory or MemoryServer()
    try:
        if memory is not None:
            app = await bootstrap(memory_ports(memory, settings=settings), settings)
            port = app.port
        else:
            _, port, app = await create_session_server(
                "127.0.0.1:0", nats_url=nats_url, engine_target=engine_target, settings=settings
            )
    except BaseException:
        await engine_server.stop(0)
        raise
    session_target = f"127.0.0.1:{port}"
    settings = settings.model_copy(update={"session_addr": session_target})
    return Stack(engine_server, engine_target, app, session_target, settings, memory)


async def start_session(
    nats_url: str, engine_target: str, **settings_overrides: Any
) -> tuple[SessionApp, str]:
    """Start one more session instance in-process on a free port, against a running
    engine (``engine_target``, several comma separated); returns ``(app, target)``.
    Give each instance its own ``instance_id``."""
    settings = make_settings(nats_url, engine_addr=engine_target, **settings_overrides)
    _, port, app = await create_session_server(
        "127.0.0.1:0", nats_url=nats_url, engine_target=engine_target, settings=settings
    )
    return app, f"127.0.0.1:{port}"


async def wait_serving(target: str, timeout: float = 20.0, service: str = "") -> None:
    """Wait until the gRPC health check of ``target`` answers SERVING (seconds).

    Raises:
        TimeoutError: not serving in time.
    """
    deadline = time.monotonic() + timeout
    async with grpc.aio.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            try:
                reply = await stub.Check(
                    health_pb2.HealthCheckRequest(service=service), timeout=1.0
                )
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{target} not serving after {timeout} s")
            await asyncio.sleep(0.05)


class _ServiceProcess:
    module = ""

    def __init__(self, env: dict[str, str], port: int = 0, log_path: str | None = None) -> None:
        self.port = port or free_port()
        self.env = env
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self._log = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _environ(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CELLWAR_")}
        env.update(self.env)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        return env

    async def start(self, timeout: float = 30.0) -> _ServiceProcess:
        """Start the subprocess and wait until its health check answers (seconds)."""
        out = subprocess.DEVNULL
        if self.log_path:
            self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
            out = self._log
        self.proc = subprocess.Popen(
            [sys.executable, "-m", self.module],
            cwd=ROOT,
            env=self._environ(),
            stdout=out,
            stderr=out,
        )
        try:
            await wait_serving(self.target, timeout)
        except TimeoutError:
            self.kill()
            raise
        return self

    def kill(self) -> None:
        """SIGKILL (kill -9) and reap."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self._close_log()

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (graceful stop) and wait; SIGKILL after ``timeout`` seconds."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


class EngineProcess(_ServiceProcess):
    """``python -m services.engine`` on a free port (``target`` = ``127.0.0.1:port``)."""

    module = "services.engine"

    def __init__(self, port: int = 0, log_path: str | None = None, **env: str) -> None:
        super().__init__({}, port, log_path)
        self.env = {"CELLWAR_ENGINE_ADDR": self.target, **env}


class SessionProcess(_ServiceProcess):
    """``python -m services.session`` as a subprocess.

    Args:
        nats_url: the NATS to use.
        engine_target: ``host:port`` of an engine service.
        port: session port (0 = a free one; kept across restarts of this object).
        instance_id: the lease owner name (keep it across a restart to resume leases).
        log_path: file that receives the process's stdout and stderr.
        **settings: more Settings fields, e.g. ``generations_per_second=40``.
    """

    module = "services.session"

    def __init__(
        self,
        nats_url: str,
        engine_target: str,
        *,
        port: int = 0,
        instance_id: str = "session-test",
        log_path: str | None = None,
        **settings: Any,
    ) -> None:
        super().__init__({}, port, log_path)
        values = {**TEST_SETTINGS, **settings}
        self.env = {f"CELLWAR_{k.upper()}": str(v) for k, v in values.items()}
        self.env.update(
            {
                "CELLWAR_NATS_URL": nats_url,
                "CELLWAR_ENGINE_ADDR": engine_target,
                "CELLWAR_SESSION_ADDR": self.target,
                "CELLWAR_INSTANCE_ID": instance_id,
                "CELLWAR_LOG_FORMAT": "json",
            }
        )


class MemorySessionProcess(SessionProcess):
    """A session on in-memory ports as a subprocess (``python -m
    tests.support.memory_session``): :class:`SessionProcess` without a NATS (its games
    live as long as the process)."""

    module = "tests.support.memory_session"

    def __init__(self, engine_target: str, **kwargs: Any) -> None:
        super().__init__(NO_NATS, engine_target, **kwargs)
