"""Shared helpers of the service benchmarks: NATS, the CellWar services and HTTP apps as
child processes on 127.0.0.1, plus timing helpers.

Every server runs in its own process, as ``make run`` (deploy/run.py) starts them:
``nats-server``, ``python -m services.engine``, ``python -m services.session``,
``python -m gateway``. The benchmark's load (HTTP, WebSocket, gRPC clients) runs in the
bench process, so client and servers never share a GIL. :class:`Services` stops
everything it started (SIGTERM, then SIGKILL after a timeout), newest first, and deletes
its temporary folder.

Nothing here imports from ``tests/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from deploy.nats import nats_server_binary, write_config
from deploy.topology import grpc_target

ROOT = Path(__file__).resolve().parent.parent

#: Signing key of the player tokens of the bench gateway (and the bare endpoint).
SECRET = "bench-secret-for-player-tokens"
#: ``rate_limit_per_s`` of the round trip's gateways (:mod:`bench.roundtrip`, and the
#: replicas of :mod:`bench.cluster` under the same load): the per-seat command bucket
#: (50 requests/s as deployed) off. Ten seats in a closed loop pass 50/s each on a fast
#: machine, and the 429s (and the refused erases after them) would be measured instead
#: of the path.
COMMAND_BUCKET_OFF = 0

T = TypeVar("T")


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on uvloop when installed (a lighter load generator), else asyncio."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop ships with uvicorn[standard]
        return asyncio.run(coro)
    return uvloop.run(coro)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` percentile (0..100) of ``values``; None when empty."""
    if not len(values):
        return None
    return float(np.percentile(np.asarray(values, dtype=float), q))


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds used so far by process ``pid`` (Linux /proc; threads
    included). Returns 0.0 when it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def latency_figures(latencies: Sequence[float], errors: Sequence[str]) -> dict[str, Any]:
    """p50, p99 and max of ``latencies`` (ms; None when empty), the count of ``errors``
    and the first three of them."""
    return {
        "p50_ms": percentile(latencies, 50),
        "p99_ms": percentile(latencies, 99),
        "max_ms": max(latencies) if latencies else None,
        "errors": len(errors),
        "first_errors": list(errors[:3]),
    }


async def timed_load(
    players: Sequence[Coroutine[Any, Any, Any]],
    t_measure: float,
    t_end: float,
    pids: dict[str, int],
    latencies: list[float],
    errors: list[str],
) -> dict[str, Any]:
    """Run the load generator's ``players`` (coroutines that fill ``latencies``, ms, of the
    window ``t_measure``..``t_end`` of the running loop's clock, and ``errors``) and
    measure the window: actions/s, latency percentiles (ms), errors (the first three
    kept), the CPU cores each process of ``pids`` used in it (``/proc``) and the bench's
    own (``bench-client``). A player that raises counts as an error."""
    loop = asyncio.get_running_loop()
    seconds = t_end - t_measure
    tasks = [asyncio.ensure_future(p) for p in players]
    await asyncio.sleep(max(t_measure - loop.time(), 0))
    cpu0 = {n: cpu_seconds(p) for n, p in pids.items()}
    own0 = os.times()
    await asyncio.sleep(max(t_end - loop.time(), 0))
    cpu1 = {n: cpu_seconds(p) for n, p in pids.items()}
    own1 = os.times()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    errors += [repr(e) for e in done if isinstance(e, BaseException)]
    cpu = {n: (cpu1[n] - cpu0[n]) / seconds for n in pids}
    cpu["bench-client"] = (own1.user + own1.system - own0.user - own0.system) / seconds
    return {
        "latencies": latencies,
        "actions_per_s": len(latencies) / seconds,
        "actions": len(latencies),
        **latency_figures(latencies, errors),
        "cpu_cores": {n: round(v, 3) for n, v in cpu.items()},
    }


