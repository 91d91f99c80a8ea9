"""The environments on the public REST API (``backend="remote"``) against a real gateway,
session, engine and NATS: the same class plays the same game as in process, and a policy
takes one seat of an online game beside the API bot (``client.play --bot``).

The environments are blocking (httpx), the gateway runs in the test's event loop: each
episode runs in a thread."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from client.bots import load_policy
from client.play import play_cellwar_policy
from client.rl import cellwar_env, life_placement_env
from client.sdk import AsyncCellWarClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def _episode(env, seed: int, policies: dict) -> list:
    """Play to the end; the trace of (agent, planes, mask, reward, terminated)."""
    env.reset(seed=seed)
    for p in policies.values():
        p.reset()
    trace = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, terminated))
        env.step(None if terminated or truncated else policies[agent].act(obs))
    return trace


async def test_the_remote_env_plays_the_same_game_as_the_local_one(gateway: str):
    def both() -> tuple[list, list]:
        config = {"width": 6, "height": 6, "start": "random"}
        make = lambda: {"player_1": load_policy("heuristic", seed=1), "player_2": load_policy("heuristic", seed=2)}  # noqa: E731
        local = _episode(cellwar_env(**config), 11, make())
        remote_env = cellwar_env(backend="remote", url=gateway, **config)
        try:
            remote = _episode(remote_env, 11, make())
        finally:
            remote_env.close()
        return local, remote

    local, remote = await asyncio.to_thread(both)
    assert len(local) > 10
    assert remote == local
    assert sorted(r for _, _, _, r, t in local if t) == [-1.0, 1.0]


async def test_a_policy_takes_one_seat_beside_the_api_bot(gateway: str):
    result = await play_cellwar_policy(gateway, bot="trained", opponent="bot", size=6, seed=3, quiet=True)
    assert result["final_view"]["phase"] == "finished"
    assert result["winner"] in (1, 2) and result["policy_seat"] == 1
    assert result["policy_reward"] == (1.0 if result["winner"] == 1 else -1.0)
    assert result["events"][0]["type"] == "GameCreated" and result["events"][-1]["type"] == "GameFinished"


async def test_a_policy_joins_an_open_game_by_id(api: AsyncCellWarClient, gateway: str):
    game_id = await api.create_game("cellwar", {"width": 6, "height": 6, "players": 2})
    person = await api.join(game_id, "person")  # seat 1, e.g. someone in the browser

    async def person_plays() -> None:
        """Seat 1 stays put every turn (its units fortify, stand, become factories)."""
        while True:
            view = await api.state(game_id, person.token)
            if view["phase"] == "finished":
                return
            if view["phase"] == "playing" and view["turn"] == 1:
                actions = await api.valid_actions(game_id, person.token)
                if actions:
                    first = actions[0]
                    stay = next((a for a in actions if a["unit_id"] == first["unit_id"] and (a["dx"], a["dy"]) == (0, 0)), first)
                    await api.move(game_id, person.token, stay["unit_id"], stay["dx"], stay["dy"])
                else:
                    await api.end_turn(game_id, person.token)
            else:
                await asyncio.sleep(0.02)

    result, _ = await asyncio.gather(
        play_cellwar_policy(gateway, bot="heuristic", game_id=game_id, seed=5, quiet=True), person_plays()
    )
    assert result["policy_seat"] == 2 and result["final_view"]["phase"] == "finished"
    assert result["winner"] in (1, 2)


async def test_the_remote_life_env_scores_the_same_share_as_the_local_one(gateway: str):
    def both() -> tuple[list, list]:
        out = []
        for backend in ("local", "remote"):
            extra = {"backend": "remote", "url": gateway} if backend == "remote" else {}
            env = life_placement_env("blocks", width=12, height=12, budget=8, max_generations=60, **extra)
            try:
                obs, _ = env.reset(seed=4)
                rng = np.random.default_rng(4)
                rewards, done = [], False
                while not done:
                    action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
                    obs, reward, done, _, info = env.step(action)
                    rewards.append(reward)
                out.append((rewards, info["final_cells"]))
            finally:
                env.close()
        return out[0], out[1]

    local, remote = await asyncio.to_thread(both)
    assert remote == local
    rewards, cells = local
    assert len(rewards) == 8 and rewards[:-1] == [0.0] * 7
    own, other = cells["1"], cells["2"]
    assert rewards[-1] == pytest.approx(own / (own + other) if own + other else 0.0)


async def test_a_joined_game_cannot_be_reset(api: AsyncCellWarClient, gateway: str):
    game_id = await api.create_game("cellwar", {"width": 6, "height": 6, "players": 2})

    def run() -> str:
        env = cellwar_env(backend="remote", url=gateway, game_id=game_id, join=2, width=6, height=6)
        try:
            env.reset()
            assert env.agents == ["player_1", "player_2"]
            try:
                env.reset()
            except RuntimeError as err:
                return str(err)
            return "no error"
        finally:
            env.close()

    assert "cannot be reset" in await asyncio.to_thread(run)
