"""A CellWar search bot: flat Monte-Carlo over determinized worlds, built on the
environment's ``set_state`` (an event log) and ``clone``.

It sees only its own observations. Hidden information is sampled, never read
(*determinization*): at each decision it builds ``samples`` worlds that agree with
everything it has seen this turn:

- its own units and the enemy units in sight at the start of this turn, exactly;
- enemy units seen earlier and now in the fog, where it last saw them or one step
  away (each kept with probability ``keep``), on cells it cannot see now; before any
  sighting, the mirror image of its own start (starts are point-symmetric);
- at least one hidden enemy infantry when nothing else is believed (the game is still
  on, so the enemy has units somewhere).

Each world is a CellWar event log: ``GameCreated`` with those units (the bot is player
1, the enemy player 2), the joins, then the bot's own actions of this turn replayed, so
the world stands exactly where the real game stands for everything the bot can see.
It searches where it matters: when an enemy unit in sight is within ``radius`` cells
of the unit that must act (elsewhere it plays the rollout policy's choice), and over
the ``top`` actions the rollout policy scores best. For each of them it clones each
world, plays the action, lets a rollout policy (the trained policy by default) play on for both sides
until the enemy's turn is over, and scores the world by material (infantry 1,
fortification 1.5, factory 3; ±50 for a won or lost game). The action with the best
mean score is played; ties go to the rollout policy's own choice.

Two players only (with more, every enemy is modelled as one player).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import numpy as np

from cellwar.v1.codes import EventType
from client.bots.policies import LinearPolicy, TrainedPolicy, _legal
from client.rl.codes import SNAPSHOT_FORMAT
from client.rl.observation import (
    ENEMY_FACTORY,
    ENEMY_FORTIFICATION,
    ENEMY_INFANTRY,
    OWN_FACTORY,
    OWN_FORTIFICATION,
    OWN_INFANTRY,
    PENDING,
    STANDING_2,
    VECTORS,
    VISIBLE,
    acting_cell,
)

#: Material value of a unit type in the score of a world.
VALUES = {"infantry": 1.0, "fortification": 1.5, "factory": 3.0}
#: Score of a won (lost: minus) world.
WIN = 50.0

Cell = tuple[int, int]
_ENEMY_PLANES = ((ENEMY_INFANTRY, "infantry"), (ENEMY_FORTIFICATION, "fortification"), (ENEMY_FACTORY, "factory"))
_OWN_PLANES = ((OWN_INFANTRY, "infantry"), (OWN_FORTIFICATION, "fortification"), (OWN_FACTORY, "factory"))


def _cells(plane: np.ndarray) -> list[Cell]:
    ys, xs = np.nonzero(plane)
    return list(zip(xs.tolist(), ys.tolist(), strict=True))


class SearchPolicy:
    """Determinized flat Monte-Carlo search (module docstring).

    Args:
        seed: seeds the sampling of worlds.
        samples: worlds per decision.
        keep: chance that an enemy seen before is in a sampled world.
        radius: search only when an enemy in sight is this close (Chebyshev, cells).
        top: actions searched (the rollout policy's best; all when it has no ``scores``).
        rollout: the policy that plays on in the worlds (default: the trained policy;
            any object with ``act``/``reset``, optionally ``scores``).
    """

    name = "search"

    def __init__(
        self,
        seed: int = 0,
        samples: int = 2,
        keep: float = 0.8,
        radius: int = 3,
        top: int = 3,
        rollout: Any = None,
    ) -> None:
        self.rng = random.Random(seed)
        self.samples = samples
        self.keep = keep
        self.radius = radius
        self.top = top
        self.searched = 0
        self.rollout = rollout if rollout is not None else TrainedPolicy()
        self._blank = copy.deepcopy(self.rollout)
        self._blank.reset()
        self.reset()

    def reset(self) -> None:
        """Forget the last game."""
        self.believed: dict[Cell, tuple[str, int]] = {}
        self._prior = True
        self._turn_start: np.ndarray | None = None
        self._turn_actions: list[tuple[Cell, int, int]] = []
        self.rollout.reset()

    # -- belief

    def _observe(self, planes: np.ndarray) -> None:
        h, w = planes.shape[1:]
        own = planes[OWN_INFANTRY] | planes[OWN_FORTIFICATION] | planes[OWN_FACTORY]
        if self._prior:
            self._prior = False
            self.believed = {(w - 1 - x, h - 1 - y): ("infantry", 0) for x, y in _cells(own)}
        seen = set(_cells(planes[VISIBLE]))
        self.believed = {c: t for c, t in self.believed.items() if c not in seen}
        for plane, kind in _ENEMY_PLANES:
            for x, y in _cells(planes[plane]):
                standing = (2 if planes[STANDING_2, y, x] else 1) if kind == "fortification" else 0
                self.believed[(x, y)] = (kind, standing)
        if np.array_equal(planes[PENDING], own):  # every unit still to act: a new turn
            self._turn_start = planes.copy()
            self._turn_actions = []

    def _world(self, here: Cell) -> dict[str, Any] | None:
        """One sampled world as an env snapshot, or None when this sample does not fit."""
        start = self._turn_start
        assert start is not None
        h, w = start.shape[1:]
        acted = [cell for cell, _, _ in self._turn_actions]
        own: list[dict[str, Any]] = []
        for plane, kind in _OWN_PLANES:
            for x, y in _cells(start[plane]):
                standing = (2 if start[STANDING_2, y, x] else 1) if kind == "fortification" else None
                unit = {"owner": 1, "type": kind, "x": x, "y": y}
                if standing is not None:
                    unit["standing"] = standing
                own.append(unit)

        def rank(u: dict[str, Any]) -> tuple[int, int]:
            cell = (u["x"], u["y"])
            if cell in acted:
                return (0, acted.index(cell))
            return (1, 0) if cell == here else (2 if u["type"] != "factory" else 3, 0)

        own.sort(key=rank)
        occupied = {(u["x"], u["y"]) for u in own}
        enemies: list[dict[str, Any]] = []
        seen_at_start = set(_cells(start[VISIBLE]))
        for plane, kind in _ENEMY_PLANES:
            for x, y in _cells(start[plane]):
                unit = {"owner": 2, "type": kind, "x": x, "y": y}
                if kind == "fortification":
                    unit["standing"] = 2 if start[STANDING_2, y, x] else 1
                enemies.append(unit)
                occupied.add((x, y))
        fog = [(x, y) for y in range(h) for x in range(w) if (x, y) not in seen_at_start]
        for (x, y), (kind, standing) in sorted(self.believed.items()):
            if (x, y) in seen_at_start or self.rng.random() > self.keep:
                continue
            if kind == "infantry":
                options = [
                    (x + dx, y + dy) for dx, dy in VECTORS
                    if 0 <= x + dx < w and 0 <= y + dy < h and (x + dx, y + dy) not in seen_at_start
                ]
                x, y = self.rng.choice(options) if options else (x, y)
            if (x, y) in occupied:
                continue
            unit = {"owner": 2, "type": kind, "x": x, "y": y}
            if kind == "fortification":
                unit["standing"] = standing or 1
            enemies.append(unit)
            occupied.add((x, y))
        if not enemies:
            free = [c for c in fog if c not in occupied]
            if not free:
                return None
            x, y = self.rng.choice(free)
            enemies.append({"owner": 2, "type": "infantry", "x": x, "y": y})
        units = own + enemies
        ids = {(u["x"], u["y"]): i for i, u in enumerate(own, start=1)}
        config = {"width": w, "height": h, "players": 2, "units": units}
        events: list[list[Any]] = [
            [EventType.GAME_CREATED, 0, {"kind": "cellwar", "config": config}],
            [EventType.PLAYER_JOINED, 1, {"player_id": 1, "name": "player_1"}],
            [EventType.PLAYER_JOINED, 2, {"player_id": 2, "name": "player_2"}],
        ]
        for cell, dx, dy in self._turn_actions:
            events.append([EventType.ACTION_APPLIED, 1, {"action": {"unit_id": ids[cell], "dx": dx, "dy": dy}}])
        return {
            "format": SNAPSHOT_FORMAT,
            "config": {"width": w, "height": h, "players": 2},
            "events": events,
            "env": {
                "agents": ["player_1", "player_2"],
                "rewards": {"player_1": 0.0, "player_2": 0.0},
                "cumulative_rewards": {"player_1": 0.0, "player_2": 0.0},
                "terminations": {"player_1": False, "player_2": False},
                "truncations": {"player_1": False, "player_2": False},
                "agent_selection": "player_1",
                "skip": None,
                "rng": np.random.default_rng(0).bit_generator.state,
            },
        }

    # -- search

    def _score(self, env: Any) -> float:
        state = env.backend.spectator_view()
        if state["phase"] == "finished":
            return WIN if state["winner"] == 1 else -WIN
        score = 0.0
        for u in state["units"]:
            score += VALUES[u["type"]] * (1 if u["owner"] == 1 else -1)
        return score

    def _fresh(self) -> Any:
        weights = getattr(self.rollout, "weights", None)
        if weights is not None:  # a linear policy: a new memory is all it takes
            return LinearPolicy(weights)
        return copy.deepcopy(self._blank)

    def _rollout(self, env: Any, first: int) -> float:
        env.step(first)
        # fresh copies: a rollout must not touch the real game's memory, nor one side's
        # sightings the other's
        policies = {"player_1": self._fresh(), "player_2": self._fresh()}
        enemy_played = False
        while env.agents:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            if agent == "player_2":
                enemy_played = True
            elif enemy_played:
                break  # the enemy's turn is over: score this world
            obs = env.observe(agent)
            env.step(policies[agent].act(obs))
        return self._score(env)

    def act(self, observation: dict[str, Any]) -> int:
        """The legal action with the best mean score over sampled worlds."""
        legal = _legal(observation).tolist()
        planes = observation["observation"]
        self._observe(planes)
        scorer = getattr(self.rollout, "scores", None)
        if scorer is not None:
            scores = scorer(observation)
            default = int(np.argmax(scores))
            ranked = sorted(legal, key=lambda a: -scores[a])[: self.top]
        else:
            default = self.rollout.act(observation)
            ranked = legal
        here = acting_cell(planes)
        if len(ranked) > 1 and here is not None and self._turn_start is not None and self._contact(planes, here):
            self.searched += 1
            choice = self._search(ranked, legal, here, default)
        else:
            choice = default
        if here is not None:
            dx, dy = VECTORS[choice]
            self._turn_actions.append((here, dx, dy))
        return int(choice)

    def _contact(self, planes: np.ndarray, here: Cell) -> bool:
        """An enemy in sight within :attr:`radius` of ``here``."""
        x, y = here
        r = self.radius
        window = planes[ENEMY_INFANTRY : ENEMY_FACTORY + 1, max(0, y - r) : y + r + 1, max(0, x - r) : x + r + 1]
        return bool(window.any())

    def _search(self, candidates: list[int], legal: list[int], here: Cell, default: int) -> int:
        from client.rl.cellwar import cellwar_env  # the engine, for the sampled worlds only

        h, w = self._turn_start.shape[1:]
        roots = []
        for _ in range(self.samples):
            snapshot = self._world(here)
            if snapshot is None:
                continue
            env = cellwar_env(width=w, height=h, max_rounds=10_000)
            try:
                env.set_state(snapshot)
            except Exception:  # the sample contradicts the rules (e.g. the world already ended)
                continue
            if env.legal_actions() != legal:
                continue
            roots.append(env)
        if not roots:
            return default
        totals = {a: 0.0 for a in candidates}
        for root in roots:
            for a in candidates:
                totals[a] += self._rollout(root.clone(), a)
        best = max(totals.values())
        if totals[default] >= best:
            return default
        return min(a for a, v in totals.items() if v == best)

