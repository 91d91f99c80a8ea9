"""The matching loop of one instance (services/matchmaker/service.py, steps 1–4): every
``interval_s`` seconds, over the searching tickets of the live mirror, expire the old
ones, hand stale claims to recovery, run the pure matching step
(:func:`services.matchmaker.domain.form_matches`) per queue and start forming each match
in the background (:class:`services.matchmaker.forming.Former`), at most
``concurrency`` at once."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import defaultdict
from collections.abc import Callable, Coroutine
from typing import Any

import structlog

from services.matchmaker import domain
from services.matchmaker.domain import Candidate, Match, TicketStatus
from services.matchmaker.forming import Former
from services.matchmaker.options import MatchmakerOptions
from services.matchmaker.tickets import Tickets

log = structlog.get_logger("cellwar.matchmaker")

#: Tickets expired per loop step at most (the rest wait for the next step).
EXPIRE_PER_STEP = 500
#: Seconds :meth:`MatchingLoop.stop` waits for the matches being formed.
STOP_WAIT_S = 5.0


class MatchingLoop:
    """Runs the matching step every ``options.interval_s`` seconds.

    Args:
        tickets: the tickets (their mirror and the set of searching keys).
        former: forms and recovers matches.
        rating: ``rating(profile_id, queue)`` now (rating points).
        options: timings (interval, TTL, claim timeout, concurrency).
        clock: unix time in seconds.
        stopping: set by :meth:`stop` (shared with the former's session retries).
    """

    def __init__(
        self,
        tickets: Tickets,
        former: Former,
        rating: Callable[[str, str], float],
        options: MatchmakerOptions,
        clock: Callable[[], float],
        stopping: asyncio.Event,
    ) -> None:
        self.tickets = tickets
        self.former = former
        self.rating = rating
        self.options = options
        self.clock = clock
        self.stopping = stopping
        self._inflight_tickets: set[str] = set()
        self._inflight_matches: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._slots = asyncio.Semaphore(options.concurrency)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the loop in the background."""
        self._task = asyncio.create_task(self.run(), name="matchmaker-loop")

    async def stop(self) -> None:
        """Stop the loop; wait up to :data:`STOP_WAIT_S` seconds for the matches being
        formed, then cancel them (their claims are recovered elsewhere)."""
        self.stopping.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=STOP_WAIT_S)
            for task in pending:
                task.cancel()

    async def run(self) -> None:
        """:meth:`step` every ``interval_s`` seconds until stopped."""
        while not self.stopping.is_set():
            try:
                await self.step()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the loop must survive one bad step
                log.exception("matching_step_failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), self.options.interval_s)

    async def step(self) -> list[Match]:
        """One matching step: expire, recover, match, and start forming each match in
        the background. Returns the matches started."""
        now = self.clock()
        ttl = self.options.ticket_ttl_s
        by_queue: dict[str, list[Candidate]] = defaultdict(list)
        expired: list[tuple[str, dict[str, Any], int]] = []
        stale: dict[str, float] = {}
        for key in list(self.tickets.searching):
            entry = self.tickets.mirror.entries.get(key)
            if entry is None:
                continue
            record, revision = entry
            if record.get("status") != TicketStatus.SEARCHING:
                continue
            tid = str(record["ticket_id"])
            claim = record.get("claim")
            if claim:
                match_id = str(claim.get("match_id", ""))
                if (
                    now - float(claim.get("at", now)) > self.options.claim_timeout_s
                    and match_id not in self._inflight_matches
                ):
                    stale[match_id] = now
                continue
            if tid in self._inflight_tickets:
                continue
            if now >= float(record["created_at"]) + ttl:
                expired.append((key, record, revision))
                continue
            queue = str(record["queue"])
            rating = self.rating(str(record.get("profile_id") or ""), queue)
            by_queue[queue].append(
                Candidate(tid, float(record["created_at"]), rating, record.get("config") or {})
            )
        for key, record, revision in expired[:EXPIRE_PER_STEP]:
            await self.tickets.expire(key, record, revision, now)
        for match_id in stale:
            self._spawn(self.former.recover(match_id), match_id)
        started: list[Match] = []
        for queue, candidates in by_queue.items():
            kind, _, players = queue.rpartition("-")
            if len(candidates) < int(players):
                continue
            for match in domain.form_matches(candidates, int(players), now):
                match_id = uuid.uuid4().hex
                self._inflight_tickets.update(match.ticket_ids)
                self._spawn(self._form(match_id, kind, int(players), match), match_id)
                started.append(match)
        return started

    async def _form(self, match_id: str, kind: str, players: int, match: Match) -> bool:
        try:
            return await self.former.form(match_id, kind, players, match)
        finally:
            self._inflight_tickets.difference_update(match.ticket_ids)

    def _spawn(self, coro: Coroutine[Any, Any, Any], match_id: str) -> None:
        self._inflight_matches.add(match_id)

        async def guarded() -> None:
            try:
                async with self._slots:
                    await coro
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - logged; claims left behind are recovered
                log.exception("match_task_failed", match_id=match_id)
            finally:
                self._inflight_matches.discard(match_id)

        task = asyncio.create_task(guarded(), name=f"match-{match_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
