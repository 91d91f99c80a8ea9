"""The batched Life placement env (client/rl/life_vector.py) against the single env:
game i after reset(seed=s) is the game life_placement_env plays after reset(seed=s + i)
(same observations, masks and end rewards, through autoresets), its games run on the
packed kernel."""

from __future__ import annotations

import numpy as np
import pytest

from client.rl import life_placement_env, life_placement_vector_env
from client.rl.life_vector import LifeActionError


@pytest.mark.parametrize(("seat", "opponent", "budget"), [(1, "random", 12), (2, "blocks", 12), (1, "random", 30)])
def test_vector_life_plays_the_games_of_the_single_env(seat, opponent, budget):
    n, seed = 6, 11
    venv = life_placement_vector_env(n, opponent, seat=seat, budget=budget, max_generations=120)
    envs = [life_placement_env(opponent, seat=seat, budget=budget, max_generations=120) for _ in range(n)]
    obs, _ = venv.reset(seed=seed)
    singles = [env.reset(seed=seed + i)[0] for i, env in enumerate(envs)]
    rng = np.random.default_rng(5)
    finished = 0
    for _ in range(budget * 3):
        for i in range(n):
            assert np.array_equal(obs["observation"][i], singles[i]["observation"])
            assert np.array_equal(obs["action_mask"][i], singles[i]["action_mask"])
        actions = (rng.random(obs["action_mask"].shape) * obs["action_mask"]).argmax(axis=1)
        obs, rewards, terminations, _, infos = venv.step(actions)
        for i, env in enumerate(envs):
            single, reward, done, _, info = env.step(int(actions[i]))
            assert bool(terminations[i]) == done
            assert rewards[i] == pytest.approx(reward, abs=1e-6)
            if done:
                assert [int(v) for v in infos["final_cells"][i]] == [info["final_cells"]["1"], info["final_cells"]["2"]]
                finished += 1
                single, _ = env.reset()
            singles[i] = single
    assert finished == 3 * n


def test_vector_life_refuses_a_placed_cell():
    venv = life_placement_vector_env(3, seed=2)
    obs, _ = venv.reset()
    venv.step(np.array([0, 1, 2]))
    with pytest.raises(LifeActionError) as err:
        venv.step(np.array([5, 1, 7]))
    assert err.value.envs.tolist() == [1]
    obs2, *_ = venv.step(np.array([5, 6, 7]))
    assert obs2["action_mask"][1, 1] == 0 and obs2["action_mask"][1, 6] == 0
