"""CellWar fog of war (the seed's "Туман войны"; docs/api/index.md "Views")."""

from __future__ import annotations

import pytest

import engine
from engine.cellwar.fog import mask_to_rle, rle_to_mask
from tests.engine import cellwarkit
from tests.engine.cellwarkit import act, uid

INF, FORT, FAC = "infantry", "fortification", "factory"


def start(units, width=12, height=12, players=2):
    """:func:`tests.engine.cellwarkit.start` on a 12x12 board by default."""
    return cellwarkit.start(units, width, height, players)


def visible_cells(view):
    w, h = view["width"], view["height"]
    mask = rle_to_mask(view["visible"], w, h)
    return {(x, y) for y in range(h) for x in range(w) if mask >> (y * w + x) & 1}


def square(x, y, r, w=12, h=12):
    return {
        (a, b)
        for a in range(x - r, x + r + 1)
        for b in range(y - r, y + r + 1)
        if 0 <= a < w and 0 <= b < h
    }


@pytest.mark.parametrize(("utype", "radius"), [(INF, 1), (FORT, 2), (FAC, 1)])
def test_vision_radius(utype, radius):
    unit = (1, utype, 5, 5) + ((1,) if utype == FORT else ())
    state = start([unit, (2, INF, 11, 11)])
    assert visible_cells(engine.get_visible_state(state, 1)) == square(5, 5, radius)
    assert visible_cells(engine.get_visible_state(state, 2)) == square(11, 11, 1)


def test_vision_is_clipped_at_the_edges():
    state = start([(1, FORT, 0, 0, 1), (2, INF, 11, 11)])
    assert visible_cells(engine.get_visible_state(state, 1)) == square(0, 0, 2)
    assert len(square(0, 0, 2)) == 9


def test_union_during_own_turn_then_only_current_positions():
    state = start([(1, INF, 2, 2), (2, INF, 9, 9)])
    state = act(state, 1, 1, 1, 1)  # (3, 3)
    during = visible_cells(engine.get_visible_state(state, 1))
    assert during == square(2, 2, 1) | square(3, 3, 1)
    state = engine.end_player_turn(state, 1)
    assert visible_cells(engine.get_visible_state(state, 1)) == square(3, 3, 1)  # outside own turn
    state = engine.end_player_turn(act(state, 2, 2, 0, 0), 2)
    assert visible_cells(engine.get_visible_state(state, 1)) == square(3, 3, 1)  # next own turn


def test_area_of_a_unit_lost_during_own_turn_stays_visible_until_the_end_of_turn():
    state = start([(1, INF, 2, 2), (1, INF, 8, 2), (2, FORT, 3, 2, 1), (2, INF, 11, 11)])
    state = act(state, 1, 1, 1, 0)  # 1st hit: the attacker dies
    cells = visible_cells(engine.get_visible_state(state, 1))
    assert square(2, 2, 1) <= cells
    state = engine.end_player_turn(act(state, 1, uid(state, 2), 0, 0), 1)
    assert visible_cells(engine.get_visible_state(state, 1)) == square(8, 2, 2)


def test_view_shows_only_visible_units_and_hides_enemy_ids():
    state = start([(1, INF, 2, 2), (2, INF, 3, 3), (2, FORT, 9, 9, 2)])
    view = engine.get_visible_state(state, 1)
    assert view["kind"] == "cellwar" and view["you"] == 1 and view["turn"] == 1
    assert [(u["owner"], u["x"], u["y"]) for u in view["units"]] == [(1, 2, 2), (2, 3, 3)]
    own, enemy = view["units"]
    assert own["id"] == 1 and own["acted"] is False
    assert enemy["id"] is None and enemy["acted"] is None and enemy["type"] == INF
    players = {p["id"]: p for p in view["players"]}
    assert players[1]["units"] == 1 and players[2]["units"] is None and players[2]["cells"] is None
    assert players[2]["color"] == "green" and players[2]["out"] is False
    two = engine.get_visible_state(state, 2)
    assert {(u["x"], u["y"]) for u in two["units"]} == {(3, 3), (9, 9), (2, 2)}


def test_enemy_moving_out_of_sight_disappears():
    state = start([(1, INF, 2, 2), (2, INF, 4, 2), (2, INF, 11, 11)])
    state = engine.end_player_turn(act(state, 1, 1, 0, 0), 1)  # fortification, radius 2
    assert len(engine.get_visible_state(state, 1)["units"]) == 2
    state = act(state, 2, 2, 1, 0)
    view = engine.get_visible_state(state, 1)
    assert [(u["owner"], u["x"], u["y"]) for u in view["units"]] == [(1, 2, 2)]
    # player 2 still sees the old area during its own turn
    assert (3, 2) in visible_cells(engine.get_visible_state(state, 2))


def test_spectator_and_finished_views_see_everything():
    state = start([(1, INF, 2, 2), (2, INF, 3, 2)])
    spectator = engine.get_visible_state(state, None)
    assert len(visible_cells(spectator)) == 144 and len(spectator["units"]) == 2
    assert all(u["id"] is not None for u in spectator["units"])
    state = act(state, 1, 1, 1, 0)
    view = engine.get_visible_state(state, 2)
    assert view["phase"] == "finished" and len(visible_cells(view)) == 144
    assert view["players"][0]["units"] == 1


def test_out_player_sees_nothing():
    state = start([(1, INF, 2, 2), (2, INF, 3, 2), (3, INF, 9, 9)], players=3)
    state = act(state, 1, 1, 1, 0)
    view = engine.get_visible_state(state, 2)
    assert view["units"] == [] and visible_cells(view) == set()
    assert view["players"][1]["out"] is True


def test_waiting_view_shows_own_start():
    config = engine.config_from_dict("cellwar", {"width": 8, "height": 8})
    state = engine.add_player(engine.new_game(config), "a")
    view = engine.get_visible_state(state, 1)
    assert view["phase"] == "waiting" and view["turn"] == 0 and view["round"] == 0
    assert [(u["x"], u["y"]) for u in view["units"]] == [(0, 0), (1, 0)]


def test_rle_format_and_round_trip():
    assert mask_to_rle(0b0011_0110, 4, 2) == "b2ob$2o2b!"
    for mask in (0, (1 << 20) - 1, 0b10101, 1 << 19):
        assert rle_to_mask(mask_to_rle(mask, 5, 4), 5, 4) == mask
    assert rle_to_mask("2o$$o!", 3, 3) == 0b001_000_011
