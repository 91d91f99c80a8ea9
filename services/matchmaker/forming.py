"""Forming one match (services/matchmaker/service.py, steps 4a–c): claim its tickets,
decide it, complete it through the session port (create the game, join every seat,
record the game in ``MATCH_GAMES``, mark the tickets matched); and the recovery of a
match whose forming instance went silent (roll a decided match forward, an undecided one
back).

Every step is idempotent: the claims are compare-and-set writes, the decision is
written once, the session calls carry command ids derived from the match id
(``mm-<match_id>``, ``mm-<match_id>-<seat>``), so a retry or a second instance reaches
the same game and the same seats.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import structlog

from services.common.errors import ServiceError
from services.matchmaker import domain
from services.matchmaker.decisions import Decisions, DecisionState
from services.matchmaker.domain import Match, TicketStatus
from services.matchmaker.session_port import SessionPort
from services.matchmaker.store import EventSink, KvStore, MatchEvent, Mirror, ticket_key
from services.matchmaker.tickets import Tickets

log = structlog.get_logger("cellwar.matchmaker")

#: Seconds the completion of a match keeps retrying an unavailable session before it
#: leaves the match to recovery (its claims stay; they go stale and are rolled forward).
COMPLETE_RETRY_S = 30.0


class Former:
    """Claims, decides and completes matches; recovers stale ones.

    Args:
        tickets: the tickets (bucket and mirror).
        games: the ``MATCH_GAMES`` bucket; games_mirror: its live mirror.
        decisions: the write-once match decisions.
        session: how games are created and joined.
        events: the audit trail.
        rating: ``rating(profile_id, queue)`` now (rating points), for the seats.
        instance_id: written into claims and decisions (who formed a match).
        clock: unix time in seconds.
        stopping: set when the instance stops (session retries then end at once).
        retry_s: seconds an unavailable session is retried (:data:`COMPLETE_RETRY_S`).
    """

    def __init__(
        self,
        tickets: Tickets,
        games: KvStore,
        games_mirror: Mirror,
        decisions: Decisions,
        session: SessionPort,
        events: EventSink,
        rating: Callable[[str, str], float],
        instance_id: str,
        clock: Callable[[], float],
        stopping: asyncio.Event,
        retry_s: float = COMPLETE_RETRY_S,
    ) -> None:
        self.tickets = tickets
        self.games = games
        self.games_mirror = games_mirror
        self.decisions = decisions
        self.session = session
        self.events = events
        self.rating = rating
        self.instance_id = instance_id
        self.clock = clock
        self.stopping = stopping
        self.retry_s = retry_s
        #: Counters (this instance): matches completed, recoveries rolled forward / back.
        self.matches_formed = 0
        self.rolled_forward = 0
        self.rolled_back = 0

    async def form(self, match_id: str, kind: str, players: int, match: Match) -> bool:
        """Claim, decide and complete one match. Returns True when this call decided it
        committed and completed it; False when a ticket was taken meanwhile or the
        match was aborted (the claims taken are released then).

        Raises:
            ServiceError: ``UNAVAILABLE`` (the claims stay; recovery finishes the match).
        """
        claimed: list[str] = []
        now = self.clock()
        claim = {"match_id": match_id, "by": self.instance_id, "at": now}
        for tid in sorted(match.ticket_ids):
            entry = self.tickets.entry(tid)
            if entry is None or entry[0].get("status") != TicketStatus.SEARCHING or entry[0].get("claim"):
                await self.release(match_id, claimed)
                return False
            record, revision = entry
            if not await self.tickets.write(ticket_key(tid), {**record, "claim": claim}, revision):
                await self.release(match_id, claimed)
                return False
            claimed.append(tid)
        seats = []
        for tid in match.ticket_ids:  # seat order
            record = self.tickets.entry(tid)[0]  # type: ignore[index] - claimed just now
            seats.append(
                {
                    "ticket_id": tid,
                    "name": record.get("name", ""),
                    "profile_id": record.get("profile_id", ""),
                    "rating": self.rating(str(record.get("profile_id") or ""), record["queue"]),
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
            "by": self.instance_id,
            "spread": match.spread,
        }
        decision = await self.decisions.decide(match_id, DecisionState.COMMITTED, body)
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

    async def release(self, match_id: str, ticket_ids: list[str]) -> None:
        """Remove the claims of ``match_id`` from these tickets (those still carrying it)."""

        def released(record: dict[str, Any] | None) -> dict[str, Any] | None:
            if record is None or record.get("status") != TicketStatus.SEARCHING or _claim_of(record) != match_id:
                return None
            return {**record, "claim": None}

        for tid in ticket_ids:
            await self.tickets.rewrite(tid, released)

    async def recover(self, match_id: str) -> None:
        """Finish what a silent instance left: roll a decided match forward, abort and
        release an undecided one."""
        decision = await self.decisions.get(match_id)
        if decision is None:
            decision = await self.decisions.decide(match_id, DecisionState.ABORTED, {})
        if decision.get("state") == DecisionState.COMMITTED:
            log.info("match_rolled_forward", match_id=match_id)
            self.rolled_forward += 1
            await self.complete(match_id, decision)
            return
        claimed = [
            str(rec["ticket_id"])
            for rec, _ in list(self.tickets.mirror.entries.values())
            if _claim_of(rec) == match_id
        ]
        log.info("match_rolled_back", match_id=match_id, tickets=len(claimed))
        self.rolled_back += 1
        await self.release(match_id, claimed)

    async def _session_call(self, what: str, fn: Callable[[], Any]) -> Any:
        """Call the session, retrying ``UNAVAILABLE`` for up to :attr:`retry_s` seconds."""
        deadline = self.clock() + self.retry_s
        delay = 0.1
        while True:
            try:
                return await fn()
            except ServiceError as exc:
                if exc.code != "UNAVAILABLE" or self.clock() > deadline or self.stopping.is_set():
                    raise
                log.warning("session_unavailable", call=what, error=exc.message)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

    async def complete(self, match_id: str, decision: dict[str, Any]) -> str | None:
        """Create the game, join every seat, record the game, mark the tickets matched.
        Idempotent (same command ids → same game and seats). Returns the game id, or
        None when the session refused the match for good (its tickets were released or,
        for a config the engine refuses, the tickets that set one were cancelled).

        Raises:
            ServiceError: ``UNAVAILABLE`` past :attr:`retry_s` (the claims stay).
        """
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
            self.games_mirror.apply_now(game_id, game, rev)
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
        def matched(record: dict[str, Any] | None) -> dict[str, Any] | None:
            if record is None:
                log.error("matched_ticket_missing", ticket_id=ticket_id, match_id=match_id)
                return None
            if record.get("status") == TicketStatus.MATCHED:
                return None
            if _claim_of(record) != match_id:
                log.error("matched_ticket_not_claimed", ticket_id=ticket_id, match_id=match_id)
                return None
            return {
                **record,
                "status": TicketStatus.MATCHED.value,
                "claim": None,
                "match": {"match_id": match_id, "game_id": game_id, "player_id": player_id},
                "ended_at": now,
                "reason": "",
            }

        await self.tickets.rewrite(ticket_id, matched)

    async def _refused(self, match_id: str, seats: list[dict[str, Any]], exc: ServiceError) -> None:
        """The session refused to create the game: cancel the tickets that asked for a
        config (one of them made it invalid), release the others."""
        log.error("match_refused", match_id=match_id, code=exc.code, error=exc.message)
        release = [s["ticket_id"] for s in seats if not s.get("config_set")]
        await self.release(match_id, release)
        if len(release) == len(seats):  # no ticket set a config: nothing to blame
            return
        now = self.clock()

        def cancelled(record: dict[str, Any] | None) -> dict[str, Any] | None:
            if record is None or _claim_of(record) != match_id:
                return None
            return {**record, "status": TicketStatus.CANCELLED.value, "claim": None,
                    "ended_at": now, "reason": f"{exc.code}: {exc.message}"}

        for seat in seats:
            if seat.get("config_set"):
                await self.tickets.rewrite(seat["ticket_id"], cancelled)


def _claim_of(record: dict[str, Any]) -> Any:
    """The match id of a ticket's claim (None: not claimed)."""
    return (record.get("claim") or {}).get("match_id")
