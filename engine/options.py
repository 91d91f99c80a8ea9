"""Config options every multiplayer kind shares (Life, CellWar): the turn timer and the
rated flag (docs/architecture/rules.md "Turn timers", docs/ratings.md).

- ``turn_time_s``: seconds a player has for a turn (CellWar turns; Life placement turns
  and redraw rounds), an integer 1..:data:`MAX_TURN_TIME_S`; ``null`` or absent = no
  timer. The engine has no clock: it only says which turn is timed and for how long
  (:mod:`engine.timers`); the session measures the time from the recorded event that
  began the turn.
- ``rated``: ``true`` makes a game created by link count for ratings (the matchmaker's
  ratings projection rates it when it finishes; seats joined with a profile record it
  in ``PlayerJoined``). Matchmade games are rated by the matchmaker's own record.

Both are normalised **only when set**: a config without a timer and not rated has no
such key, so the configs (and the state hashes) of every game recorded before these
options existed stay the same (docs/architecture/engine-versions.md).
"""

from __future__ import annotations

import re
from typing import Any

from cellwar.v1.codes import ErrorCode
from engine.errors import GameError

#: Longest turn timer, seconds (one day).
MAX_TURN_TIME_S = 86_400
#: The option keys (each kind's config accepts them besides its own).
OPTION_KEYS = frozenset({"turn_time_s", "rated"})
#: What a profile id may look like in a join (the session's ids are 32 hex characters).
_PROFILE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def parse_turn_time(value: Any) -> int | None:
    """``turn_time_s`` of a JSON config: None (no timer) or seconds 1..86400.

    Raises:
        GameError: ``INVALID_CONFIG`` for another type or a value out of range (a float
            such as 60.0 is refused: the timer counts whole seconds).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise GameError(
            ErrorCode.INVALID_CONFIG,
            f"turn_time_s must be an integer number of seconds 1..{MAX_TURN_TIME_S} or null, got {value!r}",
        )
    if not 1 <= value <= MAX_TURN_TIME_S:
        raise GameError(
            ErrorCode.INVALID_CONFIG, f"turn_time_s must be in 1..{MAX_TURN_TIME_S} seconds, got {value}"
        )
    return value


def parse_rated(value: Any) -> bool:
    """``rated`` of a JSON config (absent = false).

    Raises:
        GameError: ``INVALID_CONFIG`` unless it is true or false.
    """
    if value is None:
        return False
    if not isinstance(value, bool):
        raise GameError(ErrorCode.INVALID_CONFIG, f"rated must be true or false, got {value!r}")
    return value


def options_dict(turn_time_s: int | None, rated: bool) -> dict[str, Any]:
    """The normalised option keys of a config: only those that are set (module
    docstring: configs without them keep their old bytes)."""
    out: dict[str, Any] = {}
    if turn_time_s is not None:
        out["turn_time_s"] = turn_time_s
    if rated:
        out["rated"] = True
    return out


def seat_profile(state: Any, profile_id: Any) -> str:
    """The profile id a join records in ``PlayerJoined`` (``""`` = none): the one given
    (by the session, from a verified ``X-Profile-Token``) when the game is ``rated``;
    in an unrated game none is recorded (the log need not say who plays).

    Raises:
        GameError: ``MALFORMED`` for a profile id that is not 1..64 characters of
            ``A-Z a-z 0-9 _ -``.
    """
    if profile_id is None or profile_id == "":
        return ""
    if not isinstance(profile_id, str) or not _PROFILE_ID.fullmatch(profile_id):
        raise GameError(ErrorCode.MALFORMED, "profile_id must be 1..64 characters of A-Z a-z 0-9 _ -")
    return profile_id if getattr(getattr(state, "config", None), "rated", False) else ""
