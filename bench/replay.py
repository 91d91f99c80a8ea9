"""Replay: folding a 10,000-event Life game (target: >= 50,000 events/s folded).

The log is built in-process with ``engine.decide`` / ``engine.decide_tick`` (a 60x60,
2-player game, the default size): both players draw a random soup and then place and
erase single cells one action at a time (~3,000 actions), the game runs with one
``GenerationsTicked`` of 1 generation per event, and each ``redraw`` gets a fresh soup
and "ready" from both players, until 10,000 events; then both players agree to finish
(:func:`finished_log`, 10,003 events: a Life log is private until its game is finished,
so only a finished game's replay is open to anyone). Measured:

* ``engine.fold`` in-process (payloads already parsed), checked against the recorded
  ``state_hash`` of the last event (CPU time of this process: a loaded machine moves
  wall time);
* ``Engine.Fold`` over gRPC with all 10,000 events in one call, against a
  ``python -m services.engine`` child process (protobuf encode + JSON payload parsing +
  fold + reply);
* the session's rebuild path: ``EventStore.read`` of the 10,000 events from JetStream
  (NATS child process; the log is published with NATS' default flush, which does not
  change reads) and the same read followed by ``EngineClient.fold`` (chunks of 2,000);
* ``GET /game/{id}/replay?seq=n`` through gateway -> session -> engine (child
  processes), one request at a time: the first (the session loads the game and, the log
  having been published without snapshots, fills them in every 100 events), the median
  and p90 over random ``n``, and scrubbing over consecutive ``n``.

Each figure is the best of a few repeats (the machine may be shared).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Coroutine
from typing import Any

import numpy as np

import engine
from bench._stack import cpu_seconds, new_services, row, run_async, soup_cells
from engine.api import dumps

EVENTS = 10_000
TARGET = 50_000.0
REPLAY_MEDIAN_MS = 20.0  # GET /replay median target (docs/benchmarks.md)
SEED = 20240611


def build_log(n: int = EVENTS, seed: int = SEED) -> list[tuple[str, int, dict, str]]:
    """``n`` events ``(type, actor, payload, state_hash)`` of one 60x60 Life game."""
    rng = np.random.default_rng(seed)
    log: list[tuple[str, int, dict, str]] = []
    state: Any = None

    def do(drafts_state: tuple[list, Any]) -> None:
        nonlocal state
        drafts, state = drafts_state
        log.extend((d.type, d.actor, d.payload, d.state_hash) for d in drafts)

    config = {"budget": 1_000_000, "max_generations": 1_000_000}
    do(engine.decide(None, "create", 0, {"kind": "life", "config": config}))
    do(engine.decide(state, "join", 0, {"name": "p1"}))
    do(engine.decide(state, "join", 0, {"name": "p2"}))
    actions_each = 1_500
    while len(log) < n:
        s = engine.summary(state)
        if s.finished:
            raise RuntimeError("the replay game finished before 10,000 events")
        if s.phase == "running":
            do(engine.decide_tick(state, 1))
            continue
        drawing = [s.turn] if s.phase == "placement" else [1, 2]
        for pid in drawing:
            zone = engine.get_visible_state(state, pid)["zone"]
            soup = soup_cells(zone, 0.3, int(rng.integers(1 << 30)))
            do(engine.decide(state, "action", pid, {"type": "place", "cells": soup}))
            x0, y0, x1, y1 = zone
            for k in range(actions_each if s.phase == "placement" else 0):
                if len(log) >= n - 2:
                    break
                cell = [x0 + int(rng.integers(x1 - x0)), y0 + int(rng.integers(y1 - y0))]
                kind = "erase" if k % 2 else "place"
                try:
                    do(engine.decide(state, "action", pid, {"type": kind, "cells": [cell]}))
                except engine.GameError:
                    continue  # erase of a cell that is not ours, place on a live one
            do(engine.decide(state, "end_turn", pid, {}))
    return log[:n]


def _best(fn: Callable[[], Any], repeats: int) -> float:
    """Best CPU seconds of ``fn()`` in this process (a loaded machine moves wall time)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


