"""Turn timers in the session's service layer (services/session/entrypoints/timers.py) on in-memory
fakes with a hand-set clock: the deadline is the recorded time of the event that began
the turn + ``turn_time_s``; nothing happens before it; after it the timeout lands once,
also when two instances both send it; a timeout that lost to the player's own
``end_turn`` records nothing; the deadline is found again by a fresh instance."""

from __future__ import annotations

import asyncio
import json

from cellwar.v1.codes import CommandType, EventType
from services.common.jsonwire import dumps
from services.session.domain.commands import Command, timeout_command_id
from services.session.domain.game import event_time, iso_time, merge_view
from services.session.entrypoints.timers import TurnTimers
from services.session.service_layer.cache import GameCache
from services.session.service_layer.loop import CommandLoop
from tests.support.fakes import (
    Clock,
    InProcessEngine,
    MemoryBackend,
    MemoryEventLog,
    MemorySnapshots,
)

UNITS = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 2, "type": "infantry", "x": 7, "y": 7},
]
CELLWAR = {"width": 8, "height": 8, "units": UNITS, "turn_time_s": 30}


class Instance:
    """One session instance's service layer over a shared fake store, with timers."""

    def __init__(self, backend: MemoryBackend, clock: Clock) -> None:
        self.store = MemoryEventLog(backend)
        self.engine = InProcessEngine()
        self.games = GameCache(self.store, MemorySnapshots(), self.engine)
        self.loop = CommandLoop(self.games, self.store, self.engine)
        self.timers = TurnTimers(self.games, self.loop, clock)

    async def run(self, game_id: str, type_: str, actor: int, payload: dict):
        return await self.loop.handle(Command(game_id, type_, actor, dumps(payload)))

    async def pass_once(self, game_id: str) -> None:
        """One pass of the timers over this game, waiting for what it started."""
        await self.timers.run([await self.games.get(game_id)])
        await asyncio.gather(*self.timers._running.values(), return_exceptions=True)


async def started(a: Instance) -> str:
    game = await a.loop.create("cellwar", CELLWAR)
    await a.run(game.game_id, CommandType.JOIN, 0, {"name": "ann"})
    await a.run(game.game_id, CommandType.JOIN, 0, {"name": "bob"})
    return game.game_id


def timed_out(a: Instance, gid: str) -> list:
    return [e for e in a.store.events(gid) if e.type == EventType.TURN_TIMED_OUT]


async def test_the_deadline_is_the_recorded_turn_start_plus_turn_time():
    clock = Clock()
    a = Instance(MemoryBackend(), clock)
    gid = await started(a)
    game = await a.games.get(gid)
    began = a.store.events(gid)[2]  # the second PlayerJoined starts player 1's turn
    assert game.state.turn_seq == 3 and game.timed
    assert await a.games.turn_deadline(game) == event_time(began) + 30
    _, view = await a.games.view(game, 1)
    assert json.loads(view)["turn_deadline"] == iso_time(event_time(began) + 30)


async def test_nothing_happens_before_the_deadline_and_the_turn_ends_after_it():
    clock = Clock()
    a = Instance(MemoryBackend(), clock)
    gid = await started(a)
    deadline = await a.games.turn_deadline(await a.games.get(gid))
    clock.now = deadline - 0.01
    await a.pass_once(gid)
    assert timed_out(a, gid) == []
    clock.now = deadline + 0.01
    await a.pass_once(gid)
    [event] = timed_out(a, gid)
    assert event.command_id.startswith(f"p0:{timeout_command_id(3)}#")
    game = await a.games.get(gid)
    assert game.state.turn == 2 and game.state.turn_seq == event.seq
    assert await a.games.turn_deadline(game) == event_time(event) + 30
    assert a.timers.recorded == 1


async def test_two_instances_timing_out_the_same_turn_record_it_once():
    clock = Clock()
    backend = MemoryBackend()
    a, b = Instance(backend, clock), Instance(backend, clock)
    gid = await started(a)
    await b.games.get(gid)
    clock.now = (await a.games.turn_deadline(await a.games.get(gid))) + 1
    await asyncio.gather(a.pass_once(gid), b.pass_once(gid))
    assert len(timed_out(a, gid)) == 1
    assert a.timers.recorded + b.timers.recorded == 1
    # later passes of either wait for the new turn's deadline
    clock.now = (await b.games.turn_deadline(await b.games.get(gid))) - 1
    await asyncio.gather(a.pass_once(gid), b.pass_once(gid))
    assert len(timed_out(a, gid)) == 1


async def test_a_timeout_that_lost_to_the_players_end_turn_records_nothing():
    clock = Clock()
    backend = MemoryBackend()
    a, b = Instance(backend, clock), Instance(backend, clock)
    gid = await started(a)
    stale = await b.games.get(gid)  # b's cache stays at player 1's turn
    clock.now = (await b.games.turn_deadline(stale)) + 1
    await a.run(gid, CommandType.ACTION, 1, {"unit_id": 1, "dx": 1, "dy": 0})
    await a.run(gid, CommandType.END_TURN, 1, {})
    await b.timers._time_out(gid, 3, 1.0)  # what b's pass sends from its old cache
    assert timed_out(a, gid) == [] and b.timers.recorded == 0
    assert [e.type for e in a.store.events(gid)][-1] == EventType.TURN_ENDED


async def test_a_fresh_instance_finds_the_same_deadline_in_the_log():
    clock = Clock()
    backend = MemoryBackend()
    a = Instance(backend, clock)
    gid = await started(a)
    first = await a.games.turn_deadline(await a.games.get(gid))
    fresh = Instance(backend, clock)  # e.g. a restarted session: loads from the log
    assert await fresh.games.turn_deadline(await fresh.games.get(gid)) == first
    clock.now = first + 0.5
    await fresh.pass_once(gid)
    assert len(timed_out(fresh, gid)) == 1


def test_every_view_has_a_deadline_key_in_iso_utc():
    assert json.loads(merge_view(b'{"a":1}', "g", 3))["turn_deadline"] is None
    assert json.loads(merge_view(b'{"a":1}', "g", 3, iso_time(0.25)))["turn_deadline"] == (
        "1970-01-01T00:00:00.250Z"
    )


async def test_a_replay_shows_the_deadline_the_game_showed_then():
    from services.session.service_layer.visibility import replay

    clock = Clock()
    a = Instance(MemoryBackend(), clock)
    gid = await started(a)
    game = await a.games.get(gid)
    then = (await a.games.turn_deadline(game))
    clock.now = then + 1
    await a.pass_once(gid)
    game = await a.games.get(gid)
    assert game.seq == 4
    old = json.loads(await replay(a.games, game, 1, 3))
    assert old["turn_deadline"] == iso_time(then) and old["turn"] == 1
    now = json.loads(await replay(a.games, game, 1, 4))
    assert now["turn_deadline"] == iso_time(await a.games.turn_deadline(game))
    assert json.loads(await replay(a.games, game, 1, 2))["turn_deadline"] is None  # waiting
