"""The session's command loop (services/session/service_layer/loop.py) on in-memory fakes: no NATS,
no gRPC; the real rules run in process (tests/support/fakes.py). Two "instances" are two
caches and loops over one fake store, as two session processes over one NATS."""

from __future__ import annotations

import json

import pytest

from cellwar.v1 import engine_pb2, events_pb2
from cellwar.v1.codes import CommandType, ErrorCode, EventType
from services.common.errors import ServiceError
from services.common.jsonwire import dumps
from services.session.domain.commands import Command, disconnect_command_id
from services.session.service_layer.cache import GameCache
from services.session.service_layer.loop import CommandLoop
from tests.support.fakes import InProcessEngine, MemoryBackend, MemoryEventLog, MemorySnapshots

LIFE = {"width": 16, "height": 16, "players": 2, "budget": 10}
#: ids are drawn per owner (engine/cellwar/ids.py): p1 units 1, 4; p2 2, 5; p3 3, 6.
UNITS = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 1, "type": "infantry", "x": 1, "y": 0},
    {"owner": 2, "type": "infantry", "x": 5, "y": 5},
    {"owner": 2, "type": "infantry", "x": 6, "y": 5},
    {"owner": 3, "type": "infantry", "x": 9, "y": 9},
    {"owner": 3, "type": "infantry", "x": 8, "y": 9},
]
CELLWAR = {"width": 10, "height": 10, "players": 3, "units": UNITS}


class Instance:
    """One session instance's service layer over a shared fake store."""

    def __init__(self, backend: MemoryBackend, snapshots: MemorySnapshots | None = None) -> None:
        self.store = MemoryEventLog(backend)
        self.engine = InProcessEngine()
        self.games = GameCache(self.store, snapshots or MemorySnapshots(), self.engine)
        self.loop = CommandLoop(self.games, self.store, self.engine)

    async def run(self, game_id: str, type_: str, actor: int, payload: dict, key: str = ""):
        return await self.loop.handle(Command(game_id, type_, actor, dumps(payload), key))

    async def place(self, game_id: str, pid: int, cells: list, key: str = ""):
        return await self.run(game_id, CommandType.ACTION, pid, {"type": "place", "cells": cells}, key)


@pytest.fixture
def backend() -> MemoryBackend:
    return MemoryBackend()


async def life_game(a: Instance) -> str:
    game = await a.loop.create("life", LIFE)
    await a.run(game.game_id, CommandType.JOIN, 0, {"name": "alice"})
    await a.run(game.game_id, CommandType.JOIN, 0, {"name": "bob"})
    return game.game_id


def budget(game, pid: int) -> int:
    return next(p["budget_left"] for p in json.loads(game.views[pid])["players"] if p["id"] == pid)


async def test_a_command_is_decided_appended_and_cached(backend):
    a = Instance(backend)
    gid = await life_game(a)
    outcome = await a.place(gid, 1, [[1, 1], [2, 2]])
    log = a.store.events(gid)
    assert [e.seq for e in log] == [1, 2, 3, 4]
    assert [e.type for e in log] == ["GameCreated", "PlayerJoined", "PlayerJoined", "ActionApplied"]
    game = outcome.game
    assert (outcome.seq, outcome.player_id, outcome.repeated) == (4, 1, False)
    assert game.seq == 4 and game.state.state_hash == log[-1].state_hash
    # Decide gave every view: the reply needs no Views call
    assert a.engine.calls.get("Views", 0) == 0 and budget(game, 1) == 8
    # blind placement: player 1 observes its drawing, the spectator and player 2 do not
    assert (game.version(1), game.version(0), game.version(2)) == (4, 3, 3)


