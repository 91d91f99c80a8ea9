"""Action round trip via REST: gateway -> session -> engine -> JetStream (docs/benchmarks.md).

10 concurrent 2-player Life games (60x60, the defaults); in each, player 1 (whose
placement turn it is) sends one ``POST /game/{id}/action`` at a time, alternating
``place`` and ``erase`` of one cell (so the budget never runs out and every request
records an event). Measured for a fixed time after a warm-up, against:

* a bare FastAPI endpoint of the same shape (:mod:`bench._bare`: same body model, token
  check and answer shape, no session) under the same load in the same run;
* the hop floor (:mod:`bench._floor`): the platform's processes and hops (gateway ->
  gRPC -> session -> gRPC -> engine, a JetStream append with fsync) with no work in them,
  the most any implementation of this shape reaches here (info);
* the platform with JetStream ``sync_interval: always`` (fsync on, as ``make run``);
* the platform with NATS' default flush (fsync off), to show what fsync costs.

Every server is a child process (nats-server, ``python -m services.engine``,
``python -m services.session``, ``python -m gateway`` / the bare app under uvicorn); the
load generator (httpx) runs in the bench process; the gateway's per-seat command bucket
is off (:data:`bench._stack.COMMAND_BUCKET_OFF`). Target: p99 <= 50 ms (fsync on). The
share of the bare endpoint's actions/s is info: it was to be >= 60 %, but the hop floor
itself reaches 0.43-0.61x here (docs/benchmarks.md "The hop floor"), so REST is held to
the floor instead (>= 0.85x its actions/s, :mod:`bench.actions`). Every latency sample
is kept in the JSON (``latency_ms``) for the CDF plot of report.md.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from bench._stack import (
    COMMAND_BUCKET_OFF,
    SECRET,
    new_services,
    row,
    run_async,
    start_platform,
    timed_load,
)

GAMES = 10
P99_TARGET_MS = 50.0


def action_body(k: int) -> dict[str, Any]:
    """The k-th action of a seat: place, then erase, the same cell (the budget never runs
    out; every action records an event)."""
    cell = [(k // 2) % 30, (k // 60) % 60]
    return {"type": "place" if k % 2 == 0 else "erase", "cells": [cell]}


async def _post(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST ``body`` and return the answer's JSON; a 429 (refused before the app ran: the
    gateway's per-address limits, gateway/limits.py) is sent again after its
    ``Retry-After`` seconds. Raises httpx.HTTPStatusError on any other error status."""
    while True:
        r = await client.post(url, json=body)
        if r.status_code != 429:
            r.raise_for_status()
            return r.json()
        await asyncio.sleep(float(r.headers.get("Retry-After", "1")))


async def platform_seats(client: httpx.AsyncClient, url: str, games: int) -> list[tuple[str, str]]:
    """Create ``games`` 2-player Life games; returns ``(game_id, player-1 token)`` each.
    Every create and join comes from 127.0.0.1 and takes a token of that address's
    command bucket (``rate_limit_per_s`` after a burst of ``rate_limit_burst``): past the
    burst they wait out the gateway's ``Retry-After``."""
    seats = []
    for i in range(games):
        gid = (await _post(client, f"{url}/game/create", {"kind": "life"}))["game_id"]
        tokens = [
            (await _post(client, f"{url}/game/{gid}/join", {"name": f"{name}-{i}"}))["player_token"]
            for name in ("p1", "p2")
        ]
        seats.append((gid, tokens[0]))
    return seats


def bare_seats(games: int) -> list[tuple[str, str]]:
    from gateway.tokens import TokenSigner

    signer = TokenSigner(SECRET)
    return [(f"bare{i:02d}", signer.issue(f"bare{i:02d}", 1)) for i in range(games)]


