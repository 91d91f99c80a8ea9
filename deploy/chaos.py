"""Chaos run: bot games through nginx while processes are killed or paused.

``python -m deploy.chaos`` starts ``make run-cluster`` through the runner (a temporary
data folder, free port bases), plays ``--games`` (20) concurrent bot games through nginx,
half Life and half CellWar, on small boards with small budgets, and while they run kills
with SIGKILL, one at a time ``--gap`` (4) seconds apart: one NATS node (the leader of the
GAME_EVENTS stream), one session instance, one engine replica and one gateway (PIDs from
``cluster.json``). Then it checks:

- every game finished;
- every log, read straight from JetStream, is contiguous (seqs 1..n, each once);
- no command id appears in two separate places of a log (a command applied twice);
- every recorded ``state_hash`` equals ``engine.state_hash`` of the in-process fold
  (``engine.api.apply_event``, each event under its recorded engine version) up to that
  event, and ``GET /game/{id}/events`` tells
  the same log;
- every POST answered 2xx (create, join, action, end_turn) and every command answered
  over a bot's socket (the bots send their commands over their stream socket, REST when
  it is closed) is in its game's log: its ``Idempotency-Key`` (a socket command's ``id``)
  is in an event's ``command_id``;
- each killed process is back: ``up`` in ``cluster.json`` with a new PID, ``/healthz``
  200 through nginx and on every gateway.

With ``--scenario`` (repeatable; default: all, one after the other on the same cluster)
it runs instead, or also, the fault scenarios of :data:`SCENARIOS` (2 of 3 NATS nodes
down 25 s, the busiest NATS node paused 30 s, one session paused 25 s), each with new
games and a pacer game that writes through the fault (:func:`pace_writes`), and prints
for each fault the checks above, the longest time without an accepted write and the p99
of the requests sent during it (docs/faults.md).

It prints a report and exits 1 when a check fails. The bots retry a request that got
no answer, 502, 503 or 504 with the SAME request (same ``Idempotency-Key``), as a client
should (:class:`RetryingTransport`); nothing else is retried. A command the socket did
not answer (closed, silent past the timeout, 503) is sent again over REST with the same
key, as the SDK does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from client.bot_base import CommandTiming
from client.bots import LifeBot
from client.cellwar_bot import CellWarBot
from client.sdk import ApiError, AsyncCellWarClient
from deploy.harness import RunnerProcess, http_get, pid_alive

#: Statuses a bot retries (with the same request): a proxy without an upstream, a backend down.
RETRY_STATUSES = frozenset({502, 503, 504})

#: What the run changes in the services' settings (children inherit the runner's env):
#: the gateways' per-client rate limits off (every bot comes from 127.0.0.1 through
#: nginx), a short lease so a killed session's games are ticked again within seconds.
CHAOS_ENV: dict[str, str] = {
    "CELLWAR_RATE_LIMIT_PER_S": "0",
    "CELLWAR_RATE_LIMIT_BURST": "0",
    "CELLWAR_CREATE_LIMIT_PER_MIN": "0",
    # The cluster's gateways share one join window (NATS KV): the bots' joins, all from
    # 127.0.0.1, would meet it.
    "CELLWAR_JOIN_LIMIT_PER_MIN": "0",
    "CELLWAR_LEASE_TTL_S": "3",
    "CELLWAR_LOG_LEVEL": "warning",
}

#: Order of the kills: one process of each role.
KILL_ORDER = ("nats", "session", "engine", "gateway")

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_GAME_PATH = re.compile(r"^/game/([A-Za-z0-9_-]+)/(join|action|end_turn|leave)$")


@dataclass
class Answer:
    """A POST the server answered 2xx, or a bot's command answered over its socket.

    Attributes:
        game_id: the game ("" for a create until its answer names it).
        command: ``create``, ``join``, ``action``, ``end_turn`` or ``leave``.
        key: the request's ``Idempotency-Key``.
        player_id: the acting seat (0 for create and join).
        attempts: how many times the request was sent.
    """

    game_id: str
    command: str
    key: str
    player_id: int
    attempts: int


@dataclass
class Recorder:
    """What :class:`RetryingTransport` saw: 2xx answers, retries, seats by token."""

    answers: list[Answer] = field(default_factory=list)
    seats: dict[str, tuple[str, int]] = field(default_factory=dict)
    retries: int = 0
    retried_statuses: dict[str, int] = field(default_factory=dict)
    #: every HTTP exchange: (start, seconds it took, status; 0 = no answer), monotonic
    attempts: list[tuple[float, float, int]] = field(default_factory=list)
    #: monotonic times of the 2xx answers to POSTs (accepted writes)
    accepted: list[float] = field(default_factory=list)
    #: 409 answers whose code is ``CONFLICT`` (what a client reads as final)
    conflicts: list[str] = field(default_factory=list)
    #: 503 answers without ``Retry-After`` (a fault's answer must say when to retry)
    no_retry_after: int = 0

    def on_command(self, bot: Any, timing: CommandTiming) -> None:
        """The bots' ``on_command`` hook: a command the socket carried (open before and
        after it) counts as an exchange, and once answered as an accepted write and an
        answer to find in the log. A command sent over REST, or sent again over REST
        after its socket closed, is the transport's to record."""
        if not timing.over_socket:
            return
        self.attempts.append((timing.sent, timing.seconds, timing.status))
        if timing.status == 409 and timing.code == "CONFLICT":
            self.conflicts.append(f"WS {timing.name}")
        if timing.status == 200:
            self.accepted.append(timing.sent + timing.seconds)
            self.answers.append(Answer(bot.game_id, timing.name, timing.key, bot.seat.player_id, 1))


