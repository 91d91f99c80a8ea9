"""The follower (services/session/entrypoints/follower.py): one hand-ordered consumer per instance on
``games.*.events`` delivers every event once, in order, across a reset and across the loss
of its consumer on the server (recreated from the last stream sequence seen + 1), and
runs its catch-up (``on_reset``) once the consumer is back."""

from __future__ import annotations

import asyncio
import time
import uuid

import nats
import pytest

from cellwar.v1 import events_pb2
from services.session.adapters.event_store import STREAM, EventStore
from services.session.entrypoints.follower import Follower

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def draft(n: int) -> events_pb2.Event:
    return events_pb2.Event(type="TurnEnded", actor=n, payload=b"{}", state_hash=f"h{n}")


async def until(check, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.02)


async def test_every_event_once_in_order_across_resets_and_a_lost_consumer(nats_url):
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    store = EventStore(js)
    await store.ensure_stream()
    gid = uuid.uuid4().hex[:12]
    before = uuid.uuid4().hex[:12]
    await store.append(before, [draft(0)], 0)  # written before the follower starts: not replayed
    got: list[tuple[int, int]] = []

    def on_event(game_id: str, data: bytes, stream_seq: int) -> None:
        if game_id in (gid, before):
            got.append((events_pb2.Event.FromString(data).seq, stream_seq))

    catch_ups: list[int] = []

    async def on_reset() -> None:  # the bootstrap gives GameCache.catch_up_all
        catch_ups.append(len(got))

    follower = Follower(nc, js, on_event, on_reset, heartbeat_s=0.5)
    await follower.start()
    try:
        await store.append(gid, [draft(i) for i in range(3)], 0)
        await until(lambda: len(got) == 3)
        await follower.reset("test")
        await store.append(gid, [draft(i) for i in range(3)], 3)
        await until(lambda: len(got) == 6)
        await js.delete_consumer(STREAM, follower._consumer)  # the server loses it
        await store.append(gid, [draft(i) for i in range(2)], 6)
        await until(lambda: len(got) == 8)
        await asyncio.sleep(0.5)
        assert [seq for seq, _ in got] == list(range(1, 9))  # once each, in order
        assert [s for _, s in got] == sorted({s for _, s in got})
        assert follower.resets >= 2
        assert 2 <= len(catch_ups) <= follower.resets  # a catch-up after the resets, once back
        assert catch_ups[0] == 3  # the explicit reset came after the first 3 events
    finally:
        await follower.stop()
        await nc.close()
