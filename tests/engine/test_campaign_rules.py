"""Campaign rules at game level (the Life seed's section "Кампания"): config,
untouchable enemy cells, win, loss, redraw, restart, max_generations, views, and
commands folding back into the same states (docs/architecture/index.md "The event model")."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.campaign.game import CampaignState
from engine.campaign.levels import SOLUTIONS, level
from engine.errors import GameError

ENEMY_BLOCK_1 = [[9, 9], [10, 9], [9, 10], [10, 10]]  # level 1's enemy
BLOCK = [[0, 0], [1, 0], [0, 1], [1, 1]]
BEEHIVE = [[1, 0], [2, 0], [0, 1], [3, 1], [1, 2], [2, 2]]
GLIDER = [[1, 0], [2, 1], [0, 2], [1, 2], [2, 2]]


def shift(cells, dx, dy):
    return [[x + dx, y + dy] for x, y in cells]


class Recorder:
    """Runs commands through :func:`engine.decide` / :func:`engine.decide_tick` and keeps
    every event draft."""

    def __init__(self, level_number=1, **config):
        self.drafts: list[engine.EventDraft] = []
        self.state = None
        self.cmd("create", kind="campaign", config={"level": level_number, **config})

    def cmd(self, command_type, actor=0, **payload):
        drafts, self.state = engine.decide(self.state, command_type, actor, payload)
        self.drafts.extend(drafts)
        return drafts

    def act(self, type_, **fields):
        return self.cmd("action", 1, type=type_, **fields)

    def tick(self, n):
        drafts, self.state = engine.decide_tick(self.state, n)
        self.drafts.extend(drafts)
        return drafts

    def tick_until(self, *phases, limit=1000):
        for _ in range(limit):
            if self.state.phase in phases:
                return
            self.tick(8)
        raise AssertionError(f"still {self.state.phase} after {limit} ticks")

    def assert_folds(self):
        """Folding the drafts reproduces the state, and every draft's hash on the way."""
        state = None
        for d in self.drafts:
            state = engine.apply_event(state, d.type, d.actor, d.payload)
            assert engine.state_hash(state) == d.state_hash, d.type
        assert engine.state_hash(state) == engine.state_hash(self.state)


def joined(level_number=1, **config) -> Recorder:
    rec = Recorder(level_number, **config)
    rec.cmd("join", name="alice")
    return rec


def refused(code, fn, state, *args):
    before = engine.state_hash(state)
    with pytest.raises(GameError) as err:
        fn(state, *args)
    assert err.value.code == code, err.value
    assert engine.state_hash(state) == before
    return err.value


def budget(state) -> int:
    return state.players[0].budget_left


# ----------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"level": 0},
        {"level": 104},
        {"level": "1"},
        {"level": True},
        {"level": 1.0},
        {"level": 1, "max_generations": 0},
        {"level": 1, "max_generations": "5"},
        {"level": 1, "budget": 5},
    ],
)
def test_invalid_config(config):
    with pytest.raises(GameError) as err:
        engine.config_from_dict("campaign", config)
    assert err.value.code == "INVALID_CONFIG"
    with pytest.raises(GameError) as err:
        engine.decide(None, "create", 0, {"kind": "campaign", "config": config})
    assert err.value.code == "INVALID_CONFIG"


def test_config_normalised_and_new_game():
    drafts, state = engine.decide(None, "create", 0, {"kind": "campaign", "config": {"level": 103}})
    assert drafts[0].payload == {
        "kind": "campaign",
        "config": {"level": 103, "max_generations": 5000},
    }
    assert isinstance(state, CampaignState) and state.kind == "campaign"
    lv = level(103)
    assert np.array_equal(state.grid, lv.enemy_board())
    s = engine.summary(state)
    assert (s.phase, s.turn, s.players_joined, s.max_players, s.finished) == (
        "waiting",
        0,
        0,
        1,
        False,
    )


def test_one_player_placement_then_full():
    rec = joined(2)
    s = engine.summary(rec.state)
    assert (s.phase, s.turn, s.players_joined) == ("placement", 1, 1)
    assert budget(rec.state) == level(2).budget
    refused("GAME_FULL", engine.add_player, rec.state, "bob")


# ----------------------------------------------------------------------------- enemy cells