async def measure(
    url: str | list[str],
    seats: list[tuple[str, str]],
    warmup: float,
    seconds: float,
    pids: dict[str, int],
) -> dict[str, Any]:
    """One request at a time per seat for ``warmup + seconds``; figures of the last
    ``seconds`` only: actions/s, latency percentiles (ms), errors, CPU share per process.
    ``url``: the server, or one per seat in turn (seat i posts to ``url[i % len(url)]``).

    Each seat has an HTTP client (one keep-alive connection) of its own, as each player
    of a game has: one client shared by 100 seats spent ~7 ms of the load generator's
    CPU per request in its connection pool's bookkeeping (httpcore's
    ``_assign_requests_to_connections`` is O(connections x queued requests),
    encode/httpcore#1035), so the rows measured the load generator (~1 core at ~150
    REST actions/s) instead of the server."""
    urls = [url] if isinstance(url, str) else url
    latencies: list[float] = []
    errors: list[str] = []
    loop = asyncio.get_running_loop()
    t_measure = loop.time() + warmup
    t_end = t_measure + seconds

    async def player(url: str, gid: str, token: str) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        k = 0
        async with httpx.AsyncClient(timeout=30.0) as client:
            while loop.time() < t_end and len(errors) <= 20:
                body = action_body(k)
                start = loop.time()
                t0 = time.perf_counter()
                r = await client.post(f"{url}/game/{gid}/action", json=body, headers=headers)
                dt = time.perf_counter() - t0
                k += 1
                if r.status_code != 200:
                    errors.append(f"{r.status_code} {r.text[:200]}")
                elif start >= t_measure and loop.time() <= t_end:
                    latencies.append(dt * 1000.0)

    players = [player(urls[i % len(urls)], g, t) for i, (g, t) in enumerate(seats)]
    return await timed_load(players, t_measure, t_end, pids, latencies, errors)


async def _bare_run(warmup: float, seconds: float) -> dict[str, Any]:
    svc = new_services()
    try:
        url = await svc.start_bare()
        return await measure(url, bare_seats(GAMES), warmup, seconds, svc.pids())
    finally:
        svc.close()


async def floor_run(warmup: float, seconds: float, games: int = GAMES) -> dict[str, Any]:
    """The hop floor (:mod:`bench._floor`, NATS with fsync on) under :func:`measure`'s
    load of ``games`` seats; its figures."""
    svc = new_services()
    try:
        svc.start_nats(fsync=True)
        url = await svc.start_floor()
        return await measure(url, bare_seats(games), warmup, seconds, svc.pids())
    finally:
        svc.close()


async def _platform_run(fsync: bool, warmup: float, seconds: float) -> dict[str, Any]:
    svc = await start_platform(fsync=fsync, gateway=False)
    try:
        await svc.start_gateway(ws_max_per_address=0, rate_limit_per_s=COMMAND_BUCKET_OFF)
        async with httpx.AsyncClient(timeout=30.0) as client:
            seats = await platform_seats(client, svc.gateway_url, GAMES)
            r = await client.get(
                f"{svc.gateway_url}/game/{seats[0][0]}/state",
                headers={"Authorization": f"Bearer {seats[0][1]}"},
            )
            view_bytes = len(r.content)
        result = await measure(svc.gateway_url, seats, warmup, seconds, svc.pids())
        result["view_bytes"] = view_bytes
        return result
    finally:
        svc.close()


def note(label: str, r: dict[str, Any], extra: str = "") -> None:
    """Print :func:`measure`'s figures ``r`` on one line headed ``label`` (``extra`` after
    the errors), then its first errors."""
    cpu = ", ".join(f"{n} {v:.2f}" for n, v in r["cpu_cores"].items())
    print(
        f"  {label}: {r['actions_per_s']:,.0f} actions/s, p50 {r['p50_ms'] or 0:.1f} ms, "
        f"p99 {r['p99_ms'] or 0:.1f} ms, errors {r['errors']}{extra}; CPU cores used: {cpu}"
    )
    for e in r["first_errors"]:
        print(f"    error: {e}")


