"""``engine.get_visible_state(state, player_id, reveal=True)``: once a game is finished
everything is public (docs/architecture/contracts.md "Who observes an event"): the
replay of a finished Life game shows each placement as it was made."""

from __future__ import annotations

import json
from pathlib import Path

import engine
from engine.life.rle import rle_body_to_board

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"


def board(view):
    return rle_body_to_board(view["board"], view["width"], view["height"])


def fold_to(events, seq):
    state = None
    for e in events[:seq]:
        state = engine.apply_event(state, e["type"], e["actor"], e["payload"], engine_version=e["engine_version"])
    return state


def test_replay_of_a_finished_life_game_shows_the_placements_as_made():
    for version in ("1", engine.ENGINE_VERSION):
        events = [json.loads(line) for line in (LOGS / f"v{version}" / "life-2p-redraw.jsonl").read_text().splitlines()]
        assert events[-1]["type"] == "GameFinished"
        first = next(e for e in events if e["type"] == "ActionApplied" and e["actor"] == 1)
        state = fold_to(events, first["seq"])
        assert state.phase == "placement"
        cells = {tuple(c) for c in first["payload"]["action"]["cells"]}
        for viewer in (None, 1, 2):
            shown = board(engine.get_visible_state(state, viewer, reveal=True))
            assert {(int(x), int(y)) for y, x in zip(*shown.nonzero(), strict=True)} == cells
        blind = engine.get_visible_state(state, 2)
        assert blind["board"] == "!" and blind["players"][0]["cells"] is None
        revealed = engine.get_visible_state(state, 2, reveal=True)
        assert revealed["players"][0]["cells"] == len(cells)
        assert revealed["players"][0]["budget_left"] == state.player(1).budget_left
        # reveal changes nothing else
        assert {k: v for k, v in revealed.items() if k not in ("board", "players")} == {
            k: v for k, v in blind.items() if k not in ("board", "players")
        }


def test_reveal_during_placement_shows_every_players_drawing():
    state = engine.new_game(engine.config_from_dict("life", {"width": 16, "height": 16, "players": 4}))
    for name in "abcd":
        state = engine.add_player(state, name)
    state = engine.apply_action(state, 1, {"type": "place", "cells": [[1, 1]]})
    state = engine.end_player_turn(state, 1)
    state = engine.apply_action(state, 2, {"type": "place", "cells": [[9, 1]]})
    full = board(engine.get_visible_state(state, 3, reveal=True))
    assert full[1, 1] == 1 and full[1, 9] == 2
    assert not board(engine.get_visible_state(state, 3)).any()


def test_cellwar_reveal_shows_every_unit_with_its_id():
    units = [{"owner": 1, "type": "infantry", "x": 0, "y": 0}, {"owner": 2, "type": "factory", "x": 7, "y": 7}]
    state = engine.new_game(engine.config_from_dict("cellwar", {"width": 8, "height": 8, "units": units}))
    state = engine.add_player(engine.add_player(state, "a"), "b")
    hidden = engine.get_visible_state(state, 1)
    assert [(u["owner"], u["id"]) for u in hidden["units"]] == [(1, 1)]
    shown = engine.get_visible_state(state, 1, reveal=True)
    assert [(u["owner"], u["id"], u["type"]) for u in shown["units"]] == [(1, 1, "infantry"), (2, 2, "factory")]
    assert shown["visible"] == "8o$" * 7 + "8o!"
    assert [p["units"] for p in shown["players"]] == [1, 1]
    assert shown["you"] == 1


def test_campaign_views_are_whole_anyway():
    state = engine.add_player(engine.new_game(engine.config_from_dict("campaign", {"level": 1})), "solo")
    assert engine.get_visible_state(state, 1, reveal=True) == engine.get_visible_state(state, 1)
