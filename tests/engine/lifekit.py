"""Helpers of the Life engine tests: started games, actions, shifted figures."""

from __future__ import annotations

import engine


def shift(cells, dx, dy):
    return [[x + dx, y + dy] for x, y in cells]


def start(**config):
    """A game with every seat joined (phase placement, player 1 drawing)."""
    state = engine.new_game(engine.config_from_dict("life", {"width": 16, "height": 16, **config}))
    for i in range(state.config.players):
        state = engine.add_player(state, f"p{i + 1}")
    return state


def act(state, pid, type_, **fields):
    return engine.apply_action(state, pid, {"type": type_, **fields})
