"""CellWar policies that act on the observation of :func:`client.rl.cellwar_env`
(numpy only; no engine, no server): each has ``act(observation) -> int`` (a legal
action index, :data:`client.rl.observation.VECTORS`) and ``reset()`` (a new game).

A policy object plays one seat of one game at a time: the heuristic and the trained
policy remember where they saw the enemy, so call ``reset()`` between games.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np

from client.bots.heuristic import choose_action
from client.rl.features import FEATURES, Memory, action_features
from client.rl.observation import VECTORS, VISIBLE, acting_cell, action_kinds, units_of

#: The checked-in trained CellWar policy (see client/rl/MODEL_CARD.md).
TRAINED_PATH = Path(__file__).resolve().parents[1] / "rl" / "policies" / "cellwar.npz"


class NoLegalActionError(ValueError):
    """The observation's ``action_mask`` is all zeros (it is not this player's move)."""


def _legal(observation: dict[str, Any]) -> np.ndarray:
    legal = np.flatnonzero(observation["action_mask"])
    if len(legal) == 0:
        raise NoLegalActionError("no legal action in this observation: it is not this player's move")
    return legal


class RandomPolicy:
    """Uniform over the legal actions (seeded ``random.Random``)."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def reset(self) -> None:
        """Nothing to forget (the generator runs on)."""

    def act(self, observation: dict[str, Any]) -> int:
        """A legal action at random. Raises NoLegalActionError on an all-zero mask."""
        return int(self.rng.choice(_legal(observation).tolist()))


class HeuristicPolicy:
    """The API bot's heuristic (:func:`client.bots.heuristic.choose_action`) on an
    observation: it sees the same units and legal moves, remembers where it saw
    enemies, and draws its coin flips from its own seeded generator.

    Args:
        seed: seeds the generator.
        fortify_chance: as :class:`client.bots.cellwar.CellWarBot`.
    """

    name = "heuristic"

    def __init__(self, seed: int = 0, fortify_chance: float = 0.1) -> None:
        self.rng = random.Random(seed)
        self.fortify_chance = fortify_chance
        self.remembered: set[tuple[int, int]] = set()

    def reset(self) -> None:
        """Forget where enemies were seen."""
        self.remembered = set()

    def act(self, observation: dict[str, Any]) -> int:
        """The heuristic's choice for the unit that must act."""
        _legal(observation)
        planes = observation["observation"]
        units = units_of(planes)
        ys, xs = np.nonzero(planes[VISIBLE])
        seen = set(zip(xs.tolist(), ys.tolist(), strict=True))
        enemies = {(u["x"], u["y"]) for u in units if u["owner"] != 1}
        self.remembered = (self.remembered - seen) | enemies
        kinds = action_kinds(observation)
        actions = [
            {"dx": dx, "dy": dy, "kind": kind, "index": i}
            for i, ((dx, dy), kind) in enumerate(zip(VECTORS, kinds, strict=True))
            if kind is not None
        ]
        h, w = planes.shape[1:]
        choice = choose_action(
            self.rng,
            you=1,
            units=units,
            here=acting_cell(planes),
            actions=actions,
            width=w,
            height=h,
            remembered=self.remembered,
            fortify_chance=self.fortify_chance,
        )
        return int(choice["index"])


class LinearPolicy:
    """Scores each legal action by ``features @ weights`` and plays the best
    (:mod:`client.rl.features`); ties go to the lowest index.

    Args:
        weights: ``(FEATURES,)`` floats.
    """

    name = "linear"

    def __init__(self, weights: np.ndarray) -> None:
        weights = np.asarray(weights, dtype=np.float32).reshape(-1)
        if weights.shape != (FEATURES,):
            raise ValueError(f"weights must have {FEATURES} entries, got {weights.shape}")
        self.weights = weights
        self.memory = Memory()

    def reset(self) -> None:
        """Forget the enemy sightings."""
        self.memory.reset()

    def scores(self, observation: dict[str, Any]) -> np.ndarray:
        """``(9,)`` scores, ``-inf`` where the mask is 0 (updates the memory)."""
        self.memory.update(observation["observation"])
        scores = action_features(observation, self.memory) @ self.weights
        return np.where(observation["action_mask"] > 0, scores, -np.inf)

    def act(self, observation: dict[str, Any]) -> int:
        """The legal action with the highest score."""
        _legal(observation)
        return int(np.argmax(self.scores(observation)))


class TrainedPolicy(LinearPolicy):
    """The checked-in trained policy (``client/rl/policies/cellwar.npz``: ``weights``
    and its metadata; client/rl/MODEL_CARD.md), numpy only.

    Raises:
        FileNotFoundError: no artifact at ``path``.
        ValueError: the artifact's features are not this code's (``features`` key).
    """

    name = "trained"

    def __init__(self, path: str | Path = TRAINED_PATH) -> None:
        with np.load(Path(path), allow_pickle=False) as data:
            if int(data["features"]) != FEATURES:
                raise ValueError(f"{path} was trained on {int(data['features'])} features, this code has {FEATURES}")
            weights = data["weights"]
            self.meta = {k: data[k].tolist() for k in data.files if k != "weights"}
        super().__init__(weights)
