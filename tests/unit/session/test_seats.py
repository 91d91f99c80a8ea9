"""One seat per profile in a rated game (services/session/service_layer/seats.py,
docs/ratings.md): a second join of a profile is ``ALREADY_SEATED``, decided from the seats
the cached game knows, without reading the log; a game rebuilt from a snapshot reads the
events before it once. On the in-memory fakes, the real rules in process."""

from __future__ import annotations

import pytest

from cellwar.v1.codes import ErrorCode
from services.common.errors import ServiceError
from services.session.domain.commands import Command
from services.session.service_layer.cache import GameCache
from services.session.service_layer.loop import CommandLoop
from services.session.service_layer.projections import SnapshotProjection
from tests.support.fakes import (
    CountingLog,
    InProcessEngine,
    MemoryBackend,
    MemorySnapshots,
)

RATED = {"width": 16, "height": 16, "players": 4, "budget": 10, "rated": True}


def instance(backend: MemoryBackend, snapshots: MemorySnapshots) -> tuple[CommandLoop, CountingLog]:
    store = CountingLog(backend)
    engine = InProcessEngine()
    games = GameCache(store, snapshots, engine)
    return CommandLoop(games, store, engine), store


async def test_a_second_seat_of_a_profile_is_refused_without_reading_the_log():
    loop, store = instance(MemoryBackend(), MemorySnapshots())
    gid = (await loop.create("life", RATED)).game_id
    first = await loop.handle(Command.join(gid, "ann", "prof-a"))
    await loop.handle(Command.join(gid, "bob"))
    assert first.player_id == 1
    assert loop.games.games[gid].seated == {"prof-a": 1}
    store.reads.clear()
    with pytest.raises(ServiceError) as refused:
        await loop.handle(Command.join(gid, "ann-again", "prof-a"))
    assert refused.value.code == ErrorCode.ALREADY_SEATED
    assert "seat 1 " in refused.value.message
    assert store.reads == []
    assert [e.type for e in store.events(gid)].count("PlayerJoined") == 2  # nothing recorded
    third = await loop.handle(Command.join(gid, "cy", "prof-c"))  # another profile is seated
    assert third.player_id == 3


async def test_a_game_rebuilt_from_a_snapshot_reads_the_joins_before_it_once():
    backend, snapshots = MemoryBackend(), MemorySnapshots()
    a, a_store = instance(backend, snapshots)
    gid = (await a.create("life", RATED)).game_id
    await a.handle(Command.join(gid, "ann", "prof-a"))  # seq 2
    await a.handle(Command.join(gid, "bob"))  # seq 3
    await SnapshotProjection(snapshots, a_store, 100).snapshot(a.games.games[gid])
    await a.handle(Command.join(gid, "cy"))  # seq 4, after the snapshot
    b, store = instance(backend, snapshots)  # another instance: loads from the snapshot
    game = await b.games.get(gid)
    assert game.commands_from == 3 and game.seated == {}
    store.reads.clear()
    for _ in range(2):
        with pytest.raises(ServiceError) as refused:
            await b.handle(Command.join(gid, "ann-again", "prof-a"))
        assert refused.value.code == ErrorCode.ALREADY_SEATED
    assert store.reads == [(1, 2)]  # the events before the snapshot, once
    assert game.seated == {"prof-a": 1} and game.commands_from == 1


async def test_an_unrated_game_does_not_look_at_profiles():
    loop, store = instance(MemoryBackend(), MemorySnapshots())
    gid = (await loop.create("life", {**RATED, "rated": False})).game_id
    await loop.handle(Command.join(gid, "p", "prof-a"))
    second = await loop.handle(Command.join(gid, "p", "prof-a"))
    assert second.player_id == 2 and loop.games.games[gid].seated == {}
