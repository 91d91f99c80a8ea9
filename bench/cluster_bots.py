"""Bot games on ``make run-cluster``: the latency of the bots' commands over the seat's
WebSocket against the same games over REST.

The cluster is started as ``make run-cluster`` starts it (``python -m deploy.run
--cluster`` through :class:`deploy.harness.RunnerProcess`: 3 NATS nodes with JetStream
R3, 2 engines, 2 sessions, 2 gateways, nginx, free ports and a data folder of its own),
with the per-client limits off (every bot comes from 127.0.0.1 through nginx:
:data:`BENCH_ENV`). The bench process then keeps ``games`` bot games going at once
through nginx (:data:`GAMES`, ``--quick`` :data:`QUICK_GAMES`), half CellWar (8×8, two
infantry each, close together: :data:`CELLWAR`) and half Life (:data:`LIFE`), two API
bots each (:class:`client.bots.CellWarBot`, :class:`client.bots.LifeBot`): each of the
``games`` slots plays one game after another until ``seconds`` have passed. It does so
twice on the same cluster, first with the bots' commands over their stream socket
(``commands="socket"``, one socket per seat for views and commands), then over REST
(``commands="rest"``, a stream of its own for the views).

A command's latency is the time from the bot sending it to its answer (the bots'
``on_command`` hook, :class:`client.bot_base.CommandTiming`), the SDK's fallback to REST
included; only the commands sent while every slot plays are counted (after the first
:data:`WARMUP_S` seconds of a phase, before its ``seconds`` end).
Rows: p50 and p99 of the commands over the socket (target p99 ≤ :data:`TARGET_P99_MS` ms
at 100 games), the same over REST (info; ratio REST / socket), and, per phase, the games
finished, their median duration, the errors (failed games, commands without an answer or
answered 5xx), the CPU of the cluster's processes (``/proc/<pid>/stat``, children
such as nginx's workers included) per command, and the messages written to the JetStream
streams per command (every stream, from node 1's ``/jsz``: :func:`stream_writes`).

``python -m bench.cluster_bots [--games N] [--seconds S] [--modes socket,rest]
[--repeat K] [--kinds cellwar,life]`` runs it alone (K rounds of every mode on one
cluster).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._stack import cpu_seconds, percentile, row, run_async
from client.bot_base import CommandTiming
from client.bots import CellWarBot, LifeBot
from client.sdk import AsyncCellWarClient
from deploy.harness import RunnerProcess, http_get

#: Concurrent games (full run / ``--quick``).
GAMES = 100
QUICK_GAMES = 16
#: Seconds each phase keeps its games going (a slot starts no game after it).
SECONDS = 45.0
QUICK_SECONDS = 15.0
#: Commands sent in a phase's first seconds are not counted (creates and joins of every
#: slot at once).
WARMUP_S = 5.0
#: The target: p99 of the commands over the socket at :data:`GAMES` games (ms).
TARGET_P99_MS = 250.0
#: Longest game (seconds) before it counts as failed.
GAME_TIMEOUT_S = 120.0
MODES = ("socket", "rest")

#: CellWar: 8×8, two players, two infantry each close together (a game of a few rounds).
CELLWAR: dict[str, Any] = {
    "width": 8,
    "height": 8,
    "players": 2,
    "units": [
        {"owner": 1, "type": "infantry", "x": 1, "y": 1},
        {"owner": 1, "type": "infantry", "x": 2, "y": 1},
        {"owner": 2, "type": "infantry", "x": 6, "y": 1},
        {"owner": 2, "type": "infantry", "x": 5, "y": 1},
    ],
}
#: Life: placement, 60 generations at the bots' speed 8, then the end.
LIFE: dict[str, Any] = {"width": 30, "height": 30, "players": 2, "budget": 40, "max_generations": 60}

#: The services' settings for the run (children inherit the runner's environment): every
#: bot comes from 127.0.0.1 through nginx, so the per-client limits are off.
BENCH_ENV: dict[str, str] = {
    "CELLWAR_RATE_LIMIT_PER_S": "0",
    "CELLWAR_RATE_LIMIT_BURST": "0",
    "CELLWAR_CREATE_LIMIT_PER_MIN": "0",
    "CELLWAR_JOIN_LIMIT_PER_MIN": "0",
    "CELLWAR_READ_LIMIT_PER_S": "0",
    "CELLWAR_READ_LIMIT_BURST": "0",
    "CELLWAR_READ_CONCURRENCY": "0",
    "CELLWAR_READ_GLOBAL_PER_S": "0",
    "CELLWAR_WS_MESSAGES_PER_S": "0",
    "CELLWAR_WS_MAX_PER_ADDRESS": "0",
    "CELLWAR_LOG_LEVEL": "warning",
}


@dataclass
class Phase:
    """What one phase (one way of sending commands) measured."""

    mode: str
    games: int
    seconds: float
    start: float = 0.0
    timings: list[CommandTiming] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)
    kinds: Counter = field(default_factory=Counter)
    failed: list[str] = field(default_factory=list)
    cpu_s: dict[str, float] = field(default_factory=dict)
    #: messages written to each JetStream stream during the phase (:func:`stream_writes`)
    writes: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    #: how late the bench's own event loop woke from a 10 ms sleep (ms; the bots' side
    #: of a command's latency when the process is short of CPU)
    loop_lag_ms: list[float] = field(default_factory=list)
    kinds_played: tuple[str, ...] = ("cellwar", "life")

    def counted(self) -> list[CommandTiming]:
        """The commands sent after the warm-up and before the phase's end (every slot
        still playing: the last games, fewer at once, are left out too)."""
        return [t for t in self.timings if self.start + WARMUP_S <= t.sent <= self.start + self.seconds]

    def summary(self) -> dict[str, Any]:
        """The phase's figures (ms, counts, CPU)."""
        counted = self.counted()
        ms = [1000.0 * t.seconds for t in counted]
        errors = [t for t in counted if t.status == 0 or t.status >= 500]
        commands = len(counted)
        cluster_cpu = sum(v for k, v in self.cpu_s.items() if k != "bench-client")
        return {
            "mode": self.mode,
            "games": self.games,
            "commands": commands,
            "commands_all": len(self.timings),
            "commands_per_s": commands / max(1e-9, self.seconds - WARMUP_S),
            "p50_ms": percentile(ms, 50),
            "p90_ms": percentile(ms, 90),
            "p99_ms": percentile(ms, 99),
            "max_ms": max(ms) if ms else None,
            "over_socket": sum(t.over_socket for t in counted),
            "refused_409": sum(t.status == 409 for t in counted),
            "command_errors": len(errors),
            "error_codes": dict(Counter(f"{t.status} {t.code}" for t in errors)),
            "games_finished": len(self.durations),
            "games_by_kind": dict(self.kinds),
            "games_failed": len(self.failed),
            "first_failures": self.failed[:5],
            "game_median_s": statistics.median(self.durations) if self.durations else None,
            "game_p90_s": percentile(self.durations, 90),
            "wall_s": self.wall_s,
            "cpu_s": {k: round(v, 2) for k, v in self.cpu_s.items()},
            "stream_writes": self.writes,
            "stream_writes_per_command": sum(self.writes.values()) / len(self.timings)
            if self.timings and self.writes else None,
            "cluster_cpu_ms_per_command": 1000.0 * cluster_cpu / len(self.timings) if self.timings else None,
            "bench_cpu_ms_per_command": 1000.0 * self.cpu_s.get("bench-client", 0.0) / len(self.timings)
            if self.timings else None,
            "client_loop_lag_p99_ms": percentile(self.loop_lag_ms, 99),
            "by_command": {
                name: {"count": len(v), "p50_ms": percentile(v, 50), "p99_ms": percentile(v, 99)}
                for name, v in _by_name(counted).items()
            },
        }


