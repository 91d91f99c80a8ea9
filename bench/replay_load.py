"""Costly reads against play: another player's action p99 idle vs during 500 concurrent
replays of a finished game (target: within 2× of idle; docs/security.md).

The platform runs as child processes (nats-server with fsync, engine, session, gateway
trusting 127.0.0.1 as its proxy, so a load client can speak for many addresses through
``X-Forwarded-For``). A finished 2-player Life game (both players drew, the simulation
ran, one resigned) is the replayed game. Another Life game in placement is the measured
player: ``POST /game/{id}/action`` 20 times a second, one at a time, alternating place
and erase of one cell (as the roundtrip benchmark does).

Phases, each ``seconds`` long: idle (the player alone), then two storms while the
player plays: 500 concurrent replay requests of random ``seq``s, sent again as soon as
each is answered, or after its ``Retry-After`` when refused, from one address, then
from 500 addresses (each client its own ``X-Forwarded-For``). The storm runs in its own
process (its load does not starve the measuring client's event loop) and speaks raw
HTTP/1.1 on keep-alive connections, so the load generator costs the shared 2 cores
little. Rows: the player's p99 in each phase (target: a storm's
p99 <= 2x the idle p99) and, as info, what the replays were answered (200/429/503) and
the CPU each process used; in a full run (not ``--quick``) also the same 500-address
storm through a gateway with the read limits off, as info.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import time
from typing import Any

import httpx

from bench._stack import (
    Services,
    cpu_seconds,
    latency_figures,
    row,
    run_async,
    start_platform,
)

#: Concurrent replay requests in a storm.
STORM = 500
#: The storm's p99 may be at most this many times the idle p99.
MAX_RATIO = 2.0
#: The measured player's pace (actions/s): a brisk player, well inside the command
#: rate limit (50/s per player).
ACTIONS_PER_S = 20.0
#: Seconds of play before the measured window (the storm reaches its steady state).
WARMUP_S = 2.0


async def _finished_game(client: httpx.AsyncClient, url: str) -> tuple[str, int]:
    """A 2-player Life game played to its end; returns ``(game_id, last seq)``."""
    gid = (await client.post(f"{url}/game/create", json={"kind": "life", "config": {"budget": 200}})).json()[
        "game_id"
    ]
    tokens = [
        (await client.post(f"{url}/game/{gid}/join", json={"name": f"p{i}"})).json()["player_token"]
        for i in (1, 2)
    ]
    rng = random.Random(7)
    for player, token in enumerate(tokens):
        auth = {"Authorization": f"Bearer {token}"}
        x0 = 0 if player == 0 else 30
        for _ in range(40):
            cell = [x0 + rng.randrange(30), rng.randrange(60)]
            await client.post(f"{url}/game/{gid}/action", json={"type": "place", "cells": [cell]}, headers=auth)
        (await client.post(f"{url}/game/{gid}/end_turn", headers=auth)).raise_for_status()
    await asyncio.sleep(3.0)  # the simulation runs: a few dozen GenerationsTicked events
    auth = {"Authorization": f"Bearer {tokens[1]}"}
    view = (await client.post(f"{url}/game/{gid}/action", json={"type": "resign"}, headers=auth)).json()
    if view.get("view", {}).get("phase") != "finished":
        state = (await client.get(f"{url}/game/{gid}/state", headers=auth)).json()
        if state.get("phase") != "finished":
            raise RuntimeError(f"the replayed game did not finish: {view}")
    events = (await client.get(f"{url}/game/{gid}/events")).json()["events"]
    return gid, events[-1]["seq"]


async def _player_seat(client: httpx.AsyncClient, url: str) -> tuple[str, str]:
    gid = (await client.post(f"{url}/game/create", json={"kind": "life"})).json()["game_id"]
    tokens = [
        (await client.post(f"{url}/game/{gid}/join", json={"name": f"q{i}"})).json()["player_token"]
        for i in (1, 2)
    ]
    return gid, tokens[0]


async def _storm_worker(
    host: str, port: int, path_of: Any, forwarded: str | None, until: float, counts: dict[int, int]
) -> None:
    """Replay requests on one keep-alive connection until ``until`` (loop time): the next
    one as soon as a replay is answered, after ``Retry-After`` seconds when refused."""
    loop = asyncio.get_running_loop()
    extra = f"X-Forwarded-For: {forwarded}\r\n" if forwarded else ""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while loop.time() < until:
            writer.write(f"GET {path_of()} HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length, retry_after = 0, 0.0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
                elif name.lower() == b"retry-after":
                    retry_after = float(value)
            await reader.readexactly(length)
            counts[status] = counts.get(status, 0) + 1
            if retry_after:
                await asyncio.sleep(min(retry_after, max(until - loop.time(), 0)))
    except (ConnectionError, asyncio.IncompleteReadError):
        counts[-1] = counts.get(-1, 0) + 1
    finally:
        writer.close()


async def _storm(url: str, replay: tuple[str, int], addresses: int, seconds: float) -> dict[int, int]:
    host, port = url.removeprefix("http://").split(":")
    rgid, last = replay
    rng = random.Random(11)
    counts: dict[int, int] = {}
    until = asyncio.get_running_loop().time() + seconds

    def path_of() -> str:
        return f"/game/{rgid}/replay?seq={rng.randint(1, last)}"

    await asyncio.gather(
        *(
            _storm_worker(
                host, int(port), path_of,
                f"198.18.{i // 250}.{i % 250 + 1}" if addresses > 1 else None, until, counts,
            )
            for i in range(STORM)
        )
    )
    return counts


def _storm_process(url: str, replay: tuple[str, int], addresses: int, seconds: float, pipe: Any) -> None:
    """The storm in its own process (its own event loop: the measured player's client is
    not starved by the load generator's loop). Says ``"ready"`` once imported, storms on
    ``"go"``, then sends the answer counts through ``pipe``."""
    pipe.send("ready")
    pipe.recv()
    pipe.send(run_async(_storm(url, replay, addresses, seconds)))


async def _phase(
    url: str, seat: tuple[str, str], replay: tuple[str, int] | None, addresses: int, seconds: float,
    pids: dict[str, int],
) -> dict[str, Any]:
    """The player acts for ``seconds`` (after :data:`WARMUP_S`) while ``STORM`` replay
    clients (none when ``replay`` is None) from ``addresses`` addresses run."""
    gid, token = seat
    latencies: list[float] = []
    errors: list[str] = []
    storm = None
    if replay is not None:
        pipe, child_end = multiprocessing.Pipe()
        storm = multiprocessing.get_context("spawn").Process(
            target=_storm_process, args=(url, replay, addresses, seconds + WARMUP_S + 0.5, child_end), daemon=True
        )
        storm.start()
        await asyncio.to_thread(pipe.recv)  # imported: its start-up costs nothing below
        pipe.send("go")
    loop = asyncio.get_running_loop()
    async with httpx.AsyncClient(timeout=60.0) as client:
        headers = {"Authorization": f"Bearer {token}"}
        t_measure = loop.time() + WARMUP_S
        t_end = t_measure + seconds
        cpu0: dict[str, float] = {}
        k = 0
        placed = False
        next_at = loop.time()
        while loop.time() < t_end:
            next_at += 1.0 / ACTIONS_PER_S
            await asyncio.sleep(max(0.0, next_at - loop.time()))
            if not cpu0 and loop.time() >= t_measure:
                cpu0 = {n: cpu_seconds(p) for n, p in pids.items()}
                if storm is not None:
                    cpu0["storm-client"] = cpu_seconds(storm.pid)
            # place a cell, then erase it, then the next cell: the next action follows the
            # answers, so a refused place is tried again rather than followed by an erase of
            # a cell that is not there (409 NO_CHANGE, which is the generator's fault)
            body = {"type": "erase" if placed else "place", "cells": [[k % 30, (k // 30) % 60]]}
            start = loop.time()
            t0 = time.perf_counter()
            r = await client.post(f"{url}/game/{gid}/action", json=body, headers=headers)
            dt = time.perf_counter() - t0
            if r.status_code != 200:
                errors.append(f"{r.status_code} {r.text[:200]}")
                continue
            if placed:
                k += 1
            placed = not placed
            if start >= t_measure:
                latencies.append(dt * 1000.0)
        cpu1 = {n: cpu_seconds(p) for n, p in pids.items()}
        if storm is not None:
            cpu1["storm-client"] = cpu_seconds(storm.pid)
    answered: dict[int, int] = {}
    if storm is not None:
        answered = await asyncio.to_thread(pipe.recv)
        storm.join(30)
    return {
        "actions": len(latencies),
        **latency_figures(latencies, errors),
        "replays_answered": {str(s): n for s, n in sorted(answered.items())},
        "cpu_cores": {n: round((cpu1[n] - cpu0.get(n, cpu1[n])) / seconds, 3) for n in cpu1},
    }


async def _run(seconds: float, unlimited: bool) -> dict[str, Any]:
    svc: Services = await start_platform(gateway=False)
    try:
        await svc.start_gateway(trusted_proxies="127.0.0.1")
        url = svc.gateway_url
        pids = {c.name: c.pid for c in svc.children if c.name != "nats"}
        async with httpx.AsyncClient(timeout=60.0) as client:
            replay = await _finished_game(client, url)
            seat = await _player_seat(client, url)
        result = {"replayed_events": replay[1]}
        result["idle"] = await _phase(url, seat, None, 1, seconds, pids)
        result["one_address"] = await _phase(url, seat, replay, 1, seconds, pids)
        result["many_addresses"] = await _phase(url, seat, replay, STORM, seconds, pids)
        if unlimited:
            # The same storm through a gateway without the read limits.
            open_url = await svc.start_gateway(
                trusted_proxies="127.0.0.1", read_limit_per_s=0, read_concurrency=0,
                read_global_per_s=0,
            )
            pids["gateway"] = svc.children[-1].pid
            result["no_limits"] = await _phase(open_url, seat, replay, STORM, seconds, pids)
        return result
    finally:
        svc.close()


def _note(label: str, r: dict[str, Any]) -> None:
    cpu = ", ".join(f"{n} {v:.2f}" for n, v in r["cpu_cores"].items())
    print(
        f"  replay_load {label}: p50 {r['p50_ms'] or 0:.1f} ms, p99 {r['p99_ms'] or 0:.1f} ms over "
        f"{r['actions']} actions, errors {r['errors']}; replays answered {r['replays_answered']}; "
        f"CPU cores: {cpu}"
    )
    for e in r["first_errors"]:
        print(f"    error: {e}")


def run(quick: bool = False) -> dict[str, Any]:
    """Idle, then 500 concurrent replays from one address and from 500 addresses."""
    seconds = 4.0 if quick else 12.0
    result = run_async(_run(seconds, unlimited=not quick))
    idle = result["idle"]
    _note("idle", idle)
    rows = [
        row(
            "another player's action p99, idle",
            "ms",
            idle["p99_ms"],
            "- (reference)",
            None,
            p50_ms=idle["p50_ms"],
            detail=idle,
        )
    ]
    for key, label in (("one_address", "1 address"), ("many_addresses", f"{STORM} addresses")):
        storm = result[key]
        _note(label, storm)
        ratio = storm["p99_ms"] / idle["p99_ms"] if storm["p99_ms"] and idle["p99_ms"] else None
        rows.append(
            row(
                f"action p99 during {STORM} concurrent replays ({label})",
                "ms",
                storm["p99_ms"],
                f"<= {MAX_RATIO:g}x idle",
                ratio is not None and ratio <= MAX_RATIO and storm["errors"] == 0,
                reference=idle["p99_ms"],
                ratio=ratio,
                p50_ms=storm["p50_ms"],
                detail=storm,
            )
        )
        answered = storm["replays_answered"]
        rows.append(
            row(
                f"replays answered 200 / 429 / 503 ({label})",
                "requests",
                float(answered.get("200", 0)),
                f"{answered.get('429', 0)} x 429, {answered.get('503', 0)} x 503 (info)",
                None,
            )
        )
    if "no_limits" in result:
        before = result["no_limits"]
        _note("no read limits", before)
        rows.append(
            row(
                f"action p99 during {STORM} replays, read limits off",
                "ms",
                before["p99_ms"],
                "- (info)",
                None,
                reference=idle["p99_ms"],
                ratio=before["p99_ms"] / idle["p99_ms"] if before["p99_ms"] and idle["p99_ms"] else None,
                detail=before,
            )
        )
    return {"rows": rows, "replayed_events": result["replayed_events"]}