def row(
    name: str,
    unit: str,
    measured: float | None,
    target_text: str,
    ok: bool | None,
    *,
    reference: float | None = None,
    ratio: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A table row in the shape of bench/run.py; ``ok=None`` marks an informative row
    (no target: shown as ``info``, never fails the run)."""
    return {
        "name": name,
        "unit": unit,
        "kernel": measured,
        "reference": reference,
        "ratio": ratio,
        "target_text": target_text,
        "pass": True if ok is None else bool(ok),
        "info": ok is None,
        **extra,
    }


@dataclass
class Child:
    """One child process: ``name``, the Popen, its log file."""

    name: str
    proc: subprocess.Popen
    log_path: Path
    _log: Any = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (SIGINT for Python services), wait; SIGKILL after ``timeout`` seconds
        (:meth:`kill`, which closes the log)."""
        if self.proc.poll() is None:
            sig = signal.SIGTERM if self.name == "nats" else signal.SIGINT
            self.proc.send_signal(sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout)
        self.kill(timeout)

    def kill(self, timeout: float = 5.0) -> None:
        """SIGKILL now if it still runs (no grace), wait up to ``timeout`` seconds, close
        the log."""
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout)
        if self._log is not None:
            self._log.close()
            self._log = None

    def tail(self, lines: int = 20) -> str:
        """The last lines of the child's log (for error messages)."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def _wait_port(port: int, timeout: float, child: Child) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if child.proc.poll() is not None:
            raise RuntimeError(
                f"{child.name} exited with {child.proc.returncode} while starting:\n{child.tail()}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{child.name}: nothing on port {port} after {timeout} s"
                ) from None
            time.sleep(0.02)


async def wait_grpc_serving(target: str, timeout: float = 30.0) -> None:
    """Wait until the gRPC health check of ``target`` answers SERVING (seconds)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + timeout
    async with grpc.aio.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            with contextlib.suppress(grpc.aio.AioRpcError):
                reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1.0)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{target} not serving after {timeout} s")
            await asyncio.sleep(0.05)


async def wait_http(url: str, timeout: float = 30.0) -> None:
    """Wait until ``GET url`` answers 200 (seconds)."""
    import httpx

    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(timeout=2.0) as client:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get(url)).status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} not ready after {timeout} s")
            await asyncio.sleep(0.05)