async def test_a_lost_race_is_retried_after_catching_up(backend):
    a, b = Instance(backend), Instance(backend)
    gid = await life_game(a)
    await b.games.get(gid)  # b has the game at seq 3
    await a.place(gid, 1, [[1, 1]])  # seq 4 through a: b's cache is behind
    outcome = await b.place(gid, 1, [[2, 2], [3, 3]])
    assert backend.races_lost == 1  # b appended after seq 3, lost, caught up, won
    log = b.store.events(gid)
    assert [e.seq for e in log] == [1, 2, 3, 4, 5] and outcome.seq == 5
    assert json.loads(log[4].payload)["action"]["cells"] == [[2, 2], [3, 3]]
    assert budget(outcome.game, 1) == LIFE["budget"] - 3  # both placements counted


async def test_a_refusal_by_a_stale_cache_is_checked_against_the_log(backend):
    a, b = Instance(backend), Instance(backend)
    gid = await life_game(a)
    await b.games.get(gid)
    await a.run(gid, CommandType.END_TURN, 1, {})  # player 2's turn now; b still thinks 1's
    outcome = await b.place(gid, 2, [[12, 3]])
    assert outcome.seq == 5 and backend.races_lost == 0
    assert [e.type for e in b.store.events(gid)][3:] == ["TurnEnded", "ActionApplied"]
    with pytest.raises(ServiceError) as err:  # a refusal that holds against the log
        await b.place(gid, 1, [[1, 1]])
    assert err.value.code == ErrorCode.NOT_YOUR_TURN
    assert len(b.store.events(gid)) == 5


async def test_a_retried_command_id_is_answered_from_the_log(backend):
    a = Instance(backend)
    gid = await life_game(a)
    first = await a.place(gid, 1, [[1, 1]], key="k-1")
    await a.run(gid, CommandType.END_TURN, 1, {})
    later = Instance(backend)  # another instance, or this one restarted, much later
    again = await later.place(gid, 1, [[1, 1]], key="k-1")
    assert again.repeated and (again.seq, again.player_id) == (first.seq, 1) == (4, 1)
    assert len(later.store.events(gid)) == 5  # nothing new
    # its reply's version is the player's version then, not now
    assert await later.loop.version_at(again.game, again.seq, 1) == 4
    assert again.game.version(1) == 5
    # another player's same key is another command
    bobs = await later.place(gid, 2, [[12, 3]], key="k-1")
    assert not bobs.repeated and bobs.seq == 6


async def test_a_retry_of_a_command_taken_lately_is_answered_without_folding_the_log(backend):
    a = Instance(backend)
    gid = await life_game(a)
    first = await a.place(gid, 1, [[1, 1]], key="k-1")
    await a.run(gid, CommandType.END_TURN, 1, {})
    folds = a.engine.calls.get("Fold", 0)
    again = await a.place(gid, 1, [[1, 1]], key="k-1")  # a resend after a reconnect
    assert again.repeated and again.seq == first.seq == 4
    assert again.versions == first.versions and again.versions[1] == 4
    assert await a.loop.version_after(again, 1) == 4 and again.game.version(1) == 5
    assert a.engine.calls.get("Fold", 0) == folds  # answered from what the game kept
    # an instance that did not take it folds the log for the same answer
    later = Instance(backend)
    elsewhere = await later.place(gid, 1, [[1, 1]], key="k-1")
    assert elsewhere.repeated and elsewhere.versions == ()
    assert await later.loop.version_after(elsewhere, 1) == 4
    assert later.engine.calls.get("Fold", 0) > 0


def test_a_game_keeps_the_versions_of_its_last_commands_only():
    from services.session.domain.game import RECENT_COMMANDS, Game

    game = Game("g", engine_pb2.GameState(), 0, {}, {})
    for seq in range(1, RECENT_COMMANDS + 2):
        state = engine_pb2.GameState(versions=[seq - 1, seq])
        event = events_pb2.Event(seq=seq, actor=1, command_id=f"p1:k{seq}#{'0' * 16}")
        game.take(state, [event])
    assert game.versions_after("p1:k1", 1) == ()  # the oldest went
    last = RECENT_COMMANDS + 1
    assert game.versions_after(f"p1:k{last}", last) == (last - 1, last)
    assert game.versions_after(f"p1:k{last}", last - 1) == ()  # not its last event
    assert len(game.recent_versions) == RECENT_COMMANDS
    game.take(engine_pb2.GameState(versions=[9, 9]), [events_pb2.Event(seq=last + 1)])
    assert len(game.recent_versions) == RECENT_COMMANDS  # no command id: nothing kept


