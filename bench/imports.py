"""Import: re-deciding and recording a 10,000-event log (``cellwar import``,
docs/replays.md; no target, so informative rows).

The log is the replay benchmark's 60x60 Life game (:func:`bench.replay.finished_log`),
finished by agreement (both players ``propose_finish``: a finished log is recorded as it
is; an unfinished one would become a one-event fork). Measured:

* ``engine.reenact`` in-process: every command decided again under the recorded version
  and compared with the recorded events (:mod:`engine.reenact`), events/s;
* ``Session.ImportGame`` end to end against child processes (NATS with
  ``sync_interval: always``, engine, session): ``Engine.Reenact`` over gRPC, then the
  events appended to JetStream one by one behind the fence, events/s; the new game's
  last hash is checked against the recorded one.

The whole log is re-decided before anything is written (all or nothing), so an import
costs a re-decision plus one fsynced append per event.
"""

from __future__ import annotations

import time
from typing import Any

import engine
from bench._stack import new_services, row, run_async
from bench.replay import finished_log
from engine.api import dumps
from engine.reenact import Recorded, reenact

EVENTS = 10_000


async def _import_part(log: list[tuple[str, int, dict, str]]) -> dict[str, Any]:
    import grpc

    from cellwar.v1 import events_pb2, session_pb2, session_pb2_grpc
    from services.common.grpcutil import GRPC_OPTIONS

    events = [
        events_pb2.Event(
            seq=i + 1,
            type=t,
            actor=a,
            payload=dumps(p),
            engine_version=engine.ENGINE_VERSION,
            state_hash=h,
        )
        for i, (t, a, p, h) in enumerate(log)
    ]
    svc = new_services()
    try:
        svc.start_nats(fsync=True)
        await svc.start_engine()
        target = await svc.start_session()
        async with grpc.aio.insecure_channel(target, options=GRPC_OPTIONS) as channel:
            stub = session_pb2_grpc.SessionStub(channel)
            t0 = time.perf_counter()
            reply = await stub.ImportGame(
                session_pb2.ImportGameRequest(events=events, command_id="bench-import"), timeout=600
            )
            import_s = time.perf_counter() - t0
            last = await stub.ListEvents(
                session_pb2.ListEventsRequest(game_id=reply.game_id, from_seq=len(events)), timeout=60
            )
            if reply.events != len(events) or last.events[-1].state_hash != log[-1][3]:
                raise RuntimeError("the imported game does not end in the recorded state")
    finally:
        svc.close()
    return {"import_s": import_s, "finished": reply.finished}


def run(quick: bool = False) -> dict[str, Any]:
    """Build the log, then measure re-deciding it in-process and importing it end to end."""
    log = finished_log(2_000 if quick else EVENTS)
    n = len(log)
    recorded = [Recorded(i + 1, t, a, p, h, engine.ENGINE_VERSION) for i, (t, a, p, h) in enumerate(log)]
    t0 = time.perf_counter()
    done = reenact(recorded)
    reenact_s = time.perf_counter() - t0
    if engine.state_hash(done.state) != log[-1][3]:
        raise RuntimeError("reenact does not reproduce the recorded state hash")
    svc = run_async(_import_part(log))
    rows = [
        row(
            f"engine.reenact in-process, {n:,}-event 60x60 Life game",
            "events/s",
            n / reenact_s,
            "info",
            None,
        ),
        row(
            f"POST /games/import path (Session.ImportGame: Engine.Reenact + fsynced appends), {n:,} events",
            "events/s",
            n / svc["import_s"],
            "info",
            None,
            seconds=svc["import_s"],
        ),
    ]
    return {"rows": rows, "events": n, "reenact_s": reenact_s, **svc}
