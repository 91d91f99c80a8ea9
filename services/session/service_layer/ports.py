"""The small interfaces the session's service layer talks to (cosmicpython "ports"): the
event store, the snapshot store, the rules (the engine client), the lobby directory and
campaign progress, with the errors and values they share. The service layer types
against these only and never imports an adapter.

Production adapters: :class:`services.session.adapters.event_store.EventStore`
(JetStream), :class:`services.session.adapters.snapshots.SnapshotStore` (KV
``GAME_SNAPSHOTS``), :class:`services.session.adapters.engine_client.EngineClient` (gRPC,
several replicas), :class:`services.session.adapters.directory.Directory`,
:class:`services.session.adapters.profiles.Profiles`. In memory:
services/session/adapters/memory.py (one contract test,
tests/integration/test_event_store.py, runs against both event stores).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from cellwar.v1 import engine_pb2, events_pb2
from cellwar.v1.codes import ErrorCode
from services.common.errors import ServiceError


class ConcurrencyError(Exception):
    """Another writer appended to the game since the caller read it; reload and retry."""

    def __init__(self, game_id: str, expected_last_seq: int) -> None:
        super().__init__(f"game {game_id}: the log moved past seq {expected_last_seq}")
        self.game_id = game_id
        self.expected_last_seq = expected_last_seq


class DuplicateCommandError(Exception):
    """The log already holds an event of this command id (a retry inside the store's
    de-duplication window)."""

    def __init__(self, game_id: str, command_id: str) -> None:
        super().__init__(f"game {game_id}: command {command_id!r} is already recorded")
        self.game_id = game_id
        self.command_id = command_id


class StoreUnavailable(ServiceError):
    """The event store did not answer (code ``UNAVAILABLE``); the write may or may not
    have landed."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.UNAVAILABLE, message)


@dataclass(frozen=True)
class Snapshot:
    """A game state after event ``seq`` (per-game) whose store position (the stream
    sequence in JetStream) is ``stream_seq``."""

    seq: int
    stream_seq: int
    state: engine_pb2.GameState


class EventLog(Protocol):
    """Each game's log: events with per-game seqs 1, 2, ... and no gaps.

    ``append`` is fenced by the expected last seq (optimistic concurrency) and
    de-duplicated by command id; both failures leave the log unchanged.
    """

    async def append(
        self,
        game_id: str,
        events: Sequence[events_pb2.Event],
        expected_last_seq: int,
        command_id: str = "",
        *,
        system: int = 0,
    ) -> list[events_pb2.Event]:
        """Append after ``expected_last_seq``; returns the stored copies (seq, time,
        game_id, command_id filled; the first ``system`` events are the system's: no
        command id). Raises ConcurrencyError, DuplicateCommandError, StoreUnavailable."""
        ...

    async def read(
        self,
        game_id: str,
        from_seq: int = 1,
        to_seq: int | None = None,
        *,
        start_stream_seq: int | None = None,
    ) -> list[events_pb2.Event]:
        """Events ``from_seq``..``to_seq`` inclusive (None = to the end). Raises
        StoreUnavailable."""
        ...

    async def last_seq(self, game_id: str) -> int:
        """The seq of the game's last event (0 = none). Raises StoreUnavailable."""
        ...

    def read_pages(self, game_id: str, from_seq: int = 1) -> AsyncIterator[list[events_pb2.Event]]:
        """The events from ``from_seq`` on, in pages (never the whole log at once).
        Raises StoreUnavailable."""
        ...

    def stream_seq_of(self, game_id: str) -> int:
        """A store position of the game's last event as last seen (0 = unknown), for
        ``read(start_stream_seq=...)`` and snapshots."""
        ...

    def position_before(self, game_id: str, seq: int) -> int:
        """A store position at or before the game's event ``seq`` as far as known (0 =
        the start)."""
        ...

    def forget(self, game_id: str) -> None:
        """Drop what the store remembers of a game."""
        ...


