"""The lobby directory in KV ``GAME_DIRECTORY``: a projection of each game's log, written
by the instance that appended the events that changed it.

``<game_id>`` -> JSON ``{"kind", "config", "phase", "players_joined", "max_players",
"created_at", "lease", "expirable", "last_event_at"?, "profile_id"?, "origin"?}`` (``origin``: where a fork
or an imported log came from, ``{"game_id"?, "seq"?, "file"?}``) where ``config`` is already the
lobby's (the keys the engine's policy hides are left out: a CellWar start position
would show enemy units), ``created_at`` ISO 8601 UTC, ``lease`` true while the game is
ticked (someone must hold its lease) and ``expirable`` true while its seats are open
and nothing has started (it expires after ``CELLWAR_WAITING_GAME_TTL_S``),
``last_event_at`` the ISO 8601 UTC time of its last event, rounded down to the minute
(:data:`LAST_EVENT_STEP_S`), absent in entries written before it existed.

An **abandoned** game (docs/abandoned-games.md): started (not ``expirable``), not
finished, and no event for ``CELLWAR_ABANDONED_AFTER_S`` (default 15 minutes; an entry
without ``last_event_at`` counts from ``created_at``). The lobby's pages leave it out;
its log and its seats stay, and its next event lists it again (the entry changes). A
hot-seat game whose browser was closed is one: no clock ends an untimed game whose
players all left at once (services/session/entrypoints/presence.py), so only the lobby's rule hides it.

Every instance mirrors the entries of unfinished games through one KV watch
(:class:`services.session.adapters.mirror.KvMirror`), so the lobby is current on every instance
and pages are served from memory.
"""

from __future__ import annotations

import base64
import json
import time
from datetime import UTC, datetime
from typing import Any

import nats.errors
import nats.js.errors
import structlog
from nats.js.kv import KeyValue

from cellwar.v1.codes import ErrorCode
from services.common.errors import ServiceError
from services.session.adapters.mirror import KvMirror
from services.session.domain.lobby import (
    FINISHED,
    LAST_EVENT_STEP_S,
    idle_s,
    is_abandoned,
    last_event_at,
)

#: The lobby's rules live in :mod:`services.session.domain.lobby`, importable from here too.
__all__ = [
    "DEFAULT_PAGE",
    "FINISHED",
    "LAST_EVENT_STEP_S",
    "MAX_PAGE",
    "Directory",
    "decode_cursor",
    "encode_cursor",
    "idle_s",
    "is_abandoned",
    "last_event_at",
    "now_iso",
]

log = structlog.get_logger("cellwar.session.directory")

#: Games per ListGames page when the request names none, and at most.
DEFAULT_PAGE = 1000
MAX_PAGE = 1000


def now_iso() -> str:
    """The current UTC time, ISO 8601."""
    return datetime.now(UTC).isoformat()


def _sort_key(game_id: str, entry: dict[str, Any]) -> tuple[str, str]:
    return str(entry.get("created_at", "")), game_id


def encode_cursor(key: tuple[str, str]) -> str:
    """An opaque page cursor for the sort key ``(created_at, game_id)``."""
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode("ascii")


def decode_cursor(cursor: str) -> tuple[str, str]:
    """Inverse of :func:`encode_cursor`. Raises ServiceError MALFORMED."""
    try:
        created, game_id = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        return str(created), str(game_id)
    except (ValueError, TypeError, UnicodeError) as exc:
        raise ServiceError(ErrorCode.MALFORMED, "cursor is not one a ListGames page gave") from exc


class Directory:
    """Game metadata for the lobby: written through to KV, mirrored from KV.

    Args:
        kv: the bucket ``GAME_DIRECTORY``.
        idle_after_s: pages leave out the games abandoned this long
            (``CELLWAR_ABANDONED_AFTER_S``, seconds; 0 = list every game).

    Attributes:
        entries: game id -> entry, for every game not finished (the mirror).
    """

    def __init__(self, kv: KeyValue, idle_after_s: float = 0.0) -> None:
        self.kv = kv
        self.idle_after_s = idle_after_s
        self.entries: dict[str, dict[str, Any]] = {}
        self.mirror = KvMirror(kv, self._on_change)

    def _on_change(self, key: str, value: bytes | None, revision: int) -> None:
        if value is None:
            self.entries.pop(key, None)
            return
        try:
            entry = json.loads(value)
        except ValueError:
            log.warning("directory_entry_unreadable", game_id=key)
            return
        self._keep(key, entry)

    def _keep(self, game_id: str, entry: dict[str, Any]) -> None:
        if not isinstance(entry, dict) or entry.get("phase") == FINISHED:
            self.entries.pop(game_id, None)
        else:
            self.entries[game_id] = entry

    async def start(self, timeout: float = 10.0) -> None:
        """Start mirroring; waits up to ``timeout`` seconds for the current entries."""
        await self.mirror.start()
        if not await self.mirror.wait_ready(timeout):
            log.warning("directory_not_ready", timeout_s=timeout)

    async def stop(self) -> None:
        """Stop mirroring."""
        await self.mirror.stop()

    async def fetch(self, game_id: str) -> dict[str, Any] | None:
        """The entry of ``game_id``: the mirror's, else read from KV (a finished game's);
        None when there is none or KV does not answer (logged)."""
        if game_id in self.entries:
            return self.entries[game_id]
        try:
            entry = await self.kv.get(game_id)
            return json.loads(entry.value) if entry.value else None
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return None
        except (TimeoutError, nats.errors.Error, ValueError) as exc:
            log.warning("directory_entry_unreadable", game_id=game_id, error=str(exc))
            return None

    async def put(self, game_id: str, entry: dict[str, Any]) -> None:
        """Store an entry (mirror first, then KV; a KV failure is logged, not raised: the
        next change of the game writes it again)."""
        self._keep(game_id, entry)
        try:
            await self.kv.put(game_id, json.dumps(entry, sort_keys=True).encode())
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning("directory_not_stored", game_id=game_id, error=str(exc))

    def page(
        self, page_size: int = 0, cursor: str = "", now: float | None = None
    ) -> tuple[list[tuple[str, dict]], str]:
        """One lobby page: open and running games oldest first, after ``cursor``, without
        the abandoned ones (:func:`is_abandoned` with :attr:`idle_after_s`, at ``now``,
        unix seconds, default the clock); returns ``(items, next cursor)`` ("" after the
        last page). ``page_size`` 0 = the default (:data:`DEFAULT_PAGE`), at most
        :data:`MAX_PAGE`.

        Raises:
            ServiceError: ``MALFORMED`` for a cursor no page gave.
        """
        size = min(page_size or DEFAULT_PAGE, MAX_PAGE)
        after = decode_cursor(cursor) if cursor else None
        games = sorted(self.entries.items(), key=lambda item: _sort_key(*item))
        if self.idle_after_s > 0:
            at = time.time() if now is None else now
            games = [g for g in games if not is_abandoned(g[1], self.idle_after_s, at)]
        if after is not None:
            games = [g for g in games if _sort_key(*g) > after]
        items = games[:size]
        more = len(games) > size
        return items, encode_cursor(_sort_key(*items[-1])) if more and items else ""

    def open_games(self) -> list[tuple[str, dict[str, Any]]]:
        """Every entry of a game not finished, oldest first."""
        return sorted(self.entries.items(), key=lambda item: _sort_key(*item))