class RetryingTransport(httpx.AsyncHTTPTransport):
    """An httpx transport that sends a request again, unchanged (so with the same
    ``Idempotency-Key``), when it got no answer or 502/503/504, until ``deadline_s``
    seconds passed; and records every 2xx answer to a POST in ``recorder``.

    Args:
        recorder: where answers go.
        deadline_s: how long one request may be retried (seconds).
    """

    def __init__(self, recorder: Recorder, *, deadline_s: float = 90.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.recorder = recorder
        self.deadline_s = deadline_s

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self.deadline_s
        pause = 0.2
        attempts = 0
        while True:
            attempts += 1
            why = ""
            sent = time.monotonic()
            try:
                response = await super().handle_async_request(request)
            except (httpx.TransportError, httpx.TimeoutException) as exc:
                self.recorder.attempts.append((sent, time.monotonic() - sent, 0))
                if time.monotonic() > deadline:
                    raise
                why = type(exc).__name__
            else:
                self.recorder.attempts.append((sent, time.monotonic() - sent, response.status_code))
                if response.status_code == 503 and "retry-after" not in response.headers:
                    self.recorder.no_retry_after += 1
                if response.status_code == 409:
                    await response.aread()
                    if b'"CONFLICT"' in response.content:
                        self.recorder.conflicts.append(f"{request.method} {request.url.path}")
                if response.status_code not in RETRY_STATUSES or time.monotonic() > deadline:
                    if request.method == "POST" and 200 <= response.status_code < 300:
                        await response.aread()
                        self.recorder.accepted.append(time.monotonic())
                        self._record(request, response, attempts)
                    return response
                await response.aclose()
                why = str(response.status_code)
            self.recorder.retries += 1
            self.recorder.retried_statuses[why] = self.recorder.retried_statuses.get(why, 0) + 1
            await asyncio.sleep(pause)
            pause = min(pause * 2, 2.0)

    def _record(self, request: httpx.Request, response: httpx.Response, attempts: int) -> None:
        key = request.headers.get("Idempotency-Key", "")
        path = request.url.path
        try:
            body = response.json()
        except ValueError:
            body = {}
        if path == "/game/create":
            self.recorder.answers.append(Answer(str(body.get("game_id", "")), "create", key, 0, attempts))
            return
        match = _GAME_PATH.match(path)
        if not match:
            return
        game_id, command = match.groups()
        if command == "join":
            self.recorder.seats[str(body.get("player_token"))] = (game_id, int(body.get("player_id", 0)))
            self.recorder.answers.append(Answer(game_id, "join", key, 0, attempts))
            return
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        _, player = self.recorder.seats.get(token, (game_id, -1))
        self.recorder.answers.append(Answer(game_id, command, key, player, attempts))


@dataclass
class GameRun:
    """One bot game of the run."""

    kind: str
    game_id: str = ""
    started: bool = False
    finished: bool = False
    finished_at: float = 0.0
    error: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)
    #: The game's bots and their play tasks (for :func:`stuck_bots`), not reported.
    bots: list[tuple[Any, asyncio.Task]] = field(default_factory=list, repr=False)


@dataclass
class Kill:
    """One SIGKILL of the run and its outcome."""

    name: str
    old_pid: int
    at: float
    new_pid: int | None = None
    back_after_s: float | None = None
    running_games: int = 0


@dataclass
class FaultRun:
    """One fault of a scenario (:data:`SCENARIOS`) and what the clients saw meanwhile.

    Attributes:
        scenario: its name (``quorum``, ``nats-pause``, ``session-pause``).
        what: what was done, for people (``SIGKILL nats-1, nats-2; kept down``).
        targets: the processes it hit.
        start / end: monotonic times of the fault's start and end.
        longest_gap_s: longest time without an accepted write (a 2xx POST, a command
            answered over a socket) from the fault's start until :data:`RECOVERY_S`
            after its end (or the games' end).
        p99_s / max_s: of the HTTP exchanges and socket commands sent during the fault
            (seconds; each exchange, a retried request counts once per try).
        requests: how many were sent during the fault; ``statuses``: their statuses.
    """

    scenario: str
    what: str = ""
    targets: list[str] = field(default_factory=list)
    start: float = 0.0
    end: float = 0.0
    longest_gap_s: float | None = None
    p99_s: float | None = None
    max_s: float | None = None
    requests: int = 0
    statuses: dict[str, int] = field(default_factory=dict)


