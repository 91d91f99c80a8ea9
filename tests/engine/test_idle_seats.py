"""Every CellWar game ends (engine version 4, docs/game-end.md; the seed "Потеря связи:
ждём таймаут, затем как отключение" and "Ничья невозможна"): a seat that lets two of its
own turns in a row time out without acting is removed as disconnected, recorded as the
usual ``PlayerRemoved`` by the system, and the last player left wins. Logs of earlier
versions fold as they were recorded. No NATS: the engine alone, through
:func:`engine.envelope.decide` as the engine service runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from cellwar.v1.codes import CommandType, EventType
from engine import envelope
from engine.envelope import Envelope
from engine.errors import GameError
from engine.policy import policy
from engine.reenact import Recorded, reenact
from engine.timers import idle_seats, turn_timer

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"

TWO = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 1, "type": "infantry", "x": 1, "y": 0},
    {"owner": 2, "type": "infantry", "x": 7, "y": 7},
    {"owner": 2, "type": "infantry", "x": 6, "y": 7},
]
THREE = TWO + [{"owner": 3, "type": "infantry", "x": 7, "y": 0}]


class Game:
    """A game decided through :func:`engine.envelope.decide` (as the engine service does),
    keeping its log as the session records it."""

    def __init__(self, units: list[dict], players: int = 2, version: str | None = None) -> None:
        self.state, self.env, self.log, self.version = None, Envelope(), [], version
        config = {"width": 8, "height": 8, "players": players, "units": units, "turn_time_s": 5}
        self.run(CommandType.CREATE, 0, {"kind": "cellwar", "config": config})
        for n in range(players):
            self.run(CommandType.JOIN, 0, {"name": f"p{n + 1}"})

    def run(self, command: str, actor: int = 0, payload: dict | None = None) -> list:
        drafts, self.state, self.env = envelope.decide(
            self.state, self.env, command, actor, payload or {}, engine_version=self.version
        )
        for d in drafts:
            self.log.append(
                {
                    "seq": len(self.log) + 1,
                    "type": d.type,
                    "actor": d.actor,
                    "payload": json.loads(json.dumps(d.payload)),
                    "state_hash": d.state_hash,
                    "engine_version": self.version or engine.ENGINE_VERSION,
                }
            )
        return [(d.type, d.actor, d.payload) for d in drafts]

    def time_out(self) -> list:
        return self.run(CommandType.TIME_OUT, 0, {"turn_seq": self.env.turn_seq})

    def act(self, player: int) -> list:
        """``player`` (whose turn it is) acts with its first unit that has not acted:
        staying put where it can (fortify, stand), else its first legal action."""
        actions = engine.get_valid_actions(self.state, player)
        action = next((a for a in actions if (a["dx"], a["dy"]) == (0, 0)), actions[0])
        return self.run(CommandType.ACTION, player, {k: action[k] for k in ("unit_id", "dx", "dy")})

    def play_turn(self) -> None:
        """The player whose turn it is acts with every unit (staying put), then ends it."""
        player = self.turn
        while engine.get_valid_actions(self.state, player) and self.turn == player:
            self.act(player)
        if self.turn == player:
            self.run(CommandType.END_TURN, player)

    @property
    def turn(self) -> int:
        return engine.summary(self.state).turn

    def idle(self, player: int) -> int:
        return self.state.player(player).idle

    def check_fold(self) -> None:
        """The log folds to the state and envelope decide gave, and re-decides (import)."""
        events = [(e["seq"], e["type"], e["actor"], e["payload"], e["engine_version"]) for e in self.log]
        state, env = envelope.fold(None, Envelope(), events)
        assert env == self.env
        assert engine.state_hash(state) == engine.state_hash(self.state) == self.log[-1]["state_hash"]
        again = reenact([Recorded(e["seq"], e["type"], e["actor"], e["payload"], e["state_hash"], e["engine_version"]) for e in self.log])
        assert engine.state_hash(again.state) == self.log[-1]["state_hash"]


REMOVED_1 = (EventType.PLAYER_REMOVED, 0, {"player_id": 1, "reason": "disconnected"})


def test_two_own_timeouts_in_a_row_remove_the_seat_as_disconnected():
    game = Game(THREE, players=3)
    assert game.time_out() == [(EventType.TURN_TIMED_OUT, 1, {"players": [1]})]
    assert game.idle(1) == 1 and idle_seats(game.state) == []
    game.play_turn()  # player 2
    assert game.time_out() == [(EventType.TURN_TIMED_OUT, 3, {"players": [3]})]
    assert game.turn == 1
    # player 1's second own turn in a row runs out without an action: it is removed
    assert game.time_out() == [(EventType.TURN_TIMED_OUT, 1, {"players": [1]}), REMOVED_1]
    seat = game.state.player(1)
    assert seat.out and seat.removed
    assert [u for u in game.state.units if u.owner == 1] == []
    assert engine.summary(game.state).phase == "playing" and game.turn == 2
    view = engine.get_visible_state(game.state, 2)
    assert [(p["id"], p["connected"]) for p in view["players"]] == [(1, False), (2, True), (3, True)]
    game.check_fold()


def test_an_action_in_between_resets_the_count():
    game = Game(TWO)
    game.time_out()  # player 1: idle 1
    game.time_out()  # player 2: idle 1
    game.act(1)  # player 1 acts in its second turn...
    assert game.idle(1) == 0 and game.state.turn_acted
    assert game.time_out() == [(EventType.TURN_TIMED_OUT, 1, {"players": [1]})]  # ...so stays
    assert game.idle(1) == 0 and not game.state.turn_acted
    assert game.time_out() == [
        (EventType.TURN_TIMED_OUT, 2, {"players": [2]}),
        (EventType.PLAYER_REMOVED, 0, {"player_id": 2, "reason": "disconnected"}),
        (EventType.GAME_FINISHED, 0, {"winner": 1, "result": "win"}),
    ]
    game.check_fold()


def test_ending_the_turn_resets_the_count_too():
    game = Game(TWO)
    game.time_out()
    game.time_out()
    game.play_turn()  # player 1 acts and ends its turn
    assert game.idle(1) == 0 and game.turn == 2
    game.act(2)
    assert game.idle(2) == 0
    game.time_out()  # player 2's acted turn runs out
    game.time_out()  # player 1: idle 1
    assert (game.idle(1), game.idle(2)) == (1, 0)
    assert engine.summary(game.state).phase == "playing"
    game.check_fold()


def test_a_two_player_game_whose_players_both_stop_ends_with_a_winner():
    game = Game(TWO)
    events = game.time_out() + game.time_out() + game.time_out()
    assert events == [
        (EventType.TURN_TIMED_OUT, 1, {"players": [1]}),
        (EventType.TURN_TIMED_OUT, 2, {"players": [2]}),
        (EventType.TURN_TIMED_OUT, 1, {"players": [1]}),
        REMOVED_1,
        (EventType.GAME_FINISHED, 0, {"winner": 2, "result": "win"}),
    ]
    assert engine.get_winner(game.state) == 2 and turn_timer(game.state) is None
    with pytest.raises(GameError) as err:  # no timer runs any more: nothing is recorded
        game.run(CommandType.TIME_OUT, 0, {"turn_seq": 6})
    assert err.value.code == "GAME_FINISHED"
    game.check_fold()


@pytest.mark.parametrize("played", range(0, 9))
def test_whenever_both_stop_the_game_ends_within_three_timeouts_and_never_a_draw(played):
    """Both players play ``played`` turns (every unit fortifies or stands), then stop: at
    most three turns run out before ``GameFinished`` names a winner."""
    game = Game(TWO)
    for _ in range(played):
        game.play_turn()
    timeouts = 0
    while engine.summary(game.state).phase != "finished":
        game.time_out()
        timeouts += 1
        assert timeouts <= 3
    assert timeouts == 3
    finished = game.log[-1]
    assert finished["type"] == EventType.GAME_FINISHED
    assert finished["payload"]["result"] == "win" and finished["payload"]["winner"] in (1, 2)
    game.check_fold()


def test_a_timeout_that_ends_the_game_itself_records_no_removal():
    units = [
        {"owner": 1, "type": "factory", "x": 0, "y": 0},
        {"owner": 2, "type": "infantry", "x": 1, "y": 0},
        {"owner": 2, "type": "infantry", "x": 0, "y": 1},
        {"owner": 2, "type": "infantry", "x": 1, "y": 1},
    ]
    game = Game(units)
    assert [e[0] for e in game.time_out()] == [EventType.TURN_TIMED_OUT, EventType.GAME_FINISHED]
    assert engine.get_winner(game.state) == 2
    game.check_fold()


def test_every_seat_and_a_spectator_read_the_removal():
    game = Game(THREE, players=3)
    for _ in range(4):
        game.time_out()
    assert game.log[-1]["type"] == EventType.PLAYER_REMOVED
    for reader in (1, 2, 3, 9):  # 9: no seat, a spectator's public events
        log = engine.player_log(game.log, reader)
        assert [e["type"] for e in log[-2:]] == [EventType.TURN_TIMED_OUT, EventType.PLAYER_REMOVED]
        assert log[-1]["payload"] == {"player_id": 1, "reason": "disconnected"}
        assert log[-1]["actor"] == 0


def test_a_removal_during_the_next_turn_rolls_back_to_where_the_idle_removal_left_it():
    """The turn anchor after an idle removal is the same however the log is applied, so a
    later rollback (a disconnect in one's own turn) re-applies the idle removal."""
    game = Game(THREE, players=3)
    for _ in range(4):
        game.time_out()  # 1, 2, 3 idle once; player 1 again: removed, player 2's turn
    game.act(2)
    game.run(CommandType.REMOVE_PLAYER, 0, {"player_id": 2, "reason": "disconnected"})
    types = [e["type"] for e in game.log[-4:]]
    assert types == ["RolledBack", "PlayerRemoved", "PlayerRemoved", "GameFinished"]
    assert engine.get_winner(game.state) == 3
    game.check_fold()


# --------------------------------------------------------------------------- versions


def test_under_version_3_timeouts_never_remove_anybody():
    game = Game(TWO, version="3")
    for _ in range(6):
        assert [e[0] for e in game.time_out()] == [EventType.TURN_TIMED_OUT]
    assert engine.summary(game.state).phase == "playing"
    assert b"idle" not in engine.encode_state(game.state)
    assert b"turn_acted" not in engine.encode_state(game.state)
    game.check_fold()


@pytest.mark.parametrize("name", ["cellwar-2p-timed", "cellwar-3p-rollback", "cellwar-2p-two-hit-production"])
@pytest.mark.parametrize("version", ["2", "3"])
def test_old_cellwar_logs_fold_to_their_recorded_hashes(version, name):
    events = [json.loads(line) for line in (LOGS / f"v{version}" / f"{name}.jsonl").read_text().splitlines()]
    state = None
    for e in events:
        state = engine.apply_event(state, e["type"], e["actor"], e["payload"], engine_version=e["engine_version"])
        assert engine.state_hash(state) == e["state_hash"], e["seq"]
    recorded = [Recorded(e["seq"], e["type"], e["actor"], e["payload"], e["state_hash"], e["engine_version"]) for e in events]
    assert engine.state_hash(reenact(recorded).state) == events[-1]["state_hash"]


def test_a_version_3_game_left_alone_ends_once_the_engine_decides_under_4():
    """A game that wrote TurnTimedOut for ever under version 3 goes on under version 4
    (decide upgrades it): the turn running at the upgrade counts as acted, so at most
    four more timeouts end it."""
    game = Game(TWO, version="3")
    for _ in range(5):
        game.time_out()
    game.version = None  # the engine is upgraded
    more = 0
    while engine.summary(game.state).phase != "finished":
        game.time_out()
        more += 1
    assert more == 4 and engine.get_winner(game.state) in (1, 2)
    versions_seen = [e["engine_version"] for e in game.log]
    assert versions_seen == sorted(versions_seen) and versions_seen[-1] == "4"
    game.check_fold()


def test_version_4_states_round_trip_with_their_counts():
    game = Game(TWO)
    game.time_out()
    game.act(2)
    data = engine.encode_state(game.state)
    assert b'"idle":1' in data and b'"turn_acted":true' in data
    back = engine.decode_state(data)
    assert back == game.state and engine.encode_state(back) == data


# --------------------------------------------------------------------------- Life, campaign


def drive(state, env, limit: int = 500):
    """Play a game nobody acts in as the session does: tick while the board runs, time
    the turn out when a timer runs; stop once finished or when nothing is left to do.
    Returns ``(state, env, steps)``."""
    for step in range(limit):
        if engine.summary(state).finished:
            return state, env, step
        if policy(state).ticking:
            drafts, state, env = envelope.tick(state, env, 8)
            assert drafts, "a running board that does not move"
        elif turn_timer(state) is not None:
            _, state, env = envelope.decide(state, env, CommandType.TIME_OUT, 0, {"turn_seq": env.turn_seq})
        else:
            return state, env, step
    raise AssertionError(f"not finished after {limit} steps")


def test_a_timed_life_game_nobody_plays_ends_by_itself():
    state, env = None, Envelope()
    for command, payload in [
        (CommandType.CREATE, {"kind": "life", "config": {"width": 16, "height": 8, "turn_time_s": 30}}),
        (CommandType.JOIN, {"name": "ann"}),
        (CommandType.JOIN, {"name": "bob"}),
    ]:
        _, state, env = envelope.decide(state, env, command, 0, payload)
    state, env, _ = drive(state, env)
    assert engine.summary(state).finished


def test_a_campaign_run_always_stops_and_no_clock_ever_writes_an_event():
    """The campaign has no turn timer in any phase; a board that never repeats stops at
    ``max_generations`` (redraw opens), after which nothing runs by itself."""
    state, env = None, Envelope()
    glider = [[1, 0], [2, 1], [0, 2], [1, 2], [2, 2]]
    for command, actor, payload in [
        (CommandType.CREATE, 0, {"kind": "campaign", "config": {"level": 1, "max_generations": 6}}),
        (CommandType.JOIN, 0, {"name": "solo"}),
        (CommandType.ACTION, 1, {"type": "place", "cells": glider}),
        (CommandType.END_TURN, 1, {}),
    ]:
        assert turn_timer(state) is None
        _, state, env = envelope.decide(state, env, command, actor, payload)
    assert engine.summary(state).phase == "running"
    state, env, steps = drive(state, env)
    assert steps >= 1 and turn_timer(state) is None and env.turn_seq == 0
    assert engine.summary(state).phase == "redraw" and engine.summary(state).generation == 6
    assert envelope.tick(state, env, 8)[0] == []  # waiting for its one player: nothing runs
    with pytest.raises(GameError) as err:
        envelope.decide(state, env, CommandType.TIME_OUT, 0, {"turn_seq": 1})
    assert err.value.code == "WRONG_PHASE"


# --------------------------------------------------------------------------- a model


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["act", "end", "time_out"]), min_size=1, max_size=40))
def test_removals_follow_a_model_of_the_rule(moves):
    """Three players; each step the player whose turn it is acts, ends its turn (when it
    may) or lets the turn run out. A model that only counts timed-out turns without an
    action (reset by an action or a turn end) predicts every idle removal; the log
    folds and re-decides to the same state and envelope."""
    game = Game(THREE, players=3)
    idle = {1: 0, 2: 0, 3: 0}
    acted = False
    for move in moves:
        if engine.summary(game.state).finished:
            break
        player = game.turn
        if move == "act" and engine.get_valid_actions(game.state, player):
            game.act(player)
            idle[player], acted = 0, True
            if game.turn != player:
                acted = False
            continue
        if move == "end":
            try:
                game.run(CommandType.END_TURN, player)
            except GameError:
                continue
            idle[player], acted = 0, False
            continue
        events = game.time_out()
        idle[player] = 0 if acted else idle[player] + 1
        acted = False
        removed = [e[2]["player_id"] for e in events if e[0] == EventType.PLAYER_REMOVED]
        seat = game.state.player(player)
        eliminated = seat.out and not seat.removed  # its last unit died at the timeout
        assert removed == ([player] if idle[player] >= 2 and not eliminated else []), (events, idle)
        if not removed:
            assert seat.idle == idle[player]
        for pid in removed:
            idle[pid] = 0
        if not engine.summary(game.state).finished:
            assert game.state.player(game.turn).idle == idle[game.turn]
    game.check_fold()
