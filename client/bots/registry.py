"""CellWar policies by name: :func:`load_policy`."""

from __future__ import annotations

from typing import Any, Protocol

#: Names :func:`load_policy` knows.
POLICY_NAMES = ("random", "heuristic", "search", "trained")


class Policy(Protocol):
    """What a CellWar policy offers (see :mod:`client.bots.policies`)."""

    def act(self, observation: dict[str, Any]) -> int:
        """A legal action index 0..8 for the observation's unit that must act."""

    def reset(self) -> None:
        """Forget the last game."""


def load_policy(name: str, **options: Any) -> Policy:
    """A fresh policy object by name.

    Args:
        name: ``"random"``, ``"heuristic"``, ``"search"`` (determinized Monte Carlo over
            the env's ``set_state``; needs the engine and the ``rl`` extra) or
            ``"trained"`` (the checked-in artifact; numpy only).
        options: passed to the policy's class, e.g. ``seed=3`` (random, heuristic,
            search), ``path=...`` (trained), ``rollouts=...`` (search).

    Raises:
        ValueError: an unknown name.
    """
    if name == "random":
        from client.bots.policies import RandomPolicy

        return RandomPolicy(**options)
    if name == "heuristic":
        from client.bots.policies import HeuristicPolicy

        return HeuristicPolicy(**options)
    if name == "trained":
        from client.bots.policies import TrainedPolicy

        return TrainedPolicy(**options)
    if name == "search":
        from client.bots.search import SearchPolicy

        return SearchPolicy(**options)
    raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICY_NAMES)}")
