"""The per-kind rule modules behind the one face of :mod:`engine`.

Each kind module (:mod:`engine.life.game`, :mod:`engine.campaign.game`,
:mod:`engine.cellwar.game`) exports the functions of :class:`KindRules`; :mod:`engine.api`
dispatches on ``state.kind`` or on the config's type through :func:`rules_for`. See the
module docstring of :mod:`engine.api` for the contract.

The registry is explicit: :data:`KIND_NAMES` names the kinds and :func:`registry` maps
each to its module, imported by name (no dynamic import, no module path strings). It is
filled on first use because some kind modules import :mod:`engine.api` themselves
(``engine.cellwar.game`` takes :class:`engine.api.Summary` from it), which imports this
module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from cellwar.v1.codes import ErrorCode
from engine.errors import GameError

#: The game kinds this engine knows, in the order they were added.
KIND_NAMES: tuple[str, ...] = ("life", "campaign", "cellwar")


class KindRules(Protocol):
    """What a kind module provides (the table in :mod:`engine.api`).

    States and configs are the kind's own frozen dataclasses (typed ``Any`` here: each
    kind has its own). Every function is pure; rule errors are :class:`GameError`.

    Optional functions, looked up with ``getattr`` by their callers and so not part of
    this protocol: ``upgrade``, ``claim_seat``, ``apply_action_run``, ``observers``
    (:mod:`engine.api`), ``turn_timer``, ``time_out``, ``timed_out_players``,
    ``idle_seats`` (:mod:`engine.timers`), ``expire`` (:mod:`engine.lifecycle`),
    ``policy`` (:mod:`engine.policy`).
    """

    def config_from_dict(self, data: dict[str, Any], /) -> Any:
        """Validate a JSON config; ``INVALID_CONFIG`` when it is not one."""
        ...

    def config_to_dict(self, config: Any, /) -> dict[str, Any]:
        """The normalised JSON config (defaults filled in)."""
        ...

    def new_game(self, config: Any, /, *, rules: str) -> Any:
        """A game waiting for its players under the rules of engine version ``rules``."""
        ...

    def add_player(self, state: Any, name: str, /) -> Any:
        """The next player id joins; ``GAME_FULL`` when full."""
        ...

    def apply_action(self, state: Any, player_id: int, action: dict[str, Any], /) -> Any:
        """One action (a JSON dict of the REST contract)."""
        ...

    def end_player_turn(self, state: Any, player_id: int, /) -> Any:
        """``player_id`` ends its turn."""
        ...

    def tick(self, state: Any, generations: int, /) -> Any:
        """Up to ``generations`` generations (Life kinds); stops early when the game stops running."""
        ...

    def remove_player(self, state: Any, player_id: int, /) -> Any:
        """The player and its cells leave the game."""
        ...

    def get_visible_state(
        self, state: Any, player_id: int | None, /, *, reveal: bool = False
    ) -> dict[str, Any]:
        """The JSON-ready view of ``player_id`` (None: a spectator); ``reveal``: the whole truth."""
        ...

    def get_valid_actions(
        self, state: Any, player_id: int, unit_id: Any, /
    ) -> list[dict[str, Any]]:
        """The actions ``player_id`` may take now (of ``unit_id`` in CellWar)."""
        ...

    def get_winner(self, state: Any, /) -> int | None:
        """The winning player id, None while running or on a draw."""
        ...

    def summary(self, state: Any, /) -> Any:
        """The :class:`engine.api.Summary` of the state."""
        ...

    def encode_state(self, state: Any, /) -> bytes:
        """The canonical encoding (equal states, equal bytes)."""
        ...

    def decode_state(self, data: bytes, /) -> Any:
        """The state of :meth:`encode_state`'s bytes."""
        ...

    def player_log(
        self, events: Iterable[Mapping[str, Any]], player_id: int, /
    ) -> list[dict[str, Any]]:
        """What ``player_id`` may read of a whole log."""
        ...


#: kind name -> its rule module, filled by :func:`registry` on first use.
_REGISTRY: dict[str, KindRules] = {}


def registry() -> Mapping[str, KindRules]:
    """Every kind name of :data:`KIND_NAMES` mapped to its rule module.

    Imports the kind modules on the first call (they may import :mod:`engine.api`,
    which imports this module: importing them at the top would be a cycle).
    """
    if not _REGISTRY:
        from engine.campaign import game as campaign_game
        from engine.cellwar import game as cellwar_game
        from engine.life import game as life_game

        loaded: dict[str, KindRules] = {
            "life": life_game,
            "campaign": campaign_game,
            "cellwar": cellwar_game,
        }
        _REGISTRY.update(loaded)
    return _REGISTRY


def rules_for(kind: str) -> KindRules:
    """The rule module of ``kind``.

    Raises:
        GameError: ``INVALID_CONFIG`` for an unknown kind (or one that is not a string).
    """
    if not isinstance(kind, str):
        raise GameError(
            ErrorCode.INVALID_CONFIG, f"the game kind must be a string, got {kind!r:.40}"
        )
    rules = registry().get(kind)
    if rules is None:
        raise GameError(
            ErrorCode.INVALID_CONFIG, f"unknown game kind {kind!r}; known: {sorted(KIND_NAMES)}"
        )
    return rules
