"""The engine's envelope (engine/envelope.py): per-player versions, the per-game seq and
the turn anchor are a function of the log, whether it is applied command by command or
folded in runs; removals roll the turn back in the engine (engine/removal.py)."""

from __future__ import annotations

import base64
import random

import pytest

import engine
from cellwar.v1.codes import CommandType, EventType
from engine import envelope
from engine.envelope import Envelope
from engine.errors import GameError
from engine.policy import policy

#: 10x10, 3 players, two infantry each; ids are drawn per owner (engine/cellwar/ids.py):
#: p1 units 1, 4; p2 units 2, 5; p3 units 3, 6.
UNITS = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 1, "type": "infantry", "x": 1, "y": 0},
    {"owner": 2, "type": "infantry", "x": 5, "y": 5},
    {"owner": 2, "type": "infantry", "x": 6, "y": 5},
    {"owner": 3, "type": "infantry", "x": 9, "y": 9},
    {"owner": 3, "type": "infantry", "x": 8, "y": 9},
]
CELLWAR = {"kind": "cellwar", "config": {"width": 10, "height": 10, "players": 3, "units": UNITS}}


class Game:
    """A game played through :func:`engine.envelope.decide`, keeping its log."""

    def __init__(self, create: dict) -> None:
        self.state, self.env, self.log = None, Envelope(), []
        self.run(CommandType.CREATE, 0, create)

    def run(self, command: str, actor: int, payload: dict) -> list:
        drafts, self.state, self.env = envelope.decide(self.state, self.env, command, actor, payload)
        self._record(drafts)
        return drafts

    def tick(self, n: int) -> list:
        drafts, self.state, self.env = envelope.tick(self.state, self.env, n)
        self._record(drafts)
        return drafts

    def _record(self, drafts) -> None:
        for d in drafts:
            self.log.append((len(self.log) + 1, d.type, d.actor, d.payload, d.state_hash))

    def fold(self, start: int = 0):
        """Fold the log from scratch (start 0) or from the state after ``start`` events."""
        state, env = None, Envelope()
        if start:
            state, env = envelope.fold(None, Envelope(), [e[:4] for e in self.log[:start]])
        return envelope.fold(state, env, [e[:4] for e in self.log[start:]])


def cellwar_game() -> Game:
    game = Game(CELLWAR)
    for name in ("p1", "p2", "p3"):
        game.run(CommandType.JOIN, 0, {"name": name})
    return game


def p1_turn(game: Game) -> None:
    game.run(CommandType.ACTION, 1, {"unit_id": 1, "dx": 0, "dy": 1})
    game.run(CommandType.ACTION, 1, {"unit_id": 4, "dx": 0, "dy": 1})
    game.run(CommandType.END_TURN, 1, {})


def test_versions_count_the_events_each_player_observes():
    game = cellwar_game()
    p1_turn(game)
    assert game.env.seq == len(game.log) == 7
    # player 1's two moves are out of everyone else's sight: only it observes them
    # (engine.api.observers); creation, joins and the turn passing are public
    assert game.env.versions == (5, 7, 5, 5)


def test_a_fold_gives_the_same_state_and_envelope_as_the_commands():
    game = cellwar_game()
    p1_turn(game)
    game.run(CommandType.ACTION, 2, {"unit_id": 2, "dx": -1, "dy": -1})
    state, env = game.fold()
    assert engine.state_hash(state) == engine.state_hash(game.state)
    assert env == game.env
    for start in (1, 4, 7, 8):  # from a snapshot in the middle
        state, env = game.fold(start)
        assert env == game.env and engine.state_hash(state) == engine.state_hash(game.state)


def test_life_tick_runs_fold_to_the_same_versions_as_tick_by_tick():
    game = Game({"kind": "life", "config": {"width": 16, "height": 16, "players": 2}})
    game.run(CommandType.JOIN, 0, {"name": "a"})
    game.run(CommandType.JOIN, 0, {"name": "b"})
    game.run(CommandType.ACTION, 1, {"type": "place", "cells": [[1, 1], [2, 1], [3, 1]]})
    game.run(CommandType.END_TURN, 1, {})
    game.run(CommandType.ACTION, 2, {"type": "place", "cells": [[10, 5], [11, 5], [12, 5]]})
    game.run(CommandType.END_TURN, 2, {})
    rng = random.Random(7)
    for _ in range(6):
        if not game.tick(rng.randint(1, 3)):
            break
    ticks = [e for e in game.log if e[1] == EventType.GENERATIONS_TICKED]
    assert ticks  # the blinkers run (and stabilise, opening redraw)
    state, env = game.fold()
    assert engine.state_hash(state) == engine.state_hash(game.state) == game.log[-1][4]
    assert env == game.env
    # blind placement: each placement is observed by its drawer only; the rest by all
    assert env.versions == (len(game.log) - 2, len(game.log) - 1, len(game.log) - 1)
    assert env.anchor is None  # Life keeps no turn anchor