def test_place_over_enemy_is_skipped_and_free():
    rec = joined(1)
    before = budget(rec.state)
    rec.act("place", cells=[*ENEMY_BLOCK_1, [0, 0]])
    grid = rec.state.grid
    assert all(grid[y, x] == 2 for x, y in ENEMY_BLOCK_1)
    assert grid[0, 0] == 1 and budget(rec.state) == before - 1
    # only enemy cells: nothing would happen, so it is refused and nothing spent
    refused("NO_CHANGE", engine.apply_action, rec.state, 1, {"type": "place", "cells": ENEMY_BLOCK_1})
    assert budget(rec.state) == before - 1


def test_stamp_over_enemy_is_skipped_and_free():
    rec = joined(1)
    before = budget(rec.state)
    rec.act("stamp", pattern="block", x=8, y=8, rotation=0)  # (9, 9) is the enemy's
    grid = rec.state.grid
    assert grid[9, 9] == 2 and grid[8, 8] == grid[8, 9] == grid[9, 8] == 1
    assert budget(rec.state) == before - 3


def test_stamp_that_places_nothing_is_refused_and_recorded_nowhere():
    rec = joined(1)  # zone = the whole 20x20 board
    drafts = len(rec.drafts)
    stamp = {"type": "stamp", "pattern": "block", "x": 9, "y": 9, "rotation": 0}
    err = refused("NO_CHANGE", engine.apply_action, rec.state, 1, stamp)  # enemy block
    assert err.message == "every cell of the stamp lands on a live cell"
    refused("OUT_OF_ZONE", engine.apply_action, rec.state, 1, {**stamp, "x": 25})  # off the board
    rec2 = joined(2)  # zone (4, 4, 20, 20)
    refused("OUT_OF_ZONE", engine.apply_action, rec2.state, 1, {**stamp, "x": 1, "y": 1})
    with pytest.raises(GameError):
        rec.act("stamp", pattern="block", x=9, y=9, rotation=0)
    assert len(rec.drafts) == drafts
    rec2.act("stamp", pattern="block", x=3, y=3, rotation=0)  # (4, 4) is in the zone
    assert rec2.state.grid[4, 4] == 1 and rec2.state.grid[3, 3] == 0


def test_erase_ignores_enemy_without_refund():
    rec = joined(1)
    rec.act("place", cells=[[0, 0]])
    before = budget(rec.state)
    refused("NO_CHANGE", engine.apply_action, rec.state, 1, {"type": "erase", "cells": ENEMY_BLOCK_1})
    assert all(rec.state.grid[y, x] == 2 for x, y in ENEMY_BLOCK_1)
    assert budget(rec.state) == before
    rec.act("erase", cells=[[0, 0], [9, 9]])  # own cell placed this turn: refund 1
    assert rec.state.grid[0, 0] == 0 and rec.state.grid[9, 9] == 2
    assert budget(rec.state) == before + 1
    rec.act("place", cells=[[3, 3]])
    rec.act("reset_turn")
    assert np.array_equal(rec.state.grid, level(1).enemy_board())


def test_zone_and_budget_all_or_nothing():
    rec = joined(2)  # zone (4, 4, 20, 20), budget 15
    lv = level(2)
    err = refused(
        "OUT_OF_ZONE",
        engine.apply_action,
        rec.state,
        1,
        {"type": "place", "cells": [[5, 5], [0, 0]]},
    )
    assert "zone" in err.message
    too_many = [[x, y] for y in range(4, 8) for x in range(4, 8)]  # 16 > 15
    refused(
        "BUDGET_EXCEEDED", engine.apply_action, rec.state, 1, {"type": "place", "cells": too_many}
    )
    assert budget(rec.state) == lv.budget


# ----------------------------------------------------------------------------- win / loss


def test_level_1_solution_wins_and_folds():
    rec = joined(1)
    solution = SOLUTIONS[1]
    rec.act("place", cells=[list(c) for c in solution["cells"]])
    rec.cmd("end_turn", 1)
    assert rec.state.phase == "running"
    rec.tick_until("finished")
    assert rec.state.result == "win" and engine.get_winner(rec.state) == 1
    assert rec.state.generation <= solution["generations"]
    assert rec.drafts[-1].type == "GameFinished"
    assert rec.drafts[-1].payload == {"winner": 1, "result": "win"}
    view = engine.get_visible_state(rec.state, 1)
    assert (view["result"], view["winner"], view["enemy_cells"]) == ("win", 1, 0)
    rec.assert_folds()


