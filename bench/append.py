"""Event append: the session's append path beside a raw JetStream publish loop with the
same durability, its anchor (docs/benchmarks.md).

Both run in the bench process against one ``nats-server`` child with JetStream
``sync_interval: always`` (an acknowledged write is on disk, as ``make run``), on the
``GAME_EVENTS`` stream as the session creates it (:meth:`EventStore.ensure_stream`).
10 games at once, one append at a time per game (10 players' commands), the two loops
taking turns in 4 windows each (after a warm-up in each); the same ~150-byte ``cellwar.v1.Event`` (an ``ActionApplied`` of one
placed cell) each time:

* anchor: ``js.publish`` of the serialised event with the headers the session sends
  (``Nats-Expected-Last-Subject-Sequence``, ``Nats-Msg-Id``), awaiting each ack;
* session: :meth:`services.session.adapters.event_store.EventStore.append` (copy and stamp the event,
  headers, publish, check the ack), the code every recorded command goes through.

Figures: appends/s and p50/p99 latency of each, and the ratio session / anchor (info:
no target of its own; the round trip's is in ``roundtrip``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from bench._stack import Services, cpu_seconds, new_services, percentile, row, run_async

GAMES = 10
ROUNDS = 4  # windows per loop, taken in turns
EVENT_TYPE = "ActionApplied"


def sample_event(game_id: str) -> Any:
    """The ~150-byte ``cellwar.v1.Event`` every append of the append benches writes: an
    ``ActionApplied`` of one placed cell in game ``game_id``."""
    from cellwar.v1 import events_pb2

    payload = json.dumps({"type": "place", "cells": [[3, 4]]}, separators=(",", ":")).encode()
    return events_pb2.Event(
        game_id=game_id,
        type=EVENT_TYPE,
        actor=1,
        payload=payload,
        engine_version="bench",
        state_hash="0" * 64,
    )


@contextlib.asynccontextmanager
async def event_store_on_nats() -> AsyncIterator[tuple[Services, Any, Any, Any]]:
    """A ``nats-server`` child with JetStream ``sync_interval: always``, a connection to
    it, its JetStream context and an ``EventStore`` whose ``GAME_EVENTS`` stream is
    created (:meth:`EventStore.ensure_stream`): yields ``(services, nc, js, store)``;
    closes the connection and stops the child on exit."""
    import nats

    from services.session.adapters.event_store import EventStore

    svc = new_services()
    nc = None
    try:
        svc.start_nats(fsync=True)
        nc = await nats.connect(svc.nats_url)
        js = nc.jetstream()
        store = EventStore(js)
        await store.ensure_stream()
        yield svc, nc, js, store
    finally:
        if nc is not None:
            await nc.close()
        svc.close()


async def _load(
    append: Callable[[int, int], Awaitable[None]], warmup: float, seconds: float
) -> tuple[list[float], int]:
    """``GAMES`` loops of ``append(game, k)``; latencies (ms) of the measured window."""
    latencies: list[float] = []
    errors = 0
    loop = asyncio.get_running_loop()
    t_measure = loop.time() + warmup
    t_end = t_measure + seconds

    async def game(g: int) -> None:
        nonlocal errors
        k = 0
        while loop.time() < t_end:
            start = loop.time()
            t0 = time.perf_counter()
            try:
                await append(g, k)
            except Exception:  # noqa: BLE001 - counted; a healthy run has none
                errors += 1
                if errors > 20:
                    raise
            dt = time.perf_counter() - t0
            k += 1
            if start >= t_measure and loop.time() <= t_end:
                latencies.append(dt * 1000.0)

    await asyncio.gather(*(game(g) for g in range(GAMES)))
    return latencies, errors


async def _bench(warmup: float, seconds: float) -> dict[str, Any]:
    from services.session.adapters.event_store import STREAM, msg_id, subject

    async with event_store_on_nats() as (svc, _nc, js, store):
        nats_pid = svc.child("nats").pid
        out: dict[str, Any] = {}

        # anchor: the raw publish loop
        raw_ids = [f"raw{g:02d}-{uuid.uuid4().hex[:8]}" for g in range(GAMES)]
        raw_bytes = [sample_event(gid).SerializeToString() for gid in raw_ids]
        last = [0] * GAMES
        commands = [itertools.count() for _ in range(2 * GAMES)]  # ids unique across windows

        async def raw(g: int, k: int) -> None:
            headers = {
                "Nats-Expected-Last-Subject-Sequence": str(last[g]),
                "Nats-Msg-Id": msg_id(raw_ids[g], f"c{next(commands[g])}", 0),
            }
            ack = await js.publish(subject(raw_ids[g]), raw_bytes[g], headers=headers)
            last[g] = ack.seq

        # the session's append path
        ids = [f"store{g:02d}-{uuid.uuid4().hex[:8]}" for g in range(GAMES)]
        drafts = [sample_event(gid) for gid in ids]
        seqs = [0] * GAMES

        async def session(g: int, k: int) -> None:
            command = f"c{next(commands[GAMES + g])}"
            stored = await store.append(ids[g], [drafts[g]], seqs[g], command_id=command)
            seqs[g] = stored[-1].seq

        # the two loops take turns in ROUNDS windows each, so a change in the machine's
        # load during the run weighs on both alike
        lats: dict[str, list[float]] = {"raw publish": [], "EventStore.append": []}
        errs = dict.fromkeys(lats, 0)
        cpu = dict.fromkeys(lats, 0.0)
        for _ in range(ROUNDS):
            for name, fn in (("raw publish", raw), ("EventStore.append", session)):
                c0 = cpu_seconds(nats_pid)
                lat, errors = await _load(fn, warmup / ROUNDS, seconds / ROUNDS)
                cpu[name] += cpu_seconds(nats_pid) - c0
                lats[name] += lat
                errs[name] += errors
        for name, lat in lats.items():
            out[name] = {
                "appends_per_s": len(lat) / seconds,
                "p50_ms": percentile(lat, 50),
                "p99_ms": percentile(lat, 99),
                "errors": errs[name],
                "nats_cpu_cores": cpu[name] / (warmup + seconds),
            }
        info = await js.stream_info(STREAM)
        out["stream_messages"] = info.state.messages
        return out


def run(quick: bool = False) -> dict[str, Any]:
    """The raw publish loop, then ``EventStore.append``, each for a fixed time."""
    warmup, seconds = (0.5, 2.0) if quick else (1.0, 8.0)
    r = run_async(_bench(warmup, seconds))
    raw, session = r["raw publish"], r["EventStore.append"]
    ratio = session["appends_per_s"] / raw["appends_per_s"] if raw["appends_per_s"] else None
    for name in ("raw publish", "EventStore.append"):
        f = r[name]
        print(
            f"  append {name}: {f['appends_per_s']:,.0f}/s, p50 {f['p50_ms'] or 0:.1f} ms, "
            f"p99 {f['p99_ms'] or 0:.1f} ms, errors {f['errors']}, nats CPU {f['nats_cpu_cores']:.2f}"
        )
    rows = [
        row(
            "raw JetStream publish loop, fsync always, 10 games one at a time",
            "appends/s",
            raw["appends_per_s"],
            "- (anchor)",
            None,
            p50_ms=raw["p50_ms"],
            p99_ms=raw["p99_ms"],
        ),
        row(
            "session EventStore.append, same load and durability",
            "appends/s",
            session["appends_per_s"],
            "- (info: vs the anchor)",
            None,
            reference=raw["appends_per_s"],
            ratio=ratio,
            p50_ms=session["p50_ms"],
            p99_ms=session["p99_ms"],
        ),
        row("  raw publish p99 latency", "ms", raw["p99_ms"], "- (info)", None),
        row("  EventStore.append p99 latency", "ms", session["p99_ms"], "- (info)", None),
    ]
    if raw["errors"] or session["errors"]:
        rows.append(
            row(
                "append errors (both loops)",
                "errors",
                float(raw["errors"] + session["errors"]),
                "0",
                False,
            )
        )
    return {"rows": rows, "quick": quick, "games": GAMES, "detail": r}
