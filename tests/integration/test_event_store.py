"""Contract of the JetStream event store (DESIGN §6): order, optimistic concurrency,
de-duplication by command id."""

from __future__ import annotations

import uuid

import nats
import pytest

from cellwar.v1 import events_pb2
from services.session.store import ConcurrencyError, DuplicateCommandError, EventStore

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]


@pytest.fixture
async def store(nats_url):
    nc = await nats.connect(nats_url)
    s = EventStore(nc.jetstream())
    await s.ensure_stream()
    yield s
    await nc.close()


def draft(etype: str, n: int = 0) -> events_pb2.Event:
    return events_pb2.Event(type=etype, actor=n, payload=b'{"n":%d}' % n, state_hash=f"h{n}")


def new_game_id() -> str:
    return uuid.uuid4().hex[:12]


async def test_events_are_read_back_in_order_with_contiguous_seqs(store):
    gid = new_game_id()
    await store.append(gid, [draft("GameCreated", 0)], 0)
    await store.append(gid, [draft("PlayerJoined", 1), draft("PlayerJoined", 2)], 1, "cmd-a")
    events = await store.read(gid)
    assert [e.seq for e in events] == [1, 2, 3]
    assert [e.type for e in events] == ["GameCreated", "PlayerJoined", "PlayerJoined"]
    assert all(e.game_id == gid for e in events)
    assert [e.command_id for e in events] == ["", "cmd-a", "cmd-a"]
    assert [e.seq for e in await store.read(gid, 2)] == [2, 3]
    assert [e.seq for e in await store.read(gid, 2, 2)] == [2]


async def test_an_unknown_game_has_an_empty_log(store):
    assert await store.read(new_game_id()) == []


async def test_append_after_a_stale_seq_raises_concurrency_error(store):
    gid = new_game_id()
    await store.append(gid, [draft("GameCreated")], 0)
    await store.append(gid, [draft("PlayerJoined", 1)], 1)
    with pytest.raises(ConcurrencyError):
        await store.append(gid, [draft("PlayerJoined", 2)], 1)
    assert [e.seq for e in await store.read(gid)] == [1, 2]


async def test_two_writers_of_one_game_one_wins(store, nats_url):
    gid = new_game_id()
    await store.append(gid, [draft("GameCreated")], 0)
    nc = await nats.connect(nats_url)
    try:
        other = EventStore(nc.jetstream())
        await other.append(gid, [draft("PlayerJoined", 1)], 1)
        # `store` still believes the log ends at seq 1
        with pytest.raises(ConcurrencyError):
            await store.append(gid, [draft("PlayerJoined", 2)], 1)
        await store.append(gid, [draft("PlayerJoined", 2)], 2)
    finally:
        await nc.close()
    assert [e.actor for e in await store.read(gid)] == [0, 1, 2]


async def test_first_event_expects_an_empty_subject(store):
    gid = new_game_id()
    await store.append(gid, [draft("GameCreated")], 0)
    with pytest.raises(ConcurrencyError):
        await store.append(gid, [draft("GameCreated")], 0)


async def test_retried_command_is_deduplicated_by_jetstream(store):
    gid = new_game_id()
    await store.append(gid, [draft("GameCreated")], 0)
    await store.append(gid, [draft("PlayerJoined", 1)], 1, "join-1")
    with pytest.raises(DuplicateCommandError):
        await store.append(gid, [draft("PlayerJoined", 1)], 2, "join-1")
    events = await store.read(gid)
    assert [e.seq for e in events] == [1, 2]


async def test_reading_a_long_log_is_fast(store):
    gid = new_game_id()
    for i in range(0, 2000, 100):
        await store.append(gid, [draft("GenerationsTicked", n) for n in range(100)], i)
    events = await store.read(gid)
    assert [e.seq for e in events] == list(range(1, 2001))
    tail = await store.read(gid, 1990)
    assert [e.seq for e in tail] == list(range(1990, 2001))
