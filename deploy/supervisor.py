"""Supervision of a runner's children (``make run`` and ``make run-cluster``).

A :class:`Supervisor` starts its :class:`ProcessSpec` children group by group (NATS,
then engines, sessions, gateways, nginx), each group once the one before answers its
readiness probe; then, as a process supervisor would, it restarts a child that dies:
after ``restart_delay_s`` (2 s), doubling on each quick death in a row (a death less
than ``stable_after_s`` after the start) up to ``max_delay_s``, and back to 2 s after a
child stayed up. The other children keep running meanwhile. Every change goes to
``on_change`` (the runner rewrites ``cluster.json``) and, as one line for people, to
``say``.

Each child runs in its own session (process group): a Ctrl-C on the terminal reaches only
the runner, which then stops the children group by group in reverse order; the whole
group of a child that died is killed too (nginx's workers outlive a killed master and
would hold its port). On Linux every child also gets SIGTERM when the runner itself dies
(``PR_SET_PDEATHSIG``), so even a runner killed with SIGKILL leaves no server behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

#: States of a child.
STARTING, UP, DOWN, STOPPED = "starting", "up", "down", "stopped"

_PR_SET_PDEATHSIG = 1


class StartError(RuntimeError):
    """A child did not come up while the runner was starting (message says which, why,
    and the end of its log)."""


@dataclass
class ProcessSpec:
    """One supervised process.

    Attributes:
        name: unique name, kept across restarts (``session-1``).
        role: ``nats``, ``engine``, ``session``, ``gateway``, ``nginx``, ``matchmaker``.
        argv: the command.
        env: its whole environment.
        addr: ``host:port`` it serves (shown in ``cluster.json``).
        probe: readiness check, True when it answers; must return within about 1 s.
        group: start order (lower first); a group starts once every child of the groups
            before it is ready. Stops go in reverse.
        stop_signal: the signal of a clean stop.
        log_path: file that receives its stdout and stderr (appended); None = the
            runner's own terminal.
        cwd: working folder.
        start_timeout_s: seconds from start to ready before it counts as failed (killed
            and restarted).
    """

    name: str
    role: str
    argv: Sequence[str]
    env: Mapping[str, str]
    addr: str
    probe: Callable[[], bool]
    group: int = 0
    stop_signal: int = signal.SIGTERM
    log_path: Path | None = None
    cwd: Path | None = None
    start_timeout_s: float = 60.0


@dataclass
class Child:
    """A supervised process and its state (``starting``, ``up``, ``down``, ``stopped``).

    Attributes:
        restarts: how many times it was started again after a death.
        delay: the wait before the latest restart (seconds).
        streak: deaths in a row that came less than ``stable_after_s`` after a start
            (drives the backoff).
    """

    spec: ProcessSpec
    proc: subprocess.Popen | None = None
    state: str = STOPPED
    started_at: float = 0.0
    ready_at: float = 0.0
    restart_at: float = 0.0
    restarts: int = 0
    streak: int = 0
    delay: float = 0.0
    last_exit: str = ""
    _log: IO[bytes] | None = field(default=None, repr=False)

    @property
    def pid(self) -> int | None:
        """The PID while the process runs (starting or up), else None."""
        if self.proc is not None and self.state in (STARTING, UP):
            return self.proc.pid
        return None


def describe_exit(returncode: int) -> str:
    """``"killed by SIGKILL"`` / ``"exited with code 1"`` for a Popen return code."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with code {returncode}"


def die_with_parent() -> None:  # pragma: no cover - runs in the forked child
    """preexec_fn: ask Linux to send SIGTERM to this child when the runner dies."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))


def _kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to the process group led by ``pid`` (gone already: nothing).

    Only called while the leader is alive or an unreaped zombie: its PID, hence the
    group id, cannot belong to anyone else's process then.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _exited(proc: subprocess.Popen) -> bool:
    """The process has ended, WITHOUT reaping it (the zombie keeps its PID reserved until
    :func:`_reap`, so its group can still be killed safely)."""
    if proc.returncode is not None:
        return True
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _reap(proc: subprocess.Popen) -> None:
    """Kill what is left of the process's group, then collect its exit status."""
    if proc.returncode is None:
        _kill_group(proc.pid)
    proc.wait()