@dataclass
class Report:
    """Everything the run measured; ``violations`` empty = every check passed."""

    games: list[GameRun] = field(default_factory=list)
    kills: list[Kill] = field(default_factory=list)
    faults: list[FaultRun] = field(default_factory=list)
    conflicts: int = 0
    no_retry_after: int = 0
    answers: int = 0
    retries: int = 0
    retried_statuses: dict[str, int] = field(default_factory=dict)
    violations: dict[str, list[str]] = field(default_factory=dict)
    durations: dict[str, float] = field(default_factory=dict)

    def fail(self, check: str, message: str) -> None:
        """Note a failed ``check``."""
        self.violations.setdefault(check, []).append(message)

    def summary(self) -> str:
        """The report as text for people."""
        lines = []
        done = sum(g.finished for g in self.games)
        lines.append(f"games: {done}/{len(self.games)} finished "
                     f"({sum(g.kind == 'life' for g in self.games)} Life, "
                     f"{sum(g.kind == 'cellwar' for g in self.games)} CellWar"
                     f"{', 1 pacer' if any(g.kind == 'pacer' for g in self.games) else ''}), "
                     f"{sum(len(g.events) for g in self.games)} events")
        lines.append(
            f"answered POSTs and socket commands: {self.answers}; retried requests: {self.retries} "
            f"{self.retried_statuses}"
        )
        for k in self.kills:
            back = f"back as pid {k.new_pid} after {k.back_after_s:.1f} s" if k.new_pid else "NOT back"
            lines.append(f"killed {k.name} (pid {k.old_pid}) with {k.running_games} games running: {back}")
        for f in self.faults:
            lines.extend(self.fault_lines(f))
        lines.append(f"409 CONFLICT answers: {self.conflicts}; 503 answers without Retry-After: {self.no_retry_after}")
        lines.append("durations: " + ", ".join(f"{k} {v:.1f} s" for k, v in self.durations.items()))
        if not self.violations:
            lines.append("every check passed")
        for check, messages in self.violations.items():
            lines.append(f"FAILED {check}: {len(messages)}")
            lines.extend(f"  - {m}" for m in messages[:10])
        return "\n".join(lines)


    def fault_lines(self, f: FaultRun) -> list[str]:
        """The figures of one fault: the games, the integrity checks, the pause in
        accepted writes and the requests' p99 during the fault."""
        logs = sum(1 for g in self.games if g.game_id)
        folded = logs - len({m.split(":")[0] for m in self.violations.get("fold", [])})
        lost = len(self.violations.get("answered_in_log", []))
        duplicated = len(self.violations.get("command_once", [])) + len(self.violations.get("contiguous", []))
        gap = "-" if f.longest_gap_s is None else f"{f.longest_gap_s:.1f} s"
        p99 = "-" if f.p99_s is None else f"{f.p99_s:.2f} s"
        peak = "-" if f.max_s is None else f"{f.max_s:.2f} s"
        return [
            f"fault {f.scenario}: {f.what} for {f.end - f.start:.1f} s",
            f"  games finished: {sum(g.finished for g in self.games)}/{len(self.games)}; acknowledged "
            f"events lost: {lost}, duplicated: {duplicated}; hashes equal to the fold: {folded}/{logs} logs",
            f"  longest time without an accepted write: {gap}; requests during the fault: {f.requests}, "
            f"p99 {p99}, max {peak}; statuses {dict(sorted(f.statuses.items()))}",
        ]


# -- the fault figures


#: Seconds after a fault's end still counted in its longest time without a write.
RECOVERY_S = 20.0


def longest_gap(times: Sequence[float], start: float, end: float) -> float:
    """The longest stretch of ``[start, end]`` that holds none of ``times`` (seconds);
    ``end - start`` when none falls inside."""
    inside = sorted(t for t in times if start <= t <= end)
    edges = [start, *inside, end]
    return max(b - a for a, b in zip(edges, edges[1:], strict=False))


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of ``values`` by nearest rank; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 1))  # ceil(n q), at least the first
    return ordered[int(rank) - 1]


def fault_figures(recorder: Recorder, fault: FaultRun, games_over: float) -> None:
    """Fill ``fault``'s figures from what the bots' transport recorded (:class:`FaultRun`)."""
    until = max(min(fault.end + RECOVERY_S, games_over), fault.end)
    fault.longest_gap_s = longest_gap(recorder.accepted, fault.start, until)
    during = [(took, status) for sent, took, status in recorder.attempts if fault.start <= sent <= fault.end]
    fault.requests = len(during)
    fault.p99_s = percentile([took for took, _ in during], 0.99)
    fault.max_s = max((took for took, _ in during), default=None)
    statuses: dict[str, int] = {}
    for _, status in during:
        statuses[str(status or "none")] = statuses.get(str(status or "none"), 0) + 1
    fault.statuses = statuses


# -- the faults


def _nats_nodes(run: RunnerProcess) -> list[str]:
    return [p["name"] for p in run.processes() if p["role"] == "nats"]


