"""Batched CellWar environments on :mod:`engine.cellwar.batch`:
:func:`cellwar_vector_env` (``N`` self-play games stepped together; docs/vector-envs.md).

Each of the ``N`` games is the game :func:`client.rl.cellwar_env` plays: the player to
act acts for one unit at a time (the engine's order), turns nobody can act in end by
themselves, the observation is that player's own fog view as the same ``(10, H, W)``
planes (:mod:`client.rl.observation`) with the same ``(9,)`` action mask. Game ``i``
after ``reset(seed=s)`` is exactly the game ``cellwar_env(...)`` plays after
``reset(seed=s + i)`` under the same actions (same observations and masks at every
step; tested), and the games after it are those of that env's further ``reset()``
calls (its random-start generator goes on).

Step API (Gymnasium's vector conventions, same-step autoreset):

- ``reset(seed=None) -> (obs, infos)``;
- ``step(actions) -> (obs, rewards, terminations, truncations, infos)`` with
  ``actions`` ``(N,)`` ints 0..8 (masked-out actions raise
  :class:`client.rl.cellwar.IllegalActionError`, nothing changes);
- ``obs = {"observation": (N, 10, H, W) uint8, "action_mask": (N, 9) int8}``;
- ``rewards`` ``(N,) float32``: the reward of the agent that just acted, +1 when its
  action won the game, -1 when it lost it (its last unit died attacking a
  fortification), 0 otherwise; ``infos["rewards"]`` ``(N, players) float32`` is every
  seat's: +1 to the winner, -1 to each seat knocked out in this step (with 3+ players
  a seat knocked out early gets its -1 then, as in the AEC env);
- a game that ends (``terminations``) or passes ``max_rounds`` rounds
  (``truncations``, rewards 0) is reset in the same step: the returned observation is
  the new game's first; ``infos["winner"]`` ``(N,) int`` names the winner of a game
  that just ended (0 otherwise);
- ``infos["agent"]`` ``(N,)`` str: the agent (``player_1``...) whose observation this
  is and who acts next in each game (self-play); ``infos["seat"]`` the same as ints
  (``""`` and 0 for a game kept over with ``autoreset=False``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from client.rl.cellwar import IllegalActionError, check_start_rounds
from client.rl.cellwar_backends import random_start
from client.rl.observation import (
    ACTING,
    CHANNELS,
    ENEMY_INFANTRY,
    OWN_INFANTRY,
    PENDING,
    STANDING_2,
    VISIBLE,
)
from engine.cellwar.batch import FORT, CellWarBatch, IllegalBatchAction, config_of
from engine.cellwar.config import UnitSpec


class CellWarVectorEnv:
    """``num_envs`` CellWar self-play games stepped together (module docstring).

    Args:
        num_envs: games (>= 1).
        width, height: board size in cells (4..64).
        players: seats per game (2..8).
        start: ``"default"`` (corners) or ``"random"`` (seeded, as :func:`cellwar_env`).
        max_rounds: rounds after which a game is truncated and reset (> 0).
        seed: seeds the first :meth:`reset` when it is called without one.
        autoreset: reset a game in the step it ends (default); False: a game that ended
            or was truncated stays so (its mask all 0, its actions ignored) until the
            next :meth:`reset` (one game per env, e.g. a match).

    Raises:
        ValueError: a size, count, start or ``max_rounds`` out of range.
    """

    metadata = {"name": "cellwar_vector_v1", "autoreset_mode": "same_step"}

    def __init__(
        self,
        num_envs: int = 1024,
        *,
        width: int = 8,
        height: int = 8,
        players: int = 2,
        start: str = "default",
        max_rounds: int = 100,
        seed: int | None = None,
        autoreset: bool = True,
    ) -> None:
        check_start_rounds(start, max_rounds)
        self.batch = CellWarBatch(num_envs, width, height, players)
        self.num_envs, self.width, self.height, self.players = num_envs, width, height, players
        self.start, self.max_rounds, self.seed, self.autoreset = start, max_rounds, seed, autoreset
        self._stopped = np.zeros(num_envs, bool)
        self.agents = np.array([f"player_{i}" for i in range(1, players + 1)])
        self.single_observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0, 1, (CHANNELS, height, width), dtype=np.uint8),
                "action_mask": spaces.MultiBinary(9),
            }
        )
        self.single_action_space = spaces.Discrete(9)
        self.observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0, 1, (num_envs, CHANNELS, height, width), dtype=np.uint8),
                "action_mask": spaces.MultiBinary((num_envs, 9)),
            }
        )
        self.action_space = spaces.MultiDiscrete(np.full(num_envs, 9))
        self._rngs: list[np.random.Generator] = []
        self._default = config_of(width, height, players)
        self._obs = np.zeros((num_envs, CHANNELS, height, width), np.uint8)
        self._started = False

    # -- games

    def _configs(self, envs: np.ndarray) -> list:
        if self.start == "default":
            return [self._default] * len(envs)
        out = []
        for i in envs.tolist():
            units = random_start(self.width, self.height, self.players, self._rngs[i])
            specs = [UnitSpec(u["owner"], u["type"], u["x"], u["y"]) for u in units]
            out.append(config_of(self.width, self.height, self.players, specs))
        return out

    def _restart(self, envs: np.ndarray) -> None:
        if len(envs):
            self.batch.start(envs, self._configs(envs))

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Start every game afresh; game ``i`` seeded with ``seed + i`` (None: the
        constructor's ``seed``, else fresh entropy), or with ``options["seeds"][i]``
        when given (``(N,)`` ints: e.g. the same games for several policies). Returns
        ``(obs, infos)``.

        Raises:
            ValueError: ``options["seeds"]`` not of length ``num_envs``.
        """
        seeds = None if options is None else options.get("seeds")
        if seeds is not None:
            seeds = [int(s) for s in seeds]
            if len(seeds) != self.num_envs:
                raise ValueError(f"options['seeds'] must have {self.num_envs} seeds, got {len(seeds)}")
            self._rngs = [np.random.default_rng(s) for s in seeds]
        else:
            if seed is None:
                seed = self.seed
                self.seed = None  # only the first reset uses the constructor's seed
            if seed is None:
                self._rngs = [np.random.default_rng() for _ in range(self.num_envs)]
            else:
                self._rngs = [np.random.default_rng(seed + i) for i in range(self.num_envs)]
        self._restart(np.arange(self.num_envs))
        self._stopped[:] = False
        self._started = True
        zeros = np.zeros(self.num_envs, np.int64)
        return self._observe(), self._infos(np.zeros((self.num_envs, self.players), np.float32), zeros)

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Act in every game (module docstring).

        Raises:
            RuntimeError: before :meth:`reset`.
            IllegalActionError: an action masked out or not 0..8 (nothing changes);
                ``envs`` holds the games concerned.
        """
        if not self._started:
            raise RuntimeError("call reset() before step()")
        b = self.batch
        actions = np.asarray(actions).reshape(-1)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must be {self.num_envs} indices, got shape {actions.shape}")
        acting = b.turn.astype(np.int64)
        out_before = b.out.copy()
        try:
            b.step(actions, ~self._stopped if self._stopped.any() else None)
        except IllegalBatchAction as err:
            bad = IllegalActionError(str(err))
            bad.envs = err.envs  # type: ignore[attr-defined]
            raise bad from None
        n = self.num_envs
        ended = (b.turn == 0) & ~self._stopped
        winner = np.where(ended, b.winner, 0).astype(np.int64)
        # -1 to each seat knocked out in this step (the loser of a game that ends), +1
        # to the winner, as the AEC env rewards them
        seat_rewards = -(b.out & ~out_before).astype(np.float32)
        won = np.flatnonzero(winner > 0)
        seat_rewards[won, winner[won] - 1] = 1.0
        truncated = ~ended & ~self._stopped & (b.round > self.max_rounds)
        rewards = seat_rewards[np.arange(n), np.maximum(acting - 1, 0)] * (acting > 0)
        if self.autoreset:
            self._restart(np.flatnonzero(ended | truncated))
        else:
            self._stopped |= ended | truncated
        return self._observe(), rewards, ended, truncated, self._infos(seat_rewards, winner)

    def _infos(self, seat_rewards: np.ndarray, winner: np.ndarray) -> dict[str, Any]:
        seat = np.where(self._stopped, 0, self.batch.turn.astype(np.int64))
        return {
            "agent": np.where(seat > 0, self.agents[np.maximum(seat, 1) - 1], ""),
            "seat": seat,
            "rewards": seat_rewards,
            "winner": winner,
            "round": self.batch.round.copy(),
        }

    def _observe(self) -> dict[str, np.ndarray]:
        b, obs = self.batch, self._obs
        me = b.turn[:, None, None]
        own = b.owner == me
        vis = b.seen
        enemy = (b.owner != 0) & ~own & vis
        for k in (1, 2, 3):
            is_k = b.kind == k
            np.logical_and(own, is_k, out=obs[:, OWN_INFANTRY + k - 1].view(bool))
            np.logical_and(enemy, is_k, out=obs[:, ENEMY_INFANTRY + k - 1].view(bool))
        obs[:, VISIBLE] = vis
        np.logical_and(own, ~b.acted, out=obs[:, PENDING].view(bool))
        np.logical_and((b.kind == FORT) & (b.standing == 2), vis, out=obs[:, STANDING_2].view(bool))
        obs[:, ACTING] = 0
        e = np.flatnonzero(b.has_acting)
        obs[e, ACTING, b.ay[e], b.ax[e]] = 1
        mask = b.mask.copy()
        mask[self._stopped] = 0
        return {"observation": obs.copy(), "action_mask": mask}

    def state(self, i: int) -> Any:
        """Game ``i`` as the engine's state (:meth:`engine.cellwar.batch.CellWarBatch.state`)."""
        return self.batch.state(i)

    def close(self) -> None:
        """Nothing to release."""


def cellwar_vector_env(num_envs: int = 1024, **config: Any) -> CellWarVectorEnv:
    """``num_envs`` CellWar games stepped together; ``config`` as
    :class:`CellWarVectorEnv` (``width``, ``height``, ``players``, ``start``,
    ``max_rounds``, ``seed``)."""
    return CellWarVectorEnv(num_envs, **config)
