"""Turn timers in the engine (engine/timers.py, docs/architecture/rules.md): the ``turn_time_s`` and
``rated`` config options, what ``TurnTimedOut`` does in CellWar and Life (decided and
folded alike), the envelope's ``turn_seq`` (where the timed turn began), the refusal of
a stale timeout, and the seat's profile in ``PlayerJoined`` of a rated game."""

from __future__ import annotations

import pytest

import engine
from cellwar.v1.codes import CommandType, ErrorCode, EventType
from engine import envelope
from engine.envelope import Envelope
from engine.errors import GameError
from engine.policy import policy
from engine.timers import turn_timer


class Game:
    """A game played through :func:`engine.envelope.decide`, keeping its log."""

    def __init__(self, kind: str, config: dict) -> None:
        self.state, self.env, self.log = None, Envelope(), []
        self.run(CommandType.CREATE, 0, {"kind": kind, "config": config})

    def run(self, command: str, actor: int = 0, payload: dict | None = None) -> list:
        drafts, self.state, self.env = envelope.decide(
            self.state, self.env, command, actor, payload or {}
        )
        for d in drafts:
            self.log.append((len(self.log) + 1, d.type, d.actor, d.payload, d.state_hash))
        return drafts

    def tick(self, n: int) -> list:
        drafts, self.state, self.env = envelope.tick(self.state, self.env, n)
        for d in drafts:
            self.log.append((len(self.log) + 1, d.type, d.actor, d.payload, d.state_hash))
        return drafts

    def time_out(self) -> list:
        return self.run(CommandType.TIME_OUT, 0, {"turn_seq": self.env.turn_seq})

    def fold(self):
        return envelope.fold(None, Envelope(), [e[:4] for e in self.log])


def unit_at(state, x: int, y: int) -> dict | None:
    for u in engine.get_visible_state(state, None)["units"]:
        if (u["x"], u["y"]) == (x, y):
            return u
    return None


def cellwar(units: list[dict], **config) -> Game:
    game = Game("cellwar", {"width": 8, "height": 8, "units": units, "turn_time_s": 60, **config})
    game.run(CommandType.JOIN, 0, {"name": "ann"})
    game.run(CommandType.JOIN, 0, {"name": "bob"})
    return game


TWO_EACH = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 1, "type": "fortification", "x": 0, "y": 3, "standing": 1},
    {"owner": 2, "type": "infantry", "x": 7, "y": 7},
    {"owner": 2, "type": "infantry", "x": 6, "y": 7},
]


# --------------------------------------------------------------------------- config


@pytest.mark.parametrize("kind,config", [("life", {}), ("cellwar", {})])
def test_options_absent_keep_the_normalised_config_unchanged(kind, config):
    created = engine.decide(None, "create", 0, {"kind": kind, "config": config})[0][0]
    assert "turn_time_s" not in created.payload["config"]
    assert "rated" not in created.payload["config"]


@pytest.mark.parametrize("kind", ["life", "cellwar"])
def test_options_set_are_normalised_into_the_config(kind):
    created = engine.decide(
        None, "create", 0, {"kind": kind, "config": {"turn_time_s": 90, "rated": True}}
    )[0][0]
    assert created.payload["config"]["turn_time_s"] == 90
    assert created.payload["config"]["rated"] is True


@pytest.mark.parametrize("kind", ["life", "cellwar"])
def test_null_timer_and_unrated_are_the_defaults(kind):
    with_nulls = engine.decide(
        None, "create", 0, {"kind": kind, "config": {"turn_time_s": None, "rated": False}}
    )[1]
    plain = engine.decide(None, "create", 0, {"kind": kind, "config": {}})[1]
    assert engine.state_hash(with_nulls) == engine.state_hash(plain)


@pytest.mark.parametrize("kind", ["life", "cellwar"])
@pytest.mark.parametrize(
    "value", [0, -5, 86_401, 1.5, 60.0, "60", True, [60]], ids=repr
)
def test_bad_turn_time_is_invalid_config(kind, value):
    with pytest.raises(GameError) as err:
        engine.decide(None, "create", 0, {"kind": kind, "config": {"turn_time_s": value}})
    assert err.value.code == ErrorCode.INVALID_CONFIG
    assert "turn_time_s" in err.value.message


