"""In-memory stand-ins of the matchmaker's ports, for tests and a NATS-less loop: a KV
bucket (:class:`MemoryBucket`), the event stream (:class:`MemoryEventLog`) and the
session (:class:`MemorySession`, which also serves the games' logs to the ratings
projection). services/matchmaker/bootstrap.py ``memory_ports()`` bundles them.

They keep the semantics the service layer relies on, as NATS KV has them:

- one revision counter per bucket, raised by every write to any key (a stream
  sequence); ``create`` fails with :class:`~services.matchmaker.store.Conflict` when
  the key holds a value, ``update`` when the key's last revision is not the one given
  (a deleted key's last revision is its delete marker's, an absent key's 0);
- values are stored as the JSON bytes NATS would hold (a reader never shares a
  caller's dict);
- ``ttl_s``: a value is gone ``ttl_s`` seconds after its last write (the bucket's max
  age); as in a bucket without expiry markers, watchers are not told;
- a feed delivers the current keys, then every change in revision order, on the event
  loop after the write returns (as a KV watch does).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

from services.common.errors import ServiceError
from services.common.nats.subjects import subject_matches
from services.matchmaker.projection import GameLog
from services.matchmaker.store import Conflict, MatchEvent, RawChangeFn, dumps, loads

#: ``key_matches(pattern, key)``: True when a KV key matches a watch's subject filter
#: (``t.>``, ``r.*.p``): :func:`services.common.nats.subjects.subject_matches`.
key_matches = subject_matches


class MemoryFeed:
    """A watch of a :class:`MemoryBucket` (the :class:`~services.matchmaker.store.Feed`
    of a KV watch)."""

    def __init__(self, bucket: MemoryBucket, keys: str, on_change: RawChangeFn) -> None:
        self.bucket = bucket
        self.keys = keys
        self.on_change = on_change
        self.ready = asyncio.Event()
        self._active = False

    async def start(self) -> None:
        """Deliver the current keys, then follow the bucket's writes."""
        self._active = True
        for key, raw, revision in self.bucket.current(self.keys):
            self.on_change(key, raw, revision)
        self.bucket.feeds.add(self)
        self.ready.set()

    async def wait_ready(self, timeout: float) -> bool:
        """True once the current keys are delivered (at once after :meth:`start`)."""
        return self.ready.is_set()

    async def stop(self) -> None:
        """Stop following the bucket."""
        self._active = False
        self.bucket.feeds.discard(self)

    def deliver(self, key: str, raw: bytes | None, revision: int) -> None:
        """Hand one write to ``on_change`` on the next loop turn (if still watching)."""
        if key_matches(self.keys, key):
            asyncio.get_running_loop().call_soon(self._deliver, key, raw, revision)

    def _deliver(self, key: str, raw: bytes | None, revision: int) -> None:
        if self._active:
            self.on_change(key, raw, revision)


class MemoryBucket:
    """A KV bucket in memory (:class:`~services.matchmaker.store.KvStore`; semantics:
    module docstring).

    Args:
        name: the bucket's name (e.g. ``"MATCH_TICKETS"``).
        ttl_s: max age of a value after its last write (seconds; None: kept for ever).
        clock: unix time in seconds (for ``ttl_s``).
    """

    def __init__(self, name: str, *, ttl_s: float | None = None, clock: Callable[[], float] = time.time) -> None:
        self.name = name
        self.ttl_s = ttl_s
        self.clock = clock
        self.revision = 0
        #: key → (JSON bytes or None for a delete marker, revision, written at).
        self._entries: dict[str, tuple[bytes | None, int, float]] = {}
        self.feeds: set[MemoryFeed] = set()

    def _last(self, key: str) -> tuple[bytes | None, int] | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if self.ttl_s is not None and self.clock() - entry[2] >= self.ttl_s:
            del self._entries[key]  # aged out: gone, markers and all
            return None
        return entry[0], entry[1]

    def _write(self, key: str, raw: bytes | None) -> int:
        self.revision += 1
        self._entries[key] = (raw, self.revision, self.clock())
        for feed in list(self.feeds):
            feed.deliver(key, raw, self.revision)
        return self.revision

    def current(self, keys: str = ">") -> list[tuple[str, bytes, int]]:
        """``(key, JSON bytes, revision)`` of every live key matching ``keys``, by revision."""
        out = []
        for key in list(self._entries):
            last = self._last(key)
            if last is not None and last[0] is not None and key_matches(keys, key):
                out.append((key, last[0], last[1]))
        return sorted(out, key=lambda e: e[2])

    async def get(self, key: str) -> tuple[dict[str, Any], int] | None:
        """``(value, revision)``, or None when absent (deleted, aged out, not an object)."""
        last = self._last(key)
        if last is None or last[0] is None:
            return None
        value = loads(key, last[0])
        return None if value is None else (value, last[1])

    async def create(self, key: str, value: dict[str, Any]) -> int:
        """Write ``key`` if it holds no value; the revision. Raises Conflict."""
        last = self._last(key)
        if last is not None and last[0] is not None:
            raise Conflict(key)
        return self._write(key, dumps(value))

    async def update(self, key: str, value: dict[str, Any], revision: int) -> int:
        """Write ``key`` if its last revision is ``revision``; the new one. Raises Conflict."""
        last = self._last(key)
        if (last[1] if last is not None else 0) != revision:
            raise Conflict(key)
        return self._write(key, dumps(value))

    async def put(self, key: str, value: dict[str, Any]) -> int:
        """Write ``key`` unconditionally; the revision."""
        return self._write(key, dumps(value))

    async def delete(self, key: str) -> None:
        """Write a delete marker for ``key``."""
        self._write(key, None)

    async def keys(self) -> list[str]:
        """Every key holding a value."""
        return [key for key, _, _ in self.current()]

    def feed(self, keys: str, on_change: RawChangeFn) -> MemoryFeed:
        """A watch of the keys matching ``keys`` (not started)."""
        return MemoryFeed(self, keys, on_change)


