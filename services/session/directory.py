"""The lobby directory in KV ``GAME_DIRECTORY``: ``<game_id>`` -> JSON
``{"kind", "config", "phase", "players_joined", "max_players", "created_at"}``
(``created_at``: ISO 8601 UTC). An in-memory mirror answers ListGames."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import nats.errors
import nats.js.errors
import structlog
from nats.js.kv import KeyValue

log = structlog.get_logger("cellwar.session.directory")


def now_iso() -> str:
    """The current UTC time, ISO 8601."""
    return datetime.now(UTC).isoformat()


class Directory:
    """Game metadata for the lobby, written through to KV."""

    def __init__(self, kv: KeyValue) -> None:
        self.kv = kv
        self.entries: dict[str, dict[str, Any]] = {}

    async def load(self) -> dict[str, dict[str, Any]]:
        """Read every entry from KV into the mirror; returns the mirror."""
        try:
            keys = await self.kv.keys()
        except nats.js.errors.NoKeysError:
            keys = []
        for key in keys:
            try:
                entry = await self.kv.get(key)
                if entry.value:
                    self.entries[key] = json.loads(entry.value)
            except (nats.js.errors.KeyNotFoundError, ValueError) as exc:
                log.warning("directory_entry_unreadable", game_id=key, error=str(exc))
        return self.entries

    async def fetch(self, game_id: str) -> dict[str, Any] | None:
        """The entry of ``game_id``: the mirror's, else read from KV into the mirror (an
        entry another instance wrote after this one started); None when there is none or
        KV does not answer (logged)."""
        if game_id in self.entries:
            return self.entries[game_id]
        try:
            entry = await self.kv.get(game_id)
            if entry.value:
                self.entries[game_id] = json.loads(entry.value)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return None
        except (TimeoutError, nats.errors.Error, ValueError) as exc:
            log.warning("directory_entry_unreadable", game_id=game_id, error=str(exc))
            return None
        return self.entries.get(game_id)

    async def put(self, game_id: str, entry: dict[str, Any]) -> None:
        """Store an entry (mirror first, then KV; a KV failure is logged, not raised:
        the directory is rebuilt from the event log when a game loads)."""
        self.entries[game_id] = entry
        try:
            await self.kv.put(game_id, json.dumps(entry, sort_keys=True).encode())
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning("directory_not_stored", game_id=game_id, error=str(exc))

    def open_games(self) -> list[tuple[str, dict[str, Any]]]:
        """Entries of games that are not finished, oldest first."""
        games = [(gid, e) for gid, e in self.entries.items() if e.get("phase") != "finished"]
        return sorted(games, key=lambda item: item[1].get("created_at", ""))