def test_budget_spent_far_away_stable_is_a_loss():
    rec = joined(1)  # budget 10 = a block (4) + a beehive (6), far from the enemy block
    rec.act("place", cells=shift(BLOCK, 0, 0) + shift(BEEHIVE, 14, 0))
    assert budget(rec.state) == 0
    rec.cmd("end_turn", 1)
    rec.tick(8)
    assert rec.state.phase == "finished"
    assert rec.state.result == "loss" and engine.get_winner(rec.state) is None
    assert rec.drafts[-1].payload == {"winner": None, "result": "loss"}
    assert engine.get_visible_state(rec.state, 1)["enemy_cells"] == 4
    rec.assert_folds()


def test_resign_and_remove_are_losses_propose_finish_refused():
    rec = joined(1)
    refused("INVALID_ACTION", engine.apply_action, rec.state, 1, {"type": "propose_finish"})
    rec.act("resign")
    assert (rec.state.phase, rec.state.result, rec.state.winner) == ("finished", "loss", None)
    refused(
        "GAME_FINISHED", engine.apply_action, rec.state, 1, {"type": "place", "cells": [[0, 0]]}
    )
    refused("GAME_FINISHED", engine.end_player_turn, rec.state, 1)
    rec2 = joined(1)
    rec2.cmd("remove_player", 0, player_id=1, reason="timeout")
    assert (rec2.state.phase, rec2.state.result) == ("finished", "loss")
    assert rec2.drafts[-1].type == "GameFinished"
    rec.assert_folds()
    rec2.assert_folds()


# ----------------------------------------------------------------------------- redraw


def test_stable_with_budget_opens_redraw_ready_restarts():
    rec = joined(1)
    rec.act("place", cells=shift(BLOCK, 0, 0))
    rec.cmd("end_turn", 1)
    rec.tick(8)
    state = rec.state
    assert (state.phase, state.stable, state.turn) == ("redraw", True, 0)
    assert budget(state) == 6
    refused("WRONG_PHASE", engine.apply_action, state, 1, {"type": "pause"})
    # An empty redraw ("Ready" without drawing) just runs again: not a game end.
    rec.cmd("end_turn", 1)
    assert (rec.state.phase, rec.state.stable) == ("running", False)
    rec.tick(8)
    assert rec.state.phase == "redraw"
    # Now draw the solution in the redraw and win.
    rec.act("place", cells=[list(c) for c in SOLUTIONS[1]["cells"]])
    rec.cmd("end_turn", 1)
    rec.tick_until("finished")
    assert rec.state.result == "win"
    rec.assert_folds()


def test_own_extinction_is_not_a_loss():
    rec = joined(1)
    rec.act("place", cells=[[0, 0]])  # a lone cell dies at once
    rec.cmd("end_turn", 1)
    rec.tick(8)
    assert rec.state.phase == "redraw"
    view = engine.get_visible_state(rec.state, 1)
    assert view["players"][0]["cells"] == 0 and view["players"][0]["out"] is False
    assert view["result"] is None
    rec.act("place", cells=[[5, 5]])  # the player still draws
    rec.assert_folds()


def test_max_generations_counts_as_stable():
    rec = joined(1, max_generations=3)
    rec.act("place", cells=shift(GLIDER, 0, 0))  # never repeats within 3 generations
    rec.cmd("end_turn", 1)
    rec.tick(100)
    assert (rec.state.phase, rec.state.stable, rec.state.generation) == ("redraw", True, 3)
    rec.cmd("end_turn", 1)
    rec.tick(100)  # counted from the new start
    assert (rec.state.phase, rec.state.generation) == ("redraw", 6)
    # With the budget spent, reaching max_generations is a loss.
    rec.act("place", cells=shift(GLIDER, 0, 14))
    assert budget(rec.state) == 0
    rec.cmd("end_turn", 1)
    rec.tick(100)
    assert (rec.state.phase, rec.state.result) == ("finished", "loss")
    rec.assert_folds()