def _log_tail(path: Path | None, lines: int = 15) -> str:
    if path is None or not path.exists():
        return ""
    with contextlib.suppress(OSError):
        tail = path.read_text(errors="replace").splitlines()[-lines:]
        return "\n".join("    " + line for line in tail)
    return ""


class Supervisor:
    """Start, watch, restart and stop a set of child processes (module docstring).

    Args:
        specs: the children, unique names.
        restart_delay_s: seconds between a death and the restart (first in a row).
        max_delay_s: the longest backoff (seconds).
        stable_after_s: a child that lived this long (seconds) before dying is restarted
            after ``restart_delay_s`` again; shorter lives double the delay each time.
        max_start_failures: deaths of one child allowed while the runner starts before
            it gives up (:class:`StartError`).
        on_change: called with the supervisor after every start, ready, death and stop.
        say: writes one line for people (default: stderr).
        clock: monotonic clock (seconds).

    Raises:
        ValueError: two specs share a name.
    """

    def __init__(
        self,
        specs: Sequence[ProcessSpec],
        *,
        restart_delay_s: float = 2.0,
        max_delay_s: float = 30.0,
        stable_after_s: float = 10.0,
        max_start_failures: int = 3,
        on_change: Callable[[Supervisor], None] | None = None,
        say: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate process names in {names}")
        self.children = [Child(spec) for spec in specs]
        self.restart_delay_s = restart_delay_s
        self.max_delay_s = max_delay_s
        self.stable_after_s = stable_after_s
        self.max_start_failures = max_start_failures
        self.on_change = on_change
        self.say = say or (lambda line: (sys.stderr.write(line + "\n"), sys.stderr.flush()))
        self.clock = clock

    # -- queries

    def child(self, name: str) -> Child:
        """The child called ``name``. Raises KeyError."""
        for c in self.children:
            if c.spec.name == name:
                return c
        raise KeyError(name)

    def all_up(self) -> bool:
        """Every child answers its probe (state ``up``)."""
        return all(c.state == UP for c in self.children)

    # -- life cycle

    def start_all(self, timeout_s: float = 180.0, poll_s: float = 0.1) -> None:
        """Start every group in order, each once the groups before it are up.

        Raises:
            StartError: a child died ``max_start_failures`` times, or the whole start
                took longer than ``timeout_s`` seconds. Nothing is stopped here: call
                :meth:`stop_all`.
        """
        deadline = self.clock() + timeout_s
        for group in sorted({c.spec.group for c in self.children}):
            members = [c for c in self.children if c.spec.group == group]
            for c in members:
                self._spawn(c)
            while not all(c.state == UP for c in members):
                self.step()
                for c in members:
                    if c.streak >= self.max_start_failures:
                        raise StartError(self._start_failure(c, f"{c.last_exit} {c.streak} times"))
                if self.clock() > deadline:
                    late = next(c for c in members if c.state != UP)
                    raise StartError(self._start_failure(late, f"not ready after {timeout_s:.0f} s"))
                time.sleep(poll_s)

    def supervise(self, poll_s: float = 0.2, until: Callable[[], bool] = lambda: False) -> None:
        """Watch and restart children until ``until()`` is true (or for ever)."""
        while not until():
            self.step()
            time.sleep(poll_s)

    def step(self) -> None:
        """One round of supervision: notice deaths, probe starting children, restart
        the children whose delay has passed."""
        now = self.clock()
        for c in self.children:
            if c.state in (STARTING, UP) and c.proc is not None and _exited(c.proc):
                _reap(c.proc)
                self._died(c, describe_exit(c.proc.returncode))
            elif c.state == STARTING:
                if self._probe(c):
                    c.state, c.ready_at = UP, self.clock()
                    if c.restarts:
                        self.say(
                            f"{c.spec.name} is back (pid {c.proc.pid}, ready in "
                            f"{c.ready_at - c.started_at:.1f} s)"
                        )
                    self._changed()
                elif now - c.started_at > c.spec.start_timeout_s:
                    _reap(c.proc)
                    self._died(c, f"not ready within {c.spec.start_timeout_s:.0f} s")
            elif c.state == DOWN and now >= c.restart_at:
                c.restarts += 1
                self._spawn(c)

    def stop_all(self, timeout_s: float = 15.0) -> None:
        """Stop every child, group by group in reverse start order (gateways before the
        sessions they call, NATS last): the stop signal, then SIGKILL after
        ``timeout_s`` seconds. Leaves no process of any child's group behind."""
        for group in sorted({c.spec.group for c in self.children}, reverse=True):
            members = [c for c in self.children if c.spec.group == group]
            for c in members:
                if c.proc is not None and not _exited(c.proc):
                    with contextlib.suppress(ProcessLookupError):
                        c.proc.send_signal(c.spec.stop_signal)
            deadline = time.monotonic() + timeout_s
            for c in members:
                if c.proc is not None:
                    while not _exited(c.proc) and time.monotonic() < deadline:
                        time.sleep(0.05)
                    if not _exited(c.proc):
                        self.say(f"{c.spec.name} did not stop within {timeout_s:.0f} s; killing it")
                    _reap(c.proc)  # also its group's leftovers
                c.state = STOPPED
                self._close_log(c)
        self._changed()

    # -- inside

    def _spawn(self, c: Child) -> None:
        spec = c.spec
        out = None
        if spec.log_path is not None:
            spec.log_path.parent.mkdir(parents=True, exist_ok=True)
            c._log = open(spec.log_path, "ab")  # noqa: SIM115 - closed when the child ends
            out = c._log
        c.proc = subprocess.Popen(
            list(spec.argv),
            env=dict(spec.env),
            cwd=spec.cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT if out is not None else None,
            start_new_session=True,
            preexec_fn=die_with_parent,  # noqa: PLW1509 - the runner is single-threaded
        )
        c.state, c.started_at = STARTING, self.clock()
        self._changed()

    def _died(self, c: Child, why: str) -> None:
        now = self.clock()
        pid = c.proc.pid if c.proc is not None else None
        self._close_log(c)
        lived = now - c.started_at
        if lived >= self.stable_after_s:
            c.streak = 0
        delay = min(self.restart_delay_s * 2**c.streak, self.max_delay_s)
        c.streak += 1
        c.state, c.restart_at, c.delay, c.last_exit = DOWN, now + delay, delay, why
        self.say(f"{c.spec.name} (pid {pid}) {why} after {lived:.1f} s; restarting in {delay:g} s")
        self._changed()

    def _probe(self, c: Child) -> bool:
        try:
            return bool(c.spec.probe())
        except Exception:  # noqa: BLE001 - a probe that fails means "not ready"
            return False

    def _close_log(self, c: Child) -> None:
        if c._log is not None:
            c._log.close()
            c._log = None

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self)

    def _start_failure(self, c: Child, why: str) -> str:
        where = f" (log {c.spec.log_path})" if c.spec.log_path else ""
        tail = _log_tail(c.spec.log_path)
        return f"{c.spec.name} {why}{where}" + (f"\n{tail}" if tail else "")


# -- readiness probes (each returns within about a second)


def _connect_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else host


def tcp_probe(host: str, port: int, timeout_s: float = 0.5) -> Callable[[], bool]:
    """A probe: ``host:port`` accepts TCP connections."""

    def probe() -> bool:
        try:
            with socket.create_connection((_connect_host(host), port), timeout=timeout_s):
                return True
        except OSError:
            return False

    return probe


def http_probe(url: str, timeout_s: float = 1.0) -> Callable[[], bool]:
    """A probe: ``GET url`` answers 200."""

    def probe() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as response:  # noqa: S310 - loopback
                return response.status == 200
        except (OSError, urllib.error.URLError):
            return False

    return probe


def grpc_health_probe(addr: str, timeout_s: float = 1.0) -> Callable[[], bool]:
    """A probe: the gRPC health check of ``addr`` (service ``""``) answers SERVING."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    host, _, port = addr.rpartition(":")
    target = f"{_connect_host(host)}:{port}"

    def probe() -> bool:
        with grpc.insecure_channel(target) as channel:
            try:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=""), timeout=timeout_s
                )
            except grpc.RpcError:
                return False
        return reply.status == health_pb2.HealthCheckResponse.SERVING

    return probe
