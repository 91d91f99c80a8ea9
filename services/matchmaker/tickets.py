"""Tickets: create, read, cancel and watch them; one searching ticket per profile and
queue; which tickets search now.

A ticket is ``t.<ticket_id>`` in ``MATCH_TICKETS`` (services/matchmaker/store.py); a
profile's place in a queue is ``p.<queue>.<profile_id>`` (pointing at its last ticket).
Every change is a revision-checked write, so a ticket changed meanwhile (claimed by a
match being formed, cancelled elsewhere) is read again, never overwritten. This module
never matches tickets: services/matchmaker/matching.py and forming.py do.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from typing import Any

import structlog

from services.common.errors import ServiceError
from services.matchmaker import domain
from services.matchmaker.decisions import Decisions, DecisionState
from services.matchmaker.domain import FINAL_STATUSES, MatchErrorCode, TicketStatus
from services.matchmaker.store import (
    MAX_ATTEMPTS,
    Conflict,
    EventSink,
    KvStore,
    MatchEvent,
    Mirror,
    lock_key,
    ticket_key,
)

log = structlog.get_logger("cellwar.matchmaker")

#: Longest player name (characters), as for a join.
MAX_NAME_CHARS = 40


def ticket_id_for(command_id: str) -> str:
    """The ticket id of a create: derived from its idempotency key (so a retried create
    finds the same ticket), else random. 32 hex characters."""
    if command_id:
        return hashlib.sha256(b"cellwar-ticket:" + command_id.encode()).hexdigest()[:32]
    return uuid.uuid4().hex


def wait_of(ticket: dict[str, Any], now: float) -> float:
    """Seconds a ticket searched: until ``ended_at`` once final, else until ``now``."""
    end = ticket.get("ended_at")
    end = float(end) if end is not None else now
    return max(0.0, end - float(ticket.get("created_at", now)))


def valid_id(ticket_id: str) -> bool:
    """True for an id that can be a ticket's or a profile's: 1..64 of ``[A-Za-z0-9_-]``."""
    return 0 < len(ticket_id) <= 64 and all(c.isalnum() or c in "-_" for c in ticket_id)


class Tickets:
    """The tickets of every queue, as one instance serves them.

    Args:
        bucket: the ``MATCH_TICKETS`` bucket (its ``t.`` keys are mirrored in
            :attr:`mirror`).
        decisions: the match decisions (a cancel aborts an undecided match).
        events: the audit trail.
        rating: ``rating(profile_id, queue)`` now (rating points), copied into a ticket.
        ticket_ttl_s: a ticket stops searching this long after its creation (seconds).
        clock: unix time in seconds.
    """

    def __init__(
        self,
        bucket: KvStore,
        decisions: Decisions,
        events: EventSink,
        rating: Callable[[str, str], float],
        ticket_ttl_s: float,
        clock: Callable[[], float],
    ) -> None:
        self.bucket = bucket
        self.decisions = decisions
        self.events = events
        self.rating = rating
        self.ticket_ttl_s = ticket_ttl_s
        self.clock = clock
        self.mirror = Mirror(bucket, "t.", on_change=self._changed)
        #: Keys of the tickets searching now (the matching loop scans these, not every ticket).
        self.searching: set[str] = set()
        self._watchers: dict[str, set[asyncio.Queue[dict[str, Any]]]] = defaultdict(set)

    def entry(self, ticket_id: str) -> tuple[dict[str, Any], int] | None:
        """``(record, revision)`` of a ticket in the mirror (None: not there)."""
        return self.mirror.entries.get(ticket_key(ticket_id))

    async def write(self, key: str, new: dict[str, Any], revision: int) -> bool:
        """Write ``new`` at ``key`` if the ticket is still at ``revision``, and into the
        mirror at once; False (nothing written) when it changed meanwhile. Raises
        ServiceError UNAVAILABLE."""
        try:
            rev = await self.bucket.update(key, new, revision)
        except Conflict:
            return False
        self.mirror.apply_now(key, new, rev)
        return True

    async def rewrite(
        self, ticket_id: str, change: Callable[[dict[str, Any] | None], dict[str, Any] | None]
    ) -> None:
        """Read a ticket from KV and :meth:`write` ``change(record)`` over it (``record``
        None: no such ticket; ``change`` answering None: leave it as it is), reading it
        again after a conflict, :data:`MAX_ATTEMPTS` times at most. Raises ServiceError
        UNAVAILABLE."""
        key = ticket_key(ticket_id)
        for _ in range(MAX_ATTEMPTS):
            entry = await self.bucket.get(key)
            record, revision = entry if entry is not None else (None, 0)
            new = change(record)
            if new is None or await self.write(key, new, revision):
                return

    def searching_now(self, ticket: dict[str, Any] | None, now: float) -> bool:
        """True while a ticket holds its profile's place in the queue: searching, and
        claimed by a match being formed or younger than the TTL."""
        if ticket is None or ticket.get("status") != TicketStatus.SEARCHING:
            return False
        return bool(ticket.get("claim")) or now < float(ticket["created_at"]) + self.ticket_ttl_s

    async def create(
        self,
        kind: str,
        players: int,
        config: dict[str, Any],
        name: str,
        profile_id: str = "",
        command_id: str = "",
    ) -> dict[str, Any]:
        """Queue a ticket; returns its record.

        Raises:
            ServiceError: ``MALFORMED`` (no such queue), ``INVALID_CONFIG`` (a config
                this queue cannot matchmake), ``ALREADY_QUEUED`` (the profile has a
                searching ticket in this queue), ``IDEMPOTENCY_KEY_REUSED`` (the
                command id made a ticket with another body), ``UNAVAILABLE``,
                ``CONFLICT``.
        """
        problem = domain.queue_problem(kind, players)
        if problem:
            raise ServiceError(MatchErrorCode.MALFORMED, problem)
        problem = domain.config_problem(kind, players, config)
        if problem:
            raise ServiceError(MatchErrorCode.INVALID_CONFIG, problem)
        if not 1 <= len(name) <= MAX_NAME_CHARS:
            raise ServiceError(MatchErrorCode.MALFORMED, f"name must be 1..{MAX_NAME_CHARS} characters")
        if profile_id and not valid_id(profile_id):
            raise ServiceError(MatchErrorCode.MALFORMED, f"invalid profile id {profile_id!r}")
        ticket_id = ticket_id_for(command_id)
        if command_id:
            existing = await self.bucket.get(ticket_key(ticket_id))
            if existing is not None:
                asked = (kind, int(players), dict(config), name, profile_id)
                record = existing[0]
                held = tuple(record.get(k) for k in ("kind", "players", "config", "name", "profile_id"))
                if held != asked:
                    raise ServiceError(
                        MatchErrorCode.IDEMPOTENCY_KEY_REUSED,
                        "this Idempotency-Key already made another ticket",
                    )
                return record
        queue = domain.queue_id(kind, players)
        now = self.clock()
        if profile_id:
            await self._take_profile_lock(queue, profile_id, ticket_id, now)
        record = {
            "ticket_id": ticket_id,
            "kind": kind,
            "players": int(players),
            "queue": queue,
            "config": dict(config),
            "name": name,
            "profile_id": profile_id,
            "rating": self.rating(profile_id, queue),
            "created_at": now,
            "status": TicketStatus.SEARCHING.value,
            "claim": None,
            "match": None,
            "ended_at": None,
            "reason": "",
        }
        try:
            revision = await self.bucket.create(ticket_key(ticket_id), record)
        except Conflict:  # the same idempotency key, concurrently
            existing = await self.bucket.get(ticket_key(ticket_id))
            if existing is None:
                raise ServiceError(MatchErrorCode.CONFLICT, "ticket create raced; retry") from None
            return existing[0]
        self.mirror.apply_now(ticket_key(ticket_id), record, revision)
        log.info("ticket_created", ticket_id=ticket_id, queue=queue, profile_id=profile_id)
        self.events.publish(
            MatchEvent.TICKET_CREATED,
            {"ticket_id": ticket_id, "queue": queue, "profile_id": profile_id, "at": now},
            f"tc-{ticket_id}",
        )
        return record

    async def _take_profile_lock(self, queue: str, profile_id: str, ticket_id: str, now: float) -> None:
        """Point ``p.<queue>.<profile>`` at ``ticket_id`` unless another searching ticket
        holds it. Raises ServiceError ALREADY_QUEUED / CONFLICT / UNAVAILABLE."""
        key = lock_key(queue, profile_id)
        for _ in range(MAX_ATTEMPTS):
            current = await self.bucket.get(key)
            try:
                if current is None:
                    await self.bucket.create(key, {"ticket_id": ticket_id})
                    return
                other_id = str(current[0].get("ticket_id", ""))
                if other_id != ticket_id:
                    other = await self.bucket.get(ticket_key(other_id)) if other_id else None
                    if other is not None and self.searching_now(other[0], now):
                        raise ServiceError(
                            MatchErrorCode.ALREADY_QUEUED,
                            f"this profile already has a searching ticket in queue {queue}: "
                            f"{other_id}; cancel it first",
                        )
                await self.bucket.update(key, {"ticket_id": ticket_id}, current[1])
                return
            except Conflict:
                continue
        raise ServiceError(MatchErrorCode.CONFLICT, "the profile's queue entry changed too often; retry")

    async def get(self, ticket_id: str) -> dict[str, Any]:
        """A ticket's record (the live mirror, else KV).

        Raises:
            ServiceError: ``TICKET_NOT_FOUND``, ``UNAVAILABLE``.
        """
        entry = self.entry(ticket_id)
        if entry is None and valid_id(ticket_id):
            entry = await self.bucket.get(ticket_key(ticket_id))
        if entry is None:
            raise ServiceError(MatchErrorCode.TICKET_NOT_FOUND, f"no ticket {ticket_id!r}")
        return entry[0]

    async def cancel(self, ticket_id: str) -> dict[str, Any]:
        """Cancel a searching ticket; returns its record. Cancelling a cancelled or
        expired ticket answers it unchanged.

        A ticket claimed by a match being formed is cancelled only if that match is not
        decided yet (the cancel decides it ``aborted``): a cancelled ticket is never
        matched.

        Raises:
            ServiceError: ``ALREADY_MATCHED`` (matched, or in a decided match),
                ``TICKET_NOT_FOUND``, ``UNAVAILABLE``, ``CONFLICT``.
        """
        if not valid_id(ticket_id):
            raise ServiceError(MatchErrorCode.TICKET_NOT_FOUND, f"no ticket {ticket_id!r}")
        key = ticket_key(ticket_id)
        for _ in range(MAX_ATTEMPTS):
            entry = await self.bucket.get(key)
            if entry is None:
                raise ServiceError(MatchErrorCode.TICKET_NOT_FOUND, f"no ticket {ticket_id!r}")
            record, revision = entry
            status = record.get("status")
            if status == TicketStatus.MATCHED:
                raise ServiceError(MatchErrorCode.ALREADY_MATCHED, "the ticket is matched already")
            if status in (TicketStatus.CANCELLED, TicketStatus.EXPIRED):
                return record
            claim = record.get("claim")
            if claim:
                decision = await self.decisions.decide(str(claim["match_id"]), DecisionState.ABORTED, {})
                if decision.get("state") == DecisionState.COMMITTED:
                    raise ServiceError(
                        MatchErrorCode.ALREADY_MATCHED, "the ticket is being matched; too late to cancel"
                    )
            now = self.clock()
            new = {**record, "status": TicketStatus.CANCELLED.value, "claim": None,
                   "ended_at": now, "reason": "cancelled"}
            if not await self.write(key, new, revision):
                continue
            log.info("ticket_cancelled", ticket_id=ticket_id, queue=record.get("queue"))
            self.events.publish(
                MatchEvent.TICKET_CANCELLED, {"ticket_id": ticket_id, "at": now}, f"tx-{ticket_id}"
            )
            return new
        raise ServiceError(MatchErrorCode.CONFLICT, "the ticket changed too often; retry")

    async def expire(self, key: str, record: dict[str, Any], revision: int, now: float) -> None:
        """Mark a searching ticket (read at ``revision``) ``expired`` (reason ``ttl``);
        a ticket changed meanwhile (claimed, cancelled, expired elsewhere) is left alone.
        Raises ServiceError UNAVAILABLE."""
        new = {**record, "status": TicketStatus.EXPIRED.value, "ended_at": now, "reason": "ttl"}
        if not await self.write(key, new, revision):
            return
        log.info("ticket_expired", ticket_id=record["ticket_id"], queue=record.get("queue"))
        self.events.publish(
            MatchEvent.TICKET_EXPIRED,
            {"ticket_id": record["ticket_id"], "at": now},
            f"te-{record['ticket_id']}",
        )

    async def watch(self, ticket_id: str) -> AsyncIterator[dict[str, Any]]:
        """The ticket now, then the ticket at each status change; ends after a final
        status. Raises ServiceError TICKET_NOT_FOUND / UNAVAILABLE."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._watchers[ticket_id].add(queue)
        try:
            record = await self.get(ticket_id)
            yield record
            last = record.get("status")
            while last not in FINAL_STATUSES:
                record = await queue.get()
                if record.get("status") != last:
                    last = record.get("status")
                    yield record
        finally:
            watchers = self._watchers.get(ticket_id)
            if watchers is not None:
                watchers.discard(queue)
                if not watchers:
                    self._watchers.pop(ticket_id, None)

    def _changed(self, key: str, value: dict[str, Any] | None, _revision: int) -> None:
        if value is not None and value.get("status") == TicketStatus.SEARCHING:
            self.searching.add(key)
        else:
            self.searching.discard(key)
        if value is None:
            return
        for queue in self._watchers.get(key[2:], ()):
            queue.put_nowait(value)
