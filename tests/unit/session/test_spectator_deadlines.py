"""A delayed spectator's ``turn_deadline`` (services/session/service_layer/spectators.py):
the deadline of the turn running at the moment shown, from the time of the event that
began that turn, which the feed read on its way; showing the frames of several turn
changes reads no single event from the log. On the in-memory fakes, the real rules."""

from __future__ import annotations

import json
import time

from services.session.domain.commands import Command
from services.session.domain.game import event_time, iso_time
from services.session.service_layer.cache import GameCache
from services.session.service_layer.loop import CommandLoop
from services.session.service_layer.spectators import Spectators
from tests.support.fakes import (
    Clock,
    CountingLog,
    InProcessEngine,
    MemoryBackend,
    MemorySnapshots,
)

UNITS = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 2, "type": "infantry", "x": 7, "y": 7},
]
LIVE_TIMED = {"width": 8, "height": 8, "units": UNITS, "turn_time_s": 30, "spectators": "live"}


async def test_each_frame_shows_the_deadline_of_its_own_turn_without_reading_its_event():
    store = CountingLog(MemoryBackend())
    engine = InProcessEngine()
    games = GameCache(store, MemorySnapshots(), engine)
    loop = CommandLoop(games, store, engine)
    clock = Clock(time.time())
    spectators = Spectators(games, clock)
    gid = (await loop.create("cellwar", LIVE_TIMED)).game_id
    game = games.games[gid]
    feed = spectators.feed(game, 10.0)
    assert not await feed.advance()  # nothing is 10 s old yet
    await loop.handle(Command.join(gid, "ann"))
    await loop.handle(Command.join(gid, "bob"))  # ann's turn begins
    for _ in range(2):  # bob's, then ann's again
        await loop.handle(Command.time_out(gid, game.state.turn_seq))
    log = store.events(gid)
    clock.now = time.time() + 60  # every event is old enough now
    store.reads.clear()
    assert await feed.advance()
    turns = set()
    for seq in feed.since(0):
        _, view = await feed.view(seq)
        state = next(st for s, st in feed.shown if s == seq)
        began = event_time(log[state.turn_seq - 1]) if state.turn_seq else None
        deadline = await feed._deadline(state)
        assert deadline == (began + 30 if began is not None else None)
        assert json.loads(view)["turn_deadline"] == iso_time(deadline)
        turns.add(int(state.turn_seq))
    assert [e.type for e in log][3:] == ["TurnTimedOut", "TurnTimedOut"]
    assert feed.since(0) == [1, 2, 3, 4, 5] and turns == {0, 3, 4, 5}  # three turns shown
    assert all(to_seq is None for _, to_seq in store.reads), store.reads  # no event read alone
