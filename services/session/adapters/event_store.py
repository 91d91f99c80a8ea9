"""The event store: each game's log is the JetStream subject ``games.<game_id>.events``.

Stream ``GAME_EVENTS`` (docs/architecture/contracts.md): file storage, deny delete and purge, a duplicate
window of 2 minutes. Writes carry ``Nats-Expected-Last-Subject-Sequence`` (optimistic
concurrency: one writer per game wins) and, for commands, ``Nats-Msg-Id`` =
``<game_id>:<command_id>:<index>`` (JetStream de-duplication within its window; the
window is stream-wide, so the id is scoped by game: a key reused in another game is
another message). Reads use batched direct gets, never a consumer. Messages are
``cellwar.v1.Event`` protobufs; ``Event.seq`` is the per-game sequence (1-based, no gaps),
distinct from the stream sequence JetStream assigns across all games.

Group commit (docs/architecture/batching.md): with ``sync_interval: always`` the server
fsyncs once per separately published message, so many games' appends in flight together
do not share a flush. Appends waiting together are therefore sent as one JetStream
atomic batch (``Nats-Batch-Id``, NATS >= 2.12, ``allow_atomic`` on the stream): the server
stores the whole batch and fsyncs it once before the commit's ack, or stores none of it.
Each append still carries its fence on its first message and its ``Nats-Msg-Id`` s, and
its caller's await resolves only on the commit's ack.

Finish notices: an append whose events include ``GameFinished`` also stores that event
once more on ``games.<game_id>.finished`` (:func:`finished_subject`, ``Nats-Msg-Id``
``<game_id>:finished``), after its events and in the same atomic batch (such an append
always goes as one: the notice lands with the finish or neither does), so a consumer
that only needs the finished games (the matchmaker's ratings,
services/matchmaker/projection.py) filters on ``games.*.finished`` instead of taking
every event of every game. The notice is not part of the log: reads, fences and
``last_seq`` see only ``games.<game_id>.events``. On a server without atomic batches the
notice is published right after the events (a crash in between leaves it out).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import nats.errors
import nats.js.errors
import structlog
from google.protobuf.timestamp_pb2 import Timestamp
from nats.js import api
from nats.js.client import JetStreamContext

from cellwar.v1 import events_pb2
from cellwar.v1.codes import EventType
from services.common.nats.direct import connection, direct_get_batch
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
    "FINISHED_SUBJECTS",
    "STREAM",
    "ConcurrencyError",
    "DuplicateCommandError",
    "EventStore",
    "StoreUnavailable",
    "finished_subject",
    "msg_id",
    "stamped",
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
#: Reads again of a read that ended before the leader's last event (a direct get answered
#: by a replica still catching up), and the pause before the first (seconds, doubling).
_BEHIND_TRIES = 5
_BEHIND_PAUSE_S = 0.05
#: Bytes per batched direct get (the server stops a batch after this many).
_FETCH_BYTES = 8 * 1024 * 1024
#: Appends in flight at most per store (its window); an append past it waits for a slot.
WINDOW = 1024
#: Messages per atomic batch at most (the server refuses more than 1000); a longer append
#: is sent in parts of this many, each fenced on the one before.
BATCH_MAX = 500
#: Fewer waiting messages than this are published one by one: an atomic batch costs the
#: server about 3 ms of staging (a folder per batch, ``bench/appends.py``), while
#: separate fsynced publishes take ~0.2 ms each, so below ~10 the batch is slower.
BATCH_MIN = 8
#: Commits (atomic batches or rounds of separate publishes) in flight at once per store.
COMMITS = 2
#: Server error codes of an atomic batch. 10174: atomic publish disabled on the stream.
_ATOMIC_DISABLED = 10174
#: Lowest NATS server with atomic batch publish.
_ATOMIC_SINCE = (2, 12)


def subject(game_id: str) -> str:
    """The subject of a game's log. Raises ValueError for an id that is not URL-safe."""
    if not GAME_ID_PATTERN.match(game_id):
        raise ValueError(f"invalid game id {game_id!r}")
    return f"games.{game_id}.events"


def finished_subject(game_id: str) -> str:
    """The subject of a game's finish notice (the module docstring). Raises ValueError
    for an id that is not URL-safe."""
    return subject(game_id).removesuffix(".events") + ".finished"


