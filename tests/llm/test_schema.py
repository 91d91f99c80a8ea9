"""The LLM player's prompt and schema, and the bench's interval (pure: no server)."""

from __future__ import annotations

import pytest

from bench.llm import wilson
from client.bots.llm import cells_schema, fog_text, legal_moves, move_label, move_schema
from client.rl.observation import VECTORS, action_mask, encode_view

FULL = "$".join(["6o"] * 6) + "!"


def _obs(units, acting, vectors):
    view = {"you": 1, "width": 6, "height": 6, "units": units, "visible": FULL}
    return {"observation": encode_view(view, acting), "action_mask": action_mask(vectors)}


def test_an_infantry_next_to_an_enemy_has_attack_move_and_fortify_in_the_enum():
    units = [
        {"owner": 1, "type": "infantry", "x": 2, "y": 2},
        {"owner": 1, "type": "infantry", "x": 2, "y": 1},
        {"owner": 2, "type": "infantry", "x": 3, "y": 2},
    ]
    vectors = [v for v in VECTORS if v != (0, -1)]  # (0,-1) is the own infantry
    legal = legal_moves(_obs(units, (2, 2), vectors))
    assert legal == {
        "move NW": 0, "move NE": 2, "move W": 3, "fortify": 4, "attack E": 5,
        "move SW": 6, "move S": 7, "move SE": 8,
    }
    assert move_schema(legal) == {
        "type": "object",
        "properties": {"move": {"type": "string", "enum": list(legal)}},
        "required": ["move"],
        "additionalProperties": False,
    }


def test_a_factory_produces_on_empty_neighbours_only():
    units = [
        {"owner": 1, "type": "factory", "x": 2, "y": 2},
        {"owner": 2, "type": "infantry", "x": 3, "y": 2},
    ]
    vectors = [v for v in VECTORS if v not in ((0, 0), (1, 0))]
    legal = legal_moves(_obs(units, (2, 2), vectors))
    assert list(legal) == [f"produce {d}" for d in ("NW", "N", "NE", "W", "SW", "S", "SE")]
    assert move_label(0, 0, "stand") == "stand" and move_label(-1, 1, "move") == "move SW"


def test_the_fog_text_shows_only_what_the_player_sees():
    units = [{"owner": 1, "type": "infantry", "x": 0, "y": 0}, {"owner": 2, "type": "fortification", "x": 1, "y": 1, "standing": 1}]
    view = {"you": 1, "width": 6, "height": 6, "units": units, "visible": "2o$2o$!"}
    obs = {"observation": encode_view(view, (0, 0)), "action_mask": action_mask([(0, 0), (1, 0), (0, 1), (1, 1)])}
    text = fog_text(obs)
    assert text.splitlines()[:4] == ["Map 6x6:", "I.????", ".f????", "??????"]
    assert text.splitlines()[-1] == (
        "Your infantry at x=0 y=0 acts. Legal: fortify; move E to x=1 y=0; move S to x=0 y=1; attack SE to x=1 y=1"
    )


def test_the_life_schema_bounds_cells_to_the_zone_and_the_budget():
    schema = cells_schema((8, 0, 12, 3), 5)
    items = schema["properties"]["cells"]
    assert items["minItems"] == 1 and items["maxItems"] == 5
    assert items["items"]["properties"]["x"]["enum"] == [8, 9, 10, 11]
    assert items["items"]["properties"]["y"]["enum"] == [0, 1, 2]


@pytest.mark.parametrize(
    ("wins", "games", "low", "high"),
    [(0, 100, 0.0, 0.0370), (50, 100, 0.4038, 0.5962), (100, 100, 0.9630, 1.0), (7, 10, 0.3968, 0.8922)],
)
def test_wilson_interval(wins, games, low, high):
    lo, hi = wilson(wins, games)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)
