"""Engine (rules) versions: which rules fold which event (docs/architecture/engine-versions.md).

Every event records the ``engine_version`` that decided it. A log must fold to its
recorded hashes forever, so a rules change that would fold an old event differently
bumps :data:`ENGINE_VERSION` and keeps the old behaviour reachable under the old number.

How a version reaches the rules: every game state carries ``rules``, the version whose
rules it follows. ``GameCreated`` fixes it (the event's ``engine_version``; the current
version for a new game). Folding a later event of a newer version first upgrades the
state to that version (:func:`engine.api.upgrade`); :func:`engine.api.decide` always
upgrades to the current version first, so an old game that goes on after an engine
upgrade continues under the new rules and its log records where the switch happened.
``RolledBack`` restores its recorded state as it was (its hash is the one recorded at
``to_seq``). Versions in a log never go down.

A state of version "1" encodes exactly as before versions existed (no ``rules`` key), so
the hashes recorded by version 1 stay valid; later versions add ``"rules"`` to the
state's canonical encoding.

=========  ==================================================================================
version    what changed
=========  ==================================================================================
``"1"``    the first recorded rules
``"2"``    no-op commands refused with ``NO_CHANGE`` (Life, campaign, removal of a player
           already out); CellWar unit ids drawn per owner (``id = n * players + owner`` for
           the owner's n-th unit, start units included); stamps read RLE as Golly does
           (:func:`engine.life.rle.parse`) and place only the cells the pattern's rule
           calls alive (:meth:`engine.life.rle.Pattern.live`)
``"3"``    Life stability digests hash the board's bit planes, not its uint8 cells
           (:func:`engine.life.stability.planes_digest`: a quarter of the bytes, and the
           packed tick path never unpacks a board for them); upgrading a Life state to 3
           empties its stability history (:func:`engine.life.game.upgrade`). The campaign
           and CellWar decide as in 2.
``"4"``    CellWar: a seat that lets two of its own turns in a row time out without acting
           is removed as disconnected (the seed: "Потеря связи: ждём таймаут, затем как
           отключение"; the last player left wins, "Ничья невозможна"): each player counts
           its ``idle`` turns and the state whether the current player ``turn_acted``
           (both in the canonical encoding from version 4 on), and the command
           ``time_out`` records ``TurnTimedOut`` then ``PlayerRemoved {"player_id",
           "reason": "disconnected"}`` (+ ``GameFinished``) (:func:`engine.removal.plan_time_out`,
           docs/game-end.md). Upgrading a running CellWar game to 4 counts its current turn as
           acted (what happened in it before is not known) and every ``idle`` from 0. Life and
           the campaign decide as in 3.
=========  ==================================================================================
"""

from __future__ import annotations

from cellwar.v1.codes import ErrorCode
from engine.errors import GameError

#: The version of the rules this code decides with; recorded in every new event.
ENGINE_VERSION = "4"

#: Every version this code can fold, oldest first.
VERSIONS = ("1", "2", "3", "4")


def check(version: object) -> str:
    """``version`` as a known version string.

    Raises:
        GameError: ``MALFORMED`` for a version this engine does not know (a log written by
            a newer engine, or garbage).
    """
    text = str(version)
    if text not in VERSIONS:
        raise GameError(
            ErrorCode.MALFORMED, f"engine version {text!r} is unknown to this engine (knows {list(VERSIONS)})"
        )
    return text


def at_least(rules: str, version: str) -> bool:
    """``rules`` is ``version`` or newer (both known versions)."""
    return VERSIONS.index(rules) >= VERSIONS.index(version)
