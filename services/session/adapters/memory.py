"""The session's ports in memory: one process, no NATS (tests, a fast local loop).

:class:`MemoryServer` stands for one NATS server shared by any number of session
instances (each :func:`services.session.bootstrap.memory_ports` of the same server is
another instance):

- :class:`MemoryEventLog`: each game's log with the JetStream store's contract
  (services/session/adapters/event_store.py): the expected last per-game seq as the fence
  (:class:`ConcurrencyError`), ``Nats-Msg-Id`` de-duplication within
  :data:`DUPLICATE_WINDOW_S` (:class:`DuplicateCommandError`), and
  :class:`StoreUnavailable` while the server is :attr:`MemoryServer.down`;
- :class:`MemoryKeyValue`: the subset of nats.py's ``KeyValue`` the session's KV adapters
  use (``get``, ``put``, ``create``, ``update(last=)``, ``delete(last=)``, ``purge``,
  ``keys``, ``watch``; a bucket TTL and per-message TTLs, expiry markers for watchers),
  so :class:`~services.session.adapters.snapshots.SnapshotStore`,
  :class:`~services.session.adapters.directory.Directory`,
  :class:`~services.session.adapters.leases.Leases`,
  :class:`~services.session.entrypoints.presence.Presence` and
  :class:`~services.session.adapters.profiles.Profiles` run on it unchanged; errors are
  nats.py's own (``KeyNotFoundError``, ``KeyWrongLastSequenceError``,
  ``nats.errors.TimeoutError`` while down);
- :class:`MemoryFollower`: the follower's feed (every append of any instance, in stream
  order, delivered on the event loop soon after the append);
- :class:`MemorySnapshots` (a dict of snapshots) for unit tests of the service layer
  (their rules in process: ``tests/support/fakes.py`` ``InProcessEngine``; the session
  itself never imports the engine);
- :class:`MemoryBus`: core pub/sub with ``*``/``>`` subject wildcards for the progress
  relay (a ``nats.aio.client.Client`` stand-in: ``subscribe(subject, cb=)``,
  ``publish``, ``is_closed``, ``drain``, ``close``).

Nothing here opens a socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import nats.errors
import nats.js.errors
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue

from cellwar.v1 import events_pb2
from services.common.nats.subjects import subject_matches
from services.session.adapters.event_store import DUPLICATE_WINDOW_S, msg_id, stamped
from services.session.service_layer.ports import (
    ConcurrencyError,
    DuplicateCommandError,
    Snapshot,
    StoreUnavailable,
)

#: ``subject_matches`` (``*``/``>`` wildcards, for KV watches, ``keys`` filters and the
#: bus) is :mod:`services.common.nats.subjects`', shared with the matchmaker's memory.
__all__ = [
    "DUPLICATE_WINDOW_S",
    "MemoryBackend",
    "MemoryBus",
    "MemoryEventLog",
    "MemoryFollower",
    "MemoryKeyValue",
    "MemoryServer",
    "MemorySnapshots",
    "subject_matches",
]

#: ``on_event(game_id, data, stream_seq)``, as :class:`~services.session.entrypoints.follower.Follower` calls it.
OnEvent = Callable[[str, bytes, int], None]


# ---------------------------------------------------------------------------- event log


@dataclass
class MemoryBackend:
    """The event log of one :class:`MemoryServer`, shared by every :class:`MemoryEventLog`
    on it: each game's log as ``(stream seq, event)`` pairs, the ``Nats-Msg-Id`` values
    seen within the duplicate window (id -> ``time.monotonic()`` of the append), the
    stream counter and the followers.

    Attributes:
        down: while True every read and append raises :class:`StoreUnavailable` (a fault).
        duplicate_window_s: how long a message id de-duplicates (seconds).
        appends / races_lost: counters for white-box checks.
    """

    logs: dict[str, list[tuple[int, events_pb2.Event]]] = field(default_factory=dict)
    msg_ids: dict[str, float] = field(default_factory=dict)
    stream_seq: int = 0
    appends: int = 0
    races_lost: int = 0
    down: bool = False
    duplicate_window_s: float = DUPLICATE_WINDOW_S
    followers: list[MemoryFollower] = field(default_factory=list)

    def seen(self, ids: Sequence[str]) -> bool:
        """True when one of ``ids`` was appended within the duplicate window (older ids
        are forgotten here)."""
        cutoff = time.monotonic() - self.duplicate_window_s
        for key in [k for k, at in self.msg_ids.items() if at < cutoff]:
            del self.msg_ids[key]
        return any(i in self.msg_ids for i in ids)

    def publish(self, game_id: str, stored: Sequence[tuple[int, events_pb2.Event]]) -> None:
        """Hand appended events to every follower (each delivers them soon, in order)."""
        for follower in list(self.followers):
            follower.deliver(game_id, stored)


class MemoryEventLog:
    """An :class:`~services.session.service_layer.ports.EventLog` in memory (module
    docstring). Appends are all-or-nothing.

    Args:
        backend: shared by the logs of several instances (default: a new one).

    Attributes:
        before_append: an optional coroutine function called once with the game id before
            the next append (a test makes a rival write there to lose a race).
    """

    def __init__(self, backend: MemoryBackend | None = None) -> None:
        self.backend = backend or MemoryBackend()
        self.before_append: Callable[[str], Awaitable[None]] | None = None
        self._tail: dict[str, int] = {}

    def _check(self) -> None:
        if self.backend.down:
            raise StoreUnavailable("event store: the in-memory server is down")

    async def ensure_stream(self) -> None:
        """Nothing to create in memory."""

    async def append(
        self,
        game_id: str,
        events: Sequence[events_pb2.Event],
        expected_last_seq: int,
        command_id: str = "",
        *,
        system: int = 0,
    ) -> list[events_pb2.Event]:
        """Append all of ``events`` after ``expected_last_seq``, stamped as the JetStream
        store stamps them (:func:`~services.session.adapters.event_store.stamped`);
        returns copies of the stored events.

        Raises:
            ConcurrencyError: the log's last seq is not ``expected_last_seq``.
            DuplicateCommandError: a message id of ``command_id`` is in the window.
            StoreUnavailable: the server is down.
        """
        if self.before_append is not None:
            hook, self.before_append = self.before_append, None
            await hook(game_id)
        self._check()
        log = self.backend.logs.setdefault(game_id, [])
        last = log[-1][1].seq if log else 0
        if last != expected_last_seq:
            self.backend.races_lost += 1
            raise ConcurrencyError(game_id, expected_last_seq)
        ids = (
            [msg_id(game_id, command_id, i) for i in range(len(events) - system)]
            if command_id
            else []
        )
        if self.backend.seen(ids):
            raise DuplicateCommandError(game_id, command_id)
        added: list[tuple[int, events_pb2.Event]] = []
        for event in stamped(game_id, events, expected_last_seq, command_id, system):
            self.backend.stream_seq += 1
            added.append((self.backend.stream_seq, event))
        log.extend(added)
        at = time.monotonic()
        self.backend.msg_ids.update(dict.fromkeys(ids, at))
        self.backend.appends += 1
        self._tail[game_id] = self.backend.stream_seq
        self.backend.publish(game_id, added)
        return [_copy(e) for _, e in added]

    async def read(
        self,
        game_id: str,
        from_seq: int = 1,
        to_seq: int | None = None,
        *,
        start_stream_seq: int | None = None,
    ) -> list[events_pb2.Event]:
        """Events ``from_seq``..``to_seq`` inclusive (None = to the end), copies; only
        those at or after stream sequence ``start_stream_seq``. Raises StoreUnavailable."""
        self._check()
        log = self.backend.logs.get(game_id, [])
        out = [
            _copy(e)
            for s, e in log
            if s >= (start_stream_seq or 0)
            and e.seq >= from_seq
            and (to_seq is None or e.seq <= to_seq)
        ]
        if log:
            self._tail[game_id] = log[-1][0]
        return out

    async def read_pages(
        self, game_id: str, from_seq: int = 1, page: int = 1000
    ) -> AsyncIterator[list[events_pb2.Event]]:
        """The events from ``from_seq`` on, ``page`` at a time (copies)."""
        events = await self.read(game_id, from_seq)
        for start in range(0, len(events), page):
            yield events[start : start + page]

    async def last_seq(self, game_id: str) -> int:
        """The last per-game seq (0 = none). Raises StoreUnavailable."""
        self._check()
        log = self.backend.logs.get(game_id, [])
        if log:
            self._tail[game_id] = log[-1][0]
        return log[-1][1].seq if log else 0

    def stream_seq_of(self, game_id: str) -> int:
        """Stream position of the game's last event as last seen here (0 = unknown)."""
        return self._tail.get(game_id, 0)

    def position_before(self, game_id: str, seq: int) -> int:
        """No shortcut in memory: the start."""
        return 0

    def forget(self, game_id: str) -> None:
        """Forget the game's tail."""
        self._tail.pop(game_id, None)

    def events(self, game_id: str) -> list[events_pb2.Event]:
        """The whole stored log of a game (for assertions)."""
        return [e for _, e in self.backend.logs.get(game_id, [])]

    def force(self, game_id: str, event: events_pb2.Event) -> None:
        """Append ``event`` as it is, unchecked and not followed (a damaged log for tests)."""
        self.backend.stream_seq += 1
        self.backend.logs.setdefault(game_id, []).append((self.backend.stream_seq, event))


