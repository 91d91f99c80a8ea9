"""Actions over REST and over the player's WebSocket: CPU per action and actions/s with
100 concurrent 2-player games (docs/benchmarks.md, docs/api/websocket.md).

The load is the round trip's (:mod:`bench.roundtrip`): in each 2-player Life game
player 1 sends one placement or erase at a time, so every command records an event
(fsync on). Measured in the same run, on the same kind of child processes:

* **REST**: ``POST /game/{id}/action`` with httpx, one request at a time per game;
* **WebSocket commands**: ``{"type": "action", "id", "action"}`` frames on
  ``WS /game/{id}/stream``, one in flight per game, the reply ``{"type": "result"}``
  matched by ``id`` (state frames on the same socket are read and skipped);
* **the hop floor** (:mod:`bench._floor`): the same processes and hops doing no work, the
  most a REST implementation of this shape reaches here. The floor and REST run as
  :data:`PAIRS` alternated pairs (floor, REST, floor, REST): this machine's speed drifts
  by 20-35 % from one minute to the next, so each REST phase is held to the floor
  measured just before it, and the rows give the median of the pairs with their range;
* **WebSocket commands at an offered load** (:data:`PACED_PER_GAME`): then, on the same
  games, each seat sends on a schedule instead of as soon as it is answered, and the
  latency runs from the scheduled time. The closed loop keeps one command in flight per
  game, so its mean latency is games / actions/s (Little's law: 100 games at 1,500/s is
  67 ms whatever the platform does); the latency a player sees at a given rate is the
  paced phase's.

CPU per action is the user + system CPU (``/proc/<pid>/stat``) of every platform process
(nats-server, engine, session, gateway) over the measured window, divided by the actions
accepted in it; the load generator's own CPU is reported apart. Targets: WebSocket CPU
per action <= 1.0 ms, or <= 0.3x REST's in the same run where the machine is slower;
WebSocket actions/s >= 1,500, or >= 5x REST's in the same run; WebSocket p99 <= 50 ms at
1,500 actions/s offered (info on a machine with CPU steal); REST actions/s >= 0.85x the hop
floor's, and REST CPU per action <= the floor's x 1 (each the median of the pairs' ratios;
"REST's" above is the median of the REST phases).

The platform's gateway runs with its per-address create and join windows off
(``CELLWAR_CREATE_LIMIT_PER_MIN=0``, ``CELLWAR_JOIN_LIMIT_PER_MIN=0``) and no cap on the
sockets of one address: the bench creates its 100 games, and opens their sockets, from
127.0.0.1. The command buckets stay as deployed: the setup's creates and joins wait out
their ``Retry-After`` (:func:`bench.roundtrip.platform_seats`), and each seat's commands
stay below its bucket's 50/s (the 1,500 actions/s target over 100 seats is 15/s each).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from typing import Any

import httpx
import orjson
import websockets

from bench._stack import row, run_async, start_platform, timed_load
from bench.roundtrip import action_body, floor_run, measure, note, platform_seats

GAMES = 100
WS_CPU_TARGET_MS = 1.0
WS_CPU_SHARE_OF_REST = 0.3
WS_RATE_TARGET = 1500.0
WS_RATE_OVER_REST = 5.0
WS_P99_TARGET_MS = 50.0
#: Offered loads of the paced phases, commands/s per game (x 100 games: 500, 1,000 and
#: 1,500 actions/s, the last the rate target; ``--quick``: the last only).
PACED_PER_GAME = (5.0, 10.0, 15.0)
REST_SHARE_OF_FLOOR = 0.85
#: Hop-floor / REST pairs, alternated (``--quick``: one).
PAIRS = 2


async def measure_ws(
    url: str | list[str],
    seats: list[tuple[str, str]],
    warmup: float,
    seconds: float,
    pids: dict[str, int],
    *,
    rate_per_seat: float | None = None,
    sent: dict[str, int] | None = None,
) -> dict[str, Any]:
    """One WebSocket command in flight per seat for ``warmup + seconds``; figures of the
    last ``seconds`` in the shape of :func:`bench.roundtrip.measure`. ``url``: the
    gateway (``http://``), or one per seat in turn.

    ``rate_per_seat`` None: each seat sends its next command as soon as the previous one
    is answered (a closed loop: the most the platform does, and with one command in
    flight per game the mean latency is games / actions/s by Little's law). A rate
    (commands/s): each seat sends on a schedule, every ``1 / rate_per_seat`` s from a
    random phase, still one in flight (a command due while its previous one waits is sent
    on that answer), and a latency runs from the command's scheduled time, so time spent
    waiting behind a slow answer counts (no coordinated omission, as giltene/wrk2
    measures). ``sent``: commands each game sent so far (game id → count, updated), so a
    later phase on the same games goes on with their next action."""
    urls = [url] if isinstance(url, str) else url
    sent = {} if sent is None else sent
    latencies: list[float] = []
    errors: list[str] = []
    loop = asyncio.get_running_loop()
    t_measure = loop.time() + warmup + 2.0  # the sockets open in the first 2 s
    t_end = t_measure + seconds
    period = 1.0 / rate_per_seat if rate_per_seat else 0.0
    phases = random.Random(len(seats))

    async def player(base: str, gid: str, token: str, phase: float) -> None:
        ws_url = base.replace("http://", "ws://", 1) + f"/game/{gid}/stream"
        async with websockets.connect(
            ws_url, subprotocols=["cellwar.v1", f"bearer.{token}"], max_size=2**22
        ) as ws:
            # latencies by time.perf_counter (uvloop's loop.time() counts whole ms)
            due = time.perf_counter() + phase * period
            while loop.time() < t_end and len(errors) <= 20:
                if period:
                    await asyncio.sleep(max(due - time.perf_counter(), 0.0))
                    start = due
                    due += period
                else:
                    start = time.perf_counter()
                counted = loop.time() >= t_measure
                k = sent.get(gid, 0)
                key = f"{gid}-{k}"
                frame = {"type": "action", "id": key, "action": action_body(k)}
                await ws.send(orjson.dumps(frame).decode())
                sent[gid] = k + 1
                while True:
                    reply = orjson.loads(await ws.recv())
                    if reply.get("id") == key:
                        break
                latency = time.perf_counter() - start
                if reply.get("type") != "result":
                    errors.append(f"{reply.get('status')} {reply.get('error')}")
                elif counted and loop.time() <= t_end:
                    latencies.append(latency * 1000.0)

    players = [
        player(urls[i % len(urls)], g, t, phases.random()) for i, (g, t) in enumerate(seats)
    ]
    return await timed_load(players, t_measure, t_end, pids, latencies, errors)


def cpu_ms_per_action(result: dict[str, Any]) -> float | None:
    """Milliseconds of CPU of every platform process (the load generator left out) per
    accepted action; None when nothing was accepted."""
    rate = result["actions_per_s"]
    if not rate:
        return None
    servers = sum(v for k, v in result["cpu_cores"].items() if k != "bench-client")
    return 1000.0 * servers / rate


async def _platform(
    mode: str, games: int, warmup: float, seconds: float, paced: tuple[float, ...] = ()
) -> dict[str, Any]:
    """Start the platform, create ``games`` seats and measure ``mode`` (``ws`` or
    ``rest``) in a closed loop; then, on the same games, WebSocket commands at each
    offered load of ``paced`` (actions/s over all the games), their results under
    ``"paced"``."""
    svc = await start_platform(fsync=True, gateway=False)
    try:
        # Every game is created from 127.0.0.1: the gateway's per-address create and join
        # windows (30 and 60 a minute) would refuse the 31st of the 100 games with 429.
        await svc.start_gateway(ws_max_per_address=0, create_limit_per_min=0, join_limit_per_min=0)
        async with httpx.AsyncClient(timeout=30.0) as client:
            seats = await platform_seats(client, svc.gateway_url, games)
        if mode != "ws":
            return await measure(svc.gateway_url, seats, warmup, seconds, svc.pids())
        sent: dict[str, int] = {}
        result = await measure_ws(svc.gateway_url, seats, warmup, seconds, svc.pids(), sent=sent)
        _note("WebSocket", result)
        result["paced"] = []
        for offered in paced:
            r = await measure_ws(
                svc.gateway_url, seats, warmup, seconds, svc.pids(),
                rate_per_seat=offered / games, sent=sent,
            )
            r["offered_per_s"] = offered
            _note(f"WebSocket at {offered:,.0f}/s offered", r)
            result["paced"].append(r)
        return result
    finally:
        svc.close()


def _pairs(floors: list[float | None], rests: list[float | None]) -> dict[str, Any]:
    """Figures of alternated floor / REST pairs (the same figure of each phase, in
    order): the median of each side, the ratio REST / floor of each pair and their
    median (None where a figure is missing)."""
    ratios = [r / f for f, r in zip(floors, rests, strict=True) if f and r is not None]

    def median(values: list[Any]) -> float | None:
        known = [v for v in values if v is not None]
        return statistics.median(known) if known else None

    return {
        "floor": median(floors),
        "rest": median(rests),
        "ratio": median(ratios),
        "ratios": ratios,
        "floors": floors,
        "rests": rests,
    }


def _note(label: str, r: dict[str, Any]) -> None:
    note(f"actions {label}", r, f", CPU/action {cpu_ms_per_action(r) or 0:.2f} ms")


def run(quick: bool = False) -> dict[str, Any]:
    """Measure the hop floor, REST and WebSocket commands; rows as the module docstring."""
    warmup, seconds = (1.0, 3.0) if quick else (2.0, 10.0)
    games = 20 if quick else GAMES
    pairs = 1 if quick else PAIRS
    of_pairs = f"median of {pairs} pairs" if pairs > 1 else "one pair"
    floors: list[dict[str, Any]] = []
    rests: list[dict[str, Any]] = []
    for k in range(1, pairs + 1):
        floors.append(run_async(floor_run(warmup, seconds, games)))
        _note(f"hop floor ({k} of {pairs})", floors[-1])
        rests.append(run_async(_platform("rest", games, warmup, seconds)))
        _note(f"REST ({k} of {pairs})", rests[-1])
    paced = tuple(games * r for r in (PACED_PER_GAME[-1:] if quick else PACED_PER_GAME))
    ws = run_async(_platform("ws", games, warmup, seconds, paced))
    latency_ms = {
        "hop floor (REST shape, no work)": [x for r in floors for x in r.pop("latencies")],
        "REST actions": [x for r in rests for x in r.pop("latencies")],
        "WebSocket commands": ws.pop("latencies"),
    }
    for r in ws["paced"]:
        latency_ms[f"WebSocket at {r['offered_per_s']:,.0f}/s offered"] = r.pop("latencies")
    cpu = _pairs([cpu_ms_per_action(r) for r in floors], [cpu_ms_per_action(r) for r in rests])
    rate = _pairs([r["actions_per_s"] for r in floors], [r["actions_per_s"] for r in rests])
    cpu_floor, cpu_rest, cpu_ws = cpu["floor"], cpu["rest"], cpu_ms_per_action(ws)
    rest_rate = rate["rest"]
    ws_cpu_ok = cpu_ws is not None and (
        cpu_ws <= WS_CPU_TARGET_MS or (cpu_rest is not None and cpu_ws <= WS_CPU_SHARE_OF_REST * cpu_rest)
    )
    rate_ok = ws["actions_per_s"] >= WS_RATE_TARGET or (
        rest_rate and ws["actions_per_s"] >= WS_RATE_OVER_REST * rest_rate
    )
    clean = all(r["errors"] == 0 for r in rests) and ws["errors"] == 0
    share = rate["ratio"]
    rows = [
        row(
            f"hop floor, {games} clients one request at a time: CPU per action ({of_pairs})",
            "ms CPU",
            cpu_floor,
            "- (reference)",
            None,
            actions_per_s=rate["floor"],
            values=cpu["floors"],
            detail={"runs": floors},
        ),
        row(
            f"REST actions, {games} games, fsync on: CPU per action (every process, NATS included; "
            f"{of_pairs} with the floor)",
            "ms CPU",
            cpu_rest,
            "<= the hop floor's",
            cpu["ratio"] is not None and cpu["ratio"] <= 1.0 and clean,
            reference=cpu_floor,
            ratio=cpu["ratio"],
            ratios=cpu["ratios"],
            values=cpu["rests"],
            actions_per_s=rest_rate,
            detail={"runs": rests},
        ),
        row(
            f"WebSocket commands, {games} games, fsync on: CPU per action",
            "ms CPU",
            cpu_ws,
            f"<= {WS_CPU_TARGET_MS:g} ms, or <= {WS_CPU_SHARE_OF_REST:g}x REST",
            ws_cpu_ok and clean,
            reference=cpu_rest,
            ratio=cpu_ws / cpu_rest if cpu_ws and cpu_rest else None,
            detail=ws,
        ),
        row(
            f"WebSocket commands, {games} concurrent 2-player games",
            "actions/s",
            ws["actions_per_s"],
            f">= {WS_RATE_TARGET:,.0f}, or >= {WS_RATE_OVER_REST:g}x REST",
            bool(rate_ok) and clean,
            reference=rest_rate,
            ratio=ws["actions_per_s"] / rest_rate if rest_rate else None,
            p50_ms=ws["p50_ms"],
            p99_ms=ws["p99_ms"],
        ),
        row(
            "WebSocket commands p99 latency, closed loop (the mean is games / actions/s)",
            "ms",
            ws["p99_ms"],
            "- (info: one in flight per game, as fast as answered)",
            None,
            p50_ms=ws["p50_ms"],
            mean_ms_little=1000.0 * games / ws["actions_per_s"] if ws["actions_per_s"] else None,
        ),
        *(
            row(
                f"WebSocket commands at {r['offered_per_s']:,.0f} actions/s offered "
                f"({r['offered_per_s'] / games:g}/s per game): p99 latency",
                "ms",
                r["p99_ms"],
                f"<= {WS_P99_TARGET_MS:g} ms on a quiet machine (info)",
                None,
                p50_ms=r["p50_ms"],
                actions_per_s=r["actions_per_s"],
                cpu_ms_per_action=cpu_ms_per_action(r),
                errors=r["errors"],
            )
            for r in ws["paced"]
        ),
        row(
            f"REST actions, {games} games, against the hop floor's actions/s ({of_pairs})",
            "actions/s",
            rest_rate,
            f">= {REST_SHARE_OF_FLOOR:g}x the floor's actions/s",
            share is not None and share >= REST_SHARE_OF_FLOOR and clean,
            reference=rate["floor"],
            ratio=share,
            ratios=rate["ratios"],
            values=rate["rests"],
            p99_ms=[r["p99_ms"] for r in rests],
        ),
    ]
    return {
        "rows": rows,
        "quick": quick,
        "games": games,
        "warmup_s": warmup,
        "seconds": seconds,
        "latency_ms": {k: sorted(round(x, 3) for x in v) for k, v in latency_ms.items()},
        "topology": "nats-server (fsync on), engine, session, gateway each a child process; "
        "httpx / websockets load generator in the bench process",
    }