@pytest.mark.parametrize("value", [1, "yes", 0, [True]], ids=repr)
def test_rated_must_be_a_boolean(value):
    with pytest.raises(GameError) as err:
        engine.decide(None, "create", 0, {"kind": "life", "config": {"rated": value}})
    assert err.value.code == ErrorCode.INVALID_CONFIG


def test_campaign_has_no_timer_option():
    with pytest.raises(GameError) as err:
        engine.decide(None, "create", 0, {"kind": "campaign", "config": {"level": 1, "turn_time_s": 5}})
    assert err.value.code == ErrorCode.INVALID_CONFIG


def test_timed_state_round_trips_through_its_encoding():
    game = cellwar(TWO_EACH)
    decoded = engine.decode_state(engine.encode_state(game.state))
    assert decoded == game.state
    assert turn_timer(decoded).seconds == 60


# --------------------------------------------------------------------------- CellWar


def test_cellwar_timeout_leaves_unacted_units_in_place_and_passes_the_turn():
    game = cellwar(TWO_EACH)
    assert game.state.turn == 1 and game.env.turn_seq == 3  # began at the second join
    infantry = unit_at(game.state, 0, 0)
    game.run(CommandType.ACTION, 1, {"unit_id": infantry["id"], "dx": 1, "dy": 0})
    before_fort = unit_at(game.state, 0, 3)
    drafts = game.time_out()
    assert [(d.type, d.actor, d.payload) for d in drafts] == [
        (EventType.TURN_TIMED_OUT, 1, {"players": [1]})
    ]
    assert game.state.turn == 2 and game.state.round == 1
    assert unit_at(game.state, 1, 0)["type"] == "infantry"  # what it did stays
    fort = unit_at(game.state, 0, 3)
    assert (fort["type"], fort["standing"]) == (before_fort["type"], before_fort["standing"])
    assert game.env.turn_seq == 5  # the timeout began player 2's turn


def test_cellwar_timeout_of_an_idle_turn_changes_no_unit():
    game = cellwar(TWO_EACH)
    units_before = engine.get_visible_state(game.state, None)["units"]
    game.time_out()
    game.time_out()
    assert game.state.turn == 1 and game.state.round == 2
    after = engine.get_visible_state(game.state, None)["units"]
    strip = [{k: v for k, v in u.items() if k != "acted"} for u in units_before]
    assert [{k: v for k, v in u.items() if k != "acted"} for u in after] == strip


def test_cellwar_timeout_kills_a_blocked_factory_and_spares_a_free_one():
    units = [
        {"owner": 1, "type": "factory", "x": 0, "y": 0},  # boxed in by its own units
        {"owner": 1, "type": "fortification", "x": 1, "y": 0, "standing": 1},
        {"owner": 1, "type": "fortification", "x": 0, "y": 1, "standing": 1},
        {"owner": 1, "type": "fortification", "x": 1, "y": 1, "standing": 1},
        {"owner": 1, "type": "factory", "x": 4, "y": 4},  # free cells around it
        {"owner": 2, "type": "infantry", "x": 7, "y": 7},
    ]
    game = cellwar(units)
    game.time_out()
    assert unit_at(game.state, 0, 0) is None
    assert unit_at(game.state, 4, 4)["type"] == "factory"
    assert len(engine.get_visible_state(game.state, None)["units"]) == 5  # nothing produced


def test_cellwar_timeout_that_kills_the_last_unit_ends_the_game():
    units = [
        {"owner": 1, "type": "factory", "x": 0, "y": 0},
        {"owner": 2, "type": "infantry", "x": 1, "y": 0},
        {"owner": 2, "type": "infantry", "x": 0, "y": 1},
        {"owner": 2, "type": "infantry", "x": 1, "y": 1},
    ]
    game = cellwar(units)
    drafts = game.time_out()
    assert [d.type for d in drafts] == [EventType.TURN_TIMED_OUT, EventType.GAME_FINISHED]
    assert game.state.phase == "finished" and game.state.winner == 2
    assert game.env.turn_seq == 0 and turn_timer(game.state) is None