def _copy(event: events_pb2.Event) -> events_pb2.Event:
    return events_pb2.Event.FromString(event.SerializeToString())


class MemoryFollower:
    """The follower's feed in memory: the interface of
    :class:`services.session.entrypoints.follower.Follower` (``start``, ``stop``,
    ``reset``, ``last_stream_seq``, ``resets``) over a :class:`MemoryBackend`. Every
    append after :meth:`start`, by any instance, reaches ``on_event`` on the event loop
    soon after (``call_soon``), in stream order, with the serialized event.
    """

    def __init__(
        self, backend: MemoryBackend, on_event: OnEvent, on_reset: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        self.backend = backend
        self.on_event = on_event
        self.on_reset = on_reset
        self.last_stream_seq = 0
        self.resets = 0
        self._running = False

    async def start(self) -> None:
        """Follow from the stream's current last message on."""
        self.last_stream_seq = self.backend.stream_seq
        self._running = True
        if self not in self.backend.followers:
            self.backend.followers.append(self)

    def deliver(self, game_id: str, stored: Sequence[tuple[int, events_pb2.Event]]) -> None:
        """Queue appended events for ``on_event`` (called by the backend)."""
        if not self._running:
            return
        batch = [(s, e.SerializeToString()) for s, e in stored]
        with contextlib.suppress(RuntimeError):  # no running loop: nobody to tell
            asyncio.get_running_loop().call_soon(self._hand_over, game_id, batch)

    def _hand_over(self, game_id: str, batch: list[tuple[int, bytes]]) -> None:
        for stream_seq, data in batch:
            if not self._running or stream_seq <= self.last_stream_seq:
                continue
            self.last_stream_seq = stream_seq
            self.on_event(game_id, data, stream_seq)

    async def reset(self, why: str = "reconnect") -> None:
        """Nothing is ever lost in memory: counts the reset, then awaits ``on_reset``
        (the catch-up the JetStream follower runs after a reset)."""
        self.resets += 1
        if self.on_reset is not None:
            await self.on_reset()

    async def stop(self) -> None:
        """Stop following."""
        self._running = False
        with contextlib.suppress(ValueError):
            self.backend.followers.remove(self)


# ---------------------------------------------------------------------------- KV


@dataclass
class _Record:
    value: bytes
    revision: int
    operation: str | None = None  # None (a value), KV_DEL or KV_PURGE
    timer: asyncio.TimerHandle | None = None


@dataclass
class _Ack:
    seq: int


class _KvPublisher:
    """What :func:`services.common.nats.kv.put_with_ttl` reaches through ``KeyValue._js``:
    ``publish("$KV.<bucket>.<key>", value, msg_ttl=)``."""

    def __init__(self, kv: MemoryKeyValue) -> None:
        self.kv = kv

    async def publish(
        self, subject: str, payload: bytes = b"", *, msg_ttl: float | None = None, **_: Any
    ) -> _Ack:
        prefix = f"$KV.{self.kv.name}."
        if not subject.startswith(prefix):
            raise nats.js.errors.NoStreamResponseError()
        return _Ack(self.kv._write(subject[len(prefix) :], payload, ttl_s=msg_ttl))


class MemoryKeyWatcher:
    """nats.py's ``KeyValue.KeyWatcher`` for :class:`MemoryKeyValue`: ``updates(timeout)``
    gives each current key (deleted ones as markers), then ``None``, then every change;
    ``stop()`` ends it with ``KeyValue.KeyWatcher.STOP_ITER``."""

    def __init__(self, kv: MemoryKeyValue, keys: str) -> None:
        self.kv = kv
        self.keys = keys
        self._updates: asyncio.Queue = asyncio.Queue()

    def matches(self, key: str) -> bool:
        return subject_matches(self.keys, key)

    def push(self, entry: KeyValue.Entry | None) -> None:
        self._updates.put_nowait(entry)

    async def updates(self, timeout: float | None = 5.0):
        """The next entry (``None``: the current keys are all in). Raises
        ``nats.errors.TimeoutError`` after ``timeout`` seconds."""
        try:
            return await asyncio.wait_for(self._updates.get(), timeout)
        except TimeoutError:
            raise nats.errors.TimeoutError from None

    async def stop(self) -> None:
        """Stop watching."""
        self.kv._watchers.discard(self)
        self._updates.put_nowait(KeyValue.KeyWatcher.STOP_ITER)


class MemoryKeyValue:
    """One KV bucket in memory with the subset of nats.py's ``KeyValue`` API the session
    uses (module docstring). Revisions grow across the bucket, as a stream's sequence.

    Args:
        name: the bucket name (``bucket_name(kv)`` reads ``_name``).
        ttl_s: the bucket TTL (seconds; None = keys never expire): a key not written for
            that long expires.
        expiry_markers: an expired key leaves a delete marker watchers see at once
            (else it just disappears, as on a server without them).
        server: whose ``down`` flag makes every call fail with
            ``nats.errors.TimeoutError``.
    """

    def __init__(
        self,
        name: str,
        *,
        ttl_s: float | None = None,
        expiry_markers: bool = False,
        server: MemoryServer | None = None,
    ) -> None:
        self.name = name
        self._name = name  # where nats.py's KeyValue keeps it (bucket_name reads it)
        self._js = _KvPublisher(self)
        self.ttl_s = ttl_s
        self.expiry_markers = expiry_markers
        self.server = server
        self._records: dict[str, _Record] = {}
        self._revision = 0
        self._watchers: set[MemoryKeyWatcher] = set()

    # ------------------------------------------------------------------ internals

    def _check(self) -> None:
        if self.server is not None and self.server.down:
            raise nats.errors.TimeoutError

    def _entry(self, key: str, record: _Record) -> KeyValue.Entry:
        return KeyValue.Entry(
            bucket=self._name,
            key=key,
            value=record.value,
            revision=record.revision,
            delta=None,
            created=None,
            operation=record.operation,
        )

    def _live(self, key: str) -> _Record | None:
        record = self._records.get(key)
        return record if record is not None and record.operation is None else None

    def _last(self, key: str) -> int:
        record = self._records.get(key)
        return record.revision if record is not None else 0

    def _write(
        self, key: str, value: bytes, *, operation: str | None = None, ttl_s: float | None = None
    ) -> int:
        self._check()
        old = self._records.get(key)
        if old is not None and old.timer is not None:
            old.timer.cancel()
        self._revision += 1
        record = _Record(bytes(value or b""), self._revision, operation)
        self._records[key] = record
        lifetime = ttl_s if ttl_s is not None else (self.ttl_s if operation is None else None)
        if lifetime:
            with contextlib.suppress(RuntimeError):
                record.timer = asyncio.get_running_loop().call_later(
                    lifetime, self._expire, key, record
                )
        self._notify(key, record)
        return record.revision

    def _expire(self, key: str, record: _Record) -> None:
        if self._records.get(key) is not record:
            return
        if self.expiry_markers:
            self._revision += 1
            marker = _Record(b"", self._revision, KV_PURGE)
            self._records[key] = marker
            self._notify(key, marker)
        else:
            del self._records[key]

    def _notify(self, key: str, record: _Record) -> None:
        for watcher in list(self._watchers):
            if watcher.matches(key):
                watcher.push(self._entry(key, record))

    def close(self) -> None:
        """Cancel every expiry timer (the server is closing)."""
        for record in self._records.values():
            if record.timer is not None:
                record.timer.cancel()

    # ------------------------------------------------------------------ KeyValue API

    async def get(self, key: str, revision: int | None = None) -> KeyValue.Entry:
        """The key's current value. Raises ``KeyNotFoundError`` (never written, deleted,
        purged or expired)."""
        self._check()
        record = self._live(key)
        if record is None or (revision and record.revision != revision):
            raise nats.js.errors.KeyNotFoundError
        return self._entry(key, record)

    async def put(self, key: str, value: bytes) -> int:
        """Write ``key``; returns the new revision."""
        return self._write(key, value)

    async def create(self, key: str, value: bytes, msg_ttl: float | None = None) -> int:
        """Write ``key`` only when it holds no value. Raises ``KeyWrongLastSequenceError``."""
        self._check()
        if self._live(key) is not None:
            raise nats.js.errors.KeyWrongLastSequenceError(description="wrong last sequence")
        return self._write(key, value, ttl_s=msg_ttl)

    async def update(self, key: str, value: bytes, last: int | None = None) -> int:
        """Write ``key`` when its last revision (a delete marker's too) is ``last`` (0 or
        None: never written). Raises ``KeyWrongLastSequenceError``."""
        self._check()
        if self._last(key) != (last or 0):
            raise nats.js.errors.KeyWrongLastSequenceError(description="wrong last sequence")
        return self._write(key, value)

    async def delete(self, key: str, last: int | None = None) -> bool:
        """Leave a delete marker (with ``last`` > 0: only when the last revision is it).
        Raises ``KeyWrongLastSequenceError``."""
        self._check()
        if last and self._last(key) != last:
            raise nats.js.errors.KeyWrongLastSequenceError(description="wrong last sequence")
        self._write(key, b"", operation=KV_DEL)
        return True

    async def purge(self, key: str) -> bool:
        """Leave a purge marker (the key's history goes)."""
        self._write(key, b"", operation=KV_PURGE)
        return True

    async def keys(self, filters: list[str] | None = None, **_: Any) -> list[str]:
        """The keys holding a value (matching one of ``filters``). Raises ``NoKeysError``."""
        self._check()
        found = [
            k
            for k, r in self._records.items()
            if r.operation is None and (not filters or any(subject_matches(f, k) for f in filters))
        ]
        if not found:
            raise nats.js.errors.NoKeysError
        return found

    async def watch(self, keys: str = ">", **_: Any) -> MemoryKeyWatcher:
        """A watcher of the keys matching ``keys`` (current ones first, then ``None``)."""
        self._check()
        watcher = MemoryKeyWatcher(self, keys)
        for key, record in self._records.items():
            if watcher.matches(key):
                watcher.push(self._entry(key, record))
        watcher.push(None)
        self._watchers.add(watcher)
        return watcher

    async def watchall(self, **kwargs: Any) -> MemoryKeyWatcher:
        """:meth:`watch` of every key."""
        return await self.watch(">", **kwargs)


# ---------------------------------------------------------------------------- pub/sub


@dataclass
class MemoryMsg:
    """A core NATS message as a subscriber sees it."""

    subject: str
    data: bytes
    headers: dict[str, str] | None = None
    reply: str = ""


class MemorySubscription:
    """One subscription of a :class:`MemoryBus`."""

    def __init__(self, bus: MemoryBus, subject: str, cb: Callable[[MemoryMsg], Awaitable[None]]):
        self.bus = bus
        self.subject = subject
        self.cb = cb

    async def unsubscribe(self) -> None:
        """Stop receiving."""
        self.bus._subs.discard(self)


class MemoryBus:
    """Core NATS pub/sub of one :class:`MemoryServer`, as one connection sees it
    (:meth:`MemoryServer.connect`): ``subscribe(subject, cb=)`` with wildcards,
    ``publish(subject, data)`` (each matching callback runs in its own task soon after),
    ``is_closed``, ``drain``/``close`` (drop this connection's subscriptions)."""

    def __init__(self, server: MemoryServer) -> None:
        self.server = server
        self._subs: set[MemorySubscription] = set()
        self.is_closed = False
        self._tasks: set[asyncio.Task] = set()

    async def subscribe(
        self, subject: str, cb: Callable[[MemoryMsg], Awaitable[None]], **_: Any
    ) -> MemorySubscription:
        """Receive every message on subjects matching ``subject``."""
        sub = MemorySubscription(self, subject, cb)
        self._subs.add(sub)
        return sub

    async def publish(self, subject: str, payload: bytes = b"", **_: Any) -> None:
        """Send to every matching subscription of every connection (fire and forget).
        Raises ``nats.errors.ConnectionClosedError`` once closed."""
        if self.is_closed:
            raise nats.errors.ConnectionClosedError
        if self.server.down:
            return  # lost, as core NATS loses messages while away
        for bus in list(self.server.buses):
            bus._deliver(MemoryMsg(subject, bytes(payload)))

    def _deliver(self, msg: MemoryMsg) -> None:
        for sub in list(self._subs):
            if subject_matches(sub.subject, msg.subject):
                task = asyncio.get_running_loop().create_task(sub.cb(msg))
                self._tasks.add(task)
                task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled():
            task.exception()  # a failing callback is the subscriber's affair

    async def drain(self) -> None:
        """Drop this connection's subscriptions, let running callbacks finish, close."""
        self._subs.clear()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=2.0)
        await self.close()

    async def close(self) -> None:
        """Close this connection."""
        self._subs.clear()
        self.is_closed = True
        with contextlib.suppress(ValueError):
            self.server.buses.remove(self)