def test_pause_resume_speed():
    rec = joined(1)
    rec.act("place", cells=shift(GLIDER, 0, 0))
    rec.cmd("end_turn", 1)
    rec.act("pause")
    assert rec.state.phase == "paused"
    assert rec.tick(8) == []
    rec.act("speed", multiplier=4)
    rec.act("resume")
    rec.tick(2)
    assert (rec.state.phase, rec.state.speed, rec.state.generation) == ("running", 4, 2)
    refused("WRONG_PHASE", engine.end_player_turn, rec.state, 1)
    refused("WRONG_PHASE", engine.apply_action, rec.state, 1, {"type": "place", "cells": [[0, 0]]})
    rec.assert_folds()


# ----------------------------------------------------------------------------- restart


def test_restart_resets_in_any_phase_even_finished():
    fresh = joined(1).state
    rec = joined(1)
    rec.act("place", cells=shift(BLOCK, 0, 0))
    rec.act("restart")
    assert engine.state_hash(rec.state) == engine.state_hash(fresh)
    rec.act("place", cells=[list(c) for c in SOLUTIONS[1]["cells"]])
    rec.cmd("end_turn", 1)
    rec.act("speed", multiplier=8)
    rec.tick(2)
    rec.act("restart")  # while running
    assert engine.state_hash(rec.state) == engine.state_hash(fresh)
    rec.act("resign")
    assert rec.state.result == "loss"
    drafts = rec.act("restart")  # from the end screen
    assert [d.type for d in drafts] == ["ActionApplied"]
    state = rec.state
    assert (state.phase, state.turn, state.generation, state.result) == ("placement", 1, 0, None)
    assert budget(state) == level(1).budget
    assert np.array_equal(state.grid, level(1).enemy_board())
    rec.act("place", cells=[list(c) for c in SOLUTIONS[1]["cells"]])
    rec.cmd("end_turn", 1)
    rec.tick_until("finished")
    assert rec.state.result == "win"
    assert [d.type for d in rec.drafts].count("GameFinished") == 2
    rec.assert_folds()


def test_removed_player_cannot_restart():
    rec = joined(1)
    rec.cmd("remove_player", 0, player_id=1, reason="left")
    refused("INVALID_ACTION", engine.apply_action, rec.state, 1, {"type": "restart"})
    refused("UNKNOWN_PLAYER", engine.apply_action, rec.state, 2, {"type": "restart"})


# ----------------------------------------------------------------------------- views, encoding


def test_view_has_level_fields():
    rec = joined(4)
    lv = level(4)
    view = engine.get_visible_state(rec.state, 1)
    assert view["kind"] == "campaign"
    assert (view["level"], view["levels_total"]) == (4, 103)
    assert view["level_name"] == {"en": lv.name_en, "ru": lv.name_ru}
    assert view["hint"] == {"en": lv.hint_en, "ru": lv.hint_ru}
    assert view["zone"] == list(lv.zone) and (view["width"], view["height"]) == (
        lv.width,
        lv.height,
    )
    assert view["enemy_cells"] == len(lv.enemy) and view["you"] == 1
    assert [p["budget_left"] for p in view["players"]] == [lv.budget]
    assert [p["color"] for p in view["players"]] == ["red"]
    assert (view["phase"], view["turn"], view["result"], view["winner"]) == (
        "placement",
        1,
        None,
        None,
    )
    assert view["board"].endswith("!") and "B" in view["board"]
    spectator = engine.get_visible_state(rec.state, None)
    assert spectator["you"] is None and spectator["board"] == view["board"]
    assert engine.get_valid_actions(rec.state, 1) == []


def test_encode_decode_round_trip():
    rec = joined(3)
    rec.act("place", cells=[[0, 0], [1, 0], [2, 0]])
    states = [rec.state]
    rec.cmd("end_turn", 1)
    rec.tick(5)
    states.append(rec.state)
    for state in states:
        data = engine.encode_state(state)
        back = engine.decode_state(data)
        assert isinstance(back, CampaignState) and back == state
        assert engine.encode_state(back) == data
    with pytest.raises(GameError) as err:
        engine.decode_state(engine.encode_state(states[0])[:-1])
    assert err.value.code == "MALFORMED"