@dataclass
class Services:
    """Child processes started for one benchmark, in a temporary folder.

    Attributes:
        tmp: the folder (NATS store, configs, logs); deleted by :meth:`close`.
        children: started children, oldest first.
        nats_url / engine_target / session_target / gateway_url: filled as started.
    """

    tmp: Path
    children: list[Child] = field(default_factory=list)
    nats_url: str = ""
    engine_target: str = ""
    session_target: str = ""
    matchmaker_target: str = ""
    gateway_url: str = ""
    _tmp_handle: Any = None

    def pids(self) -> dict[str, int]:
        """``{name: pid}`` of every started child (the processes a bench measures)."""
        return {c.name: c.pid for c in self.children}

    def child(self, name: str) -> Child:
        """The child called ``name``. Raises KeyError."""
        for c in self.children:
            if c.name == name:
                return c
        raise KeyError(name)

    def _spawn(self, name: str, cmd: list[str], env: dict[str, str] | None = None) -> Child:
        log_path = self.tmp / f"{name}.log"
        handle = open(log_path, "ab")  # noqa: SIM115 - closed by Child.stop
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
        )
        child = Child(name, proc, log_path, handle)
        self.children.append(child)
        return child

    def _env(self, **settings: Any) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CELLWAR_")}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env["PYTHONUNBUFFERED"] = "1"
        env.update({f"CELLWAR_{k.upper()}": str(v) for k, v in settings.items()})
        return env

    def start_nats(self, *, fsync: bool = True) -> str:
        """``nats-server`` with JetStream (config of :func:`deploy.nats.write_config`:
        ``sync_interval: always``; ``fsync=False`` drops that line, leaving NATS' default
        periodic flush). Returns the URL."""
        port = free_port()
        conf = write_config(self.tmp / "nats.conf", port=port, store_dir=self.tmp / "nats")
        if not fsync:
            text = conf.read_text().replace("  sync_interval: always\n", "")
            conf.write_text(text)
        child = self._spawn("nats", [nats_server_binary(), "-c", str(conf)])
        _wait_port(port, 15.0, child)
        self.nats_url = f"nats://127.0.0.1:{port}"
        return self.nats_url

    async def start_engine(self) -> str:
        """``python -m services.engine`` on a free port; waits for SERVING."""
        target = f"127.0.0.1:{free_port()}"
        child = self._spawn(
            "engine", [sys.executable, "-m", "services.engine"], self._env(engine_addr=target)
        )
        await self._wait_grpc(target, child)
        self.engine_target = target
        return target

    async def start_session(self, **settings: Any) -> str:
        """``python -m services.session`` on a free port (NATS and engine started first);
        ``settings``: more ``Settings`` fields. Waits for SERVING."""
        target = f"127.0.0.1:{free_port()}"
        settings.setdefault("instance_id", "bench-session")
        env = self._env(
            nats_url=self.nats_url,
            engine_addr=self.engine_target,
            session_addr=target,
            **settings,
        )
        child = self._spawn("session", [sys.executable, "-m", "services.session"], env)
        await self._wait_grpc(target, child)
        self.session_target = target
        return target

    async def start_matchmaker(self, **settings: Any) -> str:
        """``python -m services.matchmaker`` on a free port (NATS and session started
        first); ``settings``: more ``Settings`` fields. Waits for SERVING."""
        target = f"127.0.0.1:{free_port()}"
        env = self._env(
            nats_url=self.nats_url,
            session_addr=self.session_target,
            matchmaker_addr=target,
            **settings,
        )
        child = self._spawn("matchmaker", [sys.executable, "-m", "services.matchmaker"], env)
        await self._wait_grpc(target, child)
        self.matchmaker_target = target
        return target

    async def start_gateway(self, **settings: Any) -> str:
        """``python -m gateway`` (uvicorn) on a free port; waits until ``/readyz`` is 200.
        ``settings``: more ``Settings`` fields (the matchmaker's address is passed when
        one was started)."""
        port = free_port()
        if self.matchmaker_target:
            settings.setdefault("matchmaker_addr", self.matchmaker_target)
        env = self._env(
            session_addr=self.session_target,
            http_host="127.0.0.1",
            http_port=port,
            secret=SECRET,
            data_dir=self.tmp,
            **settings,
        )
        child = self._spawn("gateway", [sys.executable, "-m", "gateway"], env)
        url = f"http://127.0.0.1:{port}"
        await self._wait_http(f"{url}/readyz", child)
        self.gateway_url = url
        return url

    async def start_bare(self) -> str:
        """The bare FastAPI endpoint (:mod:`bench._bare`) under uvicorn on a free port."""
        port = free_port()
        env = self._env(secret=SECRET)
        child = self._spawn("bare", [sys.executable, "-m", "bench._bare", str(port)], env)
        url = f"http://127.0.0.1:{port}"
        await self._wait_http(f"{url}/healthz", child)
        return url

    async def start_replicas(self, n: int) -> list[str]:
        """``n`` engines, sessions and gateways on the NATS started first, wired as
        ``make run-cluster`` wires them (bench/cluster.py), the gateways' per-seat command
        bucket off (:data:`COMMAND_BUCKET_OFF`); returns the gateway URLs."""
        engines = [f"127.0.0.1:{free_port()}" for _ in range(n)]
        sessions = [f"127.0.0.1:{free_port()}" for _ in range(n)]
        for k, addr in enumerate(engines, start=1):
            child = self._spawn(
                f"engine-{k}", [sys.executable, "-m", "services.engine"], self._env(engine_addr=addr)
            )
            await self._wait_grpc(addr, child)
        for k, addr in enumerate(sessions, start=1):
            env = self._env(
                nats_url=self.nats_url,
                engine_addr=",".join(engines),
                session_addr=addr,
                instance_id=f"bench-session-{k}",
            )
            child = self._spawn(f"session-{k}", [sys.executable, "-m", "services.session"], env)
            await self._wait_grpc(addr, child)
        urls = []
        for k in range(1, n + 1):
            port = free_port()
            env = self._env(
                session_addr=grpc_target(sessions, rotate=k - 1),
                http_host="127.0.0.1",
                http_port=port,
                secret=SECRET,
                data_dir=self.tmp,
                rate_limit_per_s=COMMAND_BUCKET_OFF,
            )
            child = self._spawn(f"gateway-{k}", [sys.executable, "-m", "gateway"], env)
            url = f"http://127.0.0.1:{port}"
            await self._wait_http(f"{url}/readyz", child)
            urls.append(url)
        return urls

    async def start_floor(self) -> str:
        """The round trip's hop floor (:mod:`bench._floor`): its engine, session and
        gateway roles on free ports, on the NATS started first. Returns the gateway URL."""
        engine = f"127.0.0.1:{free_port()}"
        session = f"127.0.0.1:{free_port()}"
        port = free_port()
        cmd = [sys.executable, "-m", "bench._floor"]
        env = self._env(secret=SECRET)
        e = self._spawn("floor-engine", [*cmd, "engine", engine.rsplit(":", 1)[1]], env)
        _wait_port(int(engine.rsplit(":", 1)[1]), 30.0, e)
        s = self._spawn(
            "floor-session", [*cmd, "session", session.rsplit(":", 1)[1], engine, self.nats_url], env
        )
        _wait_port(int(session.rsplit(":", 1)[1]), 30.0, s)
        g = self._spawn("floor-gateway", [*cmd, "gateway", str(port), session], env)
        url = f"http://127.0.0.1:{port}"
        await self._wait_http(f"{url}/healthz", g)
        return url

    async def _wait_grpc(self, target: str, child: Child) -> None:
        task = asyncio.create_task(wait_grpc_serving(target))
        while not task.done():
            if child.proc.poll() is not None:
                task.cancel()
                raise RuntimeError(f"{child.name} exited while starting:\n{child.tail()}")
            await asyncio.sleep(0.05)
        task.result()

    async def _wait_http(self, url: str, child: Child) -> None:
        task = asyncio.create_task(wait_http(url))
        while not task.done():
            if child.proc.poll() is not None:
                task.cancel()
                raise RuntimeError(f"{child.name} exited while starting:\n{child.tail()}")
            await asyncio.sleep(0.05)
        task.result()

    def close(self) -> None:
        """Stop every child, newest first, then delete the temporary folder. Interrupted
        while it waits for one (a second Ctrl-C, SIGTERM: :mod:`bench.run`), it kills
        the children still running (SIGKILL, no grace), so none outlives the bench."""
        try:
            while self.children:
                self.children[-1].stop()
                self.children.pop()
        finally:
            while self.children:
                self.children.pop().kill()
            if self._tmp_handle is not None:
                self._tmp_handle.cleanup()
                self._tmp_handle = None


