"""Queue statistics (the ``Queues`` RPC, the waiting screens): per queue, the tickets
searching, the players in matchmade games, the matches of the last minute and the
waits of the tickets matched lately, from this instance's mirrors of ``MATCH_TICKETS``
and ``MATCH_GAMES``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from services.matchmaker import domain
from services.matchmaker.domain import TicketStatus
from services.matchmaker.store import Mirror
from services.matchmaker.tickets import Tickets, wait_of

#: Queue statistics are recomputed at most this often (seconds).
STATS_CACHE_S = 0.5
#: Tickets matched this long ago at most count in the waits (seconds).
WAITS_WINDOW_S = 300.0
#: Matches formed this long ago at most count in ``matches_last_minute`` (seconds).
MATCHES_WINDOW_S = 60.0


class QueueStats:
    """Statistics of every queue, cached for :data:`STATS_CACHE_S` seconds.

    Args:
        tickets: the tickets (their mirror; what "searching now" means).
        games_mirror: the live mirror of ``MATCH_GAMES``.
        clock: unix time in seconds.
    """

    def __init__(self, tickets: Tickets, games_mirror: Mirror, clock: Callable[[], float]) -> None:
        self.tickets = tickets
        self.games_mirror = games_mirror
        self.clock = clock
        self._cache: tuple[float, list[dict[str, Any]]] | None = None

    def get(self) -> list[dict[str, Any]]:
        """Per queue (every kind × players): ``waiting`` (searching tickets),
        ``in_games`` (players seated in matchmade games not finished), ``matches_last_
        minute``, ``median_wait_s`` / ``p90_wait_s`` (seconds, of tickets matched in the
        last 5 minutes; None when none). Computed at most every
        :data:`STATS_CACHE_S` seconds (waiting screens poll it)."""
        now = self.clock()
        if self._cache is not None and now - self._cache[0] < STATS_CACHE_S:
            return self._cache[1]
        stats = self.compute(now)
        self._cache = (now, stats)
        return stats

    def compute(self, now: float) -> list[dict[str, Any]]:
        """:meth:`get` at ``now`` (unix seconds), uncached."""
        waiting: dict[str, int] = defaultdict(int)
        recent_matches: dict[str, set[str]] = defaultdict(set)
        waits: dict[str, list[float]] = defaultdict(list)
        for record, _ in self.tickets.mirror.entries.values():
            queue = str(record.get("queue", ""))
            status = record.get("status")
            if status == TicketStatus.SEARCHING:
                if self.tickets.searching_now(record, now):
                    waiting[queue] += 1
            elif status == TicketStatus.MATCHED and record.get("ended_at") is not None:
                age = now - float(record["ended_at"])
                if age <= WAITS_WINDOW_S:
                    waits[queue].append(wait_of(record, now))
                if age <= MATCHES_WINDOW_S:
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
