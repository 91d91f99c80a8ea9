"""Contract of the event store (docs/architecture/index.md "The command loop"): order,
optimistic concurrency, de-duplication by command id. One suite, run against the JetStream
store and the in-memory fake the command loop's unit tests use (tests/support/fakes.py), so
the fake keeps the contract."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable

import nats
import pytest

from cellwar.v1 import events_pb2
from cellwar.v1.codes import ErrorCode
from services.session.adapters.event_store import (
    STREAM,
    ConcurrencyError,
    DuplicateCommandError,
    EventStore,
    finished_subject,
)
from services.session.service_layer.ports import StoreUnavailable
from tests.support.fakes import MemoryBackend, MemoryEventLog

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]


@pytest.fixture(params=["jetstream", "memory"])
async def make_store(request, nats_url) -> AsyncIterator[Callable]:
    """A factory of stores over one backend: each call is another "instance"."""
    if request.param == "memory":
        backend = MemoryBackend()

        async def memory():
            return MemoryEventLog(backend)

        yield memory
        return
    connections = []

    async def jetstream():
        nc = await nats.connect(nats_url)
        connections.append(nc)
        s = EventStore(nc.jetstream())
        await s.ensure_stream()
        return s

    yield jetstream
    for nc in connections:
        await nc.close()


@pytest.fixture
async def store(make_store):
    return await make_store()


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


async def test_two_writers_of_one_game_one_wins(store, make_store):
    gid = new_game_id()
    await store.append(gid, [draft("GameCreated")], 0)
    other = await make_store()
    await other.append(gid, [draft("PlayerJoined", 1)], 1)
    # `store` still believes the log ends at seq 1
    with pytest.raises(ConcurrencyError):
        await store.append(gid, [draft("PlayerJoined", 2)], 1)
    await store.append(gid, [draft("PlayerJoined", 2)], 2)
    assert [e.actor for e in await store.read(gid)] == [0, 1, 2]
    assert await other.last_seq(gid) == 3


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


async def test_a_read_may_start_at_a_known_store_position(store):
    gid = new_game_id()
    await store.append(gid, [draft("GameCreated")], 0)
    await store.append(gid, [draft("PlayerJoined", 1)], 1)
    position = store.stream_seq_of(gid)  # where event 2 is
    assert position > 0
    await store.append(gid, [draft("PlayerJoined", 2), draft("TurnEnded", 1)], 2)
    events = await store.read(gid, 3, start_stream_seq=position)
    assert [e.seq for e in events] == [3, 4]
    assert await store.last_seq(gid) == 4


async def test_reads_create_no_consumer(nats_url):
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        s = EventStore(js)
        await s.ensure_stream()
        gid = new_game_id()
        await s.append(gid, [draft("GameCreated")] + [draft("PlayerJoined", i) for i in (1, 2)], 0)
        before = (await js.stream_info(STREAM)).state.consumer_count
        for _ in range(50):
            assert len(await s.read(gid)) == 3
        assert (await js.stream_info(STREAM)).state.consumer_count <= before
    finally:
        await nc.close()


class ReplicaBehind(EventStore):
    """A store whose next ``lagging`` direct gets are answered as by a replica still
    catching up: without the game's messages after stream sequence ``cutoff`` (a direct get
    may be answered by any replica; the leader's ``STREAM.MSG.GET`` is not)."""

    def __init__(self, js, lagging: int) -> None:
        super().__init__(js)
        self.lagging = lagging
        self.cutoff = 0
        self.direct_gets = 0

    async def _direct_batch(self, subj, start, batch=1000):
        self.direct_gets += 1
        got, pending = await super()._direct_batch(subj, start, batch)
        if self.lagging > 0:
            self.lagging -= 1
            return [(s, d) for s, d in got if s <= self.cutoff], 0
        return got, pending


