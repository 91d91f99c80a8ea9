"""CellWar policies by name: :func:`load_policy`."""

from __future__ import annotations

from typing import Any, Protocol

#: Names of the policies that play offline (numpy, the engine).
POLICY_NAMES = ("random", "heuristic", "search", "trained")
#: Every name :func:`load_policy` knows: the offline ones and ``"llm"`` (a chat model
#: server, :class:`client.bots.llm.LLMPolicy`; docs/llm-players.md).
ALL_POLICY_NAMES = (*POLICY_NAMES, "llm")


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
            the env's ``set_state``; needs the engine and the ``rl`` extra),
            ``"trained"`` (the checked-in artifact; numpy only) or ``"llm"`` (a local
            chat model: ``url=...``, ``model=...``; :class:`client.bots.llm.LLMPolicy`).
        options: passed to the policy's class, e.g. ``seed=3`` (random, heuristic,
            search, llm), ``path=...`` (trained), ``rollouts=...`` (search),
            ``url="http://127.0.0.1:8080/v1", model="smollm2"`` (llm).

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
    if name == "llm":
        from client.bots.llm import LLMPolicy

        return LLMPolicy(**options)
    raise ValueError(f"unknown policy {name!r}; known: {', '.join(ALL_POLICY_NAMES)}")