# ---------------------------------------------------------------------------- server


class MemoryServer:
    """One in-memory "NATS": the event log, the KV buckets (by name) and core pub/sub,
    shared by every session instance built on it.

    Attributes:
        events: the event log backend.
        down: a fault: while True the event log raises ``StoreUnavailable``, KV calls
            raise ``nats.errors.TimeoutError`` and published messages are lost.
    """

    def __init__(self) -> None:
        self.events = MemoryBackend()
        self.buckets: dict[str, MemoryKeyValue] = {}
        self.buses: list[MemoryBus] = []

    @property
    def down(self) -> bool:
        return self.events.down

    @down.setter
    def down(self, value: bool) -> None:
        self.events.down = value

    def bucket(
        self, name: str, *, ttl_s: float | None = None, expiry_markers: bool = False
    ) -> MemoryKeyValue:
        """The bucket ``name``, created with ``ttl_s`` and ``expiry_markers`` when absent
        (an existing bucket keeps its configuration, as ``ensure_bucket`` does)."""
        kv = self.buckets.get(name)
        if kv is None:
            kv = MemoryKeyValue(name, ttl_s=ttl_s, expiry_markers=expiry_markers, server=self)
            self.buckets[name] = kv
        return kv

    def connect(self) -> MemoryBus:
        """A new pub/sub connection."""
        bus = MemoryBus(self)
        self.buses.append(bus)
        return bus

    def close(self) -> None:
        """Cancel the buckets' expiry timers (the end of a test)."""
        for kv in self.buckets.values():
            kv.close()