def _by_name(timings: list[CommandTiming]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for t in timings:
        out.setdefault(t.name, []).append(1000.0 * t.seconds)
    return out


def _descendants() -> dict[int, list[int]]:
    """Children by parent PID, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def cluster_cpu(run: RunnerProcess) -> dict[str, float]:
    """CPU seconds so far of each process of ``cluster.json`` with its descendants
    (nginx's workers), by name; ``bench-client`` is this process."""
    children = _descendants()
    out: dict[str, float] = {}
    for p in run.processes():
        if not p.get("pid"):
            continue
        todo, total = [int(p["pid"])], 0.0
        while todo:
            pid = todo.pop()
            total += cpu_seconds(pid)
            todo.extend(children.get(pid, ()))
        out[str(p["name"])] = total
    out["bench-client"] = cpu_seconds(os.getpid())
    return out


async def _game(api: AsyncCellWarClient, kind: str, mode: str, seed: int, phase: Phase) -> None:
    """One game of two bots, played to the end; its duration or its failure in ``phase``."""
    t0 = time.monotonic()

    def timed(_bot: Any, timing: CommandTiming) -> None:
        phase.timings.append(timing)

    try:
        if kind == "cellwar":
            game_id = await api.create_game("cellwar", CELLWAR)
            bots: list[Any] = [
                CellWarBot(api, game_id, f"cw-{i}", seed=seed * 10 + i, poll_s=2.0, commands=mode, on_command=timed)
                for i in (1, 2)
            ]
        else:
            game_id = await api.create_game("life", LIFE)
            bots = [
                LifeBot(api, game_id, f"life-{i}", seed=seed * 10 + i, speed=8, poll_s=2.0, commands=mode,
                        on_command=timed)
                for i in (1, 2)
            ]
        for bot in bots:
            await bot.join()
        finals = await asyncio.wait_for(asyncio.gather(*(bot.play() for bot in bots)), GAME_TIMEOUT_S)
        if not any(view.get("phase") == "finished" for view in finals):
            raise RuntimeError(f"game {game_id}: the bots returned in phase {finals[0].get('phase')!r}")
        phase.durations.append(time.monotonic() - t0)
        phase.kinds[kind] += 1
    except Exception as exc:  # noqa: BLE001 - counted and reported per game
        phase.failed.append(f"{kind}: {type(exc).__name__}: {str(exc)[:200]}")


async def _slot(url: str, index: int, phase: Phase, until: float) -> None:
    """Games one after another until ``until``, of the kinds of the phase in turn by slot
    (CellWar on even slots, Life on odd)."""
    kind = phase.kinds_played[index % len(phase.kinds_played)]
    async with AsyncCellWarClient(url, timeout=30, retry_unavailable_s=30.0) as api:
        n = 0
        while True:
            await _game(api, kind, phase.mode, index * 1000 + n, phase)
            n += 1
            if time.monotonic() >= until:
                return


async def _watch_loop(phase: Phase, until: float) -> None:
    while time.monotonic() < until:
        t = time.monotonic()
        await asyncio.sleep(0.01)
        phase.loop_lag_ms.append(max(0.0, 1000.0 * (time.monotonic() - t - 0.01)))


def stream_writes(run: RunnerProcess) -> dict[str, int]:
    """Messages each JetStream stream holds so far (its last sequence: a KV bucket's stream
    is ``KV_<bucket>``), as node 1 of the cluster reports them (its monitoring port,
    ``/jsz?streams=true``); empty when the node does not answer. Each write is replicated
    to the three nodes and synced (``sync_interval: always``)."""
    status, body = http_get(f"http://127.0.0.1:{run.bases.nats_monitor_port(1)}/jsz?streams=true", 5.0)
    if status != 200:
        return {}
    return {
        stream["name"]: int(stream["state"]["last_seq"])
        for account in json.loads(body).get("account_details", [])
        for stream in account.get("stream_detail", [])
    }


async def play_phase(
    run: RunnerProcess, mode: str, games: int, seconds: float, kinds: tuple[str, ...] = ("cellwar", "life")
) -> Phase:
    """``games`` slots playing games of ``kinds`` with commands over ``mode`` for ``seconds``."""
    phase = Phase(mode, games, seconds, kinds_played=kinds)
    written = stream_writes(run)
    before = cluster_cpu(run)
    phase.start = time.monotonic()
    until = phase.start + seconds
    watch = asyncio.create_task(_watch_loop(phase, until))
    await asyncio.gather(*(_slot(run.url, i, phase, until) for i in range(games)))
    await watch
    phase.wall_s = time.monotonic() - phase.start
    after = cluster_cpu(run)
    phase.cpu_s = {k: after[k] - before.get(k, 0.0) for k in after}
    if written:
        now = stream_writes(run)
        phase.writes = {k: now[k] - written.get(k, 0) for k in sorted(now) if now[k] != written.get(k, 0)}
    return phase


def _note(s: dict[str, Any]) -> None:
    print(
        f"  {s['mode']:>6} x{s['games']}: {s['commands']} commands ({s['commands_per_s']:.0f}/s), p50 "
        f"{s['p50_ms'] or 0:.1f} ms, p99 {s['p99_ms'] or 0:.1f} ms, max {s['max_ms'] or 0:.0f} ms; games "
        f"{s['games_finished']} finished {s['games_by_kind']}, {s['games_failed']} failed, median "
        f"{s['game_median_s'] or 0:.2f} s; command errors {s['command_errors']} {s['error_codes']}; "
        f"CPU per command: cluster {s['cluster_cpu_ms_per_command'] or 0:.1f} ms, bench "
        f"{s['bench_cpu_ms_per_command'] or 0:.1f} ms; JetStream writes per command "
        f"{s['stream_writes_per_command'] or 0:.2f} {s['stream_writes']}; "
        f"bench loop lag p99 {s['client_loop_lag_p99_ms'] or 0:.0f} ms",
        flush=True,
    )
    for failure in s["first_failures"]:
        print(f"    failed: {failure}", flush=True)


def measure(
    games: int, seconds: float, modes: tuple[str, ...] = MODES, repeat: int = 1,
    kinds: tuple[str, ...] = ("cellwar", "life"),
) -> list[dict[str, Any]]:
    """Start the cluster, run every mode ``repeat`` times (in turn), stop it; each phase's
    :meth:`Phase.summary`.

    Raises:
        RuntimeError, TimeoutError: the cluster did not start.
    """
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="cellwar-bench-bots-", ignore_cleanup_errors=True) as tmp:
        run = RunnerProcess(Path(tmp) / "data", cluster=True, env=BENCH_ENV)
        try:
            run.start()
            t0 = time.monotonic()
            run.wait_up()
            print(f"  cluster up in {time.monotonic() - t0:.1f} s at {run.url}", flush=True)
            for _ in range(repeat):
                for mode in modes:
                    summary = run_async(play_phase(run, mode, games, seconds, kinds)).summary()
                    _note(summary)
                    results.append(summary)
        finally:
            run.stop()
    return results


def run(quick: bool = False) -> dict[str, Any]:
    """The rows of the module docstring (``quick``: :data:`QUICK_GAMES` games,
    :data:`QUICK_SECONDS` s per phase)."""
    games, seconds = (QUICK_GAMES, QUICK_SECONDS) if quick else (GAMES, SECONDS)
    socket_run, rest_run = measure(games, seconds)
    p99, rest_p99 = socket_run["p99_ms"], rest_run["p99_ms"]
    clean = socket_run["games_failed"] == 0 and socket_run["command_errors"] == 0 and socket_run["commands"] > 0
    ok = p99 is not None and p99 <= TARGET_P99_MS and clean
    at = f"{games} games"
    rows = [
        row(
            f"bot commands over WebSocket, {at} on run-cluster: p99",
            "ms",
            p99,
            f"<= {TARGET_P99_MS:g} ms at {GAMES} games, no errors",
            ok if games >= GAMES else None,
            reference=rest_p99,
            ratio=rest_p99 / p99 if p99 and rest_p99 else None,
            detail=socket_run,
        ),
        row(f"bot commands over WebSocket, {at}: p50", "ms", socket_run["p50_ms"], "- (info)", None,
            reference=rest_run["p50_ms"],
            ratio=rest_run["p50_ms"] / socket_run["p50_ms"] if socket_run["p50_ms"] and rest_run["p50_ms"] else None),
        row(f"bot commands over REST, {at}: p99", "ms", rest_p99, "- (info: the same games over REST)", None,
            detail=rest_run),
        row(f"bot commands over REST, {at}: p50", "ms", rest_run["p50_ms"], "- (info)", None),
        row(f"bot games finished in {seconds:g} s, {at}, WebSocket (REST as reference)", "games",
            socket_run["games_finished"], "- (info)", None, reference=rest_run["games_finished"]),
        row(f"bot game median duration, {at}, WebSocket (REST as reference)", "s", socket_run["game_median_s"],
            "- (info)", None, reference=rest_run["game_median_s"]),
        row(f"cluster CPU per bot command, {at}, WebSocket (REST as reference; reads and views included)",
            "ms", socket_run["cluster_cpu_ms_per_command"], "- (info)", None,
            reference=rest_run["cluster_cpu_ms_per_command"]),
        row(f"JetStream writes per bot command, {at}, WebSocket (REST as reference; every stream, "
            "each replicated to 3 nodes and synced)",
            "writes", socket_run["stream_writes_per_command"], "- (info)", None,
            reference=rest_run["stream_writes_per_command"], writes=socket_run["stream_writes"]),
    ]
    return {
        "rows": rows,
        "quick": quick,
        "games": games,
        "phase_seconds": seconds,
        "warmup_s": WARMUP_S,
        "phases": [socket_run, rest_run],
        "topology": "python -m deploy.run --cluster (3 NATS R3, 2 engines, 2 sessions, 2 gateways, nginx); "
        "the bots in the bench process, through nginx",
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.cluster_bots``: the phases alone, printed and as JSON lines."""
    parser = argparse.ArgumentParser(prog="python -m bench.cluster_bots", description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=QUICK_GAMES, help="concurrent games")
    parser.add_argument("--seconds", type=float, default=QUICK_SECONDS, help="seconds per phase")
    parser.add_argument("--modes", default=",".join(MODES), help="socket,rest (in this order)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of every mode on one cluster")
    parser.add_argument("--kinds", default="cellwar,life", help="game kinds, in turn by slot")
    args = parser.parse_args(argv)
    modes = tuple(m for m in args.modes.split(",") if m)
    kinds = tuple(k for k in args.kinds.split(",") if k)
    for summary in measure(args.games, args.seconds, modes, args.repeat, kinds):
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