def nats_connections(run: RunnerProcess) -> dict[str, int]:
    """Client connections per NATS node (``/connz`` of each node; a node that does not
    answer is left out)."""
    counts: dict[str, int] = {}
    for k, name in enumerate(_nats_nodes(run), 1):
        status, body = http_get(f"http://127.0.0.1:{run.bases.nats_monitor_port(k)}/connz", 2.0)
        if status != 200:
            continue
        try:
            counts[name] = int(json.loads(body).get("num_connections", 0))
        except (ValueError, AttributeError):
            continue
    return counts


def busiest_nats_node(run: RunnerProcess) -> str:
    """The NATS node holding the most client connections (``/connz`` of each node)."""
    counts = nats_connections(run)
    return max(counts, key=lambda name: counts[name]) if counts else _nats_nodes(run)[0]


async def pause_busiest_nats_node(run: RunnerProcess, hold_s: float, say: Callable[[str], None]) -> FaultRun:
    """SIGSTOP the NATS node holding the most client connections for ``hold_s``
    seconds; the connections per node before and after go into the fault's ``what``."""
    before = nats_connections(run)
    fault = await pause(run, "nats-pause", busiest_nats_node(run), hold_s, say)
    await asyncio.sleep(2.0)
    fault.what += f" (client connections per node before: {before}, after: {nats_connections(run)})"
    return fault


async def quorum_loss(run: RunnerProcess, hold_s: float, say: Callable[[str], None]) -> FaultRun:
    """SIGKILL 2 of the 3 NATS nodes (the GAME_EVENTS leader first) and keep them down
    for ``hold_s`` seconds: a restart by the runner is stopped (SIGSTOP) as soon as it
    appears and let go (SIGCONT) at the end. Waits until both are up again."""
    nodes = _nats_nodes(run)
    leader = _stream_leader(run)
    victims = ([leader] if leader in nodes else []) + [n for n in nodes if n != leader]
    victims = victims[:2]
    old = {n: int(run.process(n)["pid"]) for n in victims}
    fault = FaultRun("quorum", f"SIGKILL {', '.join(victims)} (kept down)", victims)
    say(f"SIGKILL {', '.join(victims)} for {hold_s:g} s")
    fault.start = time.monotonic()
    for n in victims:
        os.kill(old[n], signal.SIGKILL)
    held: dict[str, int] = {}
    while time.monotonic() < fault.start + hold_s:
        for n in victims:
            pid = int(run.process(n).get("pid") or 0)
            if pid and pid != old[n] and held.get(n) != pid and pid_alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
                    held[n] = pid
        await asyncio.sleep(0.05)
    for pid in held.values():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
    fault.end = time.monotonic()
    say(f"{', '.join(victims)} let go after {fault.end - fault.start:.1f} s")
    for n in victims:
        await asyncio.to_thread(run.wait_back, n, old[n], 120.0)
    return fault


async def pause(
    run: RunnerProcess, scenario: str, name: str, hold_s: float, say: Callable[[str], None]
) -> FaultRun:
    """SIGSTOP process ``name`` for ``hold_s`` seconds, then SIGCONT."""
    pid = int(run.process(name)["pid"])
    fault = FaultRun(scenario, f"SIGSTOP {name} (pid {pid})", [name])
    say(f"SIGSTOP {name} (pid {pid}) for {hold_s:g} s")
    fault.start = time.monotonic()
    os.kill(pid, signal.SIGSTOP)
    try:
        await asyncio.sleep(hold_s)
    finally:
        os.kill(pid, signal.SIGCONT)
    fault.end = time.monotonic()
    say(f"SIGCONT {name} after {fault.end - fault.start:.1f} s")
    return fault


#: The fault scenarios (name -> hold seconds, injector), as ``--scenario`` names them:
#: 2 of 3 NATS nodes down, the NATS node holding the connections paused, one session
#: instance paused. ``kills`` is the SIGKILL round of the module docstring.
SCENARIOS: dict[str, tuple[float, Callable[..., Any]]] = {
    "quorum": (25.0, quorum_loss),
    "nats-pause": (30.0, pause_busiest_nats_node),
    "session-pause": (25.0, lambda run, hold, say: pause(run, "session-pause", "session-1", hold, say)),
}


# -- the games


def life_config(size: int, budget: int, max_generations: int) -> dict[str, Any]:
    """A small 2-player Life game that ends within ``max_generations`` generations."""
    return {"width": size, "height": size, "players": 2, "budget": budget, "max_generations": max_generations}