class MemorySnapshots:
    """A :class:`~services.session.service_layer.ports.SnapshotRepository` as a plain dict
    (unit tests of the service layer; a session built by ``memory_ports`` stores
    snapshots through the real ``SnapshotStore`` on a :class:`MemoryKeyValue`)."""

    def __init__(self) -> None:
        #: the history snapshots by game and seq
        self.snaps: dict[str, dict[int, Snapshot]] = {}
        self.latest_snaps: dict[str, Snapshot] = {}

    async def put(
        self, game_id: str, snap: Snapshot, *, latest: bool = True, history: bool = True
    ) -> bool:
        """Keep a snapshot: in the history (``history``) and as the latest (``latest``:
        the last one put so, as the KV key is)."""
        if history:
            self.snaps.setdefault(game_id, {})[snap.seq] = snap
        if latest:
            self.latest_snaps[game_id] = snap
        return True

    async def latest(self, game_id: str) -> Snapshot | None:
        """The last snapshot put as latest."""
        return self.latest_snaps.get(game_id)

    async def at_or_before(self, game_id: str, seq: int) -> Snapshot | None:
        """The latest when its seq is <= ``seq``, else the history snapshot with the
        greatest seq <= ``seq``."""
        latest = self.latest_snaps.get(game_id)
        if latest is not None and latest.seq <= seq:
            return latest
        snaps = self.snaps.get(game_id) or {}
        best = max((s for s in snaps if s <= seq), default=None)
        return None if best is None else snaps[best]

