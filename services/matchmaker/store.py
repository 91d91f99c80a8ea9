"""The matchmaker's stores: KV bucket names and key layouts, JSON values with
revision-checked writes, live mirrors of buckets, the event stream.

Buckets (JSON values, file storage, history 1, created at start when missing):

- ``MATCH_TICKETS`` (max age :data:`TICKETS_MAX_AGE_S`): ``t.<ticket_id>`` a ticket;
  ``p.<queue>.<profile_id>`` the profile's last ticket of that queue (one searching
  ticket per profile and queue); ``m.<match_id>`` the decision about a match being
  formed (``committed`` or ``aborted``, written once with ``create``).
- ``MATCH_GAMES``: ``<game_id>`` → the matchmade game: queue, seats (player id, ticket,
  profile, name), ``finished_at`` once its ``GameFinished`` was projected. Its presence
  is what makes a matchmade game rated (a game made by link is rated when its config
  says ``"rated": true``; either only when created here: services/matchmaker/projection.py).
- ``RATINGS``: ``r.<queue>.<profile_id>`` a rating record; ``g.<game_id>`` the ratings
  projection's marker of a game (``computed`` with its changes, then ``applied``);
  ``v.projection`` the rule version the bucket was projected with, ``v.rebuild`` held
  while an instance rebuilds it (docs/ratings.md).

Stream ``MATCH_EVENTS`` (subjects ``matchmaking.events.<Type>``, file storage, 7 days):
the audit trail of :class:`MatchEvent` (JSON), de-duplicated by ``Nats-Msg-Id``.

Every write that depends on what was read is revision-checked (``kv.update(last=
revision)``); a lost race is :class:`Conflict` to the caller, never a silent overwrite.

The service layer sees a bucket as a :class:`KvStore` and the stream as an
:class:`EventSink`: :class:`Bucket` and :class:`EventLog` here are the NATS ones,
services/matchmaker/memory.py holds in-memory ones with the same semantics. Opening
buckets and the watch are :mod:`services.common.nats.kv`'s.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from enum import StrEnum
from typing import Any, Protocol

import nats.errors
import nats.js.errors
import structlog
from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

from services.common.errors import ServiceError
from services.common.nats import kv as nats_kv

log = structlog.get_logger("cellwar.matchmaker.store")

TICKETS = "MATCH_TICKETS"
GAMES = "MATCH_GAMES"
RATINGS = "RATINGS"
EVENTS_STREAM = "MATCH_EVENTS"
EVENTS_SUBJECT_PREFIX = "matchmaking.events"

#: Tickets, profile locks and match decisions are kept this long after their last write
#: (seconds): long past the 5-minute ticket TTL, so a finished ticket can still be read.
TICKETS_MAX_AGE_S = 3600.0
#: Age of the events of MATCH_EVENTS (seconds).
EVENTS_MAX_AGE_S = 7 * 24 * 3600.0
#: Revision-checked writes of the service layer tried before giving up with ``CONFLICT``.
MAX_ATTEMPTS = 20


class MatchEvent(StrEnum):
    """Events of the ``MATCH_EVENTS`` stream (past tense)."""

    TICKET_CREATED = "TicketCreated"
    TICKET_CANCELLED = "TicketCancelled"
    TICKET_EXPIRED = "TicketExpired"
    MATCH_FORMED = "MatchFormed"
    MATCH_ABORTED = "MatchAborted"
    MATCH_STARTED = "MatchStarted"
    GAME_RATED = "GameRated"


class Conflict(Exception):
    """A revision-checked write lost: the key changed (or exists) since it was read."""


def unavailable(exc: BaseException) -> ServiceError:
    """The ``UNAVAILABLE`` error of a NATS failure."""
    return ServiceError("UNAVAILABLE", f"matchmaker store: {exc}")


def dumps(obj: Any) -> bytes:
    """Compact, key-sorted JSON bytes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def loads(key: str, raw: bytes | None) -> dict[str, Any] | None:
    """The JSON object stored at ``key`` (None: not JSON, or not an object)."""
    try:
        value = json.loads(raw or b"null")
    except ValueError:
        log.error("kv_value_not_json", key=key)
        return None
    return value if isinstance(value, dict) else None


def ticket_key(ticket_id: str) -> str:
    return f"t.{ticket_id}"


def lock_key(queue: str, profile_id: str) -> str:
    return f"p.{queue}.{profile_id}"


def decision_key(match_id: str) -> str:
    return f"m.{match_id}"


def rating_key(queue: str, profile_id: str) -> str:
    return f"r.{queue}.{profile_id}"


def game_marker_key(game_id: str) -> str:
    return f"g.{game_id}"


async def ensure_bucket(
    js: JetStreamContext, bucket: str, *, replicas: int = 1, max_age_s: float | None = None
) -> KeyValue:
    """Open ``bucket``, creating it (file storage, history 1, ``max_age_s``, direct gets)
    if absent: :func:`services.common.nats.kv.ensure_bucket`, shared with the session.

    Raises:
        nats.errors.Error / TimeoutError: NATS did not answer.
    """
    return await nats_kv.ensure_bucket(js, bucket, replicas=replicas, ttl_s=max_age_s)