async def play_game(
    url: str, kind: str, seed: int, recorder: Recorder, run: GameRun, *, life: dict[str, Any], cellwar: dict[str, Any]
) -> None:
    """Create one game at ``url`` and let two bots play it to the end (fills ``run``)."""
    transport = RetryingTransport(recorder)
    async with AsyncCellWarClient(url, timeout=30, transport=transport) as api:
        try:
            run.game_id = await api.create_game(kind, life if kind == "life" else cellwar)
            hook = recorder.on_command
            if kind == "life":
                bots = [
                    LifeBot(api, run.game_id, f"life-{seed}-{i}", seed=seed * 10 + i, speed=8, poll_s=1.0, on_command=hook)
                    for i in (1, 2)
                ]
            else:
                bots = [
                    CellWarBot(api, run.game_id, f"cw-{seed}-{i}", seed=seed * 10 + i, poll_s=1.0, on_command=hook)
                    for i in (1, 2)
                ]
            for bot in bots:
                await bot.join()
            run.started = True
            run.bots = [(bot, asyncio.create_task(bot.play())) for bot in bots]
            await asyncio.gather(*(task for _, task in run.bots))
            view = await api.state(run.game_id, bots[0].seat.token)
            deadline = time.monotonic() + 30
            while view.get("phase") != "finished" and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
                view = await api.state(run.game_id, bots[0].seat.token)
            run.finished = view.get("phase") == "finished"
            run.finished_at = time.monotonic()
            if not run.finished:
                run.error = f"bots returned but the game is in phase {view.get('phase')!r}"
        except Exception as exc:  # noqa: BLE001 - reported per game
            run.error = f"{type(exc).__name__}: {exc}"


#: Seconds between two writes of a fault scenario's pacer game (:func:`pace_writes`).
PACE_S = 0.25


async def pace_writes(
    url: str, recorder: Recorder, run: GameRun, stop: asyncio.Event, *, life: dict[str, Any], pace_s: float = PACE_S
) -> None:
    """The pacer of a fault scenario: a 2-player Life game whose first seat, on its
    placement turn, places one cell of its zone and erases it again, one command every
    ``pace_s`` seconds (over REST, each with its own ``Idempotency-Key``, sent again
    unchanged after a 503 as the bots' requests are; an erase gives the budget back, so
    it can go on) until ``stop`` is set; then the second seat leaves, which ends the
    game (fills ``run``).

    The bots play as fast as they are answered and may have sent their last command
    before a fault begins (then only their reads meet it); the pacer keeps writing
    through the fault, so its figures (the statuses of the requests sent during it, the
    longest time without an accepted write) are those of a player who acts then."""
    async with AsyncCellWarClient(url, timeout=30, transport=RetryingTransport(recorder)) as api:
        try:
            run.game_id = await api.create_game("life", life)
            first = await api.join(run.game_id, "pacer-1")
            second = await api.join(run.game_id, "pacer-2")
            run.started = True
            x0, y0, *_ = (await api.state(run.game_id, first.token))["zone"]
            cells, k = [[int(x0), int(y0)]], 0
            while not stop.is_set():
                action = {"type": "erase" if k % 2 else "place", "cells": cells}
                await api.act(run.game_id, first.token, action, idempotency_key=str(uuid.uuid4()))
                k += 1
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), pace_s)
            await api.leave(run.game_id, second.token, idempotency_key=str(uuid.uuid4()))
            view = await api.state(run.game_id, first.token)
            run.finished = view.get("phase") == "finished"
            run.finished_at = time.monotonic()
            if not run.finished:
                run.error = f"the pacer's game is in phase {view.get('phase')!r} after a seat left"
        except Exception as exc:  # noqa: BLE001 - reported as the game's
            run.error = f"{type(exc).__name__}: {exc}"


def awaiting(task: asyncio.Task) -> str:
    """Where ``task`` waits: its chain of awaited coroutines, innermost last
    (``function:line``), and what the innermost one awaits."""
    where = []
    coro = task.get_coro()
    while coro is not None:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "ag_frame", None)
        if frame is not None:
            where.append(f"{frame.f_code.co_name}:{frame.f_lineno}")
        nxt = getattr(coro, "cr_await", None) or getattr(coro, "ag_await", None)
        if nxt is None or not hasattr(nxt, "cr_frame") and not hasattr(nxt, "ag_frame"):
            if nxt is not None:  # a future (its iterator), a task
                where.append("future" if type(nxt).__name__ == "FutureIter" else type(nxt).__name__)
            break
        coro = nxt
    return " > ".join(where) or ("done" if task.done() else "?")


def stuck_bots(run: GameRun) -> str:
    """What each bot of a game not over was doing: the newest view it saw (seq, phase,
    turn, its own player id), what it played on last, and where it waits."""
    parts = []
    for bot, task in run.bots:
        view = getattr(bot, "last_view", None) or {}
        parts.append(
            f"{bot.name}: view seq {view.get('seq')} {view.get('phase')} turn {view.get('turn')} "
            f"you {view.get('you')}, played on seq {getattr(bot, 'played_seq', None)}, "
            f"waits in {awaiting(task)}"
        )
    return "; ".join(parts) or "no bot playing"


async def gateway_views(run: RunnerProcess, game: GameRun) -> str:
    """The seq, phase and turn of ``game``'s view for its first bot as each gateway
    answers it directly (not through nginx): tells a session behind the log apart."""
    if not game.bots:
        return "no views"
    token = game.bots[0][0].seat.token
    parts = []
    for p in run.processes():
        if p["role"] != "gateway":
            continue
        try:
            async with httpx.AsyncClient(base_url=f"http://{p['addr']}", timeout=5) as http:
                r = await http.get(f"/game/{game.game_id}/state", headers={"Authorization": f"Bearer {token}"})
            view = r.json() if r.status_code == 200 else {}
            parts.append(f"{p['name']} {r.status_code} seq {view.get('seq')} {view.get('phase')} turn {view.get('turn')}")
        except (httpx.HTTPError, ValueError) as exc:
            parts.append(f"{p['name']} {type(exc).__name__}")
    return "views: " + ", ".join(parts)