class MemoryEventLog:
    """The event stream in memory (:class:`~services.matchmaker.store.EventSink`):
    :attr:`events` holds each event's body (``{"type", **data}``) in publish order; a
    repeated ``msg_id`` is dropped, as ``Nats-Msg-Id`` de-duplicates."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._ids: set[str] = set()

    def publish(self, event: MatchEvent, data: dict[str, Any], msg_id: str) -> None:
        """Append one event (unless ``msg_id`` was seen)."""
        if msg_id in self._ids:
            return
        self._ids.add(msg_id)
        self.events.append(loads(msg_id, dumps({"type": str(event), **data})) or {})

    async def flush(self, timeout: float = 5.0) -> None:
        """Nothing is pending in memory."""

    def of_type(self, event: MatchEvent) -> list[dict[str, Any]]:
        """The events of one type, in publish order."""
        return [e for e in self.events if e["type"] == str(event)]


class MemorySession:
    """The session in memory: a :class:`~services.matchmaker.session_port.SessionPort`
    (games created and joined idempotently by command id, player ids 1, 2, … per game)
    and the :class:`~services.matchmaker.projection.GameLogs` of its games (each created
    here; seats as joined; :meth:`finish` ends one).

    Attributes:
        games: ``game_id → {"kind", "config", "seats": [names], "winner", "cells",
            "finished"}``.
        fail: when set, every call raises it (e.g. ``ServiceError("UNAVAILABLE", ...)``).
        calls: session calls made.
    """

    def __init__(self) -> None:
        self.games: dict[str, dict[str, Any]] = {}
        self.by_command: dict[str, Any] = {}
        self.fail: ServiceError | None = None
        self.calls = 0
        self._finished: list[str] = []

    def _call(self) -> None:
        self.calls += 1
        if self.fail is not None:
            raise self.fail

    async def create_game(self, kind: str, config: dict[str, Any], command_id: str) -> str:
        """Create a game (same ``command_id``, same game); its id (12 hex characters)."""
        self._call()
        if command_id not in self.by_command:
            game_id = uuid.uuid4().hex[:12]
            self.games[game_id] = {"kind": kind, "config": dict(config), "seats": [], "winner": None,
                                   "cells": {}, "finished": False}
            self.by_command[command_id] = game_id
        return self.by_command[command_id]

    async def join(self, game_id: str, name: str, command_id: str) -> int:
        """Take the next seat (same ``command_id``, same seat); its player id.

        Raises:
            ServiceError: ``GAME_NOT_FOUND``; ``GAME_FULL`` past the config's players.
        """
        self._call()
        game = self.games.get(game_id)
        if game is None:
            raise ServiceError("GAME_NOT_FOUND", f"no game {game_id!r}")
        if command_id not in self.by_command:
            if len(game["seats"]) >= int(game["config"].get("players", 2)):
                raise ServiceError("GAME_FULL", f"game {game_id} is full")
            game["seats"].append(name)
            self.by_command[command_id] = len(game["seats"])
        return self.by_command[command_id]

    def finish(self, game_id: str, winner: int | None, cells: dict[int, int] | None = None) -> None:
        """End a game: ``winner`` (a player id; None: a draw), ``cells`` per player id
        (the final view's counts; default 0)."""
        game = self.games[game_id]
        game.update(winner=winner, cells=dict(cells or {}), finished=True)
        self._finished.append(game_id)

    async def final_view(self, game_id: str) -> dict[str, Any]:
        """The public view of a game: ``{"phase", "winner", "players": [{"id", "name",
        "cells"}]}``. Raises ServiceError GAME_NOT_FOUND."""
        self._call()
        game = self.games.get(game_id)
        if game is None:
            raise ServiceError("GAME_NOT_FOUND", f"no game {game_id!r}")
        return {
            "phase": "finished" if game["finished"] else "playing",
            "winner": game["winner"],
            "players": [
                {"id": pid, "name": name, "cells": int(game["cells"].get(pid, 0))}
                for pid, name in enumerate(game["seats"], start=1)
            ],
        }

    async def read(self, game_id: str, matchmade: bool = False) -> GameLog | None:
        """The :class:`GameLog` of a game made here (None: no such game)."""
        game = self.games.get(game_id)
        if game is None:
            return None
        return GameLog(
            game_id,
            kind=game["kind"],
            config=dict(game["config"]),
            created_here=True,
            seats=[{"player_id": pid, "name": name, "profile_id": ""}
                   for pid, name in enumerate(game["seats"], start=1)],
            winner=game["winner"],
            finished=game["finished"],
        )

    async def finished_games(self) -> list[str]:
        """The finished games, in the order they finished."""
        return list(self._finished)