#: Every game's finish notice (a consumer's filter).
FINISHED_SUBJECTS = "games.*.finished"


def msg_id(game_id: str, command_id: str, index: int) -> str:
    """``Nats-Msg-Id`` of event ``index`` of a command: scoped by game, as JetStream
    de-duplicates across the whole stream."""
    return f"{game_id}:{command_id}:{index}"


def stamped(
    game_id: str,
    events: Sequence[events_pb2.Event],
    expected_last_seq: int,
    command_id: str = "",
    system: int = 0,
) -> list[events_pb2.Event]:
    """Copies of ``events`` as a log stores them after per-game seq ``expected_last_seq``
    (this store and the one in memory, services/session/adapters/memory.py): ``game_id``,
    ``seq`` (expected_last_seq + 1, + 2, ...), one ``time`` (now) and ``command_id``
    filled in, but the first ``system`` events (the system's) get no command id."""
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
        stored.append(event)
    return stored


@dataclass
class _Append:
    """One append waiting for its commit: its messages (data, headers) in order, the first
    fenced; ``done`` resolves to their stream sequences, or the error. ``notice``: the
    finish notice stored after them (subject, data, headers), when the append finishes
    the game."""

    subject: str
    messages: list[tuple[bytes, dict[str, str]]]
    fence: int
    done: asyncio.Future[list[int]] = field(repr=False)
    notice: tuple[str, bytes, dict[str, str]] | None = None

    @property
    def size(self) -> int:
        """Messages this append stores, its notice included."""
        return len(self.messages) + (self.notice is not None)

    def resolve(self, seqs: list[int]) -> None:
        if not self.done.done():
            self.done.set_result(seqs)

    def fail(self, exc: BaseException) -> None:
        if self.done.done():
            return
        if isinstance(exc, asyncio.CancelledError):
            self.done.cancel()
        else:
            self.done.set_exception(exc)


