"""Games between CellWar policies on the AEC environment: one game
(:func:`play_game`) and a seat-balanced match (:func:`match`), used by the training,
the benchmark and the tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from client.rl.cellwar import CellWarEnv, cellwar_env


def play_game(env: CellWarEnv, policies: Mapping[str, Any], seed: int | None = None) -> dict[str, Any]:
    """Play one game to its end with one policy per agent (each ``reset()`` first).

    Args:
        env: a CellWar env (local or remote); it is reset with ``seed``.
        policies: agent name (``player_1``, ...) -> policy with ``act``/``reset``.
        seed: the reset seed (random start, spaces).

    Returns:
        ``{"winner": seat or None (truncated), "steps": actions played,
        "rewards": {agent: total reward}}``.
    """
    env.reset(seed=seed)
    for policy in policies.values():
        policy.reset()
    totals = {a: 0.0 for a in env.agents}
    steps = 0
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] = totals.get(agent, 0.0) + float(reward)
        if terminated or truncated:
            env.step(None)
            continue
        env.step(policies[agent].act(obs))
        steps += 1
    winner = next((int(a.rsplit("_", 1)[1]) for a, r in totals.items() if r > 0), None)
    return {"winner": winner, "steps": steps, "rewards": totals}


@dataclass
class MatchResult:
    """Outcome of :func:`match` from the first policy's side.

    Attributes: ``games``, ``wins``, ``losses``, ``unfinished`` (truncated), ``steps``
    (actions played in all games).
    """

    games: int = 0
    wins: int = 0
    losses: int = 0
    unfinished: int = 0
    steps: int = 0

    @property
    def win_rate(self) -> float:
        """Wins / games (0 when no game)."""
        return self.wins / self.games if self.games else 0.0


def match(
    make_a: Callable[[int], Any],
    make_b: Callable[[int], Any],
    games: int,
    *,
    seed: int = 0,
    env: CellWarEnv | None = None,
    **config: Any,
) -> MatchResult:
    """``games`` 2-player games of policy A against policy B, A taking seat 1 in even
    games and seat 2 in odd ones.

    Args:
        make_a, make_b: ``seed -> policy`` (a fresh, seeded policy per game).
        games: number of games.
        seed: base seed (game i uses ``seed + i`` for the env and both policies).
        env: an env to reuse (else one is made from ``config``, e.g. ``width=8``).

    Returns:
        A :class:`MatchResult` counted for A.
    """
    env = env if env is not None else cellwar_env(**config)
    result = MatchResult()
    for i in range(games):
        a_seat = 1 if i % 2 == 0 else 2
        a, b = make_a(seed + i), make_b(seed + 10_000 + i)
        policies = {"player_1": a, "player_2": b} if a_seat == 1 else {"player_1": b, "player_2": a}
        outcome = play_game(env, policies, seed=seed + i)
        result.games += 1
        result.steps += outcome["steps"]
        if outcome["winner"] is None:
            result.unfinished += 1
        elif outcome["winner"] == a_seat:
            result.wins += 1
        else:
            result.losses += 1
    return result
