"""The packed tick path changes nothing (docs/architecture/ticking.md "Ticking"): running
Life games kept bit-packed and advanced many at once (engine/life/packed_runs.py) reach,
generation for generation, the state the plain path reaches (``engine.life.game.tick``): the
same board, players, history and hash, and they stop (stable board, extinction,
``max_generations``) exactly where it stops. Seeded random games of many shapes: hard edges
and tori, widths below, at and across word boundaries, 2 and 4 players."""

from __future__ import annotations

import random

import pytest

import engine
from engine.life import game as life
from engine.life.packed_runs import PackedLifeKind, PackedRun, advance
from engine.life.state import LifeState
from tests.engine.runkit import (
    assert_records_go_on,
    assert_same_as_plain,
    games_of_one_shape,
    running_game,
)


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
        assert_records_go_on(base, PackedRun(base), advance)


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