class EventStore:
    """JetStream event store.

    Keeps, per game, the per-game seq and stream sequence of the last event it saw, so
    an append needs no extra round trip; when the caller's expected seq differs from
    that, the store asks JetStream for the subject's last message.

    Args:
        js: a JetStream context.
        replicas: stream replicas (1 locally, 3 in a cluster).
        timeout: seconds to wait for one NATS request.
        window: appends in flight at most (:data:`WINDOW`).
        group_commit: send appends waiting together as one atomic batch (when the server
            and the stream allow it); False publishes every message on its own.

    Appends go through a queue drained by at most :data:`COMMITS` commits at once: each
    takes what waits (up to :data:`BATCH_MAX` messages) and sends it as one atomic batch
    (:data:`BATCH_MIN` messages or more) or as separate publishes. A batch the server
    refuses stored nothing (it is atomic): its appends are then published one by one, so
    each gets its own answer (a lost fence, a duplicate command).
    """

    def __init__(
        self,
        js: JetStreamContext,
        *,
        replicas: int = 1,
        timeout: float = 5.0,
        window: int = WINDOW,
        group_commit: bool = True,
    ) -> None:
        self.js = js
        self.replicas = replicas
        self.timeout = timeout
        self._window = asyncio.Semaphore(window)
        self._queue: deque[_Append] = deque()
        self._commits = 0
        self._taking = False  # a commit task is about to take what is queued
        self._tasks: set[asyncio.Task[None]] = set()
        # None: not known yet (asked on the first commit); False: publish one by one
        self._atomic: bool | None = None if group_commit else False
        self.stats = dict.fromkeys(
            ("batches", "batched_appends", "separate_appends", "refused_batches"), 0
        )
        self._tail: dict[str, tuple[int, int]] = {}  # game_id -> (game seq, stream seq)
        # game_id -> {game seq: stream seq} every POSITION_EVERY events seen (reads skip
        # the start of a long log from the nearest one)
        self._positions: dict[str, dict[int, int]] = {}

    async def ensure_stream(self) -> None:
        """Create the ``GAME_EVENTS`` stream, or update it to this configuration (with
        ``allow_atomic`` when the server has atomic batches: the group commit)."""
        config = api.StreamConfig(
            name=STREAM,
            subjects=["games.*.events", FINISHED_SUBJECTS],
            storage=api.StorageType.FILE,
            retention=api.RetentionPolicy.LIMITS,
            deny_delete=True,
            deny_purge=True,
            duplicate_window=DUPLICATE_WINDOW_S,
            num_replicas=self.replicas,
            allow_direct=True,
            allow_atomic=self._server_has_atomic() or None,
        )
        try:
            info = await self.js.add_stream(config)
        except nats.js.errors.BadRequestError:
            info = await self.js.update_stream(config)
        if self._atomic is None:
            self._atomic = bool(info.config.allow_atomic) and self._server_has_atomic()

    def _server_has_atomic(self) -> bool:
        """True when the connected server publishes atomic batches (NATS >= 2.12): an
        older one would store a batch's messages one by one, unfenced."""
        version = connection(self.js).connected_server_version
        return (version.major, version.minor) >= _ATOMIC_SINCE

    async def _atomic_allowed(self) -> bool:
        """Whether commits may use atomic batches: the server's version and the stream's
        ``allow_atomic`` (asked once; a store that never ran :meth:`ensure_stream`)."""
        if self._atomic is None:
            if not self._server_has_atomic():
                self._atomic = False
            else:
                try:
                    info = await self.js.stream_info(STREAM)
                except (TimeoutError, nats.errors.Error):
                    return False  # this commit goes one by one; asked again next time
                self._atomic = bool(info.config.allow_atomic)
        return self._atomic

    def commit_stats(self) -> dict[str, int]:
        """Counts so far: atomic ``batches`` sent and the appends they carried
        (``batched_appends``), appends published one by one (``separate_appends``),
        batches the server refused (``refused_batches``, then sent one by one)."""
        return dict(self.stats)

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

        The stored copies are returned, stamped by :func:`stamped`. The first ``system``
        events are the system's (the generations a running game ran before the command,
        recorded in the same append): no ``command_id``, no ``Nats-Msg-Id``; the
        command's events are numbered from 0 after them.

        Returns once the server acknowledged every event (after its fsync), possibly in
        one atomic batch with other games' appends; waits first for a slot of the window
        (:data:`WINDOW` appends in flight). An append of more than :data:`BATCH_MAX`
        events goes in parts, each fenced on the part before.

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
            stored = stamped(game_id, events, expected_last_seq, command_id, system)
            finish = next((e for e in stored if e.type == EventType.GAME_FINISHED), None)
            messages = [
                (
                    event.SerializeToString(),
                    {"Nats-Msg-Id": msg_id(game_id, command_id, i - system)}
                    if event.command_id
                    else {},
                )
                for i, event in enumerate(stored)
            ]
            for start in range(0, len(messages), BATCH_MAX):
                part = messages[start : start + BATCH_MAX]
                notice = None
                if finish is not None and start + BATCH_MAX >= len(messages):  # the last part
                    notice = (
                        finished_subject(game_id),
                        finish.SerializeToString(),
                        {"Nats-Msg-Id": f"{game_id}:finished"},
                    )
                try:
                    seqs = await self._commit_one(subj, part, stream_seq, notice)
                except nats.js.errors.APIError as exc:
                    if exc.err_code in _WRONG_LAST_SEQUENCE:
                        self._tail.pop(game_id, None)
                        raise ConcurrencyError(game_id, expected_last_seq + start) from exc
                    raise
                except DuplicateCommandError:
                    self._tail.pop(game_id, None)
                    raise DuplicateCommandError(game_id, command_id) from None
                stream_seq = seqs[-1]
                self._tail[game_id] = (expected_last_seq + start + len(part), stream_seq)
            return stored
        except (TimeoutError, nats.errors.Error) as exc:
            if isinstance(exc, nats.js.errors.APIError) and exc.err_code is not None:
                log.error("append_refused", game_id=game_id, err_code=exc.err_code, error=str(exc))
            self._tail.pop(game_id, None)
            raise StoreUnavailable(f"event store: {exc}") from exc

    async def _commit_one(
        self,
        subj: str,
        messages: list[tuple[bytes, dict[str, str]]],
        fence: int,
        notice: tuple[str, bytes, dict[str, str]] | None = None,
    ) -> list[int]:
        """Queue one append (at most :data:`BATCH_MAX` messages, the first fenced on
        stream sequence ``fence``; ``notice``: its finish notice) inside the window; its
        messages' stream sequences once the server acknowledged them (after its fsync).

        Raises:
            nats.js.errors.APIError: the server refused it (a lost fence: 10071/10164).
            DuplicateCommandError: JetStream de-duplicated one of its messages (game and
                command filled in by the caller).
            nats.errors.Error / TimeoutError: NATS did not answer; it may have landed.
        """
        async with self._window:
            item = _Append(subj, messages, fence, asyncio.get_running_loop().create_future(), notice)
            if not self._queue and not self._commits:
                # nothing waits or is in flight: commit it now, in the caller's task
                self._commits += 1
                try:
                    await self._commit([item])
                finally:
                    self._commits -= 1
                    self._kick()
            else:
                self._queue.append(item)
                self._kick()
            return await item.done

    def _kick(self) -> None:
        """Start a commit task when appends wait, fewer than :data:`COMMITS` run and
        none is about to take them."""
        if self._queue and self._commits < COMMITS and not self._taking:
            self._commits += 1
            task = asyncio.get_running_loop().create_task(self._drain())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _drain(self) -> None:
        """Commit what waits, batch after batch, until the queue is empty."""
        try:
            while self._queue:
                # one turn of the loop first: the callers the last commit answered queue
                # their next appends, which then go in this batch (not in another task's)
                self._taking = True
                try:
                    await asyncio.sleep(0)
                finally:
                    self._taking = False
                take, size = [], 0
                while self._queue and (
                    not take or size + self._queue[0].size <= BATCH_MAX
                ):
                    item = self._queue.popleft()
                    if item.done.done():  # its caller was cancelled while it waited: not sent
                        continue
                    take.append(item)
                    size += item.size
                if take:
                    await self._commit(take)
        finally:
            self._commits -= 1
            self._kick()

    async def _commit(self, take: list[_Append]) -> None:
        """One commit: an atomic batch when enough messages wait, or an append finishes
        its game (its notice goes with it), and the server allows it; else separate
        publishes. Every append taken gets its answer, even when the commit is
        cancelled."""
        try:
            batch = sum(i.size for i in take) >= BATCH_MIN or any(i.notice for i in take)
            if batch and await self._atomic_allowed():
                await self._commit_batch(take)
            else:
                await self._commit_separately(take)
        except BaseException as exc:
            for item in take:
                item.fail(exc)
            if not isinstance(exc, Exception):
                raise

    async def _commit_separately(self, items: list[_Append]) -> None:
        """Publish each append's messages one by one (each fenced on the ack before),
        the appends side by side (not those whose caller was cancelled meanwhile: after a
        refused batch nothing of theirs is stored)."""
        items = [item for item in items if not item.done.done()]
        self.stats["separate_appends"] += len(items)
        if len(items) == 1:  # no task for one (the path of every append at low load)
            await self._publish_chain(items[0])
        else:
            await asyncio.gather(*(self._publish_chain(item) for item in items))

    async def _publish_chain(self, item: _Append) -> None:
        seqs: list[int] = []
        stream_seq = item.fence
        try:
            for data, extra in item.messages:
                headers = {"Nats-Expected-Last-Subject-Sequence": str(stream_seq), **extra}
                ack = await self.js.publish(
                    item.subject, data, timeout=self.timeout, headers=headers
                )
                if ack.duplicate:
                    raise DuplicateCommandError("", "")
                stream_seq = ack.seq
                seqs.append(stream_seq)
            if item.notice is not None:  # after the events: a duplicate is the same notice
                notice_subject, data, headers = item.notice
                await self.js.publish(notice_subject, data, timeout=self.timeout, headers=headers)
        except Exception as exc:  # noqa: BLE001 - handed to the append that waits
            item.fail(exc)
            return
        item.resolve(seqs)

    async def _commit_batch(self, items: list[_Append]) -> None:
        """Send ``items`` as one atomic batch, awaiting the commit's ack (the server
        fsyncs the batch once before it). A refused batch stored nothing: its appends are
        then published one by one. A batch whose commit got no answer fails all of them
        (all or none of it landed)."""
        nc = connection(self.js)  # an atomic batch is core publishes with headers
        batch_id = uuid.uuid4().hex
        total = sum(item.size for item in items)
        k = 0
        reply = None
        for item in items:
            sends = [(item.subject, data, extra) for data, extra in item.messages]
            if item.notice is not None:
                sends.append(item.notice)
            for j, (subj, data, extra) in enumerate(sends):
                k += 1
                headers = {"Nats-Batch-Id": batch_id, "Nats-Batch-Sequence": str(k), **extra}
                if j == 0:  # the rest of an append follows it inside the atomic batch
                    headers["Nats-Expected-Last-Subject-Sequence"] = str(item.fence)
                if k < total:
                    await nc.publish(subj, data, headers=headers)
                else:
                    headers["Nats-Batch-Commit"] = "1"
                    reply = await nc.request(subj, data, timeout=self.timeout, headers=headers)
        answer = json.loads(reply.data) if reply is not None else {}
        error = answer.get("error")
        if error is None and answer.get("count") == total:
            self.stats["batches"] += 1
            self.stats["batched_appends"] += len(items)
            seq = int(answer["seq"]) - total  # a batch's messages take consecutive sequences
            for item in items:
                item.resolve(list(range(seq + 1, seq + 1 + len(item.messages))))
                seq += item.size
            return
        code = (error or {}).get("err_code")
        self.stats["refused_batches"] += 1
        if code == _ATOMIC_DISABLED:
            self._atomic = False
        log.info(
            "atomic_batch_refused", appends=len(items), err_code=code, error=str(error or answer)
        )
        await self._commit_separately(items)

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

        A direct get may be answered by any replica of the stream, one still catching up
        included (``allow_direct``: "retrieves a message from any server, not only the
        leader", nats.c ``js_DirectGetMsg``). So a read that ends before ``to_seq`` (or
        any read to the end) asks the stream leader for the game's last event
        (``$JS.API.STREAM.MSG.GET``, answered by the leader only) and reads the rest
        again until it reaches that event: what the leader had when the read began is
        always in the answer.

        Raises:
            StoreUnavailable: NATS did not answer, or the replicas answering stayed behind
                the leader through :data:`_BEHIND_TRIES` reads again.
        """
        if start_stream_seq:
            start, at_seq = start_stream_seq, max(from_seq - 1, 1)
        else:
            at_seq, start = self._position(game_id, from_seq)
        out: list[events_pb2.Event] = []
        reached, end = await self._read_from(game_id, from_seq, to_seq, max(start, 1), at_seq, out)
        pause = _BEHIND_PAUSE_S
        for again in range(_BEHIND_TRIES + 1):
            have = out[-1].seq if out else from_seq - 1
            if reached or (to_seq is not None and have >= to_seq):
                return out
            leader = await self.last_seq(game_id)
            want = leader if to_seq is None else min(to_seq, leader)
            if have >= want:
                return out
            if again == _BEHIND_TRIES:
                break
            log.info("read_behind_leader", game_id=game_id, seq=have, leader_seq=want)
            await asyncio.sleep(pause)
            pause *= 2
            if end:  # on from the last message read (else from the same start again)
                start, at_seq = end + 1, have
            reached, end = await self._read_from(game_id, have + 1, to_seq, max(start, 1), at_seq, out)
        log.warning("read_behind_leader", game_id=game_id, seq=have, leader_seq=want, tries=_BEHIND_TRIES)
        raise StoreUnavailable(
            f"event store: the replicas answering reads of game {game_id} stay behind the stream"
            " leader (a node catching up); retry"
        )

    async def _read_from(
        self,
        game_id: str,
        from_seq: int,
        to_seq: int | None,
        start: int,
        at_seq: int,
        out: list[events_pb2.Event],
    ) -> tuple[bool, int]:
        """Append to ``out`` the events ``from_seq``..``to_seq`` read by batched direct
        gets from stream sequence ``start`` (``at_seq``: the game seq there, or before).
        Returns whether the read went past ``to_seq`` (so nothing is missing) and the
        stream sequence of the last message read (0: none).

        Raises:
            StoreUnavailable: NATS did not answer.
        """
        subj = subject(game_id)
        last: tuple[int, int] | None = None
        done = False
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
        return done, last[1] if last else 0

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
