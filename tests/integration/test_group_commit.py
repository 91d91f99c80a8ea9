"""The event store's group commit (docs/architecture/batching.md): appends of many games
waiting together go as one JetStream atomic batch, each still fenced and de-duplicated,
and a caller's await resolves only on the commit's ack, so a session killed (or cut off)
mid-batch loses no acknowledged append and duplicates none."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import textwrap
import uuid
from pathlib import Path

import nats
import pytest

from cellwar.v1 import events_pb2
from services.session.adapters.event_store import (
    BATCH_MAX,
    STREAM,
    ConcurrencyError,
    DuplicateCommandError,
    EventStore,
    StoreUnavailable,
)
from tests.support.nats import NatsProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

ROOT = Path(__file__).resolve().parents[2]


def draft(etype: str, n: int = 0) -> events_pb2.Event:
    return events_pb2.Event(type=etype, actor=n, payload=b'{"n":%d}' % n, state_hash=f"h{n}")


def new_game_id() -> str:
    return uuid.uuid4().hex[:12]


@pytest.fixture
async def js_store(nats_url):
    nc = await nats.connect(nats_url)
    store = EventStore(nc.jetstream())
    await store.ensure_stream()
    yield store
    await nc.close()


async def play(store: EventStore, gid: str, appends: int) -> list[int]:
    """``appends`` one-event appends of one game, each after the ack of the one before;
    the seqs acknowledged."""
    acked = []
    for seq in range(appends):
        stored = await store.append(gid, [draft("ActionApplied", seq)], seq, f"c{seq}")
        acked.append(stored[0].seq)
    return acked


async def test_appends_of_many_games_share_atomic_batches(js_store):
    games = [new_game_id() for _ in range(64)]
    results = await asyncio.gather(*(play(js_store, gid, 6) for gid in games))
    assert results == [[1, 2, 3, 4, 5, 6]] * 64
    stats = js_store.commit_stats()
    assert stats["batches"] > 0
    assert stats["batched_appends"] + stats["separate_appends"] == 64 * 6
    for gid in games:
        events = await js_store.read(gid)
        assert [e.seq for e in events] == [1, 2, 3, 4, 5, 6]
        assert [e.command_id for e in events] == [f"c{i}" for i in range(6)]
        assert [e.actor for e in events] == [0, 1, 2, 3, 4, 5]
        # the store's remembered tail is the stream's: the batch's sequences are consecutive
        last = await js_store.js.get_last_msg(STREAM, f"games.{gid}.events")
        assert js_store.stream_seq_of(gid) == last.seq


async def test_a_lost_fence_or_a_retried_command_fails_only_its_own_append(js_store, nats_url):
    games = [new_game_id() for _ in range(40)]
    await asyncio.gather(*(js_store.append(gid, [draft("GameCreated")], 0, "create") for gid in games))
    rival_nc = await nats.connect(nats_url)
    rival = EventStore(rival_nc.jetstream())
    await rival.append(games[0], [draft("PlayerJoined", 9)], 1)  # games[0] moved on elsewhere

    async def second(i: int, gid: str) -> str:
        command = "create" if i == 1 else "join"  # games[1]: a retry of its first command
        try:
            await js_store.append(gid, [draft("PlayerJoined", 1)], 1, command)
        except ConcurrencyError:
            return "conflict"
        except DuplicateCommandError:
            return "duplicate"
        return "ok"

    outcomes = await asyncio.gather(*(second(i, gid) for i, gid in enumerate(games)))
    assert outcomes == ["conflict", "duplicate"] + ["ok"] * 38
    assert js_store.commit_stats()["refused_batches"] >= 1  # refused whole, then one by one
    assert [e.actor for e in await js_store.read(games[0])] == [0, 9]
    assert [e.seq for e in await js_store.read(games[1])] == [1]
    for gid in games[2:]:
        assert [(e.seq, e.command_id) for e in await js_store.read(gid)] == [(1, "create"), (2, "join")]
    await rival_nc.close()


async def test_an_append_longer_than_a_batch_is_sent_in_fenced_parts(js_store):
    gid = new_game_id()
    n = 2 * BATCH_MAX + 3
    stored = await js_store.append(gid, [draft("GenerationsTicked", i) for i in range(n)], 0)
    assert [e.seq for e in stored] == list(range(1, n + 1))
    events = await js_store.read(gid)
    assert [e.seq for e in events] == list(range(1, n + 1))
    assert [e.actor for e in events] == list(range(n))
    assert await js_store.last_seq(gid) == n
    last = await js_store.js.get_last_msg(STREAM, f"games.{gid}.events")
    assert js_store.stream_seq_of(gid) == last.seq


async def test_without_group_commit_every_message_is_published_alone(nats_url):
    nc = await nats.connect(nats_url)
    try:
        store = EventStore(nc.jetstream(), group_commit=False)
        await store.ensure_stream()
        games = [new_game_id() for _ in range(20)]
        assert await asyncio.gather(*(play(store, gid, 3) for gid in games)) == [[1, 2, 3]] * 20
        assert store.commit_stats()["batches"] == 0
        assert store.commit_stats()["separate_appends"] == 60
    finally:
        await nc.close()


async def check_logs(js, acked: dict[str, int], games: list[str]) -> None:
    """Every acknowledged append is in its game's log, once; every log is 1..n with one
    event per command (no duplicate, no gap)."""
    store = EventStore(js)
    for gid in games:
        events = await store.read(gid)
        seqs = [e.seq for e in events]
        assert seqs == list(range(1, len(seqs) + 1)), gid
        assert [e.command_id for e in events] == [f"c{s - 1}" for s in seqs], gid
        assert len(seqs) >= acked.get(gid, 0), gid


async def test_connection_cut_mid_batch_loses_no_acknowledged_append(nats_url):
    nc = await nats.connect(nats_url, allow_reconnect=False)
    store = EventStore(nc.jetstream())
    await store.ensure_stream()
    games = [new_game_id() for _ in range(200)]
    acked: dict[str, int] = {}
    failed = 0

    async def game(gid: str) -> None:
        nonlocal failed
        seq = 0
        while True:
            try:
                await store.append(gid, [draft("ActionApplied", seq)], seq, f"c{seq}")
            except StoreUnavailable:
                failed += 1
                return
            seq += 1
            acked[gid] = seq

    tasks = [asyncio.create_task(game(gid)) for gid in games]
    while sum(acked.values()) < 1500:
        await asyncio.sleep(0.005)
    await nc.close()  # mid-batch: appends queued, in a batch being sent, awaiting a commit
    await asyncio.wait_for(asyncio.gather(*tasks), 20)
    assert failed == len(games)  # every game had an append in flight, and it was told
    assert store.commit_stats()["batches"] > 0
    nc2 = await nats.connect(nats_url)
    try:
        await check_logs(nc2.jetstream(), acked, games)
    finally:
        await nc2.close()


_WRITER = textwrap.dedent(
    """
    import asyncio, sys
    import nats
    from cellwar.v1 import events_pb2
    from services.session.adapters.event_store import EventStore

    async def main(url, games):
        nc = await nats.connect(url)
        store = EventStore(nc.jetstream())
        await store.ensure_stream()

        async def game(gid):
            seq = 0
            while True:
                event = events_pb2.Event(type="ActionApplied", actor=seq)
                await store.append(gid, [event], seq, f"c{seq}")
                seq += 1
                sys.stdout.write(f"{gid} {seq}\\n")
                sys.stdout.flush()

        await asyncio.gather(*(game(g) for g in games))

    asyncio.run(main(sys.argv[1], sys.argv[2:]))
    """
)


async def test_session_killed_mid_batch_loses_no_acknowledged_append(nats_url):
    games = [new_game_id() for _ in range(150)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _WRITER, nats_url, *games, stdout=asyncio.subprocess.PIPE, env=env
    )
    acked: dict[str, int] = {}
    assert child.stdout is not None
    try:
        while sum(acked.values()) < 2000:
            line = await asyncio.wait_for(child.stdout.readline(), 30)
            assert line, "the writer stopped"
            gid, seq = line.decode().split()
            acked[gid] = int(seq)
        child.send_signal(signal.SIGKILL)  # mid-batch: many appends in flight
        rest = await child.stdout.read()  # acks it printed before it died count too
    finally:
        with contextlib.suppress(ProcessLookupError):
            child.kill()
        await child.wait()
    for line in rest.decode().splitlines():
        gid, seq = line.split()
        acked[gid] = max(acked.get(gid, 0), int(seq))
    nc = await nats.connect(nats_url)
    try:
        await check_logs(nc.jetstream(), acked, games)
    finally:
        await nc.close()


async def test_nats_killed_mid_batch_keeps_every_acknowledged_append(tmp_path):
    server = NatsProcess(tmp_path / "nats", sync_always=True).start()
    try:
        nc = await nats.connect(server.url, allow_reconnect=False)
        store = EventStore(nc.jetstream())
        await store.ensure_stream()
        games = [new_game_id() for _ in range(100)]
        acked: dict[str, int] = {}

        async def game(gid: str) -> None:
            seq = 0
            with contextlib.suppress(StoreUnavailable):
                while True:
                    await store.append(gid, [draft("ActionApplied", seq)], seq, f"c{seq}")
                    seq += 1
                    acked[gid] = seq

        tasks = [asyncio.create_task(game(gid)) for gid in games]
        while sum(acked.values()) < 1000:
            await asyncio.sleep(0.005)
        server.stop(kill=True)  # SIGKILL with batches staged and committing
        await asyncio.wait_for(asyncio.gather(*tasks), 20)
        with contextlib.suppress(Exception):
            await nc.close()
        server.start()
        nc = await nats.connect(server.url)
        try:
            await check_logs(nc.jetstream(), acked, games)
        finally:
            await nc.close()
    finally:
        server.stop()


async def test_an_append_whose_caller_is_cancelled_while_it_waits_is_not_sent(js_store):
    first, second = new_game_id(), new_game_id()
    for gid in (first, second):
        await js_store.append(gid, [draft("GameCreated")], 0, "create")
    sending = asyncio.create_task(js_store.append(first, [draft("PlayerJoined", 1)], 1, "join"))
    waiting = asyncio.create_task(js_store.append(second, [draft("PlayerJoined", 1)], 1, "join"))
    await asyncio.sleep(0)  # the first is being published, the second waits in the queue
    waiting.cancel()  # its caller went (a deadline) before its commit took it
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert [e.seq for e in await sending] == [2]
    await asyncio.sleep(0.2)
    assert [e.seq for e in await js_store.read(first)] == [1, 2]
    assert [e.seq for e in await js_store.read(second)] == [1]  # nothing of it landed
    # the game goes on from its last acknowledged append
    assert [e.seq for e in await js_store.append(second, [draft("PlayerJoined", 2)], 1, "join2")] == [2]
