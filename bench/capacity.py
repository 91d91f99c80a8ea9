"""Hosted capacity through the engine service (DESIGN §8: running 300x300 games ticking at
8 generations/s, >= 1,000 games per engine core).

The session's ticker sends one ``Engine.Tick`` per tick interval (1/8 s) with every
running game it holds, 1 generation each at speed 1. Here ``Engine.Tick`` is called with
K running 300x300 two-colour games (hard edges, 30 % random soups in both halves) against
a ``python -m services.engine`` child process. Per call the engine decodes each state,
runs ``engine.decide_tick`` (the rules: step, extinction, stability), hashes and encodes
the new state. Figures:

* games per engine core: K / (8 x the engine process's CPU seconds per call, all threads,
  averaged over calls repeated for a few seconds);
* games by wall time of the call (client encode/decode and transfer included), info;
* in-process ``engine.decide_tick`` + encode of one game (no gRPC), info;
* the kernel alone: ``engine.life.kernel.step_many`` of K boards, 8 generations, as in
  bench/kernel.py, in the same run.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import engine
from bench._stack import cpu_seconds, new_services, row, run_async, soup_cells
from bench.kernel import SEED, random_board
from engine.life.kernel import step_many

TARGET = 1000.0
GPS = 8  # generations per game-second (DESIGN §3)
DISTINCT = 10  # distinct game states, repeated to make K


def running_state(seed: int, size: int = 300) -> Any:
    """A running ``size`` x ``size`` 2-player Life game with 30 % soups in both halves."""
    config = engine.config_from_dict(
        "life", {"width": size, "height": size, "budget": size * size, "max_generations": 100_000}
    )
    state = engine.add_player(engine.add_player(engine.new_game(config), "a"), "b")
    for pid in (1, 2):
        zone = engine.get_visible_state(state, pid)["zone"]
        cells = soup_cells(zone, 0.3, seed * 2 + pid)
        state = engine.apply_action(state, pid, {"type": "place", "cells": cells})
        state = engine.end_player_turn(state, pid)
    if engine.summary(state).phase != "running":
        raise RuntimeError("the capacity game is not running")
    return state


async def _grpc_part(
    protos: list, ks: list[int], min_seconds: float
) -> dict[int, dict[str, float]]:
    import grpc

    from cellwar.v1 import engine_pb2, engine_pb2_grpc
    from services.common.grpcutil import GRPC_OPTIONS

    out: dict[int, dict[str, float]] = {}
    svc = new_services()
    try:
        await svc.start_engine()
        pid = svc.child("engine").pid
        async with grpc.aio.insecure_channel(svc.engine_target, options=GRPC_OPTIONS) as channel:
            stub = engine_pb2_grpc.EngineStub(channel)
            for k in ks:
                items = [
                    engine_pb2.TickItem(state=protos[i % len(protos)], generations=1)
                    for i in range(k)
                ]
                request = engine_pb2.TickRequest(items=items)
                reply = await stub.Tick(request, timeout=120)  # warm-up, and a check
                if len(reply.results) != k or any(r.generations_run != 1 for r in reply.results):
                    raise RuntimeError("Engine.Tick did not run one generation per game")
                # CPU time of the engine process over many calls (/proc counts 10 ms ticks).
                walls: list[float] = []
                c0 = cpu_seconds(pid)
                t_end = time.perf_counter() + min_seconds
                while len(walls) < 3 or time.perf_counter() < t_end:
                    t0 = time.perf_counter()
                    await stub.Tick(request, timeout=120)
                    walls.append(time.perf_counter() - t0)
                engine_cpu = (cpu_seconds(pid) - c0) / len(walls)
                out[k] = {
                    "wall_s": min(walls),
                    "wall_mean_s": sum(walls) / len(walls),
                    "calls": len(walls),
                    "engine_cpu_s": max(engine_cpu, 1e-9),
                    "request_bytes": request.ByteSize(),
                }
    finally:
        svc.close()
    return out


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run(quick: bool = False) -> dict[str, Any]:
    """Engine.Tick with K = 100 and 250 games (``quick``: 50 and 100), and the kernel."""
    from services.engine.server import to_proto

    ks = [50, 100] if quick else [100, 250]
    repeats = 3 if quick else 5
    states = [running_state(i) for i in range(DISTINCT)]
    protos = [to_proto(s) for s in states]
    grpc_figs = run_async(_grpc_part(protos, ks, 1.0 if quick else 3.0))

    def one_game() -> None:
        for s in states:
            drafts, new = engine.decide_tick(s, 1)
            to_proto(new)

    per_game = _best(one_game, repeats) / len(states)
    inproc = 1.0 / (GPS * per_game)

    kmax = max(ks)
    boards = np.stack([random_board(300, 2, seed=SEED + i) for i in range(kmax)])
    kernel_secs = _best(lambda: step_many(boards, generations=GPS), repeats)
    kernel_capacity = kmax / kernel_secs

    rows = []
    for k in ks:
        f = grpc_figs[k]
        per_core = k / (GPS * f["engine_cpu_s"])
        rows.append(
            row(
                f"Engine.Tick over gRPC, {k} games 300x300 x 1 gen (engine CPU)",
                "games/core",
                per_core,
                f">= {TARGET:,.0f} games/core",
                per_core >= TARGET,
                reference=kernel_capacity,
                ratio=per_core / kernel_capacity,
                games=k,
                **f,
            )
        )
        rows.append(
            row(
                f"  same, by wall time of the call ({k} games, client encode incl.)",
                "games/s-of-8-gen",
                k / (GPS * f["wall_s"]),
                "- (info)",
                None,
                wall_s=f["wall_s"],
            )
        )
    rows.append(
        row(
            "in-process engine.decide_tick + to_proto, one 300x300 game",
            "games/core",
            inproc,
            "- (info)",
            None,
            per_game_ms=per_game * 1000,
        )
    )
    rows.append(
        row(
            f"kernel only: step_many of {kmax} boards, 8 generations",
            "games/core",
            kernel_capacity,
            f">= {TARGET:,.0f} games/core",
            kernel_capacity >= TARGET,
            seconds=kernel_secs,
        )
    )
    return {
        "rows": rows,
        "quick": quick,
        "generations_per_second": GPS,
        "distinct_states": DISTINCT,
    }
