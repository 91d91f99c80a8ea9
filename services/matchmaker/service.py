"""The matchmaker's service layer: tickets, the matching loop, forming matches.

A ticket lives in KV ``MATCH_TICKETS`` (``t.<id>``), so a restart of any instance loses
none. Every instance runs the same loop (:meth:`Matchmaker.run`) every
``interval_s`` seconds over its live mirror of the bucket:

1. expire searching tickets older than the TTL (5 minutes);
2. recover matches whose forming instance went silent (claims older than
   ``claim_timeout_s``);
3. run the pure matching step (:func:`services.matchmaker.domain.form_matches`) per
   queue over the searching, unclaimed tickets;
4. form each match (:meth:`Matchmaker.form`):

   a. **claim** each ticket (in ticket-id order) with a revision-checked update that
      adds ``claim: {match_id, by, at}``; a ticket that changed since it was read
      (claimed by another instance, cancelled) makes the claim fail, and the claims
      already taken are released;
   b. **decide**: ``create`` the key ``m.<match_id>`` with ``committed`` and the whole
      match (seats, merged config). ``create`` succeeds once: whoever writes the key
      first decides for ever. A cancel or a recovering instance that finds a claim of a
      match without a decision writes ``aborted`` first, and the claimer then releases;
   c. **complete** (also the roll-forward of a recovery): ``Session.CreateGame`` with
      command id ``mm-<match_id>`` and ``Session.Join`` per seat with
      ``mm-<match_id>-<seat>``, so a retry after a crash, or a second instance rolling
      the same match forward, reaches the same game and the same seats; then record the
      game in ``MATCH_GAMES`` (that makes it rated) and mark each ticket ``matched`` with
      its ``game_id`` and ``player_id``.

So two instances never put one ticket in two matches (a claim is a compare-and-set; a
decision is written once), and an instance killed at any point loses no ticket: its
claims go stale and another instance rolls the match forward (decided) or back (not).

Player tokens are not minted here: the gateway signs a token for ``(game_id,
player_id)`` when the ticket's owner reads its matched ticket.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import socket
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import structlog
from nats.js.client import JetStreamContext

from services.common.errors import ServiceError
from services.matchmaker import domain
from services.matchmaker.domain import (
    FINAL_STATUSES,
    Candidate,
    Match,
    MatchErrorCode,
    TicketStatus,
)
from services.matchmaker.session_port import SessionPort
from services.matchmaker.store import (
    Bucket,
    Conflict,
    EventLog,
    MatchEvent,
    Mirror,
    decision_key,
    lock_key,
    rating_key,
    ticket_key,
)

log = structlog.get_logger("cellwar.matchmaker")

#: Revision-checked writes tried before giving up with ``CONFLICT``.
MAX_ATTEMPTS = 20
#: Seconds the completion of a match keeps retrying an unavailable session before it
#: leaves the match to recovery (its claims stay; they go stale and are rolled forward).
COMPLETE_RETRY_S = 30.0
#: Tickets expired per loop step at most (the rest wait for the next step).
EXPIRE_PER_STEP = 500
#: Longest player name (characters), as for a join.
MAX_NAME_CHARS = 40
#: Queue statistics are recomputed at most this often (seconds).
STATS_CACHE_S = 0.5


class DecisionState:
    """Values of ``state`` in a match decision ``m.<match_id>``."""

    COMMITTED = "committed"
    ABORTED = "aborted"


@dataclass(frozen=True)
class MatchmakerOptions:
    """Tuning of one matchmaker instance.

    Attributes:
        interval_s: pause between two matching steps (seconds).
        ticket_ttl_s: a ticket expires after searching this long (seconds; 300 by default).
        claim_timeout_s: a claim this old (seconds) whose forming instance has not
            finished is recovered by any instance.
        concurrency: matches this instance forms at once.
        instance_id: written into claims (who formed a match); default host-pid-random.
    """

    interval_s: float = 0.1
    ticket_ttl_s: float = domain.TICKET_TTL_S
    claim_timeout_s: float = 10.0
    concurrency: int = 32
    instance_id: str = ""


def _default_instance_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


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


class Matchmaker:
    """Tickets, matching and match forming for one instance (see the module docstring).

    Args:
        js: JetStream context (for the ``MATCH_EVENTS`` stream).
        tickets / games / ratings: the ``MATCH_TICKETS``, ``MATCH_GAMES`` and ``RATINGS``
            buckets.
        session: how games are created and joined.
        options: timings and the instance id.
        clock: unix time in seconds (tests may pass their own).
    """

    def __init__(
        self,
        js: JetStreamContext,
        tickets: Bucket,
        games: Bucket,
        ratings: Bucket,
        session: SessionPort,
        options: MatchmakerOptions | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.js = js
        self.events = EventLog(js)
        self.tickets = tickets
        self.games = games
        self.ratings = ratings
        self.session = session
        opts = options or MatchmakerOptions()
        if not opts.instance_id:
            opts = MatchmakerOptions(**{**opts.__dict__, "instance_id": _default_instance_id()})
        self.options = opts
        self.clock = clock
        self.ticket_mirror = Mirror(tickets.kv, "t.", on_change=self._ticket_changed)
        self.games_mirror = Mirror(games.kv, "")
        self.rating_mirror = Mirror(ratings.kv, "r.")
        self._watchers: dict[str, set[asyncio.Queue[dict[str, Any]]]] = defaultdict(set)
        #: Keys of the tickets searching now (the loop scans these, not every ticket).
        self._searching: set[str] = set()
        self._stats_cache: tuple[float, list[dict[str, Any]]] | None = None
        self._inflight_tickets: set[str] = set()
        self._inflight_matches: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._slots = asyncio.Semaphore(opts.concurrency)
        self._loop_task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        #: Counters (this instance): matches completed, recoveries rolled forward / back.
        self.matches_formed = 0
        self.rolled_forward = 0
        self.rolled_back = 0

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Load the buckets into the mirrors and start the matching loop."""
        await self.ticket_mirror.start()
        await self.games_mirror.start()
        await self.rating_mirror.start()
        self._loop_task = asyncio.create_task(self.run(), name="matchmaker-loop")

    async def stop(self) -> None:
        """Stop the loop, wait briefly for matches being formed, stop the mirrors."""
        self._stopping.set()
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=5.0)
            for task in pending:
                task.cancel()
        for mirror in (self.ticket_mirror, self.games_mirror, self.rating_mirror):
            await mirror.stop()
        await self.events.flush()

    # ------------------------------------------------------------------ tickets

    def _ticket(self, ticket_id: str) -> tuple[dict[str, Any], int] | None:
        return self.ticket_mirror.entries.get(ticket_key(ticket_id))

    def current_rating(self, profile_id: str, queue: str) -> float:
        """The profile's rating in ``queue`` now (rating points); provisional 1500 for an
        anonymous ticket or a profile not yet rated there."""
        if not profile_id:
            return domain.PROVISIONAL_RATING
        entry = self.rating_mirror.entries.get(rating_key(queue, profile_id))
        if entry is None:
            return domain.PROVISIONAL_RATING
        return domain.display_rating(float(entry[0].get("mu", domain.MU0)))

    async def create_ticket(
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
        if profile_id and not _valid_id(profile_id):
            raise ServiceError(MatchErrorCode.MALFORMED, f"invalid profile id {profile_id!r}")
        ticket_id = ticket_id_for(command_id)
        if command_id:
            existing = await self.tickets.get(ticket_key(ticket_id))
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
            "rating": self.current_rating(profile_id, queue),
            "created_at": now,
            "status": TicketStatus.SEARCHING.value,
            "claim": None,
            "match": None,
            "ended_at": None,
            "reason": "",
        }
        try:
            revision = await self.tickets.create(ticket_key(ticket_id), record)
        except Conflict:  # the same idempotency key, concurrently
            existing = await self.tickets.get(ticket_key(ticket_id))
            if existing is None:
                raise ServiceError(MatchErrorCode.CONFLICT, "ticket create raced; retry") from None
            return existing[0]
        await self.ticket_mirror.apply(ticket_key(ticket_id), record, revision)
        log.info("ticket_created", ticket_id=ticket_id, queue=queue, profile_id=profile_id)
        self.events.publish(
            MatchEvent.TICKET_CREATED,
            {"ticket_id": ticket_id, "queue": queue, "profile_id": profile_id, "at": now},
            f"tc-{ticket_id}",
        )
        return record

    def _searching_now(self, ticket: dict[str, Any] | None, now: float) -> bool:
        """True while a ticket holds its profile's place in the queue."""
        if ticket is None or ticket.get("status") != TicketStatus.SEARCHING:
            return False
        return bool(ticket.get("claim")) or now < float(ticket["created_at"]) + self.options.ticket_ttl_s

    async def _take_profile_lock(self, queue: str, profile_id: str, ticket_id: str, now: float) -> None:
        """Point ``p.<queue>.<profile>`` at ``ticket_id`` unless another searching ticket
        holds it. Raises ServiceError ALREADY_QUEUED / CONFLICT / UNAVAILABLE."""
        key = lock_key(queue, profile_id)
        for _ in range(MAX_ATTEMPTS):
            current = await self.tickets.get(key)
            try:
                if current is None:
                    await self.tickets.create(key, {"ticket_id": ticket_id})
                    return
                other_id = str(current[0].get("ticket_id", ""))
                if other_id != ticket_id:
                    other = await self.tickets.get(ticket_key(other_id)) if other_id else None
                    if other is not None and self._searching_now(other[0], now):
                        raise ServiceError(
                            MatchErrorCode.ALREADY_QUEUED,
                            f"this profile already has a searching ticket in queue {queue}: "
                            f"{other_id}; cancel it first",
                        )
                await self.tickets.update(key, {"ticket_id": ticket_id}, current[1])
                return
            except Conflict:
                continue
        raise ServiceError(MatchErrorCode.CONFLICT, "the profile's queue entry changed too often; retry")

    async def get_ticket(self, ticket_id: str) -> dict[str, Any]:
        """A ticket's record (the live mirror, else KV).

        Raises:
            ServiceError: ``TICKET_NOT_FOUND``, ``UNAVAILABLE``.
        """
        entry = self._ticket(ticket_id)
        if entry is None and _valid_id(ticket_id):
            entry = await self.tickets.get(ticket_key(ticket_id))
        if entry is None:
            raise ServiceError(MatchErrorCode.TICKET_NOT_FOUND, f"no ticket {ticket_id!r}")
        return entry[0]

    async def cancel_ticket(self, ticket_id: str) -> dict[str, Any]:
        """Cancel a searching ticket; returns its record. Cancelling a cancelled or
        expired ticket answers it unchanged.

        A ticket claimed by a match being formed is cancelled only if that match is not
        decided yet (the cancel decides it ``aborted``): a cancelled ticket is never
        matched.

        Raises:
            ServiceError: ``ALREADY_MATCHED`` (matched, or in a decided match),
                ``TICKET_NOT_FOUND``, ``UNAVAILABLE``, ``CONFLICT``.
        """
        if not _valid_id(ticket_id):
            raise ServiceError(MatchErrorCode.TICKET_NOT_FOUND, f"no ticket {ticket_id!r}")
        key = ticket_key(ticket_id)
        for _ in range(MAX_ATTEMPTS):
            entry = await self.tickets.get(key)
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
                decision = await self._decide(str(claim["match_id"]), DecisionState.ABORTED, {})
                if decision.get("state") == DecisionState.COMMITTED:
                    raise ServiceError(
                        MatchErrorCode.ALREADY_MATCHED, "the ticket is being matched; too late to cancel"
                    )
            now = self.clock()
            new = {**record, "status": TicketStatus.CANCELLED.value, "claim": None,
                   "ended_at": now, "reason": "cancelled"}
            try:
                rev = await self.tickets.update(key, new, revision)
            except Conflict:
                continue
            await self.ticket_mirror.apply(key, new, rev)
            log.info("ticket_cancelled", ticket_id=ticket_id, queue=record.get("queue"))
            self.events.publish(
                MatchEvent.TICKET_CANCELLED, {"ticket_id": ticket_id, "at": now}, f"tx-{ticket_id}"
            )
            return new
        raise ServiceError(MatchErrorCode.CONFLICT, "the ticket changed too often; retry")

    async def watch_ticket(self, ticket_id: str) -> AsyncIterator[dict[str, Any]]:
        """The ticket now, then the ticket at each status change; ends after a final
        status. Raises ServiceError TICKET_NOT_FOUND / UNAVAILABLE."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._watchers[ticket_id].add(queue)
        try:
            record = await self.get_ticket(ticket_id)
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

    def _ticket_changed(self, key: str, value: dict[str, Any] | None, _revision: int) -> None:
        if value is not None and value.get("status") == TicketStatus.SEARCHING:
            self._searching.add(key)
        else:
            self._searching.discard(key)
        if value is None:
            return
        for queue in self._watchers.get(key[2:], ()):
            queue.put_nowait(value)

    # ------------------------------------------------------------------ statistics

    def queue_stats(self) -> list[dict[str, Any]]:
        """Per queue (every kind × players): ``waiting`` (searching tickets),
        ``in_games`` (players seated in matchmade games not finished), ``matches_last_
        minute``, ``median_wait_s`` / ``p90_wait_s`` (seconds, of tickets matched in the
        last 5 minutes; None when none). Computed at most every
        :data:`STATS_CACHE_S` seconds (waiting screens poll it)."""
        now = self.clock()
        if self._stats_cache is not None and now - self._stats_cache[0] < STATS_CACHE_S:
            return self._stats_cache[1]
        stats = self._queue_stats(now)
        self._stats_cache = (now, stats)
        return stats

    def _queue_stats(self, now: float) -> list[dict[str, Any]]:
        waiting: dict[str, int] = defaultdict(int)
        recent_matches: dict[str, set[str]] = defaultdict(set)
        waits: dict[str, list[float]] = defaultdict(list)
        for record, _ in self.ticket_mirror.entries.values():
            queue = str(record.get("queue", ""))
            status = record.get("status")
            if status == TicketStatus.SEARCHING:
                if self._searching_now(record, now):
                    waiting[queue] += 1
            elif status == TicketStatus.MATCHED and record.get("ended_at") is not None:
                age = now - float(record["ended_at"])
                if age <= 300.0:
                    waits[queue].append(wait_of(record, now))
                if age <= 60.0:
                    recent_matches[queue].add(str((record.get("match") or {}).get("match_id", "")))
        in_games: dict[str, int] = defaultdict(int)
        for game, _ in self.games_mirror.entries.values():
            if not game.get("finished_at"):
                in_games[str(game.get("queue", ""))] += len(game.get("seats") or ())
        out = []
        for kind, players in domain.all_queues():
            queue = domain.queue_id(kind, players)
            w = sorted(waits[queue])
            out.append(
                {
                    "queue": queue,
                    "kind": kind,
                    "players": players,
                    "waiting": waiting[queue],
                    "in_games": in_games[queue],
                    "matches_last_minute": len(recent_matches[queue]),
                    "median_wait_s": domain.percentile(w, 50),
                    "p90_wait_s": domain.percentile(w, 90),
                }
            )
        return out

    # ------------------------------------------------------------------ ratings (reads)

    def leaderboard(self, kind: str, players: int, limit: int = 100) -> list[dict[str, Any]]:
        """The top ``limit`` (≤ 100) rated profiles of a queue, best first: ``{"profile_id",
        "name", "rating", "games", "mu", "sigma"}`` (ties: more games first).

        Raises:
            ServiceError: ``MALFORMED`` for a queue that does not exist.
        """
        problem = domain.queue_problem(kind, players)
        if problem:
            raise ServiceError(MatchErrorCode.MALFORMED, problem)
        prefix = f"r.{domain.queue_id(kind, players)}."
        rows = [
            _rating_row(key[len(prefix):], kind, players, value)
            for key, (value, _) in self.rating_mirror.entries.items()
            if key.startswith(prefix)
        ]
        rows.sort(key=lambda r: (-r["rating"], -r["games"], r["profile_id"]))
        return rows[: max(1, min(limit or 100, 100))]

    def profile_ratings(self, profile_id: str) -> list[dict[str, Any]]:
        """Every rating of a profile (one per queue it played rated), by queue."""
        out = []
        suffix = f".{profile_id}"
        for key, (value, _) in sorted(self.rating_mirror.entries.items()):
            if profile_id and key.endswith(suffix):
                queue = key[2 : -len(suffix)]
                kind, _, players = queue.rpartition("-")
                out.append(_rating_row(profile_id, kind, int(players), value))
        return out

    # ------------------------------------------------------------------ the loop

    async def run(self) -> None:
        """The matching loop: :meth:`step` every ``interval_s`` seconds until stopped."""
        while not self._stopping.is_set():
            try:
                await self.step()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the loop must survive one bad step
                log.exception("matching_step_failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.options.interval_s)

    async def step(self) -> list[Match]:
        """One matching step: expire, recover, match, and start forming each match in
        the background. Returns the matches started."""
        now = self.clock()
        ttl = self.options.ticket_ttl_s
        by_queue: dict[str, list[Candidate]] = defaultdict(list)
        expired: list[tuple[str, dict[str, Any], int]] = []
        stale: dict[str, float] = {}
        for key in list(self._searching):
            entry = self.ticket_mirror.entries.get(key)
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
            rating = self.current_rating(str(record.get("profile_id") or ""), queue)
            by_queue[queue].append(
                Candidate(tid, float(record["created_at"]), rating, record.get("config") or {})
            )
        for key, record, revision in expired[:EXPIRE_PER_STEP]:
            await self._expire(key, record, revision, now)
        for match_id in stale:
            self._spawn(self.recover(match_id), match_id)
        started: list[Match] = []
        for queue, candidates in by_queue.items():
            kind, _, players = queue.rpartition("-")
            if len(candidates) < int(players):
                continue
            for match in domain.form_matches(candidates, int(players), now):
                match_id = uuid.uuid4().hex
                self._inflight_tickets.update(match.ticket_ids)
                self._spawn(self.form(match_id, kind, int(players), match), match_id)
                started.append(match)
        return started

    def _spawn(self, coro: Any, match_id: str) -> None:
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

    async def _expire(self, key: str, record: dict[str, Any], revision: int, now: float) -> None:
        new = {**record, "status": TicketStatus.EXPIRED.value, "ended_at": now, "reason": "ttl"}
        try:
            rev = await self.tickets.update(key, new, revision)
        except Conflict:
            return  # changed meanwhile (claimed, cancelled, expired elsewhere)
        await self.ticket_mirror.apply(key, new, rev)
        log.info("ticket_expired", ticket_id=record["ticket_id"], queue=record.get("queue"))
        self.events.publish(
            MatchEvent.TICKET_EXPIRED,
            {"ticket_id": record["ticket_id"], "at": now},
            f"te-{record['ticket_id']}",
        )

    # ------------------------------------------------------------------ forming

    async def form(self, match_id: str, kind: str, players: int, match: Match) -> bool:
        """Claim, decide and complete one match (module docstring, 4a–c). Returns True
        when this call decided it committed and completed it."""
        try:
            claimed: list[str] = []
            now = self.clock()
            claim = {"match_id": match_id, "by": self.options.instance_id, "at": now}
            for tid in sorted(match.ticket_ids):
                entry = self._ticket(tid)
                if entry is None or entry[0].get("status") != TicketStatus.SEARCHING or entry[0].get("claim"):
                    await self.release(match_id, claimed)
                    return False
                record, revision = entry
                new = {**record, "claim": claim}
                try:
                    rev = await self.tickets.update(ticket_key(tid), new, revision)
                except Conflict:
                    await self.release(match_id, claimed)
                    return False
                await self.ticket_mirror.apply(ticket_key(tid), new, rev)
                claimed.append(tid)
            seats = []
            for tid in match.ticket_ids:  # seat order
                record = self._ticket(tid)[0]  # type: ignore[index] - claimed just now
                seats.append(
                    {
                        "ticket_id": tid,
                        "name": record.get("name", ""),
                        "profile_id": record.get("profile_id", ""),
                        "rating": self.current_rating(str(record.get("profile_id") or ""), record["queue"]),
                        "config_set": bool(record.get("config")),
                    }
                )
            body = {
                "queue": domain.queue_id(kind, players),
                "kind": kind,
                "players": players,
                "config": {**domain.MATCH_CONFIG_DEFAULTS.get(kind, {}), **match.config, "players": players},
                "seats": seats,
                "created_at": now,
                "by": self.options.instance_id,
                "spread": match.spread,
            }
            decision = await self._decide(match_id, DecisionState.COMMITTED, body)
            if decision.get("state") != DecisionState.COMMITTED:
                log.info("match_aborted_before_commit", match_id=match_id)
                await self.release(match_id, claimed)
                return False
            self.events.publish(
                MatchEvent.MATCH_FORMED,
                {"match_id": match_id, "queue": body["queue"], "tickets": list(match.ticket_ids), "at": now},
                f"mf-{match_id}",
            )
            await self.complete(match_id, decision)
            return True
        finally:
            self._inflight_tickets.difference_update(match.ticket_ids)

    async def _decide(self, match_id: str, state: str, body: dict[str, Any]) -> dict[str, Any]:
        """Write the decision of ``match_id`` once (``create``); returns the decision that
        holds (ours, or the one written first)."""
        key = decision_key(match_id)
        for _ in range(MAX_ATTEMPTS):
            value = {**body, "state": state, "match_id": match_id}
            try:
                await self.tickets.create(key, value)
                if state == DecisionState.ABORTED:
                    self.events.publish(
                        MatchEvent.MATCH_ABORTED, {"match_id": match_id}, f"ma-{match_id}"
                    )
                return value
            except Conflict:
                existing = await self.tickets.get(key)
                if existing is not None:
                    return existing[0]
        raise ServiceError(MatchErrorCode.CONFLICT, f"match {match_id}: no decision could be read")

    async def release(self, match_id: str, ticket_ids: list[str]) -> None:
        """Remove the claims of ``match_id`` from these tickets (those still carrying it)."""
        for tid in ticket_ids:
            key = ticket_key(tid)
            for _ in range(MAX_ATTEMPTS):
                entry = await self.tickets.get(key)
                if entry is None:
                    break
                record, revision = entry
                claim = record.get("claim") or {}
                if record.get("status") != TicketStatus.SEARCHING or claim.get("match_id") != match_id:
                    break
                new = {**record, "claim": None}
                try:
                    rev = await self.tickets.update(key, new, revision)
                except Conflict:
                    continue
                await self.ticket_mirror.apply(key, new, rev)
                break

    async def recover(self, match_id: str) -> None:
        """Finish what a silent instance left: roll a decided match forward, abort and
        release an undecided one."""
        existing = await self.tickets.get(decision_key(match_id))
        decision = existing[0] if existing else await self._decide(match_id, DecisionState.ABORTED, {})
        if decision.get("state") == DecisionState.COMMITTED:
            log.info("match_rolled_forward", match_id=match_id)
            self.rolled_forward += 1
            await self.complete(match_id, decision)
            return
        claimed = [
            str(rec["ticket_id"])
            for rec, _ in list(self.ticket_mirror.entries.values())
            if (rec.get("claim") or {}).get("match_id") == match_id
        ]
        log.info("match_rolled_back", match_id=match_id, tickets=len(claimed))
        self.rolled_back += 1
        await self.release(match_id, claimed)

    async def _session_call(self, what: str, fn: Callable[[], Any]) -> Any:
        """Call the session, retrying ``UNAVAILABLE`` for up to :data:`COMPLETE_RETRY_S`."""
        deadline = self.clock() + COMPLETE_RETRY_S
        delay = 0.1
        while True:
            try:
                return await fn()
            except ServiceError as exc:
                if exc.code != "UNAVAILABLE" or self.clock() > deadline or self._stopping.is_set():
                    raise
                log.warning("session_unavailable", call=what, error=exc.message)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

    async def complete(self, match_id: str, decision: dict[str, Any]) -> str | None:
        """Create the game, join every seat, record the game, mark the tickets matched.
        Idempotent (same command ids → same game and seats). Returns the game id, or
        None when the session refused the match for good (its tickets were released or,
        for a config the engine refuses, the tickets that set one were cancelled)."""
        kind = str(decision["kind"])
        seats = list(decision["seats"])
        try:
            game_id = await self._session_call(
                "create",
                lambda: self.session.create_game(kind, dict(decision["config"]), f"mm-{match_id}"),
            )
        except ServiceError as exc:
            if exc.code == "UNAVAILABLE":
                raise  # the claims stay; recovery retries later
            await self._refused(match_id, seats, exc)
            return None
        joined: list[dict[str, Any]] = []
        for i, seat in enumerate(seats, start=1):
            try:
                player_id = await self._session_call(
                    "join",
                    lambda seat=seat, i=i: self.session.join(game_id, seat["name"], f"mm-{match_id}-{i}"),
                )
            except ServiceError as exc:
                if exc.code == "UNAVAILABLE":
                    raise
                log.error("seat_refused", match_id=match_id, game_id=game_id, code=exc.code, error=exc.message)
                await self.release(match_id, [s["ticket_id"] for s in seats[i - 1 :]])
                break
            joined.append({**seat, "player_id": player_id})
        game = {
            "game_id": game_id,
            "match_id": match_id,
            "queue": decision["queue"],
            "kind": kind,
            "players": decision["players"],
            "rated": True,
            "seats": [
                {k: s[k] for k in ("player_id", "ticket_id", "profile_id", "name", "rating")}
                for s in joined
            ],
            "created_at": decision.get("created_at"),
            "finished_at": None,
        }
        existing = await self.games.get(game_id)
        if existing is None or existing[0].get("match_id") != match_id:
            rev = await self.games.put(game_id, game)
            await self.games_mirror.apply(game_id, game, rev)
        now = self.clock()
        for seat in joined:
            await self._mark_matched(seat["ticket_id"], match_id, game_id, int(seat["player_id"]), now)
        if joined:
            self.matches_formed += 1
            log.info(
                "match_started",
                match_id=match_id,
                game_id=game_id,
                queue=decision["queue"],
                players=[s["player_id"] for s in joined],
            )
            self.events.publish(
                MatchEvent.MATCH_STARTED,
                {"match_id": match_id, "game_id": game_id, "seats": game["seats"], "at": now},
                f"ms-{match_id}",
            )
        return game_id

    async def _mark_matched(self, ticket_id: str, match_id: str, game_id: str, player_id: int, now: float) -> None:
        key = ticket_key(ticket_id)
        for _ in range(MAX_ATTEMPTS):
            entry = await self.tickets.get(key)
            if entry is None:
                log.error("matched_ticket_missing", ticket_id=ticket_id, match_id=match_id)
                return
            record, revision = entry
            if record.get("status") == TicketStatus.MATCHED:
                return
            if (record.get("claim") or {}).get("match_id") != match_id:
                log.error("matched_ticket_not_claimed", ticket_id=ticket_id, match_id=match_id)
                return
            new = {
                **record,
                "status": TicketStatus.MATCHED.value,
                "claim": None,
                "match": {"match_id": match_id, "game_id": game_id, "player_id": player_id},
                "ended_at": now,
                "reason": "",
            }
            try:
                rev = await self.tickets.update(key, new, revision)
            except Conflict:
                continue
            await self.ticket_mirror.apply(key, new, rev)
            return

    async def _refused(self, match_id: str, seats: list[dict[str, Any]], exc: ServiceError) -> None:
        """The session refused to create the game: cancel the tickets that asked for a
        config (one of them made it invalid), release the others."""
        log.error("match_refused", match_id=match_id, code=exc.code, error=exc.message)
        release = [s["ticket_id"] for s in seats if not s.get("config_set")]
        if len(release) == len(seats):  # no ticket set a config: nothing to blame
            await self.release(match_id, release)
            return
        await self.release(match_id, release)
        now = self.clock()
        for seat in seats:
            if not seat.get("config_set"):
                continue
            key = ticket_key(seat["ticket_id"])
            for _ in range(MAX_ATTEMPTS):
                entry = await self.tickets.get(key)
                if entry is None:
                    break
                record, revision = entry
                if (record.get("claim") or {}).get("match_id") != match_id:
                    break
                new = {**record, "status": TicketStatus.CANCELLED.value, "claim": None,
                       "ended_at": now, "reason": f"{exc.code}: {exc.message}"}
                try:
                    rev = await self.tickets.update(key, new, revision)
                except Conflict:
                    continue
                await self.ticket_mirror.apply(key, new, rev)
                break


def _valid_id(ticket_id: str) -> bool:
    return 0 < len(ticket_id) <= 64 and all(c.isalnum() or c in "-_" for c in ticket_id)


def _rating_row(profile_id: str, kind: str, players: int, value: dict[str, Any]) -> dict[str, Any]:
    mu = float(value.get("mu", domain.MU0))
    return {
        "profile_id": profile_id,
        "name": str(value.get("name", "")),
        "kind": kind,
        "players": int(players),
        "rating": round(domain.display_rating(mu), 1),
        "games": int(value.get("games", 0)),
        "mu": mu,
        "sigma": float(value.get("sigma", 0.0)),
    }