def run(quick: bool = False) -> dict[str, Any]:
    """Measure the bare endpoint, the platform with fsync on, and with fsync off."""
    warmup, seconds = (1.0, 3.0) if quick else (2.0, 10.0)
    bare = run_async(_bare_run(warmup, seconds))
    note("roundtrip bare", bare)
    floor = run_async(floor_run(warmup, seconds))
    note("roundtrip hop floor", floor)
    on = run_async(_platform_run(True, warmup, seconds))
    note("roundtrip fsync on", on)
    off = run_async(_platform_run(False, warmup, seconds))
    note("roundtrip fsync off", off)
    latency_ms = {
        "bare FastAPI anchor": bare.pop("latencies"),
        "hop floor (same hops, no work)": floor.pop("latencies"),
        "platform, fsync on": on.pop("latencies"),
        "platform, fsync off": off.pop("latencies"),
    }

    def ratio(r: dict[str, Any]) -> float | None:
        return r["actions_per_s"] / bare["actions_per_s"] if bare["actions_per_s"] else None

    rows = [
        row(
            "bare FastAPI endpoint, 10 clients one request at a time",
            "actions/s",
            bare["actions_per_s"],
            "- (reference)",
            None,
            p50_ms=bare["p50_ms"],
            p99_ms=bare["p99_ms"],
            detail=bare,
        ),
        row(
            "REST action round trip, 10 games, fsync on",
            "actions/s",
            on["actions_per_s"],
            "- (info: the hop floor bounds it; REST vs the floor is the actions row's target)",
            None,
            reference=bare["actions_per_s"],
            ratio=ratio(on),
            detail=on,
        ),
        row(
            "hop floor: the same processes and hops with no work in them, fsync on",
            "actions/s",
            floor["actions_per_s"],
            "- (info: the most this shape reaches here)",
            None,
            reference=bare["actions_per_s"],
            ratio=ratio(floor),
            p50_ms=floor["p50_ms"],
            p99_ms=floor["p99_ms"],
            detail=floor,
        ),
        row(
            "REST action round trip against the hop floor's actions/s, fsync on",
            "actions/s",
            on["actions_per_s"],
            "- (info)",
            None,
            reference=floor["actions_per_s"],
            ratio=on["actions_per_s"] / floor["actions_per_s"] if floor["actions_per_s"] else None,
        ),
        row("hop floor p99 latency", "ms", floor["p99_ms"], "- (info)", None),
        row(
            "round trip p99 latency, fsync on",
            "ms",
            on["p99_ms"],
            f"<= {P99_TARGET_MS:g} ms",
            on["p99_ms"] is not None and on["p99_ms"] <= P99_TARGET_MS,
            p50_ms=on["p50_ms"],
        ),
        row("round trip p50 latency, fsync on", "ms", on["p50_ms"], "- (info)", None),
        row(
            "REST action round trip, fsync off (NATS default flush)",
            "actions/s",
            off["actions_per_s"],
            "- (info)",
            None,
            reference=bare["actions_per_s"],
            ratio=ratio(off),
            detail=off,
        ),
        row("round trip p99 latency, fsync off", "ms", off["p99_ms"], "- (info)", None),
        row("round trip p50 latency, fsync off", "ms", off["p50_ms"], "- (info)", None),
    ]
    if on["p50_ms"] is not None and off["p50_ms"] is not None and off["actions_per_s"]:
        rows.append(
            row(
                "fsync cost: p50 latency added (on - off)",
                "ms",
                on["p50_ms"] - off["p50_ms"],
                "- (info)",
                None,
                throughput_lost=1 - on["actions_per_s"] / off["actions_per_s"],
            )
        )
    return {
        "rows": rows,
        "quick": quick,
        "latency_ms": {k: sorted(round(x, 3) for x in v) for k, v in latency_ms.items()},
        "p99_target_ms": P99_TARGET_MS,
        "games": GAMES,
        "warmup_s": warmup,
        "seconds": seconds,
        "topology": "nats-server, engine, session, gateway (and the bare app) each a child "
        "process; httpx load generator in the bench process",
    }
