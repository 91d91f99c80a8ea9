"""The CellWar heuristic's decision for one unit, shared by the API bot
(:class:`client.bots.cellwar.CellWarBot`) and the in-process policy
(:class:`client.bots.policies.HeuristicPolicy`), so both play the same game.

For the unit that acts (its legal actions ``{"dx", "dy", "kind"}``, kinds as the
engine's ``valid_actions``: ``move``, ``attack``, ``fortify``, ``stand``,
``become_factory``, ``produce``):

* **attack** when it can: a unit or factory first; a fortification (whose first hit
  kills the attacker) only half the time when something else is possible;
* a **factory produces** toward the nearest enemy it knows of, else at random;
* a **fortification** holds (``stand``, on to a factory at 3) while an enemy is in
  sight or, otherwise, half the time; else it moves out like infantry;
* **infantry** fortifies now and then (``fortify_chance``, only when no enemy is in
  sight), else **moves toward the nearest visible enemy**, else toward the nearest
  cell where it last saw one, else toward the middle of the board.

Ties and coin flips use the caller's seeded ``random.Random``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

Cell = tuple[int, int]


def chebyshev(a: Cell, b: Cell) -> int:
    """Chebyshev distance in cells (one move covers 1)."""
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


def toward(
    rng: random.Random,
    actions: Sequence[Mapping[str, Any]],
    target: Callable[[Mapping[str, Any]], Cell],
    goals: Sequence[Cell],
) -> Mapping[str, Any]:
    """The action whose target cell is nearest to one of ``goals`` (random among equals;
    any at random without goals)."""
    if not goals:
        return rng.choice(actions)
    scored = [(min(chebyshev(target(a), g) for g in goals), a) for a in actions]
    best = min(score for score, _ in scored)
    return rng.choice([a for score, a in scored if score == best])


def choose_action(
    rng: random.Random,
    *,
    you: int | None,
    units: Iterable[Mapping[str, Any]],
    here: Cell,
    actions: Sequence[Mapping[str, Any]],
    width: int,
    height: int,
    remembered: Iterable[Cell] = (),
    fortify_chance: float = 0.1,
) -> Mapping[str, Any]:
    """One of ``actions`` for the unit at ``here`` (module docstring).

    Args:
        rng: the caller's seeded generator (consumed in a fixed pattern).
        you: the acting player's id; a unit whose ``owner`` differs is an enemy.
        units: the visible units ``{"owner", "type", "x", "y"}``.
        here: (x, y) of the acting unit, cells.
        actions: its legal actions, non-empty, each with ``dx``, ``dy`` and ``kind``.
        width, height: board size in cells.
        remembered: cells where enemies were seen before (goals when none is visible).
        fortify_chance: chance (0..1) that an infantry with no enemy in sight fortifies.

    Returns:
        The chosen element of ``actions``.
    """
    by_cell = {(int(u["x"]), int(u["y"])): u for u in units}
    enemies = [cell for cell, u in by_cell.items() if u.get("owner") != you]
    kinds: dict[str, list[Mapping[str, Any]]] = {}
    for action in actions:
        kinds.setdefault(action["kind"], []).append(action)

    def target(a: Mapping[str, Any]) -> Cell:
        return here[0] + int(a["dx"]), here[1] + int(a["dy"])

    attacks = kinds.get("attack", [])
    soft = [a for a in attacks if by_cell.get(target(a), {}).get("type") != "fortification"]
    if soft:
        return rng.choice(soft)
    others = [a for a in actions if a["kind"] != "attack"]
    if attacks and (not others or rng.random() < 0.5):
        return rng.choice(attacks)
    memory = sorted(remembered)
    if "produce" in kinds:
        return toward(rng, kinds["produce"], target, enemies or memory)
    holds = kinds.get("stand", []) + kinds.get("become_factory", [])
    if holds and (enemies or rng.random() < 0.5):
        return holds[0]
    moves = kinds.get("move", [])
    if "fortify" in kinds and not enemies and (not moves or rng.random() < fortify_chance):
        return kinds["fortify"][0]
    if moves:
        goals = enemies or memory
        if not goals:
            goals = [(width // 2, height // 2)]
        return toward(rng, moves, target, goals)
    return rng.choice(others or list(actions))
