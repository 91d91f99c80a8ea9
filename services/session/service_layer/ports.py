"""The small interfaces the session's service layer talks to (cosmicpython "adapters"):
the event store, the snapshot store and the rules (the engine client).

Production adapters: :class:`services.session.store.EventStore` (JetStream),
:class:`services.session.snapshots.SnapshotStore` (KV ``GAME_SNAPSHOTS``),
:class:`services.session.engine_client.EngineClient` (gRPC, several replicas). In-memory
fakes for unit tests live in ``tests/support/fakes.py``; one contract test
(tests/integration/test_event_store.py) runs against both event stores.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from cellwar.v1 import engine_pb2, events_pb2
from services.session.adapters.snapshots import Snapshot


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

    async def put(self, game_id: str, snap: Snapshot, *, latest: bool = True) -> bool:
        """Store a snapshot (``latest``: also as the game's latest); False when it was
        not stored."""
        ...

    async def latest(self, game_id: str) -> Snapshot | None:
        """The newest snapshot, or None."""
        ...

    async def at_or_before(self, game_id: str, seq: int) -> Snapshot | None:
        """The snapshot with the greatest seq <= ``seq``, or None."""
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