async def test_a_key_reused_with_another_body_is_refused(backend):
    a = Instance(backend)
    gid = await life_game(a)
    await a.place(gid, 1, [[1, 1]], key="k-2")
    with pytest.raises(ServiceError) as err:
        await a.place(gid, 1, [[2, 2]], key="k-2")
    assert err.value.code == ErrorCode.IDEMPOTENCY_KEY_REUSED
    with pytest.raises(ServiceError) as err:
        await a.run(gid, CommandType.END_TURN, 1, {}, key="k-2")
    assert err.value.code == ErrorCode.IDEMPOTENCY_KEY_REUSED
    assert len(a.store.events(gid)) == 4


async def test_a_broken_log_refuses_commands(backend):
    a = Instance(backend)
    gid = await life_game(a)
    forged = events_pb2.Event(
        game_id=gid,
        seq=4,
        type=EventType.ACTION_APPLIED,
        actor=1,
        payload=dumps({"action": {"type": "place", "cells": [[1, 1]]}}),
        state_hash="0" * 64,  # not what the fold gives
    )
    a.store.force(gid, forged)
    b = Instance(backend)
    game = await b.games.get(gid)
    assert game.broken.startswith("fold gives hash")
    with pytest.raises(ServiceError) as err:
        await b.place(gid, 1, [[2, 2]])
    assert err.value.code == ErrorCode.GAME_BROKEN
    with pytest.raises(ServiceError) as err:
        await b.games.view(game, 1)
    assert err.value.code == ErrorCode.GAME_BROKEN
    assert len(b.store.events(gid)) == 4  # nothing appended


async def test_a_gap_in_the_log_breaks_the_game(backend):
    a = Instance(backend)
    gid = await life_game(a)
    a.store.force(gid, events_pb2.Event(game_id=gid, seq=9, type=EventType.TURN_ENDED, actor=1))
    game = await Instance(backend).games.get(gid)
    assert "seq 9 found where 4 was expected" in game.broken


async def test_loading_writes_nothing_and_the_next_command_repairs_a_missing_finish(backend):
    a = Instance(backend)
    gid = await life_game(a)
    outcome = await a.run(gid, CommandType.ACTION, 1, {"type": "resign"})
    log = a.store.events(gid)
    assert [e.type for e in log[3:]] == ["ActionApplied", "GameFinished"] and outcome.seq == 5
    del backend.logs[gid][-1]  # a crash between the two events of one command
    appends = backend.appends
    b = Instance(backend)
    game = await b.games.get(gid)
    assert game.finished and game.needs_finish and backend.appends == appends  # wrote nothing
    with pytest.raises(ServiceError) as err:
        await b.place(gid, 2, [[12, 3]])
    assert err.value.code == ErrorCode.GAME_FINISHED
    repaired = b.store.events(gid)
    assert [e.type for e in repaired[3:]] == ["ActionApplied", "GameFinished"]
    assert json.loads(repaired[-1].payload) == json.loads(log[-1].payload)
    assert repaired[-1].state_hash == log[-1].state_hash and not game.needs_finish
    assert game.version(1) == 5  # the repaired event is counted like any other


async def test_conflict_after_losing_every_race(backend):
    a, rival = Instance(backend), Instance(backend)
    gid = await life_game(a)
    await rival.games.get(gid)
    cells = iter([[12, y] for y in range(16)])

    async def rival_writes(game_id: str) -> None:
        await rival.place(game_id, 2, [next(cells)])
        a.store.before_append = rival_writes  # and again next time

    await a.run(gid, CommandType.END_TURN, 1, {})
    await rival.games.get(gid)
    game = await a.games.get(gid)
    async with game.lock:
        await a.games.refresh(game)
    a.store.before_append = rival_writes
    with pytest.raises(ServiceError) as err:
        await a.place(gid, 2, [[13, 3]])
    assert err.value.code == ErrorCode.CONFLICT and backend.races_lost == 5
    mine = [e for e in a.store.events(gid) if b"[13,3]" in e.payload]
    assert mine == []