def test_cellwar_timeout_is_public_to_every_seat_and_in_every_filtered_log():
    game = cellwar(TWO_EACH)
    before = game.env.versions
    game.time_out()
    assert all(b + 1 == a for b, a in zip(before, game.env.versions, strict=True))
    events = [
        {"seq": s, "type": t, "actor": a, "payload": p, "engine_version": engine.ENGINE_VERSION}
        for s, t, a, p, _ in game.log
    ]
    for reader in (1, 2):
        log = engine.player_log(events, reader)
        assert log[-1]["type"] == EventType.TURN_TIMED_OUT
        assert log[-1]["payload"] == {"players": [1]}


# --------------------------------------------------------------------------- Life


def life(**config) -> Game:
    game = Game("life", {"width": 16, "height": 8, "budget": 12, "turn_time_s": 30, **config})
    game.run(CommandType.JOIN, 0, {"name": "ann"})
    game.run(CommandType.JOIN, 0, {"name": "bob"})
    return game


BLOCK = [[1, 1], [2, 1], [1, 2], [2, 2]]


def test_life_placement_timeout_keeps_the_cells_and_passes_the_turn():
    game = life()
    game.run(CommandType.ACTION, 1, {"type": "place", "cells": BLOCK})
    drafts = game.time_out()
    assert [(d.type, d.actor, d.payload) for d in drafts] == [
        (EventType.TURN_TIMED_OUT, 1, {"players": [1]})
    ]
    assert game.state.phase == "placement" and game.state.turn == 2
    assert engine.get_visible_state(game.state, 1, reveal=True)["players"][0]["cells"] == 4
    assert game.state.players[0].budget_left == 8


def test_life_last_placement_timeout_starts_the_simulation():
    game = life()
    game.run(CommandType.ACTION, 1, {"type": "place", "cells": BLOCK})
    game.time_out()
    game.run(CommandType.ACTION, 2, {"type": "place", "cells": [[10, 1], [11, 1], [10, 2], [11, 2]]})
    game.time_out()
    assert game.state.phase == "running"
    assert game.env.turn_seq == 0 and policy(game.state).turn_time_s == 0


def stable_redraw() -> Game:
    game = life()
    game.run(CommandType.ACTION, 1, {"type": "place", "cells": BLOCK})
    game.run(CommandType.END_TURN, 1)
    game.run(CommandType.ACTION, 2, {"type": "place", "cells": [[10, 1], [11, 1], [10, 2], [11, 2]]})
    game.run(CommandType.END_TURN, 2)
    game.tick(8)
    assert game.state.phase == "redraw"
    return game


def test_life_redraw_timeout_makes_the_others_ready_and_resumes():
    game = stable_redraw()
    began = game.env.turn_seq
    assert began == len(game.log)  # the GenerationsTicked that opened the round
    assert policy(game.state).turn_time_s == 30
    game.run(CommandType.ACTION, 1, {"type": "place", "cells": [[4, 5]]})
    game.run(CommandType.END_TURN, 1)
    assert game.env.turn_seq == began  # the round goes on
    drafts = game.time_out()
    assert [(d.type, d.actor, d.payload) for d in drafts] == [
        (EventType.TURN_TIMED_OUT, 0, {"players": [2]})
    ]
    assert game.state.phase == "running"


def test_life_empty_redraw_round_timing_out_ends_the_game():
    game = stable_redraw()
    drafts = game.time_out()
    assert [d.type for d in drafts] == [EventType.TURN_TIMED_OUT, EventType.GAME_FINISHED]
    assert drafts[0].payload == {"players": [1, 2]}
    assert game.state.phase == "finished" and game.state.result == "draw"