async def ensure_events_stream(js: JetStreamContext, *, replicas: int = 1) -> None:
    """Create (or update to this configuration) the ``MATCH_EVENTS`` stream."""
    config = api.StreamConfig(
        name=EVENTS_STREAM,
        subjects=[f"{EVENTS_SUBJECT_PREFIX}.>"],
        storage=api.StorageType.FILE,
        retention=api.RetentionPolicy.LIMITS,
        max_age=EVENTS_MAX_AGE_S,
        duplicate_window=120.0,
        num_replicas=replicas,
    )
    try:
        await js.add_stream(config)
    except nats.js.errors.BadRequestError:
        await js.update_stream(config)


#: ``on_change(key, raw value or None when deleted, revision)`` of a :class:`Feed`.
RawChangeFn = Callable[[str, bytes | None, int], None]


class Feed(Protocol):
    """A watch of a bucket's keys (:class:`services.common.nats.kv.KvMirror` for NATS):
    after :meth:`start` it calls its ``on_change`` with every current key, then with
    each change, in revision order."""

    async def start(self) -> None:
        """Open the watch (returns at once; :meth:`wait_ready` for the current keys)."""
        ...

    async def wait_ready(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the current keys; True when they are in."""
        ...

    async def stop(self) -> None:
        """Close the watch."""
        ...


class KvStore(Protocol):
    """One bucket of JSON objects with revision-checked writes, as the service layer
    uses it. Revisions grow with every write to the bucket (any key). Every method
    raises :class:`~services.common.errors.ServiceError` ``UNAVAILABLE`` when the store
    cannot be reached."""

    async def get(self, key: str) -> tuple[dict[str, Any], int] | None:
        """``(value, revision)``, or None when the key is absent (or not a JSON object)."""
        ...

    async def create(self, key: str, value: dict[str, Any]) -> int:
        """Write ``key`` only if it does not exist; the revision. Raises Conflict."""
        ...

    async def update(self, key: str, value: dict[str, Any], revision: int) -> int:
        """Write ``key`` if its revision is still ``revision``; the new one. Raises Conflict."""
        ...

    async def put(self, key: str, value: dict[str, Any]) -> int:
        """Write ``key`` unconditionally; the revision."""
        ...

    async def delete(self, key: str) -> None:
        """Delete ``key`` (absent: nothing happens)."""
        ...

    async def keys(self) -> list[str]:
        """Every key (a snapshot)."""
        ...

    def feed(self, keys: str, on_change: RawChangeFn) -> Feed:
        """A watch of the keys matching ``keys`` (``t.>``; ``>`` = all), not started."""
        ...


class EventSink(Protocol):
    """Where the audit trail of :class:`MatchEvent` goes (``MATCH_EVENTS``)."""

    def publish(self, event: MatchEvent, data: dict[str, Any], msg_id: str) -> None:
        """Queue one event; a repeat of ``msg_id`` is dropped. Never raises."""
        ...

    async def flush(self, timeout: float = 5.0) -> None:
        """Wait (up to ``timeout`` seconds) for the events queued so far."""
        ...


class Bucket:
    """:class:`KvStore` over one NATS KV bucket.

    Args:
        kv: the bucket.
    """

    def __init__(self, kv: KeyValue) -> None:
        self.kv = kv

    async def get(self, key: str) -> tuple[dict[str, Any], int] | None:
        """``(value, revision)``, or None when the key is absent.

        Raises:
            ServiceError: ``UNAVAILABLE``.
        """
        try:
            entry = await self.kv.get(key)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return None
        except (TimeoutError, nats.errors.Error) as exc:
            raise unavailable(exc) from exc
        value = loads(key, entry.value)
        return None if value is None else (value, int(entry.revision or 0))

    async def create(self, key: str, value: dict[str, Any]) -> int:
        """Write ``key`` only if it does not exist; returns the revision.

        Raises:
            Conflict: the key exists. ServiceError: ``UNAVAILABLE``.
        """
        try:
            return int(await self.kv.create(key, dumps(value)))
        except nats.js.errors.KeyWrongLastSequenceError as exc:
            raise Conflict(key) from exc
        except (TimeoutError, nats.errors.Error) as exc:
            raise unavailable(exc) from exc

    async def update(self, key: str, value: dict[str, Any], revision: int) -> int:
        """Write ``key`` if its revision is still ``revision``; returns the new revision.

        Raises:
            Conflict: the key changed. ServiceError: ``UNAVAILABLE``.
        """
        try:
            return int(await self.kv.update(key, dumps(value), last=revision))
        except nats.js.errors.KeyWrongLastSequenceError as exc:
            raise Conflict(key) from exc
        except (TimeoutError, nats.errors.Error) as exc:
            raise unavailable(exc) from exc

    async def keys(self) -> list[str]:
        """Every key of the bucket holding a value (a snapshot:
        :func:`services.common.nats.kv.live_keys`; empty bucket: ``[]``).

        Raises:
            ServiceError: ``UNAVAILABLE``.
        """
        try:
            return await nats_kv.live_keys(self.kv)
        except (TimeoutError, nats.errors.Error) as exc:
            raise unavailable(exc) from exc

    async def delete(self, key: str) -> None:
        """Delete ``key`` (absent: nothing happens).

        Raises:
            ServiceError: ``UNAVAILABLE``.
        """
        try:
            await self.kv.delete(key)
        except (TimeoutError, nats.errors.Error) as exc:
            raise unavailable(exc) from exc

    async def put(self, key: str, value: dict[str, Any]) -> int:
        """Write ``key`` unconditionally (only for values every writer computes alike).

        Raises:
            ServiceError: ``UNAVAILABLE``.
        """
        try:
            return int(await self.kv.put(key, dumps(value)))
        except (TimeoutError, nats.errors.Error) as exc:
            raise unavailable(exc) from exc

    def feed(self, keys: str, on_change: RawChangeFn) -> Feed:
        """A :class:`services.common.nats.kv.KvMirror` of the keys matching ``keys``."""
        return nats_kv.KvMirror(self.kv, on_change, keys)


#: Called with (key, value or None when deleted, revision) for each change of a mirror.
ChangeFn = Callable[[str, dict[str, Any] | None, int], None]


class Mirror:
    """A live in-memory copy of the keys of a bucket under ``prefix`` (over the bucket's
    :meth:`KvStore.feed`).

    ``entries[key] = (value, revision)``. :meth:`start` returns once the bucket's
    current content is loaded. Local writes may be applied at once with :meth:`apply`
    (the watch later delivers the same revision, which is then ignored).

    Args:
        bucket: the bucket.
        prefix: e.g. ``"t."`` (watched as ``t.>``); ``""`` for every key.
        on_change: called after each change.
    """

    def __init__(self, bucket: KvStore, prefix: str = "", on_change: ChangeFn | None = None) -> None:
        self.bucket = bucket
        self.prefix = prefix
        self.on_change = on_change
        self.entries: dict[str, tuple[dict[str, Any], int]] = {}
        self._feed = bucket.feed(f"{prefix}>" if prefix else ">", self._raw_change)

    async def start(self, timeout: float = 30.0) -> None:
        """Start watching; returns when the current content is loaded.

        Raises:
            TimeoutError: not loaded within ``timeout`` seconds.
        """
        await self._feed.start()
        if not await self._feed.wait_ready(timeout):
            raise TimeoutError(f"mirror of {self.prefix or 'all'} keys not loaded in {timeout} s")

    async def stop(self) -> None:
        """Stop watching."""
        await self._feed.stop()

    def _raw_change(self, key: str, raw: bytes | None, revision: int) -> None:
        if raw is None:
            self.apply_now(key, None, int(revision or 0))
            return
        value = loads(key, raw)
        if value is not None:
            self.apply_now(key, value, int(revision or 0))

    def apply_now(self, key: str, value: dict[str, Any] | None, revision: int) -> None:
        """Take ``value`` at ``revision`` for ``key`` (None: deleted) unless a newer
        revision is already held."""
        old = self.entries.get(key)
        if old is not None and old[1] >= revision:
            return
        if value is None:
            self.entries.pop(key, None)
        else:
            self.entries[key] = (value, revision)
        if self.on_change is not None:
            self.on_change(key, value, revision)

    async def apply(self, key: str, value: dict[str, Any] | None, revision: int) -> None:
        """:meth:`apply_now`, for callers that await it."""
        self.apply_now(key, value, revision)


class EventLog:
    """:class:`EventSink` over ``MATCH_EVENTS``: appends in the background (the KV
    buckets are the record and the stream is the audit trail, so a request never waits
    for an event's fsync'd acknowledgement), and a failed publish is logged, never raised.

    Args:
        js: JetStream context.
    """

    def __init__(self, js: JetStreamContext) -> None:
        self.js = js
        self._pending: set[asyncio.Task[None]] = set()

    def publish(self, event: MatchEvent, data: dict[str, Any], msg_id: str) -> None:
        """Queue one event (``Nats-Msg-Id`` = ``msg_id``, so a repeat is dropped)."""
        task = asyncio.create_task(self._publish(event, data, msg_id))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _publish(self, event: MatchEvent, data: dict[str, Any], msg_id: str) -> None:
        body = {"type": str(event), **data}
        try:
            await self.js.publish(
                f"{EVENTS_SUBJECT_PREFIX}.{event}", dumps(body), headers={"Nats-Msg-Id": msg_id}
            )
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning("match_event_not_published", match_event=str(event), error=str(exc))

    async def flush(self, timeout: float = 5.0) -> None:
        """Wait (up to ``timeout`` seconds) for the events queued so far."""
        if self._pending:
            await asyncio.wait(set(self._pending), timeout=timeout)