# -- the checks


async def read_jetstream_logs(nats_urls: Sequence[str], game_ids: Sequence[str]) -> dict[str, list[Any]]:
    """Every game's events as stored (``cellwar.v1.Event``), straight from JetStream.

    Reads each game's subject with an ephemeral pull consumer until the last message of
    the subject (``get_last_msg``) has been seen.
    """
    import nats
    from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

    from cellwar.v1 import events_pb2

    async def read_one(js, game_id: str) -> list[Any]:
        subject = f"games.{game_id}.events"
        last_seq = (await js.get_last_msg("GAME_EVENTS", subject)).seq
        sub = await js.pull_subscribe(
            subject,
            stream="GAME_EVENTS",
            config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL, ack_policy=AckPolicy.NONE),
        )
        events = []
        try:
            seen = 0
            while seen < last_seq:
                for msg in await sub.fetch(batch=500, timeout=5):
                    event = events_pb2.Event()
                    event.ParseFromString(msg.data)
                    events.append(event)
                    seen = msg.metadata.sequence.stream
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        return events

    nc = await nats.connect(list(nats_urls), connect_timeout=5, max_reconnect_attempts=20)
    try:
        js = nc.jetstream(timeout=10)
        out: dict[str, list[Any]] = {}
        for game_id in game_ids:
            for attempt in range(10):
                try:
                    out[game_id] = await read_one(js, game_id)
                    break
                except (nats.errors.Error, TimeoutError):
                    # A node that just came back may not answer for its consumers yet.
                    if attempt == 9:
                        raise
                    await asyncio.sleep(1.0)
        return out
    finally:
        await nc.close()


def check_log(game_id: str, events: Sequence[Any], report: Report) -> None:
    """Contiguity, command ids and hashes of one stored log (module docstring)."""
    from engine import api as engine

    seqs = [int(e.seq) for e in events]
    if seqs != list(range(1, len(seqs) + 1)):
        report.fail("contiguous", f"{game_id}: seqs are not 1..{len(seqs)}: {seqs[:50]}")
    runs: dict[str, list[int]] = {}
    for index, e in enumerate(events):
        if e.command_id:
            m = _UUID.search(e.command_id)
            runs.setdefault(m.group(0) if m else e.command_id, []).append(index)
    for key, indexes in runs.items():
        if indexes != list(range(indexes[0], indexes[0] + len(indexes))):
            report.fail("command_once", f"{game_id}: command {key} at seqs {[seqs[i] for i in indexes]}")
    state = None
    for e in events:
        try:
            state = engine.apply_event(
                state, e.type, int(e.actor), json.loads(e.payload or b"{}"), engine_version=e.engine_version
            )
        except Exception as exc:  # noqa: BLE001 - the log and the rules disagree
            report.fail("fold", f"{game_id}: seq {e.seq} {e.type} does not fold: {exc}")
            return
        if e.state_hash and engine.state_hash(state) != e.state_hash:
            report.fail("fold", f"{game_id}: hash of seq {e.seq} ({e.type}) differs from the fold")
            return
        if not e.state_hash:
            report.fail("fold", f"{game_id}: seq {e.seq} ({e.type}) has no state_hash")


def check_answers(recorder: Recorder, logs: dict[str, list[Any]], report: Report) -> None:
    """Every 2xx POST is in its game's log (its key inside an event's command_id, with
    the right actor for a player's command)."""
    for a in recorder.answers:
        events = logs.get(a.game_id)
        if events is None:
            report.fail("answered_in_log", f"{a.command} {a.key}: game {a.game_id!r} has no log")
            continue
        found = [e for e in events if a.key and a.key in e.command_id]
        if not found:
            report.fail("answered_in_log", f"{a.game_id}: {a.command} by player {a.player_id} key {a.key} not in the log")
        elif a.command not in ("create", "join") and all(int(e.actor) != a.player_id for e in found):
            report.fail("answered_in_log", f"{a.game_id}: {a.command} key {a.key} recorded for another actor")


def compare_rest_log(game_id: str, rest: list[dict[str, Any]], stored: Sequence[Any], report: Report) -> None:
    """``GET /game/{id}/events`` of a finished game tells the stored log (seq, type, hash)."""
    want = [(int(e.seq), e.type, e.state_hash or None) for e in stored]
    got = [(int(e["seq"]), e["type"], e.get("state_hash")) for e in rest]
    if got != want:
        report.fail("rest_log", f"{game_id}: REST log ({len(got)} events) differs from JetStream ({len(want)})")


# -- the run


