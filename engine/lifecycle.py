"""The end of a game that never started: a waiting game expires after a
configurable time, as an event (docs/architecture/scale-out.md "Waiting games expire; the
lobby pages").

``GameExpired`` (actor 0, payload ``{}``) is decided by :func:`engine.api.decide` for the
command ``expire`` and folded by :func:`engine.api.apply_event`; ``GameFinished``
(``{"winner": null, "result": ...}``) follows it like any end. Only a game whose seats
are still open (phase ``waiting``) expires; the session decides *when* (its setting
``CELLWAR_WAITING_GAME_TTL_S``), the engine decides *whether*.

Decision: an expired game is finished with no winner. Kinds with a ``result`` field
(Life, campaign) record ``"expired"``; CellWar derives ``result`` from the winner, so its
view shows ``null``. A kind module may define ``expire(state)`` itself.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from cellwar.v1.codes import ErrorCode
from engine.errors import GameError
from engine.kinds import rules_for

#: ``result`` of an expired game (kinds that record one).
EXPIRED = "expired"


def expire(state: Any) -> Any:
    """The finished state of a waiting game that expired.

    Raises:
        GameError: ``GAME_FINISHED`` (already over), ``WRONG_PHASE`` (not waiting: the
            game started, so it never expires).
    """
    own = getattr(rules_for(state.kind), "expire", None)
    if own is not None:
        return own(state)
    if state.phase == "finished":
        raise GameError(ErrorCode.GAME_FINISHED, "the game is over")
    if state.phase != "waiting":
        raise GameError(ErrorCode.WRONG_PHASE, "only a game whose seats are open expires")
    names = {f.name for f in fields(state)}
    changes: dict[str, Any] = {"phase": "finished", "turn": 0, "winner": None}
    if "result" in names:
        changes["result"] = EXPIRED
    if "seen" in names:
        changes["seen"] = 0
    return replace(state, **changes)
