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
  most a REST implementation of this shape reaches here.

CPU per action is the user + system CPU (``/proc/<pid>/stat``) of every platform process
(nats-server, engine, session, gateway) over the measured window, divided by the actions
accepted in it; the load generator's own CPU is reported apart. Targets: WebSocket CPU
per action <= 1.0 ms, or <= 0.3x REST's in the same run where the machine is slower;
WebSocket actions/s >= 1,500, or >= 5x REST's in the same run; WebSocket p99 <= 50 ms
(info on a machine with CPU steal); REST actions/s >= 0.85x the hop floor's, and REST CPU
per action <= the floor's x 1 (both in the same run).

The platform's gateway runs with its per-address create and join windows off
(``CELLWAR_CREATE_LIMIT_PER_MIN=0``, ``CELLWAR_JOIN_LIMIT_PER_MIN=0``) and no cap on the
sockets of one address: the bench creates its 100 games, and opens their sockets, from
127.0.0.1. The command buckets stay as deployed: the setup's creates and joins wait out
their ``Retry-After`` (:func:`bench.roundtrip.platform_seats`), and each seat's commands
stay below its bucket's 50/s (the 1,500 actions/s target over 100 seats is 15/s each).
"""

from __future__ import annotations

import asyncio
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
REST_SHARE_OF_FLOOR = 0.85


async def measure_ws(
    url: str | list[str],
    seats: list[tuple[str, str]],
    warmup: float,
    seconds: float,
    pids: dict[str, int],
) -> dict[str, Any]:
    """One WebSocket command in flight per seat for ``warmup + seconds``; figures of the
    last ``seconds`` in the shape of :func:`bench.roundtrip.measure`. ``url``: the
    gateway (``http://``), or one per seat in turn."""
    urls = [url] if isinstance(url, str) else url
    latencies: list[float] = []
    errors: list[str] = []
    loop = asyncio.get_running_loop()
    t_measure = loop.time() + warmup + 2.0  # the sockets open in the first 2 s
    t_end = t_measure + seconds

    async def player(base: str, gid: str, token: str) -> None:
        ws_url = base.replace("http://", "ws://", 1) + f"/game/{gid}/stream"
        async with websockets.connect(
            ws_url, subprotocols=["cellwar.v1", f"bearer.{token}"], max_size=2**22
        ) as ws:
            k = 0
            while loop.time() < t_end and len(errors) <= 20:
                key = f"{gid}-{k}"
                frame = {"type": "action", "id": key, "action": action_body(k)}
                start = loop.time()
                t0 = time.perf_counter()
                await ws.send(orjson.dumps(frame).decode())
                while True:
                    reply = orjson.loads(await ws.recv())
                    if reply.get("id") == key:
                        break
                dt = time.perf_counter() - t0
                k += 1
                if reply.get("type") != "result":
                    errors.append(f"{reply.get('status')} {reply.get('error')}")
                elif start >= t_measure and loop.time() <= t_end:
                    latencies.append(dt * 1000.0)

    players = [player(urls[i % len(urls)], g, t) for i, (g, t) in enumerate(seats)]
    return await timed_load(players, t_measure, t_end, pids, latencies, errors)


def cpu_ms_per_action(result: dict[str, Any]) -> float | None:
    """Milliseconds of CPU of every platform process (the load generator left out) per
    accepted action; None when nothing was accepted."""
    rate = result["actions_per_s"]
    if not rate:
        return None
    servers = sum(v for k, v in result["cpu_cores"].items() if k != "bench-client")
    return 1000.0 * servers / rate


async def _platform(mode: str, games: int, warmup: float, seconds: float) -> dict[str, Any]:
    svc = await start_platform(fsync=True, gateway=False)
    try:
        # Every game is created from 127.0.0.1: the gateway's per-address create and join
        # windows (30 and 60 a minute) would refuse the 31st of the 100 games with 429.
        await svc.start_gateway(ws_max_per_address=0, create_limit_per_min=0, join_limit_per_min=0)
        async with httpx.AsyncClient(timeout=30.0) as client:
            seats = await platform_seats(client, svc.gateway_url, games)
        fn = measure_ws if mode == "ws" else measure
        return await fn(svc.gateway_url, seats, warmup, seconds, svc.pids())
    finally:
        svc.close()


def _note(label: str, r: dict[str, Any]) -> None:
    note(f"actions {label}", r, f", CPU/action {cpu_ms_per_action(r) or 0:.2f} ms")


def run(quick: bool = False) -> dict[str, Any]:
    """Measure the hop floor, REST and WebSocket commands; rows as the module docstring."""
    warmup, seconds = (1.0, 3.0) if quick else (2.0, 10.0)
    games = 20 if quick else GAMES
    floor = run_async(floor_run(warmup, seconds, games))
    _note("hop floor", floor)
    rest = run_async(_platform("rest", games, warmup, seconds))
    _note("REST", rest)
    ws = run_async(_platform("ws", games, warmup, seconds))
    _note("WebSocket", ws)
    latency_ms = {
        "hop floor (REST shape, no work)": floor.pop("latencies"),
        "REST actions": rest.pop("latencies"),
        "WebSocket commands": ws.pop("latencies"),
    }
    cpu_floor, cpu_rest, cpu_ws = (cpu_ms_per_action(r) for r in (floor, rest, ws))
    ws_cpu_ok = cpu_ws is not None and (
        cpu_ws <= WS_CPU_TARGET_MS or (cpu_rest is not None and cpu_ws <= WS_CPU_SHARE_OF_REST * cpu_rest)
    )
    rate_ok = ws["actions_per_s"] >= WS_RATE_TARGET or (
        rest["actions_per_s"] and ws["actions_per_s"] >= WS_RATE_OVER_REST * rest["actions_per_s"]
    )
    clean = rest["errors"] == 0 and ws["errors"] == 0
    share = rest["actions_per_s"] / floor["actions_per_s"] if floor["actions_per_s"] else None
    rows = [
        row(
            f"hop floor, {games} clients one request at a time: CPU per action",
            "ms CPU",
            cpu_floor,
            "- (reference)",
            None,
            actions_per_s=floor["actions_per_s"],
            detail=floor,
        ),
        row(
            f"REST actions, {games} games, fsync on: CPU per action (every process, NATS included)",
            "ms CPU",
            cpu_rest,
            "<= the hop floor's",
            cpu_rest is not None and cpu_floor is not None and cpu_rest <= cpu_floor and clean,
            reference=cpu_floor,
            ratio=cpu_rest / cpu_floor if cpu_rest and cpu_floor else None,
            actions_per_s=rest["actions_per_s"],
            detail=rest,
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
            reference=rest["actions_per_s"],
            ratio=ws["actions_per_s"] / rest["actions_per_s"] if rest["actions_per_s"] else None,
            p50_ms=ws["p50_ms"],
            p99_ms=ws["p99_ms"],
        ),
        row(
            "WebSocket commands p99 latency",
            "ms",
            ws["p99_ms"],
            f"<= {WS_P99_TARGET_MS:g} ms on a quiet machine (info)",
            None,
            p50_ms=ws["p50_ms"],
        ),
        row(
            f"REST actions, {games} games, against the hop floor's actions/s",
            "actions/s",
            rest["actions_per_s"],
            f">= {REST_SHARE_OF_FLOOR:g}x the floor's actions/s",
            share is not None and share >= REST_SHARE_OF_FLOOR and clean,
            reference=floor["actions_per_s"],
            ratio=share,
            p99_ms=rest["p99_ms"],
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