async def _best_async(fn: Callable[[], Coroutine[Any, Any, Any]], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        await fn()
        best = min(best, time.perf_counter() - t0)
    return best


def finished_log(n: int = EVENTS) -> list[tuple[str, int, dict, str]]:
    """:func:`build_log` of ``n`` events, then both players agree to finish (2 actions
    and ``GameFinished``). Raises RuntimeError when the game does not finish."""
    log = build_log(n)
    state = engine.fold(None, [(t, a, p) for t, a, p, _ in log])
    for pid in (1, 2):
        drafts, state = engine.decide(state, "action", pid, {"type": "propose_finish"})
        log.extend((d.type, d.actor, d.payload, d.state_hash) for d in drafts)
    if not engine.summary(state).finished:
        raise RuntimeError("the benchmark game did not finish by agreement")
    return log


async def _services_part(log: list[tuple[str, int, dict, str]], repeats: int) -> dict[str, Any]:
    """Engine.Fold over gRPC, EventStore.read from JetStream, read + EngineClient.fold."""
    import grpc
    import nats
    from google.protobuf.timestamp_pb2 import Timestamp

    from cellwar.v1 import engine_pb2, engine_pb2_grpc, events_pb2
    from services.common.grpcutil import GRPC_OPTIONS
    from services.session.adapters.engine_client import EngineClient
    from services.session.adapters.event_store import EventStore, subject

    game_id = "replaybench"
    now = Timestamp()
    now.GetCurrentTime()
    events = [
        events_pb2.Event(
            game_id=game_id,
            seq=i + 1,
            type=t,
            actor=a,
            payload=dumps(p),
            engine_version=engine.ENGINE_VERSION,
            time=now,
            state_hash=h,
        )
        for i, (t, a, p, h) in enumerate(log)
    ]
    expected = log[-1][3]
    out: dict[str, Any] = {}
    svc = new_services()
    try:
        svc.start_nats(fsync=False)
        await svc.start_engine()
        async with grpc.aio.insecure_channel(svc.engine_target, options=GRPC_OPTIONS) as channel:
            stub = engine_pb2_grpc.EngineStub(channel)
            request = engine_pb2.FoldRequest(events=events)
            reply = await stub.Fold(request, timeout=120)
            if reply.state_hash != expected:
                raise RuntimeError("Engine.Fold does not reproduce the recorded state hash")
            out["grpc_fold_s"] = await _best_async(lambda: stub.Fold(request, timeout=120), repeats)
            pid = svc.child("engine").pid
            cpu = []
            for _ in range(repeats):
                c0 = cpu_seconds(pid)
                await stub.Fold(request, timeout=120)
                cpu.append(cpu_seconds(pid) - c0)
            out["grpc_fold_engine_cpu_s"] = max(min(cpu), 1e-3)
            out["request_bytes"] = request.ByteSize()

        nc = await nats.connect(svc.nats_url)
        client = EngineClient(svc.engine_target, timeout=120)
        try:
            js = nc.jetstream()
            store = EventStore(js)
            await store.ensure_stream()
            subj = subject(game_id)
            t0 = time.perf_counter()
            for start in range(0, len(events), 500):  # 500 publishes in flight, in order
                chunk = events[start : start + 500]
                await asyncio.gather(*(js.publish(subj, e.SerializeToString()) for e in chunk))
            out["publish_s"] = time.perf_counter() - t0
            read = await store.read(game_id)
            if [e.seq for e in read] != list(range(1, len(events) + 1)):
                raise RuntimeError("EventStore.read did not return the log in order")
            out["store_read_s"] = await _best_async(lambda: store.read(game_id), repeats)

            async def rebuild() -> None:
                state = await client.fold(None, await store.read(game_id))
                if state is None or state.state_hash != expected:
                    raise RuntimeError("read + fold does not reproduce the recorded state hash")

            out["rebuild_s"] = await _best_async(rebuild, repeats)
        finally:
            await client.close()
            await nc.close()
        out.update(await _replay_requests(svc, game_id, len(events), repeats))
    finally:
        svc.close()
    return out


async def _replay_requests(svc: Any, game_id: str, n: int, repeats: int) -> dict[str, Any]:
    """``GET /game/{id}/replay?seq=k`` through gateway -> session -> engine, one request at
    a time (the gateway's costly-read limits off): the first (the session loads the
    game and fills its snapshots in), random ``k`` over the whole game, then scrubbing
    (consecutive ``k``). Latencies in ms."""
    import httpx

    from bench._stack import percentile

    await svc.start_session()
    url = await svc.start_gateway(read_limit_per_s=0, read_global_per_s=0, read_concurrency=0)
    rng = np.random.default_rng(SEED)
    out: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=120) as http:

        async def get(seq: int) -> float:
            t0 = time.perf_counter()
            r = await http.get(f"{url}/game/{game_id}/replay", params={"seq": seq})
            if r.status_code != 200 or r.json()["seq"] != seq:
                raise RuntimeError(f"replay {seq}: {r.status_code} {r.text[:200]}")
            return (time.perf_counter() - t0) * 1000.0

        out["first_replay_ms"] = await get(n // 2)
        randoms = [await get(int(k)) for k in rng.integers(1, n + 1, 200 if repeats > 2 else 60)]
        start = int(rng.integers(1, n - 150))
        scrub = [await get(k) for k in range(start, start + 100)]
    # a new session instance: its first request loads the game from the latest snapshot
    import grpc

    from cellwar.v1 import session_pb2, session_pb2_grpc

    target = await svc.start_session(instance_id="bench-session-2")
    async with grpc.aio.insecure_channel(target) as channel:
        stub = session_pb2_grpc.SessionStub(channel)
        t0 = time.perf_counter()
        await stub.GetView(session_pb2.GetViewRequest(game_id=game_id), timeout=120)
        out["snapshot_rebuild_ms"] = (time.perf_counter() - t0) * 1000.0
    out["replay_random_p50_ms"] = percentile(randoms, 50)
    out["replay_random_p90_ms"] = percentile(randoms, 90)
    out["replay_scrub_p50_ms"] = percentile(scrub, 50)
    out["replay_random_ms"] = sorted(round(x, 3) for x in randoms)
    return out


def run(quick: bool = False) -> dict[str, Any]:
    """Build the log, then measure the fold in-process, over gRPC and from JetStream."""
    repeats = 2 if quick else 3
    t0 = time.perf_counter()
    log = finished_log()
    build_s = time.perf_counter() - t0
    types: dict[str, int] = {}
    for t, *_ in log:
        types[t] = types.get(t, 0) + 1
    triples = [(t, a, p) for t, a, p, _ in log]
    state = engine.fold(None, triples)
    if engine.state_hash(state) != log[-1][3]:
        raise RuntimeError("engine.fold does not reproduce the recorded state hash")
    fold_s = _best(lambda: engine.fold(None, triples), repeats)
    payload_bytes = [dumps(p) for _, _, p, _ in log]
    fold_json_s = _best(
        lambda: engine.fold(
            None,
            ((t, a, json.loads(b)) for (t, a, _, _), b in zip(log, payload_bytes, strict=True)),
        ),
        repeats,
    )
    svc = run_async(_services_part(log, repeats))
    n = len(log)
    rows = [
        row(
            "engine.fold in-process, 10,000-event 60x60 Life game (CPU time)",
            "events/s",
            n / fold_s,
            f">= {TARGET:,.0f} events/s",
            n / fold_s >= TARGET,
            seconds=fold_s,
        ),
        row(
            "engine.fold in-process incl. JSON payload parsing (CPU time)",
            "events/s",
            n / fold_json_s,
            "- (info)",
            None,
            seconds=fold_json_s,
        ),
        row(
            "Engine.Fold over gRPC, 10,000 events in one call (wall time)",
            "events/s",
            n / svc["grpc_fold_s"],
            f">= {TARGET:,.0f} events/s",
            n / svc["grpc_fold_s"] >= TARGET,
            seconds=svc["grpc_fold_s"],
            request_bytes=svc["request_bytes"],
        ),
        row(
            "  same, per CPU second of the engine process",
            "events/s",
            n / svc["grpc_fold_engine_cpu_s"],
            "- (info)",
            None,
        ),
        row(
            "session EventStore.read of 10,000 events (JetStream)",
            "events/s",
            n / svc["store_read_s"],
            "- (info)",
            None,
            seconds=svc["store_read_s"],
        ),
        row(
            "rebuild from scratch (no snapshot): EventStore.read + EngineClient.fold",
            "events/s",
            n / svc["rebuild_s"],
            "- (info: reading 10,000 messages bounds it; a rebuild starts from a snapshot)",
            None,
            seconds=svc["rebuild_s"],
        ),
        row(
            "session rebuild: a new instance's first request (latest snapshot + the rest)",
            "ms",
            svc["snapshot_rebuild_ms"],
            "- (info)",
            None,
        ),
        row(
            "GET /replay?seq=n, random n of the 10,000-event game (median)",
            "ms",
            svc["replay_random_p50_ms"],
            f"<= {REPLAY_MEDIAN_MS:g} ms",
            svc["replay_random_p50_ms"] <= REPLAY_MEDIAN_MS,
            p90_ms=svc["replay_random_p90_ms"],
        ),
        row("  same, p90", "ms", svc["replay_random_p90_ms"], "- (info)", None),
        row(
            "  scrubbing: GET /replay of consecutive n (median)",
            "ms",
            svc["replay_scrub_p50_ms"],
            "- (info)",
            None,
        ),
        row(
            "  first GET /replay (the session loads the game, fills its snapshots in)",
            "ms",
            svc["first_replay_ms"],
            "- (info)",
            None,
        ),
    ]
    return {
        "rows": rows,
        "quick": quick,
        "events": n,
        "event_types": types,
        "build_seconds": build_s,
        "publish_seconds": svc["publish_s"],
        "seed": SEED,
    }
