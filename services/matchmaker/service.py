"""The matchmaker's service layer: :class:`Matchmaker`, the facade over the modules
that hold tickets (tickets.py), run the matching loop (matching.py), form and recover
matches (forming.py, decisions.py), count the queues (stats.py) and read the ratings
(leaderboard.py). How it works, end to end:

A ticket lives in KV ``MATCH_TICKETS`` (``t.<id>``), so a restart of any instance loses
none. Every instance runs the same loop (:class:`~services.matchmaker.matching.MatchingLoop`) every
``interval_s`` seconds over its live mirror of the bucket:

1. expire searching tickets older than the TTL (5 minutes);
2. recover matches whose forming instance went silent (claims older than
   ``claim_timeout_s``);
3. run the pure matching step (:func:`services.matchmaker.domain.form_matches`) per
   queue over the searching, unclaimed tickets;
4. form each match (:class:`~services.matchmaker.forming.Former`):

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
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from nats.js.client import JetStreamContext

from services.matchmaker.decisions import Decisions, DecisionState
from services.matchmaker.domain import Match
from services.matchmaker.forming import COMPLETE_RETRY_S, Former
from services.matchmaker.leaderboard import Ratings
from services.matchmaker.matching import EXPIRE_PER_STEP, MatchingLoop
from services.matchmaker.options import MatchmakerOptions
from services.matchmaker.session_port import SessionPort
from services.matchmaker.stats import STATS_CACHE_S, QueueStats
from services.matchmaker.store import MAX_ATTEMPTS, EventLog, EventSink, KvStore, Mirror
from services.matchmaker.tickets import MAX_NAME_CHARS, Tickets, ticket_id_for, wait_of

__all__ = [
    "COMPLETE_RETRY_S",
    "EXPIRE_PER_STEP",
    "MAX_ATTEMPTS",
    "MAX_NAME_CHARS",
    "STATS_CACHE_S",
    "DecisionState",
    "Matchmaker",
    "MatchmakerOptions",
    "ticket_id_for",
    "wait_of",
]


class Matchmaker:
    """One matchmaker instance: each call goes to the one module that does it.

    ========================  ==============================================
    tickets                   :class:`services.matchmaker.tickets.Tickets`
    matching loop             :class:`services.matchmaker.matching.MatchingLoop`
    forming, recovery         :class:`services.matchmaker.forming.Former`
    match decisions           :class:`services.matchmaker.decisions.Decisions`
    queue statistics          :class:`services.matchmaker.stats.QueueStats`
    ratings, leaderboard      :class:`services.matchmaker.leaderboard.Ratings`
    ========================  ==============================================

    ``tickets`` / ``games`` / ``ratings`` are the buckets (as passed in);
    :attr:`ticket_desk`, :attr:`matching`, :attr:`former`, :attr:`decisions`,
    :attr:`stats` and :attr:`ratings_view` the modules. Built with every store passed in (services/matchmaker/bootstrap.py builds it from a
    ports bundle, NATS or in memory).

    Args:
        js: JetStream context for the ``MATCH_EVENTS`` stream (None when ``events`` is
            given).
        tickets / games / ratings: the ``MATCH_TICKETS``, ``MATCH_GAMES`` and ``RATINGS``
            buckets.
        session: how games are created and joined.
        options: timings and the instance id.
        clock: unix time in seconds (tests may pass their own).
        events: where the audit trail goes (default: ``MATCH_EVENTS`` through ``js``).
    """

    def __init__(
        self,
        js: JetStreamContext | None,
        tickets: KvStore,
        games: KvStore,
        ratings: KvStore,
        session: SessionPort,
        options: MatchmakerOptions | None = None,
        clock: Callable[[], float] = time.time,
        *,
        events: EventSink | None = None,
    ) -> None:
        if events is None:
            if js is None:
                raise ValueError("Matchmaker needs js or events")
            events = EventLog(js)
        self.js = js
        self.events = events
        self.tickets = tickets
        self.games = games
        self.ratings = ratings
        self.session = session
        self.options = (options or MatchmakerOptions()).with_instance_id()
        self.clock = clock
        self.ratings_view = Ratings(ratings)
        rating = self.ratings_view.current
        self.decisions = Decisions(tickets, events)
        self.ticket_desk = Tickets(tickets, self.decisions, events, rating, self.options.ticket_ttl_s, clock)
        self.games_mirror = Mirror(games, "")
        self.stats = QueueStats(self.ticket_desk, self.games_mirror, clock)
        stopping = asyncio.Event()
        self.former = Former(
            self.ticket_desk, games, self.games_mirror, self.decisions, session, events, rating,
            self.options.instance_id, clock, stopping,
            retry_s=COMPLETE_RETRY_S,  # read here, at construction: a test may lower it
        )
        self.matching = MatchingLoop(self.ticket_desk, self.former, rating, self.options, clock, stopping)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Load the buckets into the mirrors and start the matching loop."""
        await self.ticket_mirror.start()
        await self.games_mirror.start()
        await self.rating_mirror.start()
        self.matching.start()

    async def stop(self) -> None:
        """Stop the loop, wait briefly for matches being formed, stop the mirrors."""
        await self.matching.stop()
        for mirror in (self.ticket_mirror, self.games_mirror, self.rating_mirror):
            await mirror.stop()
        await self.events.flush()

    # ------------------------------------------------------------------ the modules' state

    @property
    def ticket_mirror(self) -> Mirror:
        """The live mirror of the ``t.`` keys of ``MATCH_TICKETS``."""
        return self.ticket_desk.mirror

    @property
    def rating_mirror(self) -> Mirror:
        """The live mirror of the ``r.`` keys of ``RATINGS``."""
        return self.ratings_view.mirror

    @property
    def matches_formed(self) -> int:
        """Matches this instance completed."""
        return self.former.matches_formed

    @property
    def rolled_forward(self) -> int:
        """Stale decided matches this instance rolled forward."""
        return self.former.rolled_forward

    @property
    def rolled_back(self) -> int:
        """Stale undecided matches this instance rolled back."""
        return self.former.rolled_back

    # ------------------------------------------------------------------ tickets

    async def create_ticket(
        self,
        kind: str,
        players: int,
        config: dict[str, Any],
        name: str,
        profile_id: str = "",
        command_id: str = "",
    ) -> dict[str, Any]:
        """:meth:`services.matchmaker.tickets.Tickets.create`."""
        return await self.ticket_desk.create(kind, players, config, name, profile_id, command_id)

    async def get_ticket(self, ticket_id: str) -> dict[str, Any]:
        """:meth:`services.matchmaker.tickets.Tickets.get`."""
        return await self.ticket_desk.get(ticket_id)

    async def cancel_ticket(self, ticket_id: str) -> dict[str, Any]:
        """:meth:`services.matchmaker.tickets.Tickets.cancel`."""
        return await self.ticket_desk.cancel(ticket_id)

    def watch_ticket(self, ticket_id: str) -> AsyncIterator[dict[str, Any]]:
        """:meth:`services.matchmaker.tickets.Tickets.watch`."""
        return self.ticket_desk.watch(ticket_id)

    # ------------------------------------------------------------------ reads

    def queue_stats(self) -> list[dict[str, Any]]:
        """:meth:`services.matchmaker.stats.QueueStats.get`."""
        return self.stats.get()

    def current_rating(self, profile_id: str, queue: str) -> float:
        """:meth:`services.matchmaker.leaderboard.Ratings.current`."""
        return self.ratings_view.current(profile_id, queue)

    def leaderboard(self, kind: str, players: int, limit: int = 100) -> list[dict[str, Any]]:
        """:meth:`services.matchmaker.leaderboard.Ratings.leaderboard`."""
        return self.ratings_view.leaderboard(kind, players, limit)

    def profile_ratings(self, profile_id: str) -> list[dict[str, Any]]:
        """:meth:`services.matchmaker.leaderboard.Ratings.of_profile`."""
        return self.ratings_view.of_profile(profile_id)

    # ------------------------------------------------------------------ matching

    async def form(self, match_id: str, kind: str, players: int, match: Match) -> bool:
        """:meth:`services.matchmaker.forming.Former.form`."""
        return await self.former.form(match_id, kind, players, match)
