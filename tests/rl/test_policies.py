"""CellWar policies by name (client.bots.load_policy): every one returns legal actions
from the observation alone; the heuristic policy is the API bot's heuristic; the
trained artifact loads with numpy alone and beats the random bot; the search bot decides
the same in two games that differ only in what it cannot see."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import engine
from client.bots import POLICY_NAMES, load_policy
from client.bots.cellwar import CellWarBot
from client.rl import cellwar_env
from client.rl.arena import match, play_game
from client.rl.observation import VECTORS, action_kinds, encode_view

ROOT = Path(__file__).resolve().parents[2]


def _options(name: str, seed: int) -> dict:
    if name == "search":
        return {"seed": seed, "samples": 2}
    return {"seed": seed} if name in ("random", "heuristic") else {}


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_every_policy_plays_only_legal_actions_to_the_end(name):
    env = cellwar_env(width=6, height=6, start="random")
    policies = {"player_1": load_policy(name, **_options(name, 1)), "player_2": load_policy("random", seed=2)}
    for p in policies.values():
        p.reset()
    env.reset(seed=7)
    played = 0
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = policies[agent].act(obs)
        assert isinstance(action, int) and obs["action_mask"][action] == 1
        env.step(action)  # the env raises on an illegal action
        played += 1
    assert played > 10 and env.agents == []


def test_an_unknown_policy_name_is_refused():
    with pytest.raises(ValueError, match="unknown policy"):
        load_policy("oracle")


def test_a_policy_refuses_an_observation_without_a_move():
    env = cellwar_env(width=6, height=6)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not this player's move"):
        load_policy("heuristic").act(env.observe("player_2"))


def test_the_heuristic_policy_chooses_as_the_api_bot_does():
    """Same seed, same views: the observation-based policy and CellWarBot.choose (on the
    engine's view and valid actions) pick the same vector at every decision."""
    checked = 0
    for seed in range(5):
        env = cellwar_env(width=8, height=8, start="random")
        env.reset(seed=seed)
        policy = load_policy("heuristic", seed=seed)
        bot = CellWarBot(None, "game", "bot", seed=seed)
        rng = random.Random(seed)
        for agent in env.agent_iter(400):
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            if agent == "player_2":
                env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
                continue
            state = env.backend.state
            view = engine.get_visible_state(state, 1)
            legal = engine.get_valid_actions(state, 1)
            unit = next(u for u in view["units"] if u["id"] == legal[0]["unit_id"])
            bot.remember(view)
            expected = bot.choose(view, unit, [a for a in legal if a["unit_id"] == unit["id"]])
            action = policy.act(obs)
            assert VECTORS[action] == (expected["dx"], expected["dy"])
            kinds = action_kinds(obs)
            assert kinds[action] == expected["kind"]
            env.step(action)
            checked += 1
    assert checked > 100


def test_the_trained_policy_loads_and_plays_with_numpy_alone():
    code = (
        "import sys\n"
        "from client.bots import load_policy\n"
        "p = load_policy('trained')\n"
        "import numpy as np\n"
        "from client.rl.observation import encode_view\n"
        "view = {'you': 1, 'width': 8, 'height': 8, 'visible': '3o5b$3o5b$8b$8b$8b$8b$8b$8b!',"
        " 'units': [{'owner': 1, 'type': 'infantry', 'x': 1, 'y': 1, 'standing': 0, 'acted': False, 'id': 1}]}\n"
        "mask = np.ones(9, np.int8)\n"
        "a = p.act({'observation': encode_view(view, (1, 1)), 'action_mask': mask})\n"
        "assert 0 <= a < 9\n"
        "heavy = sorted(m for m in ('engine', 'pettingzoo', 'gymnasium', 'cma', 'torch') if m in sys.modules)\n"
        "print('loaded:', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "loaded: []"
    assert (ROOT / "client/rl/policies/cellwar.npz").stat().st_size <= 5 * 1024 * 1024


def test_the_trained_policy_beats_the_random_bot():
    result = match(lambda s: load_policy("trained"), lambda s: load_policy("random", seed=s), 20, width=8, height=8)
    assert result.wins >= 17, result


def test_the_search_bot_decides_only_on_what_it_sees():
    """Two games identical in what player 1 sees but with different hidden enemy units:
    the search bot (same seed) makes the same decisions in both."""
    visible_enemy = {"owner": 2, "type": "infantry", "x": 3, "y": 2}
    base = [
        {"owner": 1, "type": "infantry", "x": 1, "y": 1},
        {"owner": 1, "type": "infantry", "x": 2, "y": 1},
        visible_enemy,
    ]
    hidden_a = [{"owner": 2, "type": "infantry", "x": 7, "y": 7}]
    hidden_b = [{"owner": 2, "type": "factory", "x": 6, "y": 7}, {"owner": 2, "type": "infantry", "x": 7, "y": 5}]
    choices = []
    for hidden in (hidden_a, hidden_b):
        state = engine.new_game(engine.config_from_dict("cellwar", {"width": 8, "height": 8, "units": base + hidden}))
        state = engine.add_player(engine.add_player(state, "a"), "b")
        bot = load_policy("search", seed=4, samples=3)
        picked, views = [], []
        for _ in range(2):  # both units of player 1's first turn
            view = engine.get_visible_state(state, 1)
            legal = engine.get_valid_actions(state, 1)
            uid = legal[0]["unit_id"]
            unit = next(u for u in view["units"] if u["id"] == uid)
            mask = np.zeros(9, np.int8)
            for a in legal:
                if a["unit_id"] == uid:
                    mask[(a["dy"] + 1) * 3 + a["dx"] + 1] = 1
            obs = {"observation": encode_view(view, (unit["x"], unit["y"])), "action_mask": mask}
            views.append(obs["observation"].tobytes())
            action = bot.act(obs)
            picked.append(action)
            dx, dy = VECTORS[action]
            state = engine.apply_action(state, 1, {"unit_id": uid, "dx": dx, "dy": dy})
        choices.append((picked, views))
    assert choices[0][1] == choices[1][1]  # the premise: player 1 saw the same
    assert choices[0][0] == choices[1][0]


def test_play_game_reports_the_winner_and_steps():
    env = cellwar_env(width=6, height=6)
    outcome = play_game(env, {"player_1": load_policy("heuristic", seed=1), "player_2": load_policy("random", seed=1)}, seed=0)
    assert outcome["winner"] in (1, 2, None) and outcome["steps"] > 0
    if outcome["winner"] is not None:
        assert outcome["rewards"][f"player_{outcome['winner']}"] == 1.0
