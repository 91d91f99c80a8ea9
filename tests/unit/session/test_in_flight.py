"""A race lost to a write the log does not show (services/session/service_layer/loop.py, step 5;
docs/faults.md): during a quorum loss an append that timed out stays in flight on the
stream leader, which refuses the next fence though the log's tail has not moved. That is
no conflict: the command is tried again and, while the log still does not show the
write, answered ``UNAVAILABLE`` (retryable), never ``CONFLICT``. On the in-memory fakes
(tests/support/fakes.py), the real rules in process."""

from __future__ import annotations

import asyncio

from cellwar.v1.codes import CommandType, ErrorCode
from services.common.errors import ServiceError
from services.common.jsonwire import dumps
from services.session.adapters.event_store import ConcurrencyError
from services.session.domain.commands import Command
from services.session.service_layer.cache import GameCache
from services.session.service_layer.loop import CommandLoop
from tests.support.fakes import InProcessEngine, MemoryBackend, MemoryEventLog, MemorySnapshots

LIFE = {"width": 16, "height": 16, "players": 2, "budget": 10}


class InFlightLog(MemoryEventLog):
    """A log whose next ``refusals`` appends lose the fence to a write it does not show
    (the leader's in-flight proposal), as JetStream answers during a quorum loss."""

    def __init__(self, backend: MemoryBackend) -> None:
        super().__init__(backend)
        self.refusals = 0
        self.refused = 0
        self.reads = 0  # reads of events
        self.tail_reads = 0  # reads of the tail (last_seq)

    async def read(self, *args, **kwargs):
        self.reads += 1
        return await super().read(*args, **kwargs)

    async def last_seq(self, game_id):
        self.tail_reads += 1
        return await super().last_seq(game_id)

    async def append(self, game_id, events, expected_last_seq, command_id="", *, system=0):
        if self.refusals:
            self.refusals -= 1
            self.refused += 1
            raise ConcurrencyError(game_id, expected_last_seq)
        return await super().append(game_id, events, expected_last_seq, command_id, system=system)


def instance(backend: MemoryBackend) -> tuple[CommandLoop, InFlightLog]:
    store = InFlightLog(backend)
    engine = InProcessEngine()
    games = GameCache(store, MemorySnapshots(), engine)
    return CommandLoop(games, store, engine, in_flight_backoff_s=0.0), store


async def seated(loop: CommandLoop) -> str:
    game = await loop.create("life", LIFE)
    for name in ("alice", "bob"):
        await loop.handle(Command(game.game_id, CommandType.JOIN, 0, dumps({"name": name})))
    return game.game_id


def place(gid: str, key: str) -> Command:
    return Command(gid, CommandType.ACTION, 1, dumps({"type": "place", "cells": [[1, 1]]}), key)


async def test_a_fence_lost_to_an_in_flight_write_is_unavailable_not_conflict():
    backend = MemoryBackend()
    loop, store = instance(backend)
    gid = await seated(loop)
    store.refusals = 10  # five in 26 ms gave CONFLICT before
    try:
        await loop.handle(place(gid, "k1"))
    except ServiceError as exc:
        err = exc
    assert err.code == ErrorCode.UNAVAILABLE
    assert "retry the same request" in err.message
    assert store.refused == loop.in_flight_tries == 2
    assert [e.type for e in store.events(gid)][-1] == "PlayerJoined"  # nothing written

    # Once the store recovers, the same request (same key) is applied, once.
    store.refusals = 0
    outcome = await loop.handle(place(gid, "k1"))
    again = await loop.handle(place(gid, "k1"))
    assert (outcome.seq, again.seq, again.repeated) == (4, 4, True)
    assert [e.type for e in store.events(gid)].count("ActionApplied") == 1


async def test_one_in_flight_refusal_is_retried_inside_the_session():
    backend = MemoryBackend()
    loop, store = instance(backend)
    gid = await seated(loop)
    store.refusals = 1
    outcome = await loop.handle(place(gid, "k2"))
    assert store.refused == 1 and outcome.seq == 4 and not outcome.repeated
    assert [e.type for e in store.events(gid)] == [
        "GameCreated", "PlayerJoined", "PlayerJoined", "ActionApplied"
    ]


async def test_a_race_lost_in_flight_costs_one_read_of_the_tail_and_no_catch_up():
    backend = MemoryBackend()
    loop, store = instance(backend)
    gid = await seated(loop)
    store.refusals = 1
    store.reads = store.tail_reads = 0
    outcome = await loop.handle(place(gid, "k3"))
    assert outcome.seq == 4 and store.refused == 1
    # the tail still at the fence: the cache is the log, nothing is read to catch up
    assert (store.tail_reads, store.reads) == (1, 0)


async def test_the_pause_after_an_in_flight_race_is_taken_without_the_game_lock(monkeypatch):
    backend = MemoryBackend()
    store = InFlightLog(backend)
    engine = InProcessEngine()
    games = GameCache(store, MemorySnapshots(), engine)
    loop = CommandLoop(games, store, engine, in_flight_backoff_s=0.25)
    gid = await seated(loop)
    game = games.games[gid]
    pauses: list[tuple[float, bool]] = []
    real_sleep = asyncio.sleep

    async def sleep(delay, *args, **kwargs):
        if delay:
            pauses.append((delay, game.lock.locked()))
            delay = 0
        return await real_sleep(delay, *args, **kwargs)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    store.refusals = 1
    outcome = await loop.handle(place(gid, "k4"))
    assert outcome.seq == 4
    assert pauses == [(0.25, False)]  # one pause of backoff x 1, the lock free meanwhile


async def test_a_keyed_create_lost_to_its_own_in_flight_try_is_unavailable():
    backend = MemoryBackend()
    loop, store = instance(backend)
    store.refusals = 1
    try:
        await loop.create("life", LIFE, command_id="create-1")
    except ServiceError as exc:
        err = exc
    assert err.code == ErrorCode.UNAVAILABLE
    game = await loop.create("life", LIFE, command_id="create-1")
    assert [e.type for e in store.events(game.game_id)] == ["GameCreated"]
