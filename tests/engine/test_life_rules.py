"""Life rules at game level (the Life seed; docs/architecture/rules.md "Life"): zones,
drawing, stamps, phases, errors, control actions, colour inheritance, edges, stability."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.errors import GameError
from engine.life.zones import zones_for
from tests.engine.lifekit import act, shift, start

BLOCK = [[0, 0], [1, 0], [0, 1], [1, 1]]
GLIDER_RLE = "x = 3, y = 3\nbo$2bo$3o!"


def running(p1_cells, p2_cells, **config):
    """Both players place their cells and end their turns: phase running."""
    state = start(**config)
    state = act(state, 1, "place", cells=p1_cells)
    state = engine.end_player_turn(state, 1)
    state = act(state, 2, "place", cells=p2_cells)
    return engine.end_player_turn(state, 2)


def live(state):
    """Live cells as a set of (x, y, colour)."""
    ys, xs = np.nonzero(state.grid)
    return {(int(x), int(y), int(state.grid[y, x])) for x, y in zip(xs, ys, strict=True)}


def refused(code, fn, state, *args):
    """``fn(state, *args)`` raises GameError ``code`` and leaves ``state`` as it was."""
    before_hash, before_board = engine.state_hash(state), bytes(state.board)
    with pytest.raises(GameError) as err:
        fn(state, *args)
    assert err.value.code == code, err.value
    assert engine.state_hash(state) == before_hash
    assert state.board == before_board
    return err.value


# ----------------------------------------------------------------------------- zones


def test_zones_two_players_split_at_half_width():
    assert zones_for(60, 60, 2) == {1: (0, 0, 30, 60), 2: (30, 0, 60, 60)}
    assert zones_for(9, 8, 2) == {1: (0, 0, 4, 8), 2: (4, 0, 9, 8)}
    assert zones_for(100, 60, 2) == {1: (0, 0, 50, 60), 2: (50, 0, 100, 60)}


def test_zones_four_players_are_quadrants():
    assert zones_for(60, 100, 4) == {
        1: (0, 0, 30, 50),
        2: (30, 0, 60, 50),
        3: (0, 50, 30, 100),
        4: (30, 50, 60, 100),
    }
    assert zones_for(9, 11, 4)[4] == (4, 5, 9, 11)


def test_view_reports_own_zone_and_all_zones():
    state = start(width=20, height=10)
    view = engine.get_visible_state(state, 2)
    assert view["zone"] == [10, 0, 20, 10]
    assert view["zones"] == {"1": [0, 0, 10, 10], "2": [10, 0, 20, 10]}
    assert engine.get_visible_state(state, None)["zone"] is None


def test_place_outside_own_zone_is_refused_in_placement_and_redraw():
    state = start(width=20, height=10)
    err = refused("OUT_OF_ZONE", engine.apply_action, state, 1, {"type": "place", "cells": [[10, 0]]})
    # the zone as inclusive ranges, not an [x0, y0, x1, y1] list of unnamed order
    assert err.message == "cell [10, 0] is outside your zone (x 0..9, y 0..9)"
    refused("OUT_OF_ZONE", engine.apply_action, state, 1, {"type": "place", "cells": [[-1, 0]]})
    refused("OUT_OF_ZONE", engine.apply_action, state, 1, {"type": "place", "cells": [[0, 10]]})
    state = running(shift(BLOCK, 2, 2), shift(BLOCK, 14, 2), width=20, height=10)
    state = engine.tick(state, 5)
    assert state.phase == "redraw"
    refused("OUT_OF_ZONE", engine.apply_action, state, 2, {"type": "place", "cells": [[9, 9]]})
    assert act(state, 2, "place", cells=[[10, 9]]).grid[9, 10] == 2


def test_four_player_quadrants_at_game_level():
    state = start(players=4)
    state = act(state, 1, "place", cells=[[7, 7]])
    refused("OUT_OF_ZONE", engine.apply_action, state, 1, {"type": "place", "cells": [[8, 7]]})
    refused("OUT_OF_ZONE", engine.apply_action, state, 1, {"type": "place", "cells": [[7, 8]]})
    for pid, cell in ((2, [8, 0]), (3, [0, 8]), (4, [15, 15])):
        state = engine.end_player_turn(state, pid - 1)
        assert state.turn == pid
        state = act(state, pid, "place", cells=[cell])
        assert state.grid[cell[1], cell[0]] == pid
    state = engine.end_player_turn(state, 4)
    assert state.phase == "running"


# ----------------------------------------------------------------------------- config


def test_config_defaults_and_normalised_dict():
    cfg = engine.config_from_dict("life", {})
    assert engine.api.rules_for("life").config_to_dict(cfg) == {
        "width": 60,
        "height": 60,
        "players": 2,
        "budget": 100,
        "torus": False,
        "max_generations": 5000,
    }


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"width": 7}, "width"),
        ({"width": 1025}, "width"),
        ({"height": "60"}, "height"),
        ({"width": True}, "width"),
        ({"players": 3}, "players"),
        ({"budget": -1}, "budget"),
        ({"budget": 1.5}, "budget"),
        ({"torus": "yes"}, "torus"),
        ({"max_generations": 0}, "max_generations"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_invalid_config(config, field):
    with pytest.raises(GameError) as err:
        engine.config_from_dict("life", config)
    assert err.value.code == "INVALID_CONFIG"
    assert field in err.value.message


# ----------------------------------------------------------------------------- phases


def test_phase_transitions_and_turn_order():
    state = engine.new_game(engine.config_from_dict("life", {"width": 16, "height": 16}))
    assert (state.phase, state.turn) == ("waiting", 0)
    refused("UNKNOWN_PLAYER", engine.apply_action, state, 1, {"type": "place", "cells": []})
    state = engine.add_player(state, "alice")
    assert state.phase == "waiting"
    refused("WRONG_PHASE", engine.apply_action, state, 1, {"type": "place", "cells": [[0, 0]]})
    refused("WRONG_PHASE", engine.apply_action, state, 1, {"type": "propose_finish"})
    state = engine.add_player(state, "bob")
    assert (state.phase, state.turn) == ("placement", 1)
    refused("GAME_FULL", engine.add_player, state, "carol")
    refused("NOT_YOUR_TURN", engine.apply_action, state, 2, {"type": "place", "cells": [[9, 0]]})
    refused("NOT_YOUR_TURN", engine.end_player_turn, state, 2)
    state = engine.end_player_turn(state, 1)
    assert (state.phase, state.turn) == ("placement", 2)
    refused("NOT_YOUR_TURN", engine.apply_action, state, 1, {"type": "place", "cells": [[0, 0]]})
    state = engine.end_player_turn(state, 2)
    assert (state.phase, state.turn) == ("running", 0)
    refused("WRONG_PHASE", engine.apply_action, state, 1, {"type": "place", "cells": [[0, 0]]})
    refused("WRONG_PHASE", engine.end_player_turn, state, 1)
    s = engine.summary(state)
    assert (s.kind, s.phase, s.players_joined, s.max_players, s.finished) == (
        "life",
        "running",
        2,
        2,
        False,
    )


@pytest.mark.parametrize("pid", [0, 3, -1, True, "1"])
def test_unknown_player(pid):
    state = start()
    refused("UNKNOWN_PLAYER", engine.apply_action, state, pid, {"type": "place", "cells": []})
    refused("UNKNOWN_PLAYER", engine.end_player_turn, state, pid)


@pytest.mark.parametrize(
    "action",
    [
        {},
        {"type": "jump"},
        {"type": "place"},
        {"type": "place", "cells": "0,0"},
        {"type": "place", "cells": [[0, 0, 0]]},
        {"type": "place", "cells": [[0, "1"]]},
        {"type": "place", "cells": [[True, 0]]},
        {"type": "place", "cells": [[0.0, 1]]},
        {"type": "erase", "cells": [0, 0]},
        {"type": "stamp", "x": 0, "y": 0},
        {"type": "stamp", "pattern": "glider", "rle": GLIDER_RLE, "x": 0, "y": 0},
        {"type": "stamp", "rle": GLIDER_RLE, "x": "0", "y": 0},
        {"type": "stamp", "rle": GLIDER_RLE, "x": 0, "y": 0, "rotation": 4},
        {"type": "stamp", "rle": "x = 2, y = 2\n02o!", "x": 0, "y": 0},  # count with a 0
        {"type": "stamp", "rle": "x = 2, y = 1, rule = WireWorld\nAB!", "x": 0, "y": 0},
        {"type": "speed", "multiplier": 3},
        {"type": "speed", "multiplier": True},
        {"type": "speed"},
    ],
)
def test_malformed_actions(action):
    refused("MALFORMED", engine.apply_action, start(), 1, action)


def test_too_many_cells_is_malformed():
    cells = [[0, 0]] * (1024 * 1024 + 1)
    refused("MALFORMED", engine.apply_action, start(), 1, {"type": "place", "cells": cells})


def test_restart_is_campaign_only():
    refused("INVALID_ACTION", engine.apply_action, start(), 1, {"type": "restart"})


def test_valid_actions_empty_for_life():
    assert engine.get_valid_actions(start(), 1) == []


# ----------------------------------------------------------------------------- drawing


def test_blind_placement_hides_other_players():
    state = start()
    state = act(state, 1, "place", cells=[[1, 1], [2, 1]])
    state = engine.end_player_turn(state, 1)
    state = act(state, 2, "place", cells=[[12, 3]])
    v1, v2, spec = (engine.get_visible_state(state, p) for p in (1, 2, None))
    assert v2["board"] == "3$12.B!"
    assert v1["board"] == "$.2A!"
    assert spec["board"] == "!"
    assert v2["players"][0]["cells"] is None and v2["players"][0]["budget_left"] is None
    assert v2["players"][1]["cells"] == 1 and v2["players"][1]["budget_left"] == 99
    assert v1["players"][1]["cells"] is None
    assert [p["cells"] for p in spec["players"]] == [None, None]
    state = engine.end_player_turn(state, 2)
    for viewer in (1, 2, None):
        view = engine.get_visible_state(state, viewer)
        assert view["board"] == "$.2A2$12.B!"
        assert [p["cells"] for p in view["players"]] == [2, 1]


def test_view_shape_is_json_ready():
    import json

    state = start()
    view = engine.get_visible_state(state, 1)
    assert json.loads(json.dumps(view)) == view
    for key in ("kind", "phase", "turn", "you", "players", "width", "height", "winner", "result"):
        assert key in view
    for key in ("generation", "torus", "zone", "stable", "speed", "board", "max_generations"):
        assert key in view
    assert view["you"] == 1 and view["kind"] == "life"
    p = view["players"][0]
    assert set(p) >= {"id", "name", "color", "cells", "budget_left", "connected", "out"}
    assert [q["color"] for q in view["players"]] == ["red", "green"]


def test_place_all_or_nothing():
    state = start(budget=5)
    refused(
        "OUT_OF_ZONE",
        engine.apply_action,
        state,
        1,
        {"type": "place", "cells": [[0, 0], [1, 0], [8, 0]]},
    )
    refused(
        "BUDGET_EXCEEDED",
        engine.apply_action,
        state,
        1,
        {"type": "place", "cells": [[x, 0] for x in range(6)]},
    )
    new = act(state, 1, "place", cells=[[x, 0] for x in range(5)])
    assert new.player(1).budget_left == 0
    assert state.player(1).budget_left == 5 and not state.grid.any()  # old state untouched


def test_place_skips_live_and_duplicate_cells_for_free():
    state = start(budget=3)
    state = act(state, 1, "place", cells=[[0, 0], [1, 0], [0, 0]])
    assert state.player(1).budget_left == 1
    state = act(state, 1, "place", cells=[[0, 0], [1, 0], [2, 0]])
    assert state.player(1).budget_left == 0
    assert live(state) == {(0, 0, 1), (1, 0, 1), (2, 0, 1)}


def test_erase_refunds_only_cells_of_the_current_drawing_turn():
    state = running(shift(BLOCK, 1, 1), shift(BLOCK, 12, 1), budget=10)
    state = engine.tick(state, 3)
    assert state.phase == "redraw"
    assert state.player(1).budget_left == 6
    state = act(state, 1, "place", cells=[[5, 5], [5, 8]])
    assert state.player(1).budget_left == 4
    # one old block cell (no refund), one cell of this turn (refund 1), a green cell and
    # a dead cell in the list are ignored
    state = act(state, 1, "erase", cells=[[1, 1], [5, 5], [6, 6]])
    assert state.player(1).budget_left == 5
    assert (1, 1, 1) not in live(state) and (5, 5, 1) not in live(state)
    assert (5, 8, 1) in live(state)
    refused("OUT_OF_ZONE", engine.apply_action, state, 1, {"type": "erase", "cells": [[12, 1]]})


def test_erase_in_placement_refunds():
    state = start(budget=3)
    state = act(state, 1, "place", cells=[[0, 0], [1, 0], [2, 0]])
    state = act(state, 1, "erase", cells=[[1, 0]])
    assert state.player(1).budget_left == 1
    assert live(state) == {(0, 0, 1), (2, 0, 1)}


def test_reset_turn_in_placement():
    state = start(budget=10)
    state = act(state, 1, "place", cells=[[0, 0], [1, 0]])
    state = engine.end_player_turn(state, 1)
    turn_start = state
    state = act(state, 2, "place", cells=[[9, 9], [10, 9]])
    state = act(state, 2, "erase", cells=[[9, 9]])
    state = act(state, 2, "reset_turn")
    assert state.board == turn_start.board
    assert state.player(2).budget_left == 10
    assert engine.state_hash(state) == engine.state_hash(turn_start)


def test_reset_turn_in_redraw_keeps_other_players_drawing():
    state = running(shift(BLOCK, 1, 1), shift(BLOCK, 12, 1), budget=10)
    state = engine.tick(state, 2)
    assert state.phase == "redraw"
    round_start = state
    state = act(state, 1, "place", cells=[[5, 5]])
    state = act(state, 2, "place", cells=[[12, 12]])
    state = act(state, 1, "erase", cells=[[1, 1]])
    state = act(state, 1, "reset_turn")
    assert state.player(1).budget_left == 6
    assert live(state) == live(round_start) | {(12, 12, 2)}
    assert state.player(2).budget_left == 5


# ----------------------------------------------------------------------------- stamps


def test_stamp_rle_with_rotation_places_the_rotated_cells():
    state = start()
    expected = {
        0: {(3, 3), (4, 4), (2, 5), (3, 5), (4, 5)},  # .O. / ..O / OOO
        1: {(2, 3), (2, 4), (4, 4), (2, 5), (3, 5)},  # O.. / O.O / OO.
        2: {(2, 3), (3, 3), (4, 3), (2, 4), (3, 5)},  # OOO / O.. / .O.
        3: {(3, 3), (4, 3), (2, 4), (4, 4), (4, 5)},  # .OO / O.O / ..O
    }
    for rotation, cells in expected.items():
        new = act(state, 1, "stamp", rle=GLIDER_RLE, x=2, y=3, rotation=rotation)
        assert live(new) == {(x, y, 1) for x, y in cells}
        assert new.player(1).budget_left == 95


def test_stamp_library_pattern_matches_its_rle():
    patterns = pytest.importorskip("engine.life.patterns")
    if not hasattr(patterns, "get"):
        pytest.skip("pattern library not written yet")
    state = start()
    for rotation in range(4):
        by_id = act(state, 1, "stamp", pattern="glider", x=2, y=3, rotation=rotation)
        by_rle = act(state, 1, "stamp", rle=GLIDER_RLE, x=2, y=3, rotation=rotation)
        assert by_id.board == by_rle.board
    refused(
        "INVALID_ACTION",
        engine.apply_action,
        state,
        1,
        {"type": "stamp", "pattern": "no_such_pattern", "x": 0, "y": 0},
    )


def test_stamp_skips_out_of_zone_and_live_cells_for_free():
    state = start(budget=10)
    # block across the zone border at x = 8: only the x = 7 column is placed
    new = act(state, 1, "stamp", rle="2o$2o!", x=7, y=0)
    assert live(new) == {(7, 0, 1), (7, 1, 1)}
    assert new.player(1).budget_left == 8
    # partly off the board
    new = act(state, 1, "stamp", rle="2o$2o!", x=-1, y=15)
    assert live(new) == {(0, 15, 1)}
    # on a live cell: skipped, not paid
    new = act(state, 1, "place", cells=[[3, 3]])
    new = act(new, 1, "stamp", rle="2o$2o!", x=3, y=3)
    assert new.player(1).budget_left == 6
    assert len(live(new)) == 4


def test_stamp_over_budget_places_nothing():
    state = start(budget=4)
    refused(
        "BUDGET_EXCEEDED",
        engine.apply_action,
        state,
        1,
        {"type": "stamp", "rle": GLIDER_RLE, "x": 0, "y": 0},
    )
    # player 2 (zone x >= 8): the glider's left column is outside, 4 cells fit exactly
    state = engine.end_player_turn(state, 1)
    new = act(state, 2, "stamp", rle=GLIDER_RLE, x=7, y=0)
    assert new.player(2).budget_left == 0
    assert live(new) == {(8, 0, 2), (9, 1, 2), (8, 2, 2), (9, 2, 2)}


def test_stamp_live_area_limit():
    state = start()
    refused(
        "INVALID_ACTION",
        engine.apply_action,
        state,
        1,
        {"type": "stamp", "rle": "65o!", "x": 0, "y": 0},
    )
    # empty margins do not count: the live area is 1x1
    new = act(state, 1, "stamp", rle="x = 100, y = 3\n$99bo!", x=1, y=1)
    assert live(new) == {(1, 1, 1)}


def test_stamp_with_no_cell_in_the_zone_is_refused_and_records_nothing():
    # 30 wide, 2 players: player 1's zone is x 0..14, player 2's x 15..29
    state = engine.new_game(engine.config_from_dict("life", {"width": 30, "height": 30}))
    state = engine.add_player(engine.add_player(state, "a"), "b")
    glider = {"type": "stamp", "rle": GLIDER_RLE, "x": 25, "y": 3}
    err = refused("OUT_OF_ZONE", engine.apply_action, state, 1, glider)
    assert err.message == "no cell of the stamp at [25, 3] lands inside your zone (x 0..14, y 0..29)"
    with pytest.raises(GameError) as decided:
        engine.decide(state, "action", 1, glider)  # no ActionApplied is drafted
    assert decided.value.code == "OUT_OF_ZONE"
    assert state.player(1).budget_left == 100
    refused("OUT_OF_ZONE", engine.apply_action, state, 1, {**glider, "x": -10})  # off the board
    # on the board: (15, 28) and (16, 29) lie in player 2's zone; the last row is off it
    refused("OUT_OF_ZONE", engine.apply_action, state, 1, {**glider, "x": 14, "y": 28})
    # one column inside is enough: the glider's left column at x = 14 (cell (14, 5))
    new = act(state, 1, "stamp", rle=GLIDER_RLE, x=14, y=3)
    assert live(new) == {(14, 5, 1)}
    assert new.player(1).budget_left == 99
    # player 2 stamping wholly in player 1's zone
    state = engine.end_player_turn(state, 1)
    refused("OUT_OF_ZONE", engine.apply_action, state, 2, {**glider, "x": 0})


def test_stamp_whose_in_zone_cells_are_all_alive_is_refused():
    state = start(budget=10)
    state = act(state, 1, "place", cells=[[3, 3], [4, 3], [3, 4], [4, 4]])
    err = refused(
        "NO_CHANGE", engine.apply_action, state, 1, {"type": "stamp", "rle": "2o$2o!", "x": 3, "y": 3}
    )
    assert err.message == "every cell of the stamp lands on a live cell"
    assert state.player(1).budget_left == 6
    # partly outside the zone (border at x = 8), the in-zone column already alive
    state = act(state, 1, "place", cells=[[7, 0], [7, 1]])
    refused("NO_CHANGE", engine.apply_action, state, 1, {"type": "stamp", "rle": "2o$2o!", "x": 7, "y": 0})
    # one in-zone cell still dead: it is placed, the live ones are free
    new = act(state, 1, "stamp", rle="2o$2o!", x=7, y=1)
    assert live(new) - live(state) == {(7, 2, 1)}
    assert new.player(1).budget_left == state.player(1).budget_left - 1


def test_stamp_of_a_pattern_without_live_cells_is_refused():
    state = start()
    err = refused("NO_CHANGE", engine.apply_action, state, 1, {"type": "stamp", "rle": "3b!", "x": 0, "y": 0})
    assert err.message == "the stamp has no live cell"


# ----------------------------------------------------------------------------- control


def test_speed_pause_resume():
    state = start()
    state = act(state, 2, "speed", multiplier=4)
    assert state.speed == 4 and engine.summary(state).speed == 4
    refused("WRONG_PHASE", engine.apply_action, state, 1, {"type": "pause"})
    state = running(shift(BLOCK, 1, 1), [[9, 9], [10, 10], [11, 11]])
    refused("WRONG_PHASE", engine.apply_action, state, 1, {"type": "resume"})
    paused = act(state, 2, "pause")
    assert paused.phase == "paused"
    assert engine.tick(paused, 5) is paused
    refused("WRONG_PHASE", engine.apply_action, paused, 1, {"type": "pause"})
    for m in (2, 4, 8):
        assert act(paused, 1, "speed", multiplier=m).speed == m
    refused("NO_CHANGE", engine.apply_action, paused, 1, {"type": "speed", "multiplier": 1})
    resumed = act(paused, 1, "resume")
    assert resumed.phase == "running"
    assert engine.tick(resumed, 1).generation == 1


def test_tick_outside_running_is_a_no_op():
    state = start()
    assert engine.tick(state, 10) is state
    state = running(shift(BLOCK, 1, 1), shift(BLOCK, 12, 1))
    assert engine.tick(state, 0) is state


# ----------------------------------------------------------------------------- simulation


def test_newborn_takes_majority_colour_on_a_game_board():
    anchors_1, anchors_2 = shift(BLOCK, 1, 12), shift(BLOCK, 13, 12)
    # two red parents and one green: (7, 5) is born red
    state = running([[6, 4], [6, 6]] + anchors_1, [[8, 5]] + anchors_2)
    state = engine.tick(state, 1)
    assert state.grid[5, 7] == 1
    # one red parent and two green: (8, 5) is born green
    state = running([[7, 5]] + anchors_1, [[9, 4], [9, 6]] + anchors_2)
    state = engine.tick(state, 1)
    assert state.grid[5, 8] == 2


def test_glider_hard_edges_versus_torus():
    glider = [[1, 0], [2, 1], [0, 2], [1, 2], [2, 2]]
    block = shift(BLOCK, 12, 5)  # well off the glider's diagonal
    torus = running(glider, block, torus=True)
    start_board = torus.board
    torus = engine.tick(torus, 64)  # 16 cells diagonally, 4 generations each: home again
    assert (torus.phase, torus.generation) == ("running", 64)
    assert torus.board == start_board
    hard = engine.tick(running(glider, block), 64)
    # hard edges: the glider ends as a block in the bottom-right corner, and the board,
    # now still, opens redraw
    assert hard.phase == "redraw"
    assert {(x, y) for x, y, c in live(hard) if c == 1} == {(14, 14), (15, 14), (14, 15), (15, 15)}


def test_block_opens_redraw_after_one_generation():
    state = running(shift(BLOCK, 1, 1), shift(BLOCK, 12, 1))
    state = engine.tick(state, 10)
    assert (state.phase, state.generation, state.stable) == ("redraw", 1, True)
    view = engine.get_visible_state(state, 1)
    assert view["stable"] is True and view["phase"] == "redraw"


def test_blinker_opens_redraw_after_two_generations():
    blinker = [[2, 4], [3, 4], [4, 4]]
    state = running(blinker, shift(BLOCK, 12, 1))
    state = engine.tick(state, 1)
    assert (state.phase, state.generation) == ("running", 1)
    state = engine.tick(state, 10)
    assert (state.phase, state.generation, state.stable) == ("redraw", 2, True)


def test_redraw_lets_everyone_draw_and_resumes_when_all_ready():
    state = running(shift(BLOCK, 1, 1), shift(BLOCK, 12, 1))
    state = engine.tick(state, 5)
    state = act(state, 2, "place", cells=[[12, 12]])
    state = act(state, 1, "place", cells=[[3, 12]])
    state = engine.end_player_turn(state, 1)
    refused("NO_CHANGE", engine.end_player_turn, state, 1)  # ready already: nothing changes
    assert state.phase == "redraw" and state.player(1).ready
    state = engine.end_player_turn(state, 2)
    assert (state.phase, state.stable) == ("running", False)
    assert not any(p.ready for p in state.players)


def test_encode_decode_round_trip_in_every_phase():
    states = [start()]
    states.append(act(states[-1], 1, "place", cells=shift(BLOCK, 1, 1)))
    s = engine.end_player_turn(states[-1], 1)
    s = act(s, 2, "place", cells=shift(BLOCK, 12, 1))
    states.append(s)
    states.append(engine.end_player_turn(s, 2))
    states.append(engine.tick(states[-1], 3))
    for s in states:
        data = engine.encode_state(s)
        back = engine.decode_state(data)
        assert back == s
        assert engine.encode_state(back) == data


def test_every_library_pattern_can_be_stamped():
    patterns = pytest.importorskip("engine.life.patterns")
    if not hasattr(patterns, "names"):
        pytest.skip("pattern library not written yet")
    state = start(width=200, height=100, budget=10_000)
    for name in patterns.names():
        live_cells = int(np.count_nonzero(patterns.get(name).board))
        for rotation in (0, 3):
            new = act(state, 1, "stamp", pattern=name, x=10, y=10, rotation=rotation)
            assert new.player(1).budget_left == 10_000 - live_cells, name


@pytest.mark.parametrize(
    ("action", "words"),
    [
        # a CellWar move sent to a Life game: told what a Life action needs, not "type None"
        ({"unit_id": 1, "dx": 0, "dy": 1}, "a Life game's action needs a 'type', one of ['erase', "),
        ({"unit_id": 1, "dx": 0, "dy": 1}, "(a {unit_id, dx, dy} move is for CellWar games)"),
        ({"type": "jump"}, "unknown action type 'jump'; known: ['erase', "),
    ],
)
def test_an_action_without_a_known_type_is_told_what_a_life_action_is(action, words):
    with pytest.raises(GameError) as err:
        engine.apply_action(start(), 1, action)
    assert err.value.code == "MALFORMED"
    assert words in err.value.message
    assert "None" not in err.value.message
    assert "restart" not in err.value.message  # campaign levels only
