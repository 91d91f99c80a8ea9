"""The event store: each game's log is the JetStream subject ``games.<game_id>.events``.

Stream ``GAME_EVENTS`` (docs/architecture/contracts.md): file storage, deny delete and purge, a duplicate
window of 2 minutes. Writes carry ``Nats-Expected-Last-Subject-Sequence`` (optimistic
concurrency: one writer per game wins) and, for commands, ``Nats-Msg-Id`` =
``<game_id>:<command_id>:<index>`` (JetStream de-duplication within its window; the
window is stream-wide, so the id is scoped by game: a key reused in another game is
another message). Reads use batched direct gets, never a consumer. Messages are
``cellwar.v1.Event`` protobufs; ``Event.seq`` is the per-game sequence (1-based, no gaps),
distinct from the stream sequence JetStream assigns across all games.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import nats.errors
import nats.js.errors
import structlog
from google.protobuf.timestamp_pb2 import Timestamp
from nats.js import api
from nats.js.client import JetStreamContext

from cellwar.v1 import events_pb2
from services.common.nats.direct import direct_get_batch
from services.session.domain.game import GAME_ID_PATTERN, valid_game_id
from services.session.service_layer.ports import (
    ConcurrencyError,
    DuplicateCommandError,
    StoreUnavailable,
)

#: The errors of the event log are the port's (services/session/service_layer/ports.py),
#: importable from here too; ``valid_game_id`` is the domain's.
__all__ = [
    "DUPLICATE_WINDOW_S",
    "STREAM",
    "ConcurrencyError",
    "DuplicateCommandError",
    "EventStore",
    "StoreUnavailable",
    "msg_id",
    "subject",
    "valid_game_id",
]

log = structlog.get_logger("cellwar.session.store")

STREAM = "GAME_EVENTS"
#: Duplicate window of the stream (seconds): at least 2 minutes (docs/architecture/contracts.md).
DUPLICATE_WINDOW_S = 120.0
#: Server error code of a failed ``Nats-Expected-Last-Subject-Sequence`` check.
_WRONG_LAST_SEQUENCE = (10071, 10164)
#: The store remembers the stream sequence of every this many events of a game it read.
POSITION_EVERY = 100
#: Events per batched direct get.
_FETCH_BATCH = 1000
#: Bytes per batched direct get (the server stops a batch after this many).
_FETCH_BYTES = 8 * 1024 * 1024


def subject(game_id: str) -> str:
    """The subject of a game's log. Raises ValueError for an id that is not URL-safe."""
    if not GAME_ID_PATTERN.match(game_id):
        raise ValueError(f"invalid game id {game_id!r}")
    return f"games.{game_id}.events"


def msg_id(game_id: str, command_id: str, index: int) -> str:
    """``Nats-Msg-Id`` of event ``index`` of a command: scoped by game, as JetStream
    de-duplicates across the whole stream."""
    return f"{game_id}:{command_id}:{index}"