async def test_a_run_is_recorded_only_when_the_game_did_not_move(backend):
    a = Instance(backend)
    gid = await life_game(a)
    await a.place(gid, 1, [[1, 1], [2, 1], [3, 1]])
    await a.run(gid, CommandType.END_TURN, 1, {})
    await a.place(gid, 2, [[10, 5], [11, 5], [12, 5]])
    await a.run(gid, CommandType.END_TURN, 2, {})
    game = await a.games.get(gid)
    assert game.running
    item = engine_pb2.RunItem(
        game_id=gid, base_hash=game.state.state_hash, generations=2, record=True, base=game.state
    )
    (result,) = await a.engine.run([item])
    assert [d.type for d in result.events] == [EventType.GENERATIONS_TICKED]
    base = game.state.state_hash
    assert not await a.loop.record_run(game, game.seq - 1, base, result, {})  # moved
    assert not await a.loop.record_run(game, game.seq, "another base", result, {})
    assert await a.loop.record_run(game, game.seq, base, result, {})
    assert a.store.events(gid)[-1].type == EventType.GENERATIONS_TICKED
    assert game.state.generation == 2


async def test_two_instances_removing_a_player_roll_back_exactly_once(backend):
    a, b = Instance(backend), Instance(backend)
    game = await a.loop.create("cellwar", CELLWAR)
    gid = game.game_id
    for name in ("p1", "p2", "p3"):
        await a.run(gid, CommandType.JOIN, 0, {"name": name})
    await a.run(gid, CommandType.ACTION, 1, {"unit_id": 1, "dx": 0, "dy": 1})
    await a.run(gid, CommandType.ACTION, 1, {"unit_id": 4, "dx": 0, "dy": 1})
    await a.run(gid, CommandType.END_TURN, 1, {})
    await a.run(gid, CommandType.ACTION, 2, {"unit_id": 2, "dx": -1, "dy": -1})
    await b.games.get(gid)
    removal = {"player_id": 2, "reason": "disconnected"}
    first = await a.run(gid, CommandType.REMOVE_PLAYER, 0, removal, disconnect_command_id(2))
    second = await b.run(gid, CommandType.REMOVE_PLAYER, 0, removal, disconnect_command_id(2))
    assert not first.repeated and second.repeated and first.seq == second.seq == 10
    types = [e.type for e in a.store.events(gid)]
    assert types[7:] == ["ActionApplied", "RolledBack", "PlayerRemoved"]
    assert types.count("RolledBack") == 1 and types.count("PlayerRemoved") == 1


async def test_an_unavailable_store_fails_the_command_and_marks_the_game_stale(backend):
    a = Instance(backend)
    gid = await life_game(a)
    backend.down = True
    with pytest.raises(ServiceError) as err:
        await a.place(gid, 1, [[1, 1]])
    assert err.value.code == ErrorCode.UNAVAILABLE
    game = await a.games.get(gid)
    assert game.stale
    backend.down = False
    assert (await a.place(gid, 1, [[1, 1]])).seq == 4


async def test_a_create_with_a_key_finds_its_game_and_refuses_another_config(backend):
    a, b = Instance(backend), Instance(backend)
    first = await a.loop.create("life", LIFE, command_id="c-1")
    again = await b.loop.create("life", LIFE, command_id="c-1")
    assert again.game_id == first.game_id and len(a.store.events(first.game_id)) == 1
    with pytest.raises(ServiceError) as err:
        await b.loop.create("life", {**LIFE, "budget": 9}, command_id="c-1")
    assert err.value.code == ErrorCode.IDEMPOTENCY_KEY_REUSED