@pytest.fixture
async def behind(nats_url) -> AsyncIterator[Callable]:
    """``await behind(lagging)``: a :class:`ReplicaBehind` over a real NATS, with a game of
    5 events whose last 2 its lagging direct gets do not have; returns (store, game_id)."""
    nc = await nats.connect(nats_url)

    async def make(lagging: int):
        s = ReplicaBehind(nc.jetstream(), lagging=0)
        await s.ensure_stream()
        gid = new_game_id()
        await s.append(gid, [draft("GameCreated"), draft("PlayerJoined", 1), draft("PlayerJoined", 2)], 0)
        s.cutoff = s.stream_seq_of(gid)
        await s.append(gid, [draft("UnitMoved", 1), draft("TurnEnded", 1)], 3)
        s.lagging = lagging
        return s, gid

    yield make
    await nc.close()


async def test_a_read_answered_by_a_replica_behind_the_leader_is_read_again_to_the_leaders_tail(behind):
    store, gid = await behind(lagging=2)
    assert [e.seq for e in await store.read(gid)] == [1, 2, 3, 4, 5]
    assert store.lagging == 0 and store.direct_gets == 3  # two short answers, then the rest


async def test_a_bounded_read_that_ends_short_is_read_again(behind):
    store, gid = await behind(lagging=1)
    assert [e.seq for e in await store.read(gid, 2, 4)] == [2, 3, 4]
    assert store.direct_gets == 2
    store.lagging = 1
    assert [e.seq for e in await store.read(gid, 1, 3)] == [1, 2, 3]  # not short: no read again
    assert store.lagging == 0 and store.direct_gets == 3


async def test_a_read_past_the_end_of_the_log_is_not_read_again(behind):
    store, gid = await behind(lagging=0)
    assert [e.seq for e in await store.read(gid, 4, 50)] == [4, 5]
    assert [e.seq for e in await store.read(gid, 6)] == []
    assert await store.read(new_game_id()) == []
    assert store.direct_gets == 3


async def test_replicas_that_stay_behind_give_a_retryable_unavailable_and_no_short_log(behind):
    store, gid = await behind(lagging=100)
    with pytest.raises(StoreUnavailable, match="behind the stream leader") as caught:
        await store.read(gid)
    assert caught.value.code == ErrorCode.UNAVAILABLE
    assert store.direct_gets == 6  # the read and 5 reads again


@pytest.mark.parametrize("group_commit", [True, False])
async def test_a_finishing_append_stores_one_finish_notice_beside_the_log(nats_url, group_commit):
    """An append with ``GameFinished`` also stores that event on ``games.<id>.finished``
    (once, whether it went alone or in a batch of many games); the log, its last seq and
    its fence do not see it; an append that finishes nothing stores no notice."""
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        s = EventStore(js, group_commit=group_commit)
        await s.ensure_stream()

        async def notices(gid: str) -> int:
            info = await js.stream_info(STREAM, subjects_filter=finished_subject(gid))
            return (info.state.subjects or {}).get(finished_subject(gid), 0)

        games = [new_game_id() for _ in range(20)]
        await asyncio.gather(*(s.append(g, [draft("GameCreated"), draft("PlayerJoined", 1)], 0) for g in games))
        assert [await notices(g) for g in games] == [0] * 20
        finished = await asyncio.gather(
            *(s.append(g, [draft("TurnEnded", 1), draft("GameFinished", 2)], 2, f"c-{g}") for g in games)
        )
        for g, stored in zip(games, finished, strict=True):
            assert await notices(g) == 1
            notice = await js.get_last_msg(STREAM, finished_subject(g))
            assert events_pb2.Event.FromString(notice.data) == stored[-1]
            assert notice.headers["Nats-Msg-Id"] == f"{g}:finished"
            assert [e.seq for e in await s.read(g)] == [1, 2, 3, 4] and await s.last_seq(g) == 4
        # The fence is the log's: the next append after seq 4 lands, a stale one does not.
        await s.append(games[0], [draft("PlayerLeft", 1)], 4)
        with pytest.raises(ConcurrencyError):
            await s.append(games[0], [draft("PlayerLeft", 2)], 4)
        assert await notices(games[0]) == 1
    finally:
        await nc.close()
