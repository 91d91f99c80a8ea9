"""The matchmaker's NATS adapters: KV buckets, the event stream, live mirrors of buckets.

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
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Any

import nats.errors
import nats.js.errors
import structlog
from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

from services.common.errors import ServiceError
from services.common.nats import kv as nats_kv
from services.common.tasks import cancel

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


class Bucket:
    """JSON values in one KV bucket with revision-checked writes.

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
        try:
            value = json.loads(entry.value or b"null")
        except ValueError:
            log.error("kv_value_not_json", key=key)
            return None
        if not isinstance(value, dict):
            return None
        return value, int(entry.revision or 0)

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
        """Every key of the bucket (a snapshot; empty bucket: ``[]``).

        Raises:
            ServiceError: ``UNAVAILABLE``.
        """
        try:
            return list(await self.kv.keys())
        except nats.js.errors.NoKeysError:
            return []
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


#: Called with (key, value or None when deleted, revision) for each change of a mirror.
ChangeFn = Callable[[str, dict[str, Any] | None, int], Awaitable[None] | None]


class Mirror:
    """A live in-memory copy of the keys of a bucket under ``prefix`` (a KV watch).

    ``entries[key] = (value, revision)``. :meth:`start` returns once the bucket's
    current content is loaded. Local writes may be applied at once with :meth:`apply`
    (the watch later delivers the same revision, which is then ignored).

    Args:
        kv: the bucket.
        prefix: e.g. ``"t."`` (watched as ``t.>``); ``""`` for every key.
        on_change: called after each change.
    """

    def __init__(self, kv: KeyValue, prefix: str = "", on_change: ChangeFn | None = None) -> None:
        self.kv = kv
        self.prefix = prefix
        self.on_change = on_change
        self.entries: dict[str, tuple[dict[str, Any], int]] = {}
        self._watcher: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def start(self, timeout: float = 30.0) -> None:
        """Start watching; returns when the current content is loaded (seconds)."""
        pattern = f"{self.prefix}>" if self.prefix else ">"
        self._watcher = await self.kv.watch(pattern)
        self._task = asyncio.create_task(self._run(), name=f"mirror-{self.prefix or 'all'}")
        await asyncio.wait_for(self._ready.wait(), timeout)

    async def stop(self) -> None:
        """Stop watching."""
        if self._watcher is not None:
            with contextlib.suppress(Exception):
                await self._watcher.stop()
        await cancel(self._task)
        self._task = None

    async def _run(self) -> None:
        async for entry in self._watcher:
            if entry is None:  # the initial content is all delivered
                self._ready.set()
                continue
            try:
                if entry.operation in ("DEL", "PURGE"):
                    await self.apply(entry.key, None, int(entry.revision or 0))
                    continue
                value = json.loads(entry.value or b"null")
                if isinstance(value, dict):
                    await self.apply(entry.key, value, int(entry.revision or 0))
            except Exception:  # noqa: BLE001 - one bad entry must not stop the mirror
                log.exception("mirror_entry_failed", key=entry.key)
        self._ready.set()

    async def apply(self, key: str, value: dict[str, Any] | None, revision: int) -> None:
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
            result = self.on_change(key, value, revision)
            if asyncio.iscoroutine(result):
                await result


class EventLog:
    """Appends :class:`MatchEvent` s to ``MATCH_EVENTS`` in the background: the KV
    buckets are the record and the stream is the audit trail, so a request never waits
    for an event's (fsync'd) acknowledgement, and a failed publish is logged, never raised.

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
