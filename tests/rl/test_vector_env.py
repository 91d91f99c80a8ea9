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


def test_batched_features_equal_the_single_ones():
    """client.rl.features.batch_action_features (the training's batched linear policy)
    gives exactly action_features' rows, memories included."""
    from client.rl.features import BatchMemory, Memory, action_features, batch_action_features

    for start, size in (("default", 8), ("random", 6)):
        n = 16
        venv = cellwar_vector_env(n, width=size, height=size, start=start)
        obs, infos = venv.reset(seed=2)
        memories: dict[int, Memory] = {}
        batch = BatchMemory(2 * n, size, size)
        rng = np.random.default_rng(1)
        for _ in range(150):
            rows = np.arange(n) * 2 + infos["seat"] - 1
            batch.update(rows, obs["observation"])
            feats = batch_action_features(obs["observation"], obs["action_mask"], batch, rows)
            for i in range(n):
                memory = memories.setdefault(int(rows[i]), Memory())
                memory.update(obs["observation"][i])
                single = {"observation": obs["observation"][i], "action_mask": obs["action_mask"][i]}
                assert np.array_equal(action_features(single, memory), feats[i])
            obs, _, terminations, truncations, infos = venv.step((rng.random((n, 9)) * obs["action_mask"]).argmax(axis=1))
            for i in np.flatnonzero(terminations | truncations).tolist():
                memories.pop(2 * i, None), memories.pop(2 * i + 1, None)
                batch.started[2 * i : 2 * i + 2] = False


def test_without_autoreset_a_finished_game_stays_finished():
    venv = cellwar_vector_env(6, width=5, height=5, start="random", max_rounds=8, autoreset=False)
    obs, _ = venv.reset(seed=9)
    rng = np.random.default_rng(0)
    stopped = np.zeros(6, bool)
    for _ in range(300):
        obs, rewards, terminations, truncations, infos = venv.step((rng.random((6, 9)) * obs["action_mask"]).argmax(axis=1))
        assert not (stopped & (terminations | truncations)).any()  # each game ends once
        stopped |= terminations | truncations
        assert (obs["action_mask"][stopped] == 0).all() and (infos["seat"][stopped] == 0).all()
        assert (rewards[stopped & ~(terminations | truncations)] == 0).all()
    assert stopped.all()
