"""The lobby's rules over a directory entry (services/session/adapters/directory.py holds
the entries): the ``phase`` of a finished game, ``last_event_at`` rounded to the minute,
and when a game counts as abandoned (docs/abandoned-games.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

#: The ``phase`` of a finished game's entry (the directory writes it for any kind).
FINISHED = "finished"
#: ``last_event_at`` is the last event's time rounded down to this step (seconds), so a
#: running game rewrites its entry at most once per step.
LAST_EVENT_STEP_S = 60


def last_event_at(unix_s: float) -> str:
    """``last_event_at`` of an entry: ``unix_s`` rounded down to :data:`LAST_EVENT_STEP_S`,
    ISO 8601 UTC."""
    return datetime.fromtimestamp(unix_s - unix_s % LAST_EVENT_STEP_S, UTC).isoformat()


def unix_of(iso: str) -> float | None:
    """Unix seconds of an ISO 8601 time (UTC when it names no zone); None when it does not
    parse."""
    try:
        when = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def idle_s(entry: dict[str, Any], now: float) -> float | None:
    """Seconds since the last event of an entry's game (``last_event_at``, else
    ``created_at``); None when the entry names no readable time."""
    when = unix_of(str(entry.get("last_event_at") or entry.get("created_at") or ""))
    return None if when is None else max(0.0, now - when)


def is_abandoned(entry: dict[str, Any], after_s: float, now: float) -> bool:
    """A started, unfinished game with no event for ``after_s`` seconds (a waiting game
    has its own expiry, ``CELLWAR_WAITING_GAME_TTL_S``)."""
    if entry.get("phase") == FINISHED or entry.get("expirable"):
        return False
    idle = idle_s(entry, now)
    return idle is not None and idle >= after_s