def _stream_leader(run: RunnerProcess) -> str | None:
    """The NATS node that leads GAME_EVENTS (from a node's ``/jsz``), if known."""
    for k in range(1, run.sizes["nats"] + 1):
        status, body = http_get(
            f"http://127.0.0.1:{run.bases.nats_monitor_port(k)}/jsz?streams=true", 2.0
        )
        if status != 200:
            continue
        try:
            for account in json.loads(body).get("account_details", []):
                for stream in account.get("stream_detail", []):
                    if stream.get("name") == "GAME_EVENTS":
                        return stream.get("cluster", {}).get("leader")
        except (ValueError, AttributeError):
            continue
    return None


def pick_victims(run: RunnerProcess, order: Sequence[str] = KILL_ORDER) -> list[str]:
    """The process to kill of each role: the GAME_EVENTS leader among NATS nodes, the
    first instance of the others."""
    present = {p["name"] for p in run.processes()}
    names = []
    for role in order:
        leader = _stream_leader(run) if role == "nats" else None
        if leader in present:
            names.append(leader)
        else:  # the first instance (``session-1``), or the only one in ``make run``
            names.append(f"{role}-1" if f"{role}-1" in present else role)
    return names


async def run_chaos(
    run: RunnerProcess,
    *,
    games: int = 20,
    gap_s: float = 4.0,
    first_kill_s: float = 3.0,
    life: dict[str, Any] | None = None,
    cellwar: dict[str, Any] | None = None,
    kill_order: Sequence[str] = KILL_ORDER,
    game_timeout_s: float = 120.0,
    say: Callable[[str], None] = lambda line: None,
    fault: Callable[[RunnerProcess, Callable[[str], None]], Awaitable[FaultRun]] | None = None,
) -> Report:
    """Play ``games`` bot games through ``run`` (a started, up cluster) while killing one
    process of each role of ``kill_order`` — or, with ``fault`` (e.g. a scenario of
    :data:`SCENARIOS` bound to its hold), while that fault lasts; then check (module
    docstring) and, for a fault, measure it (:func:`fault_figures`).

    A game not over after ``game_timeout_s`` seconds is abandoned (and reported).

    Returns:
        The :class:`Report` (``violations`` empty when every check passed).
    """
    life = life or life_config(24, 30, 1200)
    cellwar = cellwar or {"width": 10, "height": 10, "players": 2}
    report = Report()
    recorder = Recorder()
    t0 = time.monotonic()
    runs = [GameRun("life" if i % 2 == 0 else "cellwar") for i in range(games)]

    async def one(i: int, g: GameRun) -> None:
        game = asyncio.create_task(play_game(run.url, g.kind, i + 1, recorder, g, life=life, cellwar=cellwar))
        done, _ = await asyncio.wait({game}, timeout=game_timeout_s)
        if not done:  # where the bots wait is read before the cancel unwinds them
            views = await gateway_views(run, g)
            g.error = f"not over after {game_timeout_s:.0f} s; {stuck_bots(g)}; {views}"
            game.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await game

    tasks = [asyncio.create_task(one(i, g)) for i, g in enumerate(runs)]

    def running() -> int:
        return sum(1 for g, t in zip(runs, tasks, strict=True) if g.game_id and not t.done())

    async def watch_back(kill: Kill) -> None:
        try:
            entry = await asyncio.to_thread(run.wait_back, kill.name, kill.old_pid, 90.0)
        except TimeoutError as exc:
            report.fail("processes_back", str(exc))
            return
        kill.new_pid = int(entry["pid"])
        kill.back_after_s = time.monotonic() - kill.at

    pacing: GameRun | None = None
    if fault is not None:  # a fault's pacer game writes before, during and after it
        pacing, stop_pacing = GameRun("pacer"), asyncio.Event()
        pacer = asyncio.create_task(pace_writes(run.url, recorder, pacing, stop_pacing, life=life))
    report.games = runs if pacing is None else [*runs, pacing]  # every game the checks read

    def seated() -> bool:
        games = all(g.started or t.done() for g, t in zip(runs, tasks, strict=True))
        return games and (pacing is None or pacing.started or pacer.done())

    watchers = []
    # The kills start once every game is seated and playing (or after 30 s).
    deadline = time.monotonic() + 30
    while not seated() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    report.durations["seated"] = time.monotonic() - t0
    await asyncio.sleep(first_kill_s)
    victims = [] if fault is not None else pick_victims(run, kill_order)
    if fault is not None:
        report.faults.append(await fault(run, say))
    for i, name in enumerate(victims):
        if i:
            await asyncio.sleep(gap_s)
        entry = run.process(name)
        pid = int(entry["pid"])
        kill = Kill(name, pid, time.monotonic(), running_games=running())
        report.kills.append(kill)
        say(f"SIGKILL {name} (pid {pid}) with {kill.running_games} games running")
        os.kill(pid, signal.SIGKILL)
        watchers.append(asyncio.create_task(watch_back(kill)))
    report.durations["kills"] = time.monotonic() - t0

    await asyncio.gather(*tasks)
    report.durations["games"] = time.monotonic() - t0
    say(f"games over after {report.durations['games']:.1f} s")
    if pacing is not None:  # its writes go on until one is accepted after the fault
        end = report.faults[-1].end
        deadline = time.monotonic() + RECOVERY_S
        while not any(t > end for t in recorder.accepted) and time.monotonic() < deadline and not pacer.done():
            await asyncio.sleep(0.1)
        stop_pacing.set()
        await pacer

    # The killed processes come back with new PIDs; /healthz through nginx and on every gateway.
    await asyncio.gather(*watchers)
    for p in run.processes():
        if p["role"] == "gateway":
            status, _ = await asyncio.to_thread(http_get, f"http://{p['addr']}/healthz", 5.0)
            if status != 200:
                report.fail("processes_back", f"{p['name']} /healthz answered {status}")
    status, _ = await asyncio.to_thread(http_get, run.url + "/healthz", 5.0)
    if status != 200:
        report.fail("processes_back", f"/healthz through nginx answered {status}")

    for g in report.games:
        if not g.finished:
            report.fail("finished", f"{g.kind} game {g.game_id or '(not created)'}: {g.error or 'not finished'}")

    # The logs, straight from JetStream, and through REST.
    created = [g.game_id for g in report.games if g.game_id]
    nats_urls = [f"nats://{p['addr']}" for p in run.processes() if p["role"] == "nats"]
    logs = await read_jetstream_logs(nats_urls, created)
    async with AsyncCellWarClient(run.url, timeout=30, transport=RetryingTransport(Recorder())) as api:
        for g in report.games:
            if not g.game_id:
                continue
            stored = logs[g.game_id]
            check_log(g.game_id, stored, report)
            if not g.finished and stored:
                last = stored[-1]
                report.fail("finished", f"{g.game_id}: its log ends at seq {last.seq} ({last.type}, actor {last.actor})")
            if g.finished:
                try:
                    rest = await api.events(g.game_id)
                except ApiError as err:
                    report.fail("rest_log", f"{g.game_id}: GET /events of the finished game answered {err}")
                    continue
                g.events = rest
                compare_rest_log(g.game_id, rest, stored, report)
    check_answers(recorder, logs, report)
    report.answers = len(recorder.answers)
    report.conflicts = len(recorder.conflicts)
    report.no_retry_after = recorder.no_retry_after
    for f in report.faults:
        fault_figures(recorder, f, t0 + report.durations["games"])
    report.retries = recorder.retries
    report.retried_statuses = dict(recorder.retried_statuses)
    report.durations["total"] = time.monotonic() - t0
    return report