def test_removal_in_own_turn_rolls_back_to_the_turn_start():
    game = cellwar_game()
    p1_turn(game)  # seq 5..7: player 2's turn begins after seq 7
    turn_start_hash = game.log[6][4]
    game.run(CommandType.ACTION, 2, {"unit_id": 2, "dx": -1, "dy": -1})
    assert game.env.anchor.seq == 7 and game.env.anchor.state_hash == turn_start_hash
    drafts = game.run(CommandType.REMOVE_PLAYER, 0, {"player_id": 2, "reason": "disconnected"})
    assert [d.type for d in drafts] == [EventType.ROLLED_BACK, EventType.PLAYER_REMOVED]
    back, removed = drafts
    assert back.payload["to_seq"] == 7 and back.state_hash == turn_start_hash
    assert engine.state_hash(engine.decode_state(base64.b64decode(back.payload["state"]))) == turn_start_hash
    assert removed.payload == {"player_id": 2, "reason": "disconnected"}
    assert (back.actor, removed.actor) == (0, 0)
    units = {(u.owner, u.x, u.y) for u in game.state.units}
    assert units == {(1, 0, 1), (1, 1, 1), (3, 9, 9), (3, 8, 9)}  # player 1's turn stands
    assert game.state.turn == 3
    state, env = game.fold()
    assert engine.state_hash(state) == game.log[-1][4] and env == game.env


def test_removal_outside_own_turn_or_before_acting_removes_at_once():
    game = cellwar_game()
    game.run(CommandType.ACTION, 1, {"unit_id": 1, "dx": 0, "dy": 1})
    drafts = game.run(CommandType.REMOVE_PLAYER, 3, {"player_id": 3, "reason": "left"})
    assert [d.type for d in drafts] == [EventType.PLAYER_REMOVED]
    game.run(CommandType.ACTION, 1, {"unit_id": 4, "dx": 0, "dy": 1})
    game.run(CommandType.END_TURN, 1, {})
    # player 2's turn, nothing done yet: no RolledBack
    drafts = game.run(CommandType.REMOVE_PLAYER, 2, {"player_id": 2, "reason": "left"})
    assert [d.type for d in drafts] == [EventType.PLAYER_REMOVED, EventType.GAME_FINISHED]
    assert game.state.winner == 1


def test_a_rollback_reapplies_the_removals_since_the_turn_began():
    game = cellwar_game()
    game.run(CommandType.REMOVE_PLAYER, 0, {"player_id": 3, "reason": "disconnected"})  # seq 5
    game.run(CommandType.ACTION, 1, {"unit_id": 1, "dx": 0, "dy": 1})  # seq 6
    drafts = game.run(CommandType.REMOVE_PLAYER, 1, {"player_id": 1, "reason": "left"})
    assert [(d.type, d.payload.get("to_seq"), d.payload.get("player_id")) for d in drafts] == [
        (EventType.ROLLED_BACK, 4, None),
        (EventType.PLAYER_REMOVED, None, 3),
        (EventType.PLAYER_REMOVED, None, 1),
        (EventType.GAME_FINISHED, None, None),
    ]
    assert drafts[1].payload == {"player_id": 3, "reason": "disconnected"}
    assert game.state.winner == 2
    state, env = game.fold()
    assert engine.state_hash(state) == game.log[-1][4] and env == game.env


def test_removing_a_player_already_out_records_nothing():
    game = cellwar_game()
    game.run(CommandType.REMOVE_PLAYER, 3, {"player_id": 3, "reason": "left"})
    with pytest.raises(GameError) as err:
        game.run(CommandType.REMOVE_PLAYER, 0, {"player_id": 3, "reason": "disconnected"})
    assert err.value.code in ("INVALID_ACTION", "NO_CHANGE")  # NO_CHANGE from engine version 2


@pytest.mark.parametrize(
    "create",
    [
        {"kind": "life", "config": {}},
        {"kind": "campaign", "config": {"level": 1}},
        CELLWAR,
    ],
)
def test_a_waiting_game_expires_and_a_started_one_does_not(create):
    game = Game(create)
    assert policy(game.state).expirable
    drafts = game.run(CommandType.EXPIRE, 0, {})
    assert [d.type for d in drafts] == [EventType.GAME_EXPIRED, EventType.GAME_FINISHED]
    assert engine.summary(game.state).finished and not policy(game.state).expirable
    assert drafts[1].payload["winner"] is None
    state, _ = game.fold()
    assert engine.state_hash(state) == game.log[-1][4]
    with pytest.raises(GameError) as err:
        game.run(CommandType.JOIN, 0, {"name": "late"})
    assert err.value.code == "GAME_FINISHED"
    started = cellwar_game()
    with pytest.raises(GameError) as err:
        started.run(CommandType.EXPIRE, 0, {})
    assert err.value.code == "WRONG_PHASE"


def test_policy_is_data_per_kind_and_phase():
    game = cellwar_game()
    p = policy(game.state)
    assert (p.log_private, p.spectators_live, p.rollback_on_leave, p.ticking) == (True, False, True, False)
    assert p.lobby_hidden_keys == ("units",) and p.disconnect_timeout_s == 30
    assert p.active_players == (1, 2, 3) and p.private_reason
    life = Game({"kind": "life", "config": {}})
    assert policy(life.state).log_private and policy(life.state).disconnect_timeout_s == 0
    life.run(CommandType.JOIN, 0, {"name": "a"})
    life.run(CommandType.JOIN, 0, {"name": "b"})
    life.run(CommandType.END_TURN, 1, {})
    life.run(CommandType.END_TURN, 2, {})
    running = policy(life.state)
    # the log stays private after placement (it holds the blind drawing) until the end
    assert (running.log_private, running.ticking, running.spectators_live) == (True, True, True)
    life.run(CommandType.ACTION, 1, {"type": "resign"})
    assert life.state.phase == "finished" and not policy(life.state).log_private
    level = Game({"kind": "campaign", "config": {"level": 3}})
    assert policy(level.state).progress_level == 3 and not policy(level.state).log_private
