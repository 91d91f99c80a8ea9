"""AI environment benchmark (docs/vector-envs.md "Speed").

Rows:

* CellWar AEC env in process: environment steps/s on 8×8 (``env.last()`` + ``env.step``
  with a pre-drawn random legal action; the policy's time excluded): >= 5,000;
* the trained policy's win rate on 8×8 from the default start over ``games`` games
  (seats alternate): vs the random bot >= 90 %, vs the heuristic bot >= 55 %;
* the search bot's likewise (same targets);
* Life placement env: episodes/s (16×16, budget 12, random opponent; info).

Win rates are exact counts of finished games; an unfinished game (100 rounds) counts as
not won. The figures are deterministic (seeded); only the rates per second depend on
the machine's load, so each is the best of a few runs.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from client.bots import load_policy
from client.rl import cellwar_env, life_placement_env
from client.rl.arena import match

#: Seed of every benchmark game.
SEED = 20261130


def env_steps_per_second(steps: int, size: int = 8) -> tuple[float, int]:
    """Random legal play on a ``size``×``size`` env for ``steps`` steps; returns
    (steps/s, games started)."""
    env = cellwar_env(width=size, height=size)
    rng = random.Random(SEED)
    draws = [rng.random() for _ in range(4096)]
    done, games, k = 0, 0, 0
    t0 = time.perf_counter()
    while done < steps:
        env.reset(seed=games)
        games += 1
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(draws[k % 4096] * len(legal))]))
            k += 1
            done += 1
            if done >= steps:
                break
    return steps / (time.perf_counter() - t0), games


def life_episodes_per_second(episodes: int) -> float:
    """Random placements in the Life env (16×16, budget 12) per second, whole episodes."""
    env = life_placement_env("random")
    rng = np.random.default_rng(SEED)
    t0 = time.perf_counter()
    for i in range(episodes):
        obs, _ = env.reset(seed=i)
        done = False
        while not done:
            obs, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return episodes / (time.perf_counter() - t0)


def _policy(name: str) -> Callable[[int], Any]:
    if name == "trained":
        return lambda s: load_policy("trained")
    return lambda s: load_policy(name, seed=s)


def _win_row(name: str, opponent: str, games: int, target: float) -> dict[str, Any]:
    t0 = time.perf_counter()
    result = match(_policy(name), _policy(opponent), games, seed=SEED, width=8, height=8)
    seconds = time.perf_counter() - t0
    rate = result.win_rate
    # these rows take minutes (the search bot ~1 s of CPU a game): show progress
    sys.stderr.write(f"rl: {name} vs {opponent}: {result.wins}/{result.games} won in {seconds:.0f} s\n")
    return {
        "name": f"{name} vs {opponent}, 8x8, {games} games",
        "unit": "win rate",
        "kernel": rate,
        "reference": None,
        "ratio": None,
        "target": target,
        "target_text": f">= {target:.0%}",
        "pass": bool(rate >= target),
        "games": result.games,
        "wins": result.wins,
        "losses": result.losses,
        "unfinished": result.unfinished,
        "steps": result.steps,
        "seconds": seconds,
    }


def run(quick: bool = False) -> dict[str, Any]:
    """Measure the rows; returns ``{"rows": [...]}``.

    Args:
        quick: 20 games per match, fewer steps (a smoke run; win rates are then coarse).
    """
    games = 20 if quick else 200
    steps = 5_000 if quick else 30_000
    best, games_started = 0.0, 0
    for _ in range(1 if quick else 3):
        rate, games_started = env_steps_per_second(steps)
        best = max(best, rate)
    rows = [
        {
            "name": "CellWar AEC env in process, 8x8",
            "unit": "steps/s",
            "kernel": best,
            "reference": None,
            "ratio": None,
            "target": 5000.0,
            "target_text": ">= 5,000 steps/s",
            "pass": bool(best >= 5000.0),
            "steps": steps,
            "games": games_started,
        }
    ]
    for name in ("trained", "search"):
        rows.append(_win_row(name, "random", games, 0.90))
        rows.append(_win_row(name, "heuristic", games, 0.55))
    episodes = 20 if quick else 100
    rows.append(
        {
            "name": "Life placement env, 16x16, budget 12",
            "unit": "episodes/s",
            "kernel": life_episodes_per_second(episodes),
            "reference": None,
            "ratio": None,
            "target_text": "-",
            "pass": True,
            "info": True,
            "episodes": episodes,
        }
    )
    return {"rows": rows}
