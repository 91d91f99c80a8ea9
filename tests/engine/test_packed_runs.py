"""The packed tick path changes nothing (docs/architecture/ticking.md "Ticking"): running
Life games kept bit-packed and advanced many at once (engine/life/packed_runs.py) reach,
generation for generation, the state the plain path reaches (``engine.life.game.tick``): the
same board, players, history and hash, and they stop (stable board, extinction,
``max_generations``) exactly where it stops. Seeded random games of many shapes: hard edges
and tori, widths below, at and across word boundaries, 2 and 4 players."""

from __future__ import annotations

import random

import numpy as np
import pytest

import engine
from engine.api import encode_state
from engine.life import game as life
from engine.life.packed_runs import PackedLifeKind, PackedRun, advance
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


def games_of_one_shape(seed: int) -> tuple[list[LifeState], int]:
    """Several running games of one random shape and rule set, and a checkpoint."""
    rnd = random.Random(seed)
    width, height = rnd.choice(SHAPES[:-1])
    players = rnd.choice([2, 2, 4])
    torus = rnd.random() < 0.5
    max_generations = rnd.choice([12, 60, 5000])
    games = []
    for k in range(rnd.randint(1, 5)):
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


def assert_same_as_plain(base: LifeState, run: PackedRun) -> None:
    """The run's state is ``tick(base, done)``, byte for byte (hash included)."""
    plain = life.tick(base, run.done)
    got = run.state()
    assert encode_state(got) == encode_state(plain)
    assert engine.state_hash(got) == engine.state_hash(plain)
    assert run.generation == plain.generation
    assert run.running == (plain.phase == "running")


@pytest.mark.parametrize("seed", range(40))
def test_packed_runs_reach_the_plain_states_and_stop_where_it_stops(seed):
    games, checkpoint = games_of_one_shape(seed)
    rnd = random.Random(seed)
    runs = [PackedRun(g) for g in games]
    for run in runs:
        run.plan(checkpoint)
    # ticks of 1..4 generations, all games of the shape in one call, as the engine does
    while any(run.running and run.done < checkpoint for run in runs):
        n = rnd.randint(1, 4)
        advance([(run, min(n, checkpoint - run.done)) for run in runs])
        for base, run in zip(games, runs, strict=True):
            if run.done in (checkpoint,) or not run.running:
                assert_same_as_plain(base, run)
    for base, run in zip(games, runs, strict=True):
        # a planned checkpoint is built from the planes; anything else from the base
        assert_same_as_plain(base, run)
        expected = life.tick(base, checkpoint)
        if run.running:
            assert run.done == checkpoint and expected.phase == "running"
        else:
            assert expected.generation == base.generation + run.done  # stopped where plain stops
            assert expected.phase != "running"


@pytest.mark.parametrize("seed", range(6))
def test_a_recorded_run_goes_on_from_its_record(seed):
    """Checkpoint after checkpoint (the entry re-based on each record), the run stays the
    plain path's."""
    games, _ = games_of_one_shape(100 + seed)
    for base in games:
        run = PackedRun(base)
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


def test_a_game_size_board_keeps_its_rate_in_a_batch():
    """64 running 300x300 games advanced together equal their plain ticks."""
    games = [running_game(900 + k, 300, 300, fill=0.3) for k in range(3)]
    runs = [PackedRun(g) for g in games for _ in range(22)]  # 66 runs: two chunks
    for run in runs:
        run.plan(4)
    for _ in range(4):
        advance([(run, 1) for run in runs])
    for k, base in enumerate(games):
        plain = life.tick(base, 4)
        for run in runs[k * 22 : (k + 1) * 22]:
            assert engine.state_hash(run.state()) == engine.state_hash(plain)


def test_only_running_life_states_are_packed():
    kind = PackedLifeKind()
    game = running_game(7, 40, 40)
    assert kind.accepts(game)
    assert not kind.accepts(life.tick(game, 0).__class__(config=game.config))  # waiting
    campaign = engine.new_game(engine.config_from_dict("campaign", {"level": 1}))
    assert not kind.accepts(campaign)
    with pytest.raises(ValueError):
        PackedRun(LifeState(config=game.config, board=game.board))
