"""Unit ids: what a player sees of them must not depend on what it cannot see
(nothing else leaks, not counts, not ids: docs/architecture/rules.md "CellWar").

Version 2 (:mod:`engine.versions`) draws ids per owner: the owner's n-th unit (0-based,
start units first in config order, then each infantry its factories produce) gets

    ``id = id_base + n * players + owner``

so the ids a player holds are a function of its own units alone (how many it started
with and produced), never of how many units other players have, had or produced. Other
players' ids never reach a player while the game runs: views show enemy units with
``"id": null`` (:mod:`engine.cellwar.fog`), filtered logs reduce another player's action
to ``{"dx", "dy"}`` and the cells it saw (:mod:`engine.cellwar.log`), ``valid_actions``
lists own units only. Once the game is finished everything is public.

Version 1 numbered start units 1..len(units) in config order (so a player's own ids told
how many enemy units the config listed before its own) and produced infantry
``len(config.units) + k * players + owner``; it stays here for the logs it wrote.

``id_base`` is 0 for a game created under version 2; a version-1 game upgraded to
version 2 mid-game gets an ``id_base`` above every id version 1 could have issued, so no
id is ever reused.
"""

from __future__ import annotations

from dataclasses import replace

from engine.cellwar.config import CellWarConfig
from engine.cellwar.state import CellWarState
from engine.versions import at_least


def start_ids(config: CellWarConfig, rules: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(ids, issued)``: the id of each start unit in config order, and the ids issued
    per owner (index owner - 1; empty under version 1)."""
    if not at_least(rules, "2"):
        return tuple(range(1, len(config.units) + 1)), ()
    counts = [0] * config.players
    ids = []
    for spec in config.units:
        ids.append(counts[spec.owner - 1] * config.players + spec.owner)
        counts[spec.owner - 1] += 1
    return tuple(ids), tuple(counts)


def next_id(state: CellWarState, owner: int) -> tuple[int, CellWarState]:
    """``(id, state)``: the id of ``owner``'s next new unit and the state that counts it.

    Version 1: ``len(config.units) + produced * players + owner`` (``produced`` is counted
    by the caller). Version 2: ``id_base + issued[owner - 1] * players + owner``.
    """
    players = state.config.players
    if not at_least(state.rules, "2"):
        seat = state.player(owner)
        assert seat is not None
        return len(state.config.units) + seat.produced * players + owner, state
    issued = list(state.issued)
    n = issued[owner - 1]
    issued[owner - 1] = n + 1
    return state.id_base + n * players + owner, replace(state, issued=tuple(issued))


def upgrade(state: CellWarState, version: str) -> CellWarState:
    """The state under the rules of ``version`` (newer than ``state.rules``): from version 1
    to 2, ids continue above every id version 1 could have issued."""
    if at_least(state.rules, "2") or not at_least(version, "2"):
        return replace(state, rules=version)
    players = state.config.players
    produced = max((p.produced for p in state.players), default=0)
    top = max((u.id for u in state.units), default=0)
    base = max(top, len(state.config.units) + produced * players + players)
    return replace(state, rules=version, issued=(0,) * players, id_base=base)