class SnapshotRepository(Protocol):
    """Snapshots of states (a cache: failures read as "no snapshot")."""

    async def put(
        self, game_id: str, snap: Snapshot, *, latest: bool = True, history: bool = True
    ) -> bool:
        """Store a snapshot: as the game's latest (``latest``) and as one of its history
        (``history``: :meth:`at_or_before` finds it after a later latest replaced it);
        False when it was not stored."""
        ...

    async def latest(self, game_id: str) -> Snapshot | None:
        """The newest snapshot, or None."""
        ...

    async def at_or_before(self, game_id: str, seq: int) -> Snapshot | None:
        """The latest snapshot if its seq is <= ``seq``, else the history snapshot with
        the greatest seq <= ``seq``, or None."""
        ...


class Rules(Protocol):
    """The engine, seen from the session: every call carries the state it works on.
    Failures are ServiceError with the engine's code (``UNAVAILABLE`` when down)."""

    engine_version: str

    async def decide(
        self,
        state: engine_pb2.GameState | None,
        command_type: str,
        actor: int,
        payload: bytes,
        *,
        game_id: str = "",
        generations_before: int = 0,
        view_players: Sequence[int] | None = None,
    ) -> engine_pb2.DecideReply:
        """Events, state and views after one command (``generations_before``
        unrecorded generations recorded first: ``reply.ticked`` leading events)."""
        ...

    async def run(self, items: Sequence[engine_pb2.RunItem]) -> list[engine_pb2.RunResult]:
        """Advance running games kept in the engine's run cache (the packed tick path)."""
        ...

    async def fold(
        self, state: engine_pb2.GameState | None, events: Sequence[events_pb2.Event]
    ) -> engine_pb2.GameState | None:
        """``state`` with ``events`` applied (None = from GameCreated)."""
        ...

    async def refresh(self, state: engine_pb2.GameState) -> engine_pb2.GameState:
        """``state`` with its policy as this engine computes it (a snapshot written by
        an older engine)."""
        ...

    async def tick(
        self, items: Sequence[tuple[engine_pb2.GameState, int]]
    ) -> engine_pb2.TickReply:
        """Up to n generations of many running games."""
        ...

    async def views(
        self, state: engine_pb2.GameState, player_ids: Sequence[int], *, reveal: bool = False
    ) -> list[bytes]:
        """JSON views, in the order of ``player_ids`` (0 = spectator)."""
        ...

    async def valid_actions(
        self, state: engine_pb2.GameState, player_id: int, unit_id: int
    ) -> bytes:
        """JSON list of a unit's legal actions."""
        ...

    async def player_log(self, events: Sequence[events_pb2.Event], player_id: int) -> bytes:
        """JSON list: what a player may read of a whole log."""
        ...

    async def reenact(
        self, events: Sequence[events_pb2.Event], origin: bytes = b""
    ) -> engine_pb2.ReenactReply:
        """A recorded log decided again: the events a new game records, state, views."""
        ...


class DirectoryPort(Protocol):
    """The lobby directory (services/session/adapters/directory.py): one entry per game,
    mirrored in memory."""

    #: game id -> entry, for every game not finished.
    entries: dict[str, dict[str, Any]]

    async def fetch(self, game_id: str) -> dict[str, Any] | None:
        """The entry of ``game_id`` (a finished game's too), None when there is none."""
        ...

    async def put(self, game_id: str, entry: dict[str, Any]) -> None:
        """Store an entry (failures are logged, never raised)."""
        ...


class ProgressStore(Protocol):
    """Campaign progress (services/session/adapters/profiles.py)."""

    async def check_level(self, profile_id: str, level: Any) -> None:
        """Raises ServiceError ``LEVEL_LOCKED``, ``PROFILE_NOT_FOUND``, ``UNAVAILABLE``."""
        ...

    async def record_finished(
        self, game_id: str, profile_id: str, engine: Rules, state: engine_pb2.GameState
    ) -> None:
        """Merge a finished game's outcome into its profile (never raises)."""
        ...


class GameData(Protocol):
    """Read-only game data of the engine: the Life stamp library and the campaign
    levels, JSON bytes. Failures are ServiceError."""

    async def patterns(self) -> bytes:
        """``Engine.Patterns``."""
        ...

    async def levels(self) -> bytes:
        """``Engine.Levels``."""
        ...
