"""The Life placement environment (client/rl/life.py): Gymnasium's check_env, the same
seed giving the same episode, the reward as the share of cells the engine counts at the
end, and a taken cell refused without change."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import engine
from client.rl import life_placement_env
from client.rl.life import block_cells, zone_of


def _run(env, seed: int) -> tuple[list, float]:
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace, done, reward = [], False, 0.0
    while not done:
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, done, _, _ = env.step(action)
        trace.append((action, obs["observation"].tobytes(), reward))
    return trace, reward


@pytest.mark.parametrize("seat", [1, 2])
def test_gymnasium_check_env_passes(seat):
    check_env(life_placement_env("blocks", width=12, height=12, budget=6, seat=seat), skip_render_check=True)


def test_spaces_follow_the_zone():
    env = life_placement_env(width=16, height=10, budget=5, seat=2)
    assert env.zone == (8, 0, 16, 10) == zone_of(16, 10, 2)
    assert env.action_space.n == 80
    obs, info = env.reset(seed=0)
    assert obs["observation"].shape == (2, 10, 16)
    assert obs["observation"][1].sum() == 80 and obs["observation"][1][:, 8:].all()
    assert obs["observation"][0].sum() == 0  # blind placement: the opponent's cells are hidden
    assert obs["action_mask"].sum() == 80 and np.array_equal(info["action_mask"], obs["action_mask"])
    assert env.cell(0) == (8, 0) and env.cell(9) == (9, 1)


def test_same_seed_same_episode():
    env = life_placement_env("random", width=12, height=12, budget=6)
    first, again = _run(env, 3), _run(env, 3)
    assert first == again


def test_the_reward_is_the_agents_share_of_the_cells_at_the_end():
    """Place a block (a still life) against a blinker-free random opponent; the engine's
    own fold of the same placements gives the final counts."""
    env = life_placement_env("blocks", width=12, height=12, budget=4, max_generations=50)
    obs, _ = env.reset(seed=1)
    for x, y in [(2, 2), (3, 2), (2, 3), (3, 3)]:
        obs, reward, done, _, info = env.step(y * 6 + x)
    assert done
    # the opponent's cells, as the policy picked them with the env's generator
    replay = life_placement_env("blocks", width=12, height=12, budget=4, max_generations=50)
    replay.reset(seed=1)
    theirs = block_cells({"zone": [6, 0, 12, 12]}, 4, replay.np_random)
    state = engine.new_game(engine.config_from_dict("life", {"width": 12, "height": 12, "budget": 4, "max_generations": 50}))
    state = engine.add_player(engine.add_player(state, "a"), "b")
    state = engine.apply_action(state, 1, {"type": "place", "cells": [[2, 2], [3, 2], [2, 3], [3, 3]]})
    state = engine.end_player_turn(state, 1)
    state = engine.apply_action(state, 2, {"type": "place", "cells": [list(c) for c in theirs]})
    state = engine.end_player_turn(state, 2)
    state = engine.tick(state, 50)
    counts = {p["id"]: p["cells"] for p in engine.get_visible_state(state, None)["players"]}
    assert counts[1] == 4 and info["final_cells"] == {"1": counts[1], "2": counts[2]}
    assert reward == pytest.approx(counts[1] / (counts[1] + counts[2]))
    assert reward == pytest.approx(0.5)  # block against block: a still life each


def test_a_taken_cell_is_refused_and_changes_nothing():
    env = life_placement_env(width=12, height=12, budget=3)
    env.reset(seed=0)
    obs, reward, done, _, _ = env.step(7)
    again, reward2, done2, _, info = env.step(7)
    assert (reward2, done2) == (0.0, False) and info["error"]["code"] == "CELL_TAKEN"
    assert np.array_equal(again["observation"], obs["observation"])
    assert again["observation"][0].sum() == 1 and again["action_mask"][7] == 0


def test_bad_configs_are_refused():
    with pytest.raises(ValueError):
        life_placement_env("nobody")
    with pytest.raises(ValueError):
        life_placement_env(seat=3)
    with pytest.raises(ValueError):
        life_placement_env(width=8, height=8, budget=33)
    with pytest.raises(ValueError):
        life_placement_env(backend="remote")
