"""The batched CellWar environment (client/rl/vector.py) against the AEC environment:
game i after reset(seed=s) is the game cellwar_env plays after reset(seed=s + i) (same
observations, masks, acting agent and end-of-game rewards at every step, through
autoresets); PettingZoo's seed_test of the AEC env."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import seed_test

from client.rl import cellwar_env, cellwar_vector_env
from client.rl.cellwar import IllegalActionError


@pytest.mark.parametrize(
    ("start", "width", "height", "players", "max_rounds"),
    [("default", 8, 8, 2, 100), ("random", 8, 8, 2, 100), ("random", 6, 5, 2, 12), ("default", 8, 8, 3, 40)],
)
def test_vector_env_plays_the_games_of_the_aec_env(start, width, height, players, max_rounds):
    n, seed = 12, 40
    config = {"width": width, "height": height, "players": players, "start": start, "max_rounds": max_rounds}
    venv = cellwar_vector_env(n, **config)
    envs = [cellwar_env(**config) for _ in range(n)]
    obs, infos = venv.reset(seed=seed)
    for i, env in enumerate(envs):
        env.reset(seed=seed + i)
    rng = np.random.default_rng(7)
    ended = truncated_games = 0
    for _step in range(400):
        for i, env in enumerate(envs):
            agent = env.agent_selection
            assert infos["agent"][i] == agent
            single = env.observe(agent)
            assert np.array_equal(obs["observation"][i], single["observation"]), (i, _step)
            assert np.array_equal(obs["action_mask"][i], single["action_mask"]), (i, _step)
        actions = (rng.random((n, 9)) * obs["action_mask"]).argmax(axis=1)
        obs, rewards, terminations, truncations, infos = venv.step(actions)
        for i, env in enumerate(envs):
            agent = env.agent_selection
            env.step(int(actions[i]))
            per_seat = [env.rewards.get(f"player_{s}", 0.0) for s in range(1, players + 1)]
            assert infos["rewards"][i].tolist() == per_seat
            while not (terminations[i] or truncations[i]) and (
                env.terminations[env.agent_selection] or env.truncations[env.agent_selection]
            ):
                env.step(None)  # the AEC dead step of a seat knocked out of a 3+ player game
            if terminations[i] or truncations[i]:
                assert all(env.terminations.values()) == bool(terminations[i])
                assert all(env.truncations.values()) == bool(truncations[i])
                assert rewards[i] == env.rewards[agent]
                if terminations[i]:
                    ended += 1
                    assert infos["winner"][i] == next(s for s in range(1, players + 1) if per_seat[s - 1] > 0)
                else:
                    truncated_games += 1
                env.reset()  # autoreset: the env's random-start generator goes on
            else:
                assert rewards[i] == env.rewards[agent] == 0.0
                live = [a for a in env.agents if not env.terminations[a]]
                assert len(live) > 1 and env.agent_selection in live
    assert ended + truncated_games > 0
    if players == 2:
        assert ended > 0
    if max_rounds < 20:
        assert truncated_games > 0


def test_vector_env_refuses_a_masked_action_and_changes_nothing():
    venv = cellwar_vector_env(4, width=8, height=8, seed=1)
    obs, _ = venv.reset()
    before = [venv.state(i) for i in range(4)]
    actions = obs["action_mask"].argmax(axis=1)
    actions[2] = int(np.flatnonzero(obs["action_mask"][2] == 0)[0])
    with pytest.raises(IllegalActionError) as err:
        venv.step(actions)
    assert err.value.envs.tolist() == [2]
    assert [venv.state(i) for i in range(4)] == before


def test_vector_env_shapes_and_same_seed_same_games():
    a, b = cellwar_vector_env(8, width=6, height=6, start="random"), cellwar_vector_env(8, width=6, height=6, start="random")
    oa, ia = a.reset(seed=3)
    ob, _ = b.reset(seed=3)
    assert oa["observation"].shape == (8, 10, 6, 6) and oa["observation"].dtype == np.uint8
    assert oa["action_mask"].shape == (8, 9) and oa["action_mask"].dtype == np.int8
    assert list(ia["agent"]) == ["player_1"] * 8
    assert a.observation_space.contains(oa)
    for _ in range(50):
        act = oa["action_mask"].argmax(axis=1)
        oa, ra, *_ = a.step(act)
        ob, rb, *_ = b.step(act)
        assert np.array_equal(oa["observation"], ob["observation"]) and np.array_equal(ra, rb)


def test_pettingzoo_seed_test_passes_for_the_aec_env():
    seed_test(lambda render_mode=None: cellwar_env(width=8, height=8, start="random"), num_cycles=50)
