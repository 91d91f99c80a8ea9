"""Matchmaking (docs/matchmaking.md, docs/architecture/matchmaking.md).

Rows:

* ``matching step`` — :func:`services.matchmaker.domain.form_matches` alone on 10,000
  searching tickets of one queue (Life 2 players): ratings N(1500, 300), waits uniform in
  0..70 s (so some windows are unlimited), 20 % of the tickets asking for a board width
  (40, 60 or 80) and 10 % for ``torus``. Target ≤ 1 s; the best of 3 runs.
* ``pair to the same game`` — two clients post compatible tickets through REST at the same
  moment; the time until both have their seat (WebSocket of each ticket), 20 pairs in turn.
  Target p99 ≤ 2 s.
* ``1,000 tickets end to end`` — 1,000 tickets posted through REST by 50 concurrent
  clients over four queues (life-2 500, life-4 200, cellwar-2 200, cellwar-4 100), each
  client waiting on its ticket's WebSocket: match rate (matched within 120 s), p50/p99
  time-to-match seen by the client (POST sent → ``matched`` frame) and the matchmaker's
  own ``wait_s``. Informative rows.

Every server is a child process (nats-server with fsync, ``python -m services.engine``,
``python -m services.session``, ``python -m services.matchmaker``, ``python -m gateway``
with its rate limit and create/join windows off); the clients run in the bench process.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

import httpx
import websockets

from bench._stack import cpu_seconds, percentile, row, run_async, start_platform
from services.matchmaker.domain import Candidate, form_matches

STEP_TICKETS = 10_000
STEP_TARGET_S = 1.0
PAIR_TARGET_S = 2.0
E2E_QUEUES = {("life", 2): 500, ("life", 4): 200, ("cellwar", 2): 200, ("cellwar", 4): 100}
E2E_CLIENTS = 50
E2E_DEADLINE_S = 120.0


def matching_step(tickets: int = STEP_TICKETS, seed: int = 14) -> dict[str, Any]:
    """Time of the pure matching step on ``tickets`` tickets (best of 3, seconds)."""
    rng = random.Random(seed)
    now = 1_000_000.0
    candidates = []
    for i in range(tickets):
        config: dict[str, Any] = {}
        if rng.random() < 0.2:
            config["width"] = rng.choice([40, 60, 80])
        if rng.random() < 0.1:
            config["torus"] = rng.random() < 0.5
        candidates.append(Candidate(f"t{i}", now - rng.uniform(0, 70), rng.gauss(1500, 300), config))
    best = float("inf")
    matches = []
    for _ in range(3):
        t0 = time.perf_counter()
        matches = form_matches(candidates, 2, now)
        best = min(best, time.perf_counter() - t0)
    return {"seconds": best, "matched": 2 * len(matches), "tickets": tickets}


def _ws_url(base: str, ticket_id: str, token: str) -> str:
    return base.replace("http://", "ws://") + f"/matchmaking/tickets/{ticket_id}/stream?token={token}"


async def _one_ticket(
    client: httpx.AsyncClient, base: str, kind: str, players: int, name: str, deadline_s: float
) -> dict[str, Any]:
    """POST a ticket, wait on its WebSocket until it ends; the times seen (seconds)."""
    t0 = time.perf_counter()
    r = await client.post("/matchmaking/tickets", json={"kind": kind, "players": players, "name": name})
    r.raise_for_status()
    created = r.json()
    out: dict[str, Any] = {"status": "searching", "client_s": None, "wait_s": None, "game_id": None}
    try:
        async with websockets.connect(_ws_url(base, created["ticket_id"], created["ticket_token"])) as ws:
            async with asyncio.timeout(deadline_s):
                async for raw in ws:
                    msg = json.loads(raw)
                    if msg.get("status") in ("matched", "cancelled", "expired"):
                        out.update(
                            status=msg["status"],
                            client_s=time.perf_counter() - t0,
                            wait_s=msg.get("wait_s"),
                            game_id=(msg.get("match") or {}).get("game_id"),
                        )
                        break
    except (TimeoutError, OSError, websockets.WebSocketException) as exc:
        out["error"] = repr(exc)
    return out


async def _pairs(base: str, pairs: int) -> list[float]:
    """Seconds until both tickets of a compatible pair have their seat, ``pairs`` times."""
    times = []
    async with httpx.AsyncClient(base_url=base, timeout=30.0) as client:
        for i in range(pairs):
            t0 = time.perf_counter()
            a, b = await asyncio.gather(
                _one_ticket(client, base, "cellwar", 2, f"a{i}", 30.0),
                _one_ticket(client, base, "cellwar", 2, f"b{i}", 30.0),
            )
            if a["status"] == b["status"] == "matched" and a["game_id"] == b["game_id"]:
                times.append(time.perf_counter() - t0)
    return times


async def _end_to_end(base: str, quick: bool) -> dict[str, Any]:
    plan = [(k, n) for (k, n), count in E2E_QUEUES.items() for _ in range(count // (5 if quick else 1))]
    random.Random(7).shuffle(plan)
    results: list[dict[str, Any]] = []
    queue: asyncio.Queue[tuple[int, str, int]] = asyncio.Queue()
    for i, (kind, players) in enumerate(plan):
        queue.put_nowait((i, kind, players))
    limits = httpx.Limits(max_connections=E2E_CLIENTS, max_keepalive_connections=E2E_CLIENTS)
    async with httpx.AsyncClient(base_url=base, timeout=60.0, limits=limits) as client:

        async def worker() -> None:
            while not queue.empty():
                i, kind, players = queue.get_nowait()
                results.append(await _one_ticket(client, base, kind, players, f"p{i}", E2E_DEADLINE_S))

        # Each client waits for its ticket before posting its next one, so the queues never
        # hold more than E2E_CLIENTS tickets: the 4-player queues fill as tickets arrive.
        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(E2E_CLIENTS)))
        elapsed = time.perf_counter() - t0
    matched = [r for r in results if r["status"] == "matched"]
    return {
        "tickets": len(plan),
        "matched": len(matched),
        "elapsed_s": elapsed,
        "client_s": [r["client_s"] for r in matched],
        "wait_s": [r["wait_s"] for r in matched if r["wait_s"] is not None],
        "errors": [r["error"] for r in results if "error" in r][:5],
    }


async def _services_run(quick: bool) -> dict[str, Any]:
    svc = await start_platform(gateway=False)
    try:
        await svc.start_matchmaker()
        # every ticket comes from 127.0.0.1: the per-address windows (a ticket is a create,
        # 30 a minute) would refuse all but the first 30 with 429
        base = await svc.start_gateway(rate_limit_per_s=0, create_limit_per_min=0, join_limit_per_min=0)
        pids = svc.pids()
        cpu0 = {n: cpu_seconds(p) for n, p in pids.items()}
        pair_times = await _pairs(base, 5 if quick else 20)
        e2e = await _end_to_end(base, quick)
        cpu = {n: round(cpu_seconds(p) - cpu0[n], 2) for n, p in pids.items()}
        return {"pairs": pair_times, "pairs_tried": 5 if quick else 20, "e2e": e2e, "cpu_s": cpu}
    finally:
        svc.close()


def run(quick: bool = False) -> dict[str, Any]:
    """Run the matchmaking benchmark; returns ``{"rows": [...], ...}`` (bench/run.py)."""
    step = matching_step(2_000 if quick else STEP_TICKETS)
    services = run_async(_services_run(quick))
    pairs = services["pairs"]
    e2e = services["e2e"]
    pair_p99 = percentile(pairs, 99)
    rate = e2e["matched"] / e2e["tickets"] if e2e["tickets"] else 0.0
    rows = [
        row(
            f"matching step, {step['tickets']:,} tickets one queue",
            "s",
            step["seconds"],
            f"<= {STEP_TARGET_S:.0f} s",
            step["seconds"] <= STEP_TARGET_S,
            matched=step["matched"],
        ),
        row(
            "pair to the same game (REST + WS), p99",
            "s",
            pair_p99,
            f"<= {PAIR_TARGET_S:.0f} s",
            pair_p99 is not None and pair_p99 <= PAIR_TARGET_S and len(pairs) == services["pairs_tried"],
            samples=len(pairs),
            p50=percentile(pairs, 50),
        ),
        row(f"{e2e['tickets']:,} tickets end to end: matched", "%", 100.0 * rate, "reported", None,
            errors=e2e["errors"]),
        row("  time-to-match p50 (client)", "s", percentile(e2e["client_s"], 50), "reported", None),
        row("  time-to-match p99 (client)", "s", percentile(e2e["client_s"], 99), "reported", None),
        row("  wait_s p99 (matchmaker)", "s", percentile(e2e["wait_s"], 99), "reported", None),
        row("  tickets/s through REST", "1/s", e2e["tickets"] / e2e["elapsed_s"] if e2e["elapsed_s"] else None,
            "reported", None),
    ]
    return {"rows": rows, "cpu_s": services["cpu_s"]}


if __name__ == "__main__":
    for r in run(quick=True)["rows"]:
        print(r["name"], r["kernel"], r["unit"])
