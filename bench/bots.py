"""Bot seats (docs/bot-seats.md): the time from "Add a bot" (``POST /game/{id}/bots``)
to the bot's first move.

Rows (informative: no target is set for them), milliseconds, median (the figure) and
p90 (``p90_ms``) over :data:`TRIES` fresh games each:

* ``bot seat: Add a bot → seated`` — the POST until its 201 (the gateway forwards to the
  runner, which reads the lobby and joins through the public API), CellWar 8×8 with the
  ``trained`` policy;
* ``bot seat: Add a bot → first move (cellwar trained)`` — the POST until the first
  ``ActionApplied`` / ``TurnEnded`` event of the bot's seat in the log, CellWar 8×8, 2
  players. Seat 1 (this bench) moves first: it plays its turn at once (every unit its
  first legal action, then ``end_turn``), and the time that takes is included and
  reported beside the figure (``own_turn_ms``);
* ``bot seat: Add a bot → first move (life heuristic)`` — the same for Life 40×40,
  budget 10 (the bench's seat ends its placement turn at once, drawing nothing).

Every server is a child process, as ``make run`` starts them: nats-server, engine,
session, gateway (``CELLWAR_BOTS_URL`` set) and the bot runner ``python -m
client.seats``; the events are polled every :data:`POLL_S` seconds (the resolution of
the figure; the gateway's read limits are off for that).
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import httpx

from bench._stack import free_port, percentile, row, run_async, start_platform
from client.sdk import AsyncCellWarClient

#: Games measured per row (``--quick``: :data:`QUICK_TRIES`).
TRIES = 10
QUICK_TRIES = 3
#: Seconds between two reads of the event log.
POLL_S = 0.01
#: Longest wait for a bot's first move (seconds).
DEADLINE_S = 60.0
MOVES = ("ActionApplied", "TurnEnded")


async def _own_turn(api: AsyncCellWarClient, game_id: str, token: str, kind: str) -> float:
    """Play seat 1's first turn at once (after the game started); returns its seconds."""
    deadline = time.monotonic() + DEADLINE_S
    while (await api.state(game_id, token)).get("phase") == "waiting":
        if time.monotonic() > deadline:
            raise TimeoutError(f"game {game_id} did not start")
        await asyncio.sleep(POLL_S)
    t0 = time.perf_counter()
    if kind == "cellwar":
        done: set[Any] = set()
        while True:
            actions = [a for a in await api.valid_actions(game_id, token) if a["unit_id"] not in done]
            if not actions:
                break
            first = actions[0]
            done.add(first["unit_id"])
            await api.move(game_id, token, first["unit_id"], first["dx"], first["dy"])
    await api.end_turn(game_id, token)
    return time.perf_counter() - t0


async def _one(api: AsyncCellWarClient, http: httpx.AsyncClient, kind: str, policy: str) -> dict[str, float]:
    """One game: seat 1 joined here, a bot added, seat 1's turn played; the times."""
    config = {"width": 8, "height": 8, "players": 2} if kind == "cellwar" else {
        "width": 40, "height": 40, "players": 2, "budget": 10,
    }
    game_id = await api.create_game(kind, config)
    seat = await api.join(game_id, "bench")
    t0 = time.perf_counter()
    answer = await http.post(
        f"/game/{game_id}/bots", json={"policy": policy}, headers={"Authorization": f"Bearer {seat.token}"}
    )
    seated = time.perf_counter() - t0
    if answer.status_code != 201:
        raise RuntimeError(f"POST /game/{game_id}/bots answered {answer.status_code}: {answer.text}")
    bot = answer.json()["player_id"]
    own = await _own_turn(api, game_id, seat.token, kind)
    deadline = time.monotonic() + DEADLINE_S
    from_seq = 0
    while time.monotonic() < deadline:
        events = await api.events(game_id, seat.token, from_seq=from_seq)
        for event in events:
            if event["actor"] == bot and event["type"] in MOVES:
                first_move = time.perf_counter() - t0
                await api.leave(game_id, seat.token)  # the game ends: the bot frees its slot
                return {"seated": seated, "first_move": first_move, "own_turn": own}
        if events:
            from_seq = events[-1]["seq"] + 1
        await asyncio.sleep(POLL_S)
    raise TimeoutError(f"the bot of game {game_id} made no move in {DEADLINE_S:g} s")


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000, 1)


def _summary(values: list[float]) -> dict[str, float | None]:
    """``{"median_ms", "p90_ms"}`` of seconds."""
    return {"median_ms": _ms(percentile(values, 50)), "p90_ms": _ms(percentile(values, 90))}


async def _measure(tries: int) -> dict[str, Any]:
    svc = await start_platform(gateway=False)
    try:
        port = free_port()
        runner_url = f"http://127.0.0.1:{port}"
        gateway_url = await svc.start_gateway(
            ws_max_per_address=0, bots_url=runner_url, create_limit_per_min=0, join_limit_per_min=0,
            # the bench reads the event log every POLL_S: the reads' limits are off
            read_limit_per_s=0, read_concurrency=0, read_global_per_s=0,
        )
        env = svc._env(bots_addr=f"127.0.0.1:{port}", bots_api_url=gateway_url, bots_max_seats=64, log_level="warning")
        child = svc._spawn("bots", [sys.executable, "-m", "client.seats"], env)
        await svc._wait_http(f"{runner_url}/healthz", child)
        out: dict[str, Any] = {}
        async with AsyncCellWarClient(gateway_url, timeout=30) as api, httpx.AsyncClient(
            base_url=gateway_url, timeout=60
        ) as http:
            try:
                await _one(api, http, "cellwar", "trained")  # warm-up: imports, first connections
                for kind, policy in (("cellwar", "trained"), ("life", "heuristic")):
                    runs = [await _one(api, http, kind, policy) for _ in range(tries)]
                    out[kind] = {key: [r[key] for r in runs] for key in ("seated", "first_move", "own_turn")}
            except TimeoutError as exc:
                raise TimeoutError(f"{exc}; the bot runner's log ends: {child.tail(8)}") from None
        return out
    finally:
        svc.close()


def run(*, quick: bool = False) -> dict[str, Any]:
    """The rows of this module (docstring)."""
    tries = QUICK_TRIES if quick else TRIES
    data = run_async(_measure(tries))
    rows = []
    seated = data["cellwar"]["seated"]
    rows.append(row(
        "bot seat: Add a bot → seated (cellwar trained)", "ms (median)", _ms(percentile(seated, 50)),
        "reported", None, tries=tries, **_summary(seated),
    ))
    for kind, policy in (("cellwar", "trained"), ("life", "heuristic")):
        first = data[kind]["first_move"]
        own = data[kind]["own_turn"]
        rows.append(row(
            f"bot seat: Add a bot → first move ({kind} {policy})", "ms (median)", _ms(percentile(first, 50)),
            "reported", None, tries=tries, **_summary(first), own_turn_ms=_ms(percentile(own, 50)),
        ))
    return {"rows": rows, "data": data}


if __name__ == "__main__":
    import json

    print(json.dumps(run(quick="--quick" in sys.argv), indent=2))