def test_untimed_life_has_no_timer_and_refuses_a_timeout():
    game = life(turn_time_s=None)
    assert turn_timer(game.state) is None and game.env.turn_seq == 0
    with pytest.raises(GameError) as err:
        game.run(CommandType.TIME_OUT, 0, {"turn_seq": 3})
    assert err.value.code == ErrorCode.WRONG_PHASE


# --------------------------------------------------------------------------- envelope


def test_stale_timeout_is_refused_and_changes_nothing():
    game = cellwar(TWO_EACH)
    first = game.env.turn_seq
    infantry = unit_at(game.state, 0, 0)
    game.run(CommandType.ACTION, 1, {"unit_id": infantry["id"], "dx": 1, "dy": 0})
    fort = unit_at(game.state, 0, 3)
    game.run(CommandType.ACTION, 1, {"unit_id": fort["id"], "dx": 0, "dy": 0})
    game.run(CommandType.END_TURN, 1)
    assert game.env.turn_seq != first
    state, env = game.state, game.env
    with pytest.raises(GameError) as err:
        game.run(CommandType.TIME_OUT, 0, {"turn_seq": first})
    assert err.value.code == ErrorCode.NO_CHANGE
    assert (game.state, game.env) == (state, env)


@pytest.mark.parametrize("payload", [{}, {"turn_seq": "3"}, {"turn_seq": 0}, {"turn_seq": True}])
def test_timeout_without_a_turn_seq_is_malformed(payload):
    game = cellwar(TWO_EACH)
    with pytest.raises(GameError) as err:
        game.run(CommandType.TIME_OUT, 0, payload)
    assert err.value.code == ErrorCode.MALFORMED


def test_turn_seq_is_a_function_of_the_log():
    game = cellwar(TWO_EACH)
    seen = [game.env.turn_seq]
    for _ in range(2):
        game.time_out()
        seen.append(game.env.turn_seq)
    assert game.state.turn == 1
    mine = unit_at(game.state, 0, 0)
    game.run(CommandType.ACTION, 1, {"unit_id": mine["id"], "dx": 1, "dy": 1})
    seen.append(game.env.turn_seq)
    game.time_out()  # an acted turn: player 1 stays in (engine version 4)
    seen.append(game.env.turn_seq)
    assert game.state.turn == 2
    infantry = unit_at(game.state, 7, 7)
    game.run(CommandType.ACTION, 2, {"unit_id": infantry["id"], "dx": 0, "dy": -1})
    seen.append(game.env.turn_seq)
    assert seen == [3, 4, 5, 5, 7, 7]  # a timeout begins the next turn; an action does not
    state, env = game.fold()
    assert env == game.env and engine.state_hash(state) == engine.state_hash(game.state)


def test_redraw_turn_seq_survives_folding_ticks_in_runs():
    game = stable_redraw()
    state, env = game.fold()  # GenerationsTicked folded as one run
    assert env.turn_seq == game.env.turn_seq == len(game.log)


# --------------------------------------------------------------------------- rated seats


def test_rated_game_records_the_seat_profile_in_player_joined():
    game = Game("cellwar", {"rated": True})
    drafts = game.run(CommandType.JOIN, 0, {"name": "ann", "profile_id": "a1b2"})
    assert drafts[0].payload == {"player_id": 1, "name": "ann", "profile_id": "a1b2"}
    drafts = game.run(CommandType.JOIN, 0, {"name": "bob"})
    assert drafts[0].payload == {"player_id": 2, "name": "bob"}


def test_unrated_game_records_no_profile():
    game = Game("life", {})
    drafts = game.run(CommandType.JOIN, 0, {"name": "ann", "profile_id": "a1b2"})
    assert drafts[0].payload == {"player_id": 1, "name": "ann"}


@pytest.mark.parametrize("profile_id", ["bad id", "x" * 65, 7, "é"])
def test_malformed_profile_id_is_refused(profile_id):
    game = Game("life", {"rated": True})
    with pytest.raises(GameError) as err:
        game.run(CommandType.JOIN, 0, {"name": "ann", "profile_id": profile_id})
    assert err.value.code == ErrorCode.MALFORMED