class EventStore:
    """JetStream event store.

    Keeps, per game, the per-game seq and stream sequence of the last event it saw, so
    an append needs no extra round trip; when the caller's expected seq differs from
    that, the store asks JetStream for the subject's last message.

    Args:
        js: a JetStream context.
        replicas: stream replicas (1 locally, 3 in a cluster).
        timeout: seconds to wait for one NATS request.
    """

    def __init__(self, js: JetStreamContext, *, replicas: int = 1, timeout: float = 5.0) -> None:
        self.js = js
        self.replicas = replicas
        self.timeout = timeout
        self._tail: dict[str, tuple[int, int]] = {}  # game_id -> (game seq, stream seq)
        # game_id -> {game seq: stream seq} every POSITION_EVERY events seen (reads skip
        # the start of a long log from the nearest one)
        self._positions: dict[str, dict[int, int]] = {}

    async def ensure_stream(self) -> None:
        """Create the ``GAME_EVENTS`` stream, or update it to this configuration."""
        config = api.StreamConfig(
            name=STREAM,
            subjects=["games.*.events"],
            storage=api.StorageType.FILE,
            retention=api.RetentionPolicy.LIMITS,
            deny_delete=True,
            deny_purge=True,
            duplicate_window=DUPLICATE_WINDOW_S,
            num_replicas=self.replicas,
            allow_direct=True,
        )
        try:
            await self.js.add_stream(config)
        except nats.js.errors.BadRequestError:
            await self.js.update_stream(config)

    async def _fetch_tail(self, game_id: str) -> tuple[int, int]:
        """(game seq, stream seq) of the game's last event; (0, 0) for an empty log."""
        try:
            raw = await self.js.get_last_msg(STREAM, subject(game_id))
        except nats.js.errors.NotFoundError:
            return 0, 0
        event = events_pb2.Event.FromString(raw.data or b"")
        return event.seq, raw.seq

    async def last_seq(self, game_id: str) -> int:
        """The per-game seq of the game's last event (0 = no events).

        Raises:
            StoreUnavailable: NATS did not answer.
        """
        try:
            tail = await self._fetch_tail(game_id)
        except (TimeoutError, nats.errors.Error) as exc:
            raise StoreUnavailable(f"event store: {exc}") from exc
        self._tail[game_id] = tail
        return tail[0]

    async def append(
        self,
        game_id: str,
        events: Sequence[events_pb2.Event],
        expected_last_seq: int,
        command_id: str = "",
        *,
        system: int = 0,
    ) -> list[events_pb2.Event]:
        """Append ``events`` after per-game seq ``expected_last_seq``.

        Each event gets ``game_id``, ``seq`` (expected_last_seq + 1, + 2, ...), ``time``
        and ``command_id`` filled in; the stored copies are returned. The first
        ``system`` events are the system's (the generations a running game ran before
        the command, recorded in the same append): no ``command_id``, no
        ``Nats-Msg-Id``; the command's events are numbered from 0 after them.

        Raises:
            ConcurrencyError: the log's last event is not ``expected_last_seq``.
            DuplicateCommandError: JetStream de-duplicated a message of ``command_id``.
            StoreUnavailable: NATS did not answer; the append may have partly landed.
        """
        subj = subject(game_id)
        try:
            tail = self._tail.get(game_id)
            if tail is None or tail[0] != expected_last_seq:
                tail = await self._fetch_tail(game_id)
                self._tail[game_id] = tail
            if tail[0] != expected_last_seq:
                raise ConcurrencyError(game_id, expected_last_seq)
            stream_seq = tail[1]
            now = Timestamp()
            now.GetCurrentTime()
            stored: list[events_pb2.Event] = []
            for i, draft in enumerate(events):
                event = events_pb2.Event()
                event.CopyFrom(draft)
                event.game_id = game_id
                event.seq = expected_last_seq + i + 1
                event.time.CopyFrom(now)
                event.command_id = command_id if i >= system else ""
                headers = {"Nats-Expected-Last-Subject-Sequence": str(stream_seq)}
                if command_id and i >= system:
                    headers["Nats-Msg-Id"] = msg_id(game_id, command_id, i - system)
                try:
                    ack = await self.js.publish(
                        subj, event.SerializeToString(), timeout=self.timeout, headers=headers
                    )
                except nats.js.errors.APIError as exc:
                    if exc.err_code in _WRONG_LAST_SEQUENCE:
                        self._tail.pop(game_id, None)
                        raise ConcurrencyError(game_id, event.seq - 1) from exc
                    raise
                if ack.duplicate:
                    self._tail.pop(game_id, None)
                    raise DuplicateCommandError(game_id, command_id)
                stream_seq = ack.seq
                self._tail[game_id] = (event.seq, stream_seq)
                stored.append(event)
            return stored
        except (TimeoutError, nats.errors.Error) as exc:
            if isinstance(exc, nats.js.errors.APIError) and exc.err_code is not None:
                log.error("append_refused", game_id=game_id, err_code=exc.err_code, error=str(exc))
            self._tail.pop(game_id, None)
            raise StoreUnavailable(f"event store: {exc}") from exc

    async def read(
        self,
        game_id: str,
        from_seq: int = 1,
        to_seq: int | None = None,
        *,
        start_stream_seq: int | None = None,
    ) -> list[events_pb2.Event]:
        """Events ``from_seq``..``to_seq`` (per-game seqs, inclusive; None = to the end).

        ``start_stream_seq`` (a stream sequence at or before the event ``from_seq``, e.g.
        kept in a snapshot) lets the read skip the start of a long log.

        Reads with batched direct gets (``$JS.API.DIRECT.GET``, ``next_by_subj`` +
        ``batch``, NATS >= 2.11): no consumer is created, so any number of concurrent
        replays stays clear of the server's consumer limit,
        :data:`_FETCH_BATCH` events per request.

        Raises:
            StoreUnavailable: NATS did not answer.
        """
        subj = subject(game_id)
        out: list[events_pb2.Event] = []
        if start_stream_seq:
            start, at_seq = start_stream_seq, max(from_seq - 1, 1)
        else:
            at_seq, start = self._position(game_id, from_seq)
        start = max(start, 1)
        last: tuple[int, int] | None = None
        try:
            while True:
                size = _FETCH_BATCH
                if to_seq is not None:  # a short read asks for what it needs, not 1000
                    at = last[0] + 1 if last else at_seq
                    size = max(1, min(_FETCH_BATCH, to_seq - at + 2))
                batch, pending = await self._direct_batch(subj, start, size)
                done = False
                for stream_seq, data in batch:
                    event = events_pb2.Event.FromString(data)
                    last = (event.seq, stream_seq)
                    if event.seq % POSITION_EVERY == 0:
                        self._positions.setdefault(game_id, {})[event.seq] = stream_seq
                    if to_seq is not None and event.seq > to_seq:
                        done = True
                        break
                    if event.seq >= from_seq:
                        out.append(event)
                if done or not batch or pending == 0:
                    break
                start = batch[-1][0] + 1
        except (TimeoutError, nats.errors.Error) as exc:
            raise StoreUnavailable(f"event store: {exc}") from exc
        if last is not None and pending == 0 and not done:
            self._tail[game_id] = last
        return out

    async def _direct_batch(
        self, subj: str, start: int, batch: int = _FETCH_BATCH
    ) -> tuple[list[tuple[int, bytes]], int]:
        """One batched direct get (:func:`services.common.nats.direct.direct_get_batch`):
        up to ``batch`` messages of ``subj`` from stream
        sequence ``start``; returns ``([(stream seq, data)], pending after them)``.

        Raises:
            nats.errors.Error / TimeoutError: NATS did not answer or refused.
        """
        return await direct_get_batch(
            self.js,
            STREAM,
            subj,
            start,
            batch=batch,
            max_bytes=_FETCH_BYTES,
            timeout=self.timeout,
        )

    def _position(self, game_id: str, seq: int) -> tuple[int, int]:
        """``(game seq, stream seq)`` of the nearest known event at or before ``seq``
        (``(1, 0)``: the start)."""
        known = self._positions.get(game_id)
        best = max((s for s in known if s <= seq), default=0) if known else 0
        return (best, known[best]) if best else (1, 0)

    def position_before(self, game_id: str, seq: int) -> int:
        """A stream sequence at or before the game's event ``seq``, as far as this store
        knows (0 = the start)."""
        return self._position(game_id, seq)[1]
    async def read_pages(
        self, game_id: str, from_seq: int = 1
    ) -> AsyncIterator[list[events_pb2.Event]]:
        """The events from ``from_seq`` to the end, one batched direct get
        (:data:`_FETCH_BATCH` events at most) per page, each page continuing from the
        stream position of the last: a long log is never held whole (``GET
        /game/{id}/events?format=jsonl``). Events appended while paging are included.

        Raises:
            StoreUnavailable: NATS did not answer.
        """
        subj = subject(game_id)
        start = max(self.position_before(game_id, from_seq), 1)
        try:
            while True:
                batch, pending = await self._direct_batch(subj, start)
                page = [
                    e
                    for e in (events_pb2.Event.FromString(data) for _, data in batch)
                    if e.seq >= from_seq
                ]
                if page:
                    yield page
                if not batch or pending == 0:
                    return
                start = batch[-1][0] + 1
        except (TimeoutError, nats.errors.Error) as exc:
            raise StoreUnavailable(f"event store: {exc}") from exc

    def stream_seq_of(self, game_id: str) -> int:
        """Stream sequence of the game's last event as last seen by this store (0 = unknown)."""
        tail = self._tail.get(game_id)
        return tail[1] if tail else 0

    def forget(self, game_id: str) -> None:
        """Drop what this store remembers of a game (an evicted game)."""
        self._tail.pop(game_id, None)
        self._positions.pop(game_id, None)
