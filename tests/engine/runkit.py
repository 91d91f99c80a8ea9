"""Helpers of the packed-run tests (tests/engine/test_packed_runs.py, test_slot_runs.py):
seeded running Life games, and the plain path (``engine.life.game.tick``) as the
reference a run's states are compared with."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np

import engine
from engine.api import encode_state
from engine.life import game as life
from engine.life.state import LifeState

SHAPES = [(8, 8), (17, 23), (40, 30), (64, 40), (65, 17), (128, 8), (100, 64), (300, 300)]


def running_game(
    seed: int,
    width: int,
    height: int,
    *,
    players: int = 2,
    torus: bool = False,
    fill: float = 0.3,
    max_generations: int = 5000,
) -> LifeState | None:
    """A running Life game with random soups in every zone (None when a player placed
    nothing and the game did not start)."""
    rng = np.random.default_rng(seed)
    config = engine.config_from_dict(
        "life",
        {
            "width": width,
            "height": height,
            "players": players,
            "budget": width * height,
            "torus": torus,
            "max_generations": max_generations,
        },
    )
    state = engine.new_game(config)
    for i in range(players):
        state = engine.add_player(state, f"p{i + 1}")
    for pid in range(1, players + 1):
        x0, y0, x1, y1 = engine.get_visible_state(state, pid)["zone"]
        ys, xs = np.nonzero(rng.random((y1 - y0, x1 - x0)) < fill)
        cells = [[int(x) + x0, int(y) + y0] for x, y in zip(xs, ys, strict=True)]
        if cells:
            state = engine.apply_action(state, pid, {"type": "place", "cells": cells})
        state = engine.end_player_turn(state, pid)
    return state if state.phase == "running" else None


def games_of_one_shape(
    seed: int, *, tori: bool = True, most: int = 5
) -> tuple[list[LifeState], int]:
    """Up to ``most`` running games of one random shape and rule set (tori among them
    when ``tori``; else hard edges, no draw made for the edge), and a checkpoint."""
    rnd = random.Random(seed)
    width, height = rnd.choice(SHAPES[:-1])
    players = rnd.choice([2, 2, 4])
    torus = tori and rnd.random() < 0.5
    max_generations = rnd.choice([12, 60, 5000])
    games = []
    for k in range(rnd.randint(1, most)):
        fill = rnd.choice([0.04, 0.15, 0.3, 0.45])
        game = running_game(
            seed * 10 + k,
            width,
            height,
            players=players,
            torus=torus,
            fill=fill,
            max_generations=max_generations,
        )
        if game is not None:
            games.append(game)
    return games, rnd.choice([3, 16, 40])


def assert_same_as_plain(base: LifeState, run) -> None:
    """The run's state is ``tick(base, done)``, byte for byte (hash included)."""
    plain = life.tick(base, run.done)
    got = run.state()
    assert encode_state(got) == encode_state(plain)
    assert engine.state_hash(got) == engine.state_hash(plain)
    assert run.generation == plain.generation
    assert run.running == (plain.phase == "running")


def assert_records_go_on(base: LifeState, run, advance: Callable[[Sequence], list[int]]) -> None:
    """Checkpoint after checkpoint (5 generations each, the run re-based on each record),
    the run (of ``base``, advanced by ``advance``) stays the plain path's."""
    state = base
    for _ in range(4):
        run.plan(5)
        while run.running and run.done < 5:
            advance([(run, 2 if run.done < 4 else 1)])
        recorded = run.state()
        assert encode_state(recorded) == encode_state(life.tick(state, run.done))
        if not run.running:
            break
        run.rebase(recorded)
        state = recorded
