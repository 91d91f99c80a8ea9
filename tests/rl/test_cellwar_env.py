"""The CellWar AEC environment (client/rl/cellwar.py): PettingZoo's api_test, the same
seed giving the same episode, observations that never show a hidden enemy (checked
against the engine's omniscient state), units acting in the engine's order, and
state()/set_state() restoring a game that then continues exactly as the original."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from pettingzoo.test import api_test

import engine
from client.rl import cellwar_env
from client.rl.cellwar import IllegalActionError
from client.rl.observation import (
    ACTING,
    CHANNELS,
    ENEMY_FACTORY,
    ENEMY_FORTIFICATION,
    ENEMY_INFANTRY,
    OWN_FORTIFICATION,
    OWN_INFANTRY,
    PENDING,
    STANDING_2,
    VECTORS,
    VISIBLE,
)
from engine.cellwar.fog import visible_mask as engine_visible_mask

PLANE_OF = {"infantry": 0, "fortification": 1, "factory": 2}


def random_steps(env, rng: random.Random, limit: int = 10_000):
    """Play random legal actions; yields (agent, obs, reward, terminated, truncated) before
    each step."""
    for n, agent in enumerate(env.agent_iter()):
        if n >= limit:
            return
        obs, reward, terminated, truncated, _ = env.last()
        yield agent, obs, reward, terminated, truncated
        if terminated or truncated:
            env.step(None)
        else:
            env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))


@pytest.mark.parametrize("config", [{"width": 8, "height": 8}, {"width": 6, "height": 6, "players": 3}])
def test_pettingzoo_api_test_passes(config):
    api_test(cellwar_env(**config), num_cycles=300)


def test_spaces_and_first_observation_of_the_default_start():
    env = cellwar_env(width=8, height=8)
    env.reset(seed=0)
    assert env.agents == ["player_1", "player_2"] and env.agent_selection == "player_1"
    space = env.observation_space("player_1")
    assert space["observation"].shape == (CHANNELS, 8, 8) and space["observation"].dtype == np.uint8
    assert space["action_mask"].n == 9 and env.action_space("player_1").n == 9
    obs = env.observe("player_1")
    planes = obs["observation"]
    # default start: player 1 infantry at (0, 0) and (1, 0); player 2 at (7, 7), (6, 7)
    assert {(int(x), int(y)) for y, x in zip(*np.nonzero(planes[OWN_INFANTRY]), strict=True)} == {(0, 0), (1, 0)}
    assert planes[ENEMY_INFANTRY].sum() == 0  # the enemy is out of sight
    assert planes[ACTING, 0, 0] == 1 and planes[ACTING].sum() == 1  # unit 1 acts first
    assert planes[PENDING].sum() == 2
    assert planes[VISIBLE].sum() == 6  # 3x2 around each infantry, clipped: (0..2, 0..1)
    # unit at (0, 0): stay, right, down, down-right are legal (the right cell holds a friend)
    legal = {VECTORS[i] for i in np.flatnonzero(obs["action_mask"])}
    assert legal == {(0, 0), (0, 1), (1, 1)}
    assert env.observe("player_2")["action_mask"].sum() == 0  # not its move


def test_same_seed_gives_the_same_episode_and_another_seed_another():
    def episode(seed: int) -> list:
        env = cellwar_env(width=8, height=8, start="random")
        env.reset(seed=seed)
        trace = []
        for agent, obs, reward, term, trunc in random_steps(env, random.Random(seed)):
            trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc))
        return trace

    first, again, other = episode(5), episode(5), episode(6)
    assert len(first) > 20 and first == again
    assert first[0][1] != other[0][1]  # another seed: another random start


def _omniscient(state) -> list[dict]:
    return engine.get_visible_state(state, None)["units"]


@pytest.mark.parametrize("players", [2, 3])
def test_observations_never_show_a_hidden_enemy(players):
    """Over random games: every plane equals what the engine's omniscient state holds on
    the cells the player sees (engine fog), and nothing outside them."""
    checked = 0
    for seed in range(12):
        env = cellwar_env(width=8, height=8, players=players, start="random")
        env.reset(seed=seed)
        rng = random.Random(seed)
        for _agent, _obs, _r, term, trunc in random_steps(env, rng, limit=400):
            if term or trunc:
                continue
            state = env.backend.state
            for agent in env.agents:
                pid = int(agent.split("_")[1])
                planes = env.observe(agent)["observation"]
                seen = engine_visible_mask(state, pid)
                expect = np.zeros_like(planes)
                for u in _omniscient(state):
                    x, y = u["x"], u["y"]
                    if not seen >> (y * 8 + x) & 1:
                        continue
                    own = u["owner"] == pid
                    expect[PLANE_OF[u["type"]] + (0 if own else 3), y, x] = 1
                    if own and not u["acted"]:
                        expect[PENDING, y, x] = 1
                    if u["type"] == "fortification" and u["standing"] == 2:
                        expect[STANDING_2, y, x] = 1
                for i in range(64):
                    if seen >> i & 1:
                        expect[VISIBLE, i // 8, i % 8] = 1
                expect[ACTING] = planes[ACTING]
                assert np.array_equal(planes, expect), f"seed {seed}, {agent}"
                hidden = (1 - planes[VISIBLE]).astype(bool)
                for plane in (ENEMY_INFANTRY, ENEMY_FORTIFICATION, ENEMY_FACTORY):
                    assert not planes[plane][hidden].any()
                checked += 1
    assert checked > 1000


def test_units_act_one_at_a_time_in_the_engines_order():
    for seed in range(6):
        env = cellwar_env(width=8, height=8, start="random")
        env.reset(seed=seed)
        for agent, obs, _r, term, trunc in random_steps(env, random.Random(seed), limit=500):
            if term or trunc:
                continue
            pid = int(agent.split("_")[1])
            full = engine.get_valid_actions(env.backend.state, pid)
            first = full[0]["unit_id"]
            unit = next(u for u in engine.get_visible_state(env.backend.state, pid)["units"] if u["id"] == first)
            planes = obs["observation"]
            assert planes[ACTING, unit["y"], unit["x"]] == 1 and planes[ACTING].sum() == 1
            legal = {(a["dx"], a["dy"]) for a in full if a["unit_id"] == first}
            assert {VECTORS[i] for i in np.flatnonzero(obs["action_mask"])} == legal


def test_the_winner_gets_plus_one_and_the_loser_minus_one():
    finished = 0
    for seed in range(10):
        env = cellwar_env(width=6, height=6)
        env.reset(seed=seed)
        totals = {a: 0.0 for a in env.agents}
        for agent, _obs, reward, _t, _tr in random_steps(env, random.Random(seed)):
            totals[agent] += reward
        winner = engine.get_winner(env.backend.state)
        if winner is None:
            assert set(totals.values()) == {0.0}  # truncated: nobody scored
            continue
        finished += 1
        assert totals == {f"player_{p}": (1.0 if p == winner else -1.0) for p in (1, 2)}
    assert finished >= 5


def test_truncation_after_max_rounds_gives_no_reward():
    env = cellwar_env(width=8, height=8, max_rounds=2)
    env.reset(seed=0)
    seen = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        if truncated:
            seen.append((agent, reward))
            env.step(None)
            continue
        env.step(4)  # everyone stays: nobody meets anybody in 2 rounds
    assert sorted(seen) == [("player_1", 0.0), ("player_2", 0.0)]
    assert env.agents == []


def test_an_illegal_action_is_refused_and_changes_nothing():
    env = cellwar_env(width=8, height=8)
    env.reset(seed=0)
    before = env.state()
    with pytest.raises(IllegalActionError) as err:
        env.step(1)  # up: off the board from (0, 0)
    assert err.value.code == "INVALID_ACTION"
    with pytest.raises(IllegalActionError):
        env.step(9)
    with pytest.raises(IllegalActionError):
        env.step("left")
    assert env.state() == before


def _play_and_restore(players: int, seed: int, cut: int) -> int:
    """Play a random game; at step ``cut`` snapshot it (through JSON), restore it into a
    fresh env and continue both with the same actions, comparing every step."""
    env = cellwar_env(width=6, height=6, players=players, start="random")
    env.reset(seed=seed)
    rng = random.Random(seed)
    for n, _ in enumerate(random_steps(env, rng)):
        if n == cut:
            break
    snapshot = json.loads(json.dumps(env.state()))
    twin = cellwar_env(width=6, height=6, players=players)
    twin.set_state(snapshot)
    compared = 0
    while env.agents:
        assert twin.agents == env.agents and twin.agent_selection == env.agent_selection
        a, b = env.last(), twin.last()
        assert np.array_equal(a[0]["observation"], b[0]["observation"])
        assert np.array_equal(a[0]["action_mask"], b[0]["action_mask"])
        assert a[1:4] == b[1:4] and env.rewards == twin.rewards
        action = None if a[2] or a[3] else rng.choice(np.flatnonzero(a[0]["action_mask"]).tolist())
        env.step(action)
        twin.step(action)
        compared += 1
    assert twin.agents == [] and engine.state_hash(twin.backend.state) == engine.state_hash(env.backend.state)
    return compared


@pytest.mark.parametrize("players", [2, 3])
def test_a_restored_state_continues_exactly_like_the_original(players):
    compared = sum(_play_and_restore(players, seed, cut) for seed in range(4) for cut in (0, 7, 31, 90))
    assert compared > 200


def test_restore_right_after_a_turn_ends_keeps_the_turn():
    """OpenSpiel #1277: a turn lost in serialization. Snapshot right after every automatic
    turn end of a game: the restored env has the same player to act, same round."""
    env = cellwar_env(width=6, height=6)
    env.reset(seed=2)
    rng = random.Random(2)
    last = env.agent_selection
    changes = 0
    for agent, _obs, _r, term, trunc in random_steps(env, rng, limit=300):
        if term or trunc:
            break
        if agent != last:
            changes += 1
            twin = cellwar_env(width=6, height=6)
            twin.set_state(json.loads(json.dumps(env.state())))
            assert twin.agent_selection == agent
            assert twin.backend.round() == env.backend.round()
            assert engine.state_hash(twin.backend.state) == engine.state_hash(env.backend.state)
        last = agent
    assert changes >= 4


def test_set_state_refuses_a_snapshot_that_disagrees_with_its_log():
    env = cellwar_env(width=6, height=6)
    env.reset(seed=0)
    env.step(4)
    env.step(4)  # player 1's two units fortified: player 2 to act
    snapshot = env.state()
    assert snapshot["env"]["agent_selection"] == "player_2"
    other = cellwar_env(width=6, height=6)
    other.reset(seed=1)
    before = other.state()
    wrong = json.loads(json.dumps(snapshot))
    wrong["env"]["agent_selection"] = "player_1"
    with pytest.raises(ValueError, match="game says player 2"):
        other.set_state(wrong)
    with pytest.raises(ValueError):
        other.set_state({"format": "something else"})
    with pytest.raises(ValueError):
        cellwar_env(width=8, height=8).set_state(snapshot)  # another board size
    assert other.state() == before


def test_clone_is_independent_of_the_original():
    env = cellwar_env(width=6, height=6)
    env.reset(seed=0)
    twin = env.clone()
    twin.step(4)
    assert env.state()["events"] != twin.state()["events"]
    assert env.observe("player_1")["observation"][OWN_FORTIFICATION].sum() == 0
    assert twin.observe("player_1")["observation"][OWN_FORTIFICATION].sum() == 1


def test_render_ansi_and_rgb_show_the_board():
    env = cellwar_env(width=6, height=6, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    lines = text.splitlines()
    assert lines[0].startswith("round 1  turn 1") and lines[1].startswith("1i 1i")
    assert lines[6].endswith("2i 2i")
    rgb = cellwar_env(width=6, height=6, render_mode="rgb_array")
    rgb.reset(seed=0)
    image = rgb.render()
    assert image.shape == (96, 96, 3) and image.dtype == np.uint8
    assert tuple(image[8, 8]) == (220, 60, 60)  # player 1 (red) infantry at (0, 0)
    assert tuple(image[88, 88]) == (60, 180, 80)  # player 2 (green) at (5, 5)
    assert cellwar_env(width=6, height=6).render() is None


def test_bad_configs_are_refused():
    with pytest.raises(ValueError):
        cellwar_env(backend="telepathy")
    with pytest.raises(ValueError):
        cellwar_env(backend="remote")
    with pytest.raises(ValueError):
        cellwar_env(start="anywhere")
    with pytest.raises(NotImplementedError):
        cellwar_env(backend="remote", url="http://127.0.0.1:9").state()