def main(argv: list[str] | None = None) -> int:
    """``python -m deploy.chaos``: start a cluster, run, print the report. Exit code 0
    when every check passed, 1 otherwise, 2 when the cluster could not start."""
    from deploy.nginx import nginx_binary

    parser = argparse.ArgumentParser(prog="python -m deploy.chaos", description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="concurrent bot games (half Life, half CellWar)")
    parser.add_argument("--gap", type=float, default=4.0, help="seconds between two kills")
    parser.add_argument("--scale", action="append", default=[], metavar="ROLE=N", help="as deploy.run --scale")
    parser.add_argument("--keep", action="store_true", help="keep the data folder (logs) after the run")
    parser.add_argument(
        "--scenario",
        action="append",
        choices=["kills", *SCENARIOS],
        help="run only this scenario (repeatable; default: kills, then "
        + ", ".join(SCENARIOS)
        + ", one after the other on the same cluster)",
    )
    parser.add_argument("--hold", type=float, default=None, help="seconds each fault lasts (default: the scenario's)")
    args = parser.parse_args(argv)
    scenarios = args.scenario or ["kills", *SCENARIOS]
    try:
        nginx_binary()
    except FileNotFoundError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2

    def say(line: str) -> None:
        sys.stderr.write(f"[chaos {time.strftime('%H:%M:%S')}] {line}\n")
        sys.stderr.flush()

    tmp = tempfile.mkdtemp(prefix="cellwar-chaos-")
    run = RunnerProcess(Path(tmp) / "data", cluster=True, scale=args.scale, env=CHAOS_ENV)
    say(f"starting the cluster on {run.url} (data in {run.data_dir})")
    run.start()
    reports: list[tuple[str, Report]] = []
    try:
        t = time.monotonic()
        run.wait_up()
        say(f"cluster up in {time.monotonic() - t:.1f} s")
        for name in scenarios:
            run.wait_up()
            say(f"scenario {name}")
            fault = None
            if name != "kills":
                hold, inject = SCENARIOS[name]
                hold = args.hold if args.hold is not None else hold

                def fault(run: RunnerProcess, say: Callable[[str], None], inject=inject, hold=hold):
                    return inject(run, hold, say)

            reports.append((name, asyncio.run(run_chaos(run, games=args.games, gap_s=args.gap, say=say, fault=fault))))
    except (RuntimeError, TimeoutError) as exc:
        say(f"the cluster did not start: {exc}")
        run.stop()
        return 2
    finally:
        if run.proc is not None and run.proc.poll() is None:
            run.stop()
    for name, report in reports:
        print(f"== scenario {name}")
        print(report.summary())
    if args.keep:
        print(f"data and logs kept in {run.data_dir}")
    else:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if any(report.violations for _, report in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