def new_services() -> Services:
    """An empty :class:`Services` in a fresh temporary folder; ``close()`` it."""
    handle = tempfile.TemporaryDirectory(prefix="cellwar-bench-")
    return Services(Path(handle.name), _tmp_handle=handle)


async def start_platform(
    *, fsync: bool = True, gateway: bool = True, **session_settings: Any
) -> Services:
    """Start NATS, engine, session (and the gateway); the caller must ``close()`` it."""
    svc = new_services()
    try:
        svc.start_nats(fsync=fsync)
        await svc.start_engine()
        await svc.start_session(**session_settings)
        if gateway:
            # Every viewer of a bench comes from 127.0.0.1: no per-address socket cap.
            await svc.start_gateway(ws_max_per_address=0)
    except BaseException:
        svc.close()
        raise
    return svc


# --------------------------------------------------------------------------- Life games


def soup_cells(zone: Sequence[int], fill: float, seed: int) -> list[list[int]]:
    """``[[x, y], ...]`` of a random soup filling ``fill`` of ``zone`` ``[x0, y0, x1, y1]``."""
    x0, y0, x1, y1 = zone
    rng = np.random.default_rng(seed)
    ys, xs = np.nonzero(rng.random((y1 - y0, x1 - x0)) < fill)
    return [[int(x) + x0, int(y) + y0] for x, y in zip(xs, ys, strict=True)]
