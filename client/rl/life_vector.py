"""Batched Life placement: :func:`life_placement_vector_env`, ``N`` games of
:func:`client.rl.life_placement_env` stepped together (docs/vector-envs.md).

Game ``i`` after ``reset(seed=s)`` is the game ``life_placement_env(...)`` plays after
``reset(seed=s + i)`` under the same actions (same observations, masks and rewards;
tested); the games after it are that env's further ``reset()`` calls. Every game places
one cell per step, so all ``N`` episodes last ``budget`` steps and end together; then
every game runs at once on the engine's packed kernel
(:mod:`engine.life.packed_runs`: the boards of all games advanced by one kernel call
per generation, with the engine's own rules after each: extinction,
``max_generations``, stability), each game's end state is the engine's (the packed run's
:meth:`~engine.life.packed_runs.PackedRun.state`), and the episodes restart in the same
step (same-step autoreset). About 3× the episodes per CPU second of the single env
(16×16, budget 12, N = 256).

- ``reset(seed=None) -> (obs, infos)``; ``step(actions) -> (obs, rewards,
  terminations, truncations, infos)``;
- ``obs = {"observation": (N, 2, H, W) uint8, "action_mask": (N, zone cells) int8}``
  (plane 0 the agent's own cells, plane 1 its zone, as the single env);
- ``actions`` ``(N,)``: a cell index of the zone per game; a masked-out action (a cell
  already placed) raises :class:`LifeActionError` and changes nothing;
- ``rewards`` ``(N,) float32``: 0 until the last placement, then the agent's share of
  the live cells at the end, ``own / (own + opponent)`` (0 when none is left);
  ``infos["final_cells"]`` ``(N, 2) int`` the live cells of seat 1 and 2 then.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from client.rl.codes import ErrorCode
from client.rl.life import Opponent, opponent_cells, resolve_opponent, zone_size


class LifeActionError(ValueError):
    """A masked-out action (a cell already placed, or outside the zone); nothing changed.

    Attributes:
        code: ``"CELL_TAKEN"``; envs: the games concerned.
    """

    code = ErrorCode.CELL_TAKEN

    def __init__(self, message: str, envs: np.ndarray) -> None:
        super().__init__(message)
        self.envs = envs


class LifePlacementVectorEnv:
    """``num_envs`` Life placement games (module docstring); arguments as
    :class:`client.rl.life.LifePlacementEnv` (``opponent``, ``width``, ``height``,
    ``budget``, ``max_generations``, ``seat``) plus ``num_envs`` and ``seed`` (the first
    :meth:`reset` without a seed uses it).

    Raises:
        ValueError: an unknown opponent or seat, a budget out of range.
    """

    metadata = {"name": "life_placement_vector_v1", "autoreset_mode": "same_step"}

    def __init__(
        self,
        num_envs: int = 256,
        opponent: str | Opponent = "random",
        *,
        width: int = 16,
        height: int = 16,
        budget: int = 12,
        max_generations: int = 300,
        seat: int = 1,
        seed: int | None = None,
    ) -> None:
        import engine

        opponent = resolve_opponent(opponent, seat)
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self._engine = engine
        self.num_envs, self.width, self.height = num_envs, width, height
        self.opponent, self.seat, self.budget, self.seed = opponent, seat, budget, seed
        self.zone, self.zone_w, self.zone_h = zone_size(width, height, seat, budget)
        x0, y0, x1, y1 = self.zone
        cells = self.zone_w * self.zone_h
        self.config = {"width": width, "height": height, "players": 2, "budget": budget, "max_generations": max_generations}
        _, state = engine.decide(None, "create", 0, {"kind": "life", "config": self.config})
        for name in ("player_1", "player_2"):
            _, state = engine.decide(state, "join", 0, {"name": name})
        self._fresh = state  # every game starts from this (immutable) state
        self.single_action_space = spaces.Discrete(cells)
        self.single_observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0, 1, (2, height, width), dtype=np.uint8),
                "action_mask": spaces.MultiBinary(cells),
            }
        )
        self.action_space = spaces.MultiDiscrete(np.full(num_envs, cells))
        self._zone_plane = np.zeros((height, width), np.uint8)
        self._zone_plane[y0:y1, x0:x1] = 1
        self._placed = np.zeros((num_envs, cells), bool)  # cells placed this episode
        self._order = np.zeros((num_envs, budget), np.int64)  # in placement order
        self._count = 0
        self._states: list[Any] = []  # seat 2: the state after the opponent placed
        self._rngs: list[np.random.Generator] = []

    def cell(self, action: int) -> tuple[int, int]:
        """The board cell (x, y) of an action index."""
        x0, y0, _, _ = self.zone
        return x0 + action % self.zone_w, y0 + action // self.zone_w

    # -- the games

    def _opponent_places(self, state: Any, rng: np.random.Generator) -> Any:
        e, other = self._engine, 3 - self.seat
        cells = opponent_cells(self.opponent, e.get_visible_state(state, other), self.budget, rng)
        if cells:
            state = e.apply_action(state, other, {"type": "place", "cells": [[x, y] for x, y in cells]})
        return e.end_player_turn(state, other)

    def _begin(self) -> None:
        self._placed[:] = False
        self._count = 0
        self._states = [self._fresh] * self.num_envs
        if self.seat == 2:
            self._states = [self._opponent_places(self._fresh, rng) for rng in self._rngs]

    def _finish(self) -> np.ndarray:
        """Place every game's cells in the engine, run all games on the packed kernel,
        and return ``(N, 2)`` live cells per seat at the end."""
        from engine.life.packed_runs import PackedRun, advance

        e = self._engine
        runs = []
        for i in range(self.num_envs):
            state = self._states[i]
            for a in self._order[i].tolist():  # one action per cell, as the single env
                x, y = self.cell(a)
                state = e.apply_action(state, self.seat, {"type": "place", "cells": [[x, y]]})
            state = e.end_player_turn(state, self.seat)
            if self.seat == 1:
                state = self._opponent_places(state, self._rngs[i])
            runs.append(state)
        packed = [(i, PackedRun(s)) for i, s in enumerate(runs) if e.summary(s).phase == "running"]
        advance([(run, self.config["max_generations"]) for _, run in packed])
        for i, run in packed:
            # where the packed run stopped, the engine's state exactly (tick from the
            # run's base by the generations it ran); then the redraw round passes
            state = run.state()
            if e.summary(state).phase == "redraw":
                for seat in (1, 2):
                    state = e.end_player_turn(state, seat)
            runs[i] = state
        cells = np.zeros((self.num_envs, 2), np.int64)
        for i, s in enumerate(runs):
            view = e.get_visible_state(s, None)
            per = {p["id"]: int(p.get("cells") or 0) for p in view["players"]}
            cells[i] = (per.get(1, 0), per.get(2, 0))
        return cells

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """New games; game ``i`` seeded with ``seed + i`` (None: the constructor's
        ``seed`` the first time, else fresh entropy). Returns ``(obs, infos)``."""
        if seed is None:
            seed, self.seed = self.seed, None
        self._rngs = [seeding.np_random(None if seed is None else seed + i)[0] for i in range(self.num_envs)]
        self._begin()
        return self._observe(), {}

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Place one cell per game; after the last, run every game to its end.

        Raises:
            RuntimeError: before :meth:`reset`.
            LifeActionError: a cell already placed or not in the zone (nothing changes).
        """
        if not self._rngs:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions, dtype=np.int64).reshape(-1)
        n = self.num_envs
        if actions.shape != (n,):
            raise ValueError(f"actions must be {n} indices, got shape {actions.shape}")
        cells = self.zone_w * self.zone_h
        bad = (actions < 0) | (actions >= cells)
        bad[~bad] = self._placed[np.flatnonzero(~bad), actions[~bad]]
        if bad.any():
            raise LifeActionError(f"action not a free cell of the zone in games {np.flatnonzero(bad)[:10].tolist()}", np.flatnonzero(bad))
        self._placed[np.arange(n), actions] = True
        self._order[:, self._count] = actions
        self._count += 1
        rewards = np.zeros(n, np.float32)
        done = np.zeros(n, bool)
        infos: dict[str, Any] = {}
        if self._count == self.budget:
            final = self._finish()
            total = final.sum(axis=1)
            own = final[:, self.seat - 1]
            rewards = np.where(total > 0, own / np.maximum(total, 1), 0.0).astype(np.float32)
            done[:] = True
            infos["final_cells"] = final
            self._begin()
        return self._observe(), rewards, done, np.zeros(n, bool), infos

    def _observe(self) -> dict[str, np.ndarray]:
        n = self.num_envs
        x0, y0, x1, y1 = self.zone
        obs = np.zeros((n, 2, self.height, self.width), np.uint8)
        obs[:, 0, y0:y1, x0:x1] = self._placed.reshape(n, self.zone_h, self.zone_w)
        obs[:, 1] = self._zone_plane
        return {"observation": obs, "action_mask": (~self._placed).astype(np.int8)}

    def close(self) -> None:
        """Nothing to release."""


def life_placement_vector_env(num_envs: int = 256, opponent: str | Opponent = "random", **config: Any) -> LifePlacementVectorEnv:
    """``num_envs`` Life placement games stepped together; ``config`` as
    :class:`LifePlacementVectorEnv`."""
    return LifePlacementVectorEnv(num_envs, opponent, **config)
