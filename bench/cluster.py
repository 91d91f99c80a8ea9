"""Scale-out: REST actions/s with 2 engines, 2 sessions and 2 gateways against one of each
(target ≥ 1.6× "on a machine with the cores for it (on paper here: report
per-process CPU)").

Both topologies serve the round trip's load (:mod:`bench.roundtrip`: 10 two-player Life
games, one placement or erase at a time per game) on one NATS server with fsync on; the
services are wired as ``make run-cluster`` wires them (deploy/topology.py): each session
spreads its engine calls over every engine (a game's calls go to the engine its id hashes
to), gateway k prefers session k (gRPC ``ipv4:`` target), and a game's players post to
the gateway that created it. NATS is one node in both, not run-cluster's three (R3 would
cost both topologies the same and hide what the services do).

This machine has two cores for every process and the load generator, so the measured
ratio says little. What the row judges is the projection: with a core per process, a
topology serves at most ``1 / (CPU per action of its busiest process)`` actions/s — the
CPU per action of each process (ms of CPU per action served by the whole topology) is
measured in the run. Rows: both measured rates (info), the projected rates and their
ratio (target ≥ 1.6×).
"""

from __future__ import annotations

from typing import Any

import httpx

from bench._stack import new_services, row, run_async
from bench.roundtrip import GAMES, measure, platform_seats

MIN_RATIO = 1.6  # the scale-out target (docs/benchmarks.md)


async def _topology(n: int, warmup: float, seconds: float) -> dict[str, Any]:
    """Measure the round-trip load on ``n`` of each service: actions/s, CPU per process,
    and the projected rate with a core per process."""
    svc = new_services()
    try:
        svc.start_nats(fsync=True)
        urls = await svc.start_replicas(n)
        seats: list[tuple[str, str]] = []
        async with httpx.AsyncClient(timeout=30.0) as client:
            for i in range(GAMES):  # game i is created, and played, through gateway i % n
                seats += await platform_seats(client, urls[i % n], 1)
        pids = svc.pids()
        result = await measure(urls, seats, warmup, seconds, pids)
    finally:
        svc.close()
    rate = result["actions_per_s"]
    servers = {k: v for k, v in result["cpu_cores"].items() if k != "bench-client"}
    per_action = {k: 1000.0 * v / rate for k, v in servers.items()} if rate else {}
    busiest = max(per_action, key=per_action.get) if per_action else None
    result.pop("latencies")
    result.update(
        services=n,
        cpu_ms_per_action={k: round(v, 3) for k, v in per_action.items()},
        busiest=busiest,
        projected_actions_per_s=1000.0 / per_action[busiest] if busiest else None,
    )
    return result


def _note(r: dict[str, Any]) -> None:
    cpu = ", ".join(f"{k} {v:.2f}" for k, v in r["cpu_ms_per_action"].items())
    print(
        f"  cluster {r['services']} of each: {r['actions_per_s']:,.0f} actions/s measured, errors"
        f" {r['errors']}; CPU ms per action: {cpu}; busiest {r['busiest']} -> "
        f"{r['projected_actions_per_s'] or 0:,.0f} actions/s with a core per process"
    )
    for e in r["first_errors"]:
        print(f"    error: {e}")


def run(quick: bool = False) -> dict[str, Any]:
    """Measure one of each, then two of each; rows as the module docstring says."""
    warmup, seconds = (1.0, 3.0) if quick else (2.0, 10.0)
    one = run_async(_topology(1, warmup, seconds))
    _note(one)
    two = run_async(_topology(2, warmup, seconds))
    _note(two)
    measured = two["actions_per_s"] / one["actions_per_s"] if one["actions_per_s"] else None
    p1, p2 = one["projected_actions_per_s"], two["projected_actions_per_s"]
    paper = p2 / p1 if p1 and p2 else None
    ok = paper is not None and paper >= MIN_RATIO and one["errors"] == 0 and two["errors"] == 0
    rows = [
        row(
            "scale-out: 1 engine, 1 session, 1 gateway (measured here)",
            "actions/s",
            one["actions_per_s"],
            "- (reference)",
            None,
            detail=one,
        ),
        row(
            "scale-out: 2 engines, 2 sessions, 2 gateways (measured here, 2 cores)",
            "actions/s",
            two["actions_per_s"],
            "- (info: no spare core here)",
            None,
            reference=one["actions_per_s"],
            ratio=measured,
            detail=two,
        ),
        row(
            "scale-out on paper: 2 of each vs 1, a core per process (busiest process's CPU/action)",
            "actions/s",
            p2,
            f">= {MIN_RATIO:g}x of 1 of each",
            ok,
            reference=p1,
            ratio=paper,
            busiest_one=one["busiest"],
            busiest_two=two["busiest"],
        ),
    ]
    return {
        "rows": rows,
        "quick": quick,
        "games": GAMES,
        "warmup_s": warmup,
        "seconds": seconds,
        "topology": "one nats-server (fsync on); engines, sessions, gateways as child processes "
        "wired as make run-cluster; httpx load generator in the bench process",
    }
