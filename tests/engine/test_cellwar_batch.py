"""The batched CellWar engine (engine/cellwar/batch.py) against the scalar engine: random
games played side by side, the same state (engine.api.state_hash), the same acting unit
and the same legal vectors after every step."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.cellwar.batch import DX, DY, CellWarBatch, IllegalBatchAction, config_of
from engine.cellwar.config import UnitSpec


def _scalar_advance(state):
    """End turns nobody can act in, as the environments do (client/rl/cellwar_backends)."""
    while engine.summary(state).turn:
        turn = engine.summary(state).turn
        if engine.get_valid_actions(state, turn):
            break
        state = engine.end_player_turn(state, turn)
    return state


def _scalar_start(config):
    state = engine.new_game(config)
    for seat in range(1, config.players + 1):
        state = engine.add_player(state, f"player_{seat}")
    return _scalar_advance(state)


def _acting(state):
    """(unit, x, y, mask) of the first unit of get_valid_actions, or None."""
    turn = engine.summary(state).turn
    if not turn:
        return None
    legal = engine.get_valid_actions(state, turn)
    uid = legal[0]["unit_id"]
    mask = np.zeros(9, np.int8)
    for a in legal:
        if a["unit_id"] == uid:
            mask[(a["dy"] + 1) * 3 + a["dx"] + 1] = 1
    unit = state.unit(uid)
    return uid, unit.x, unit.y, mask


def _random_units(rng, width, height, players):
    cells = rng.permutation(width * height)[: players * int(rng.integers(1, 4))]
    kinds = ("infantry", "infantry", "fortification", "factory")
    units = []
    for k, c in enumerate(cells.tolist()):
        kind = kinds[int(rng.integers(0, 4))]
        standing = int(rng.integers(1, 3)) if kind == "fortification" else 0
        units.append(UnitSpec(k % players + 1, kind, c % width, c // width, standing))
    return units


def _play_side_by_side(games, width, height, players, seed, max_steps):
    rng = np.random.default_rng(seed)
    batch = CellWarBatch(games, width, height, players)
    configs = [
        config_of(width, height, players, None if i % 3 == 0 else _random_units(rng, width, height, players))
        for i in range(games)
    ]
    batch.start(np.arange(games), configs)
    states = [_scalar_start(c) for c in configs]
    steps = 0
    for _ in range(max_steps):
        for i, state in enumerate(states):
            assert engine.state_hash(batch.state(i)) == engine.state_hash(state), f"game {i}"
            acting = _acting(state)
            assert bool(batch.has_acting[i]) == (acting is not None)
            if acting is not None:
                _, x, y, mask = acting
                assert (int(batch.ax[i]), int(batch.ay[i])) == (x, y)
                assert batch.mask[i].tolist() == mask.tolist()
        running = batch.turn != 0
        if not running.any():
            break
        # a random legal action per game (uniform over the mask)
        r = rng.random((games, 9)) * batch.mask
        actions = np.where(running, r.argmax(axis=1), 0)
        batch.step(actions)
        for i in np.flatnonzero(running).tolist():
            uid, _, _, _ = _acting(states[i])
            a = int(actions[i])
            move = {"unit_id": uid, "dx": int(DX[a]), "dy": int(DY[a])}
            states[i] = _scalar_advance(engine.apply_action(states[i], engine.summary(states[i]).turn, move))
            steps += 1
    return batch, steps


@pytest.mark.parametrize(
    ("games", "width", "height", "players", "seed"),
    [(400, 4, 4, 2, 1), (300, 6, 5, 2, 2), (200, 8, 8, 2, 3), (100, 6, 6, 3, 4), (60, 7, 6, 4, 5)],
)
def test_batch_equals_scalar_engine(games, width, height, players, seed):
    """1,060 random games in all (default and random starts with every unit type), the
    same state hash after every step."""
    batch, steps = _play_side_by_side(games, width, height, players, seed, max_steps=120)
    assert steps > games * 10
    finished = int((batch.turn == 0).sum())
    assert finished > 0


def test_illegal_action_changes_nothing():
    batch = CellWarBatch(3, 8, 8)
    batch.start([0, 1, 2], [config_of(8, 8, 2)] * 3)
    before = [engine.state_hash(batch.state(i)) for i in range(3)]
    bad = np.array([4, 0, 4])  # (-1, -1) from the top-left corner is off the board
    with pytest.raises(IllegalBatchAction) as err:
        batch.step(bad)
    assert err.value.envs.tolist() == [1]
    assert err.value.code == "INVALID_ACTION"
    assert [engine.state_hash(batch.state(i)) for i in range(3)] == before
