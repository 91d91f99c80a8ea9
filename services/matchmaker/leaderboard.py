"""Reads of the ratings: a profile's current rating (a ticket's rating, a seat's), the
leaderboard of a queue, a profile's ratings, all from a live mirror of the ``r.`` keys
of ``RATINGS`` (written by the ratings projection, services/matchmaker/projection.py)."""

from __future__ import annotations

from typing import Any

from services.common.errors import ServiceError
from services.matchmaker import domain
from services.matchmaker.domain import MatchErrorCode
from services.matchmaker.store import KvStore, Mirror, rating_key

#: Most rows a leaderboard answers.
LEADERBOARD_MAX = 100


def rating_row(profile_id: str, kind: str, players: int, value: dict[str, Any]) -> dict[str, Any]:
    """The ``RatingEntry`` fields of a rating record: ``{"profile_id", "name", "kind",
    "players", "rating" (display points, 0.1), "games", "mu", "sigma"}``."""
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


class Ratings:
    """The ratings as this instance sees them now.

    Args:
        bucket: the ``RATINGS`` bucket (mirrored: its ``r.`` keys).
    """

    def __init__(self, bucket: KvStore) -> None:
        self.mirror = Mirror(bucket, "r.")

    def current(self, profile_id: str, queue: str) -> float:
        """The profile's rating in ``queue`` now (rating points); provisional 1500 for an
        anonymous ticket or a profile not yet rated there."""
        if not profile_id:
            return domain.PROVISIONAL_RATING
        entry = self.mirror.entries.get(rating_key(queue, profile_id))
        if entry is None:
            return domain.PROVISIONAL_RATING
        return domain.display_rating(float(entry[0].get("mu", domain.MU0)))

    def leaderboard(self, kind: str, players: int, limit: int = LEADERBOARD_MAX) -> list[dict[str, Any]]:
        """The top ``limit`` (1..100; 0 = 100) rated profiles of a queue, best first
        (:func:`rating_row` each; ties: more games first, then profile id).

        Raises:
            ServiceError: ``MALFORMED`` for a queue that does not exist.
        """
        problem = domain.queue_problem(kind, players)
        if problem:
            raise ServiceError(MatchErrorCode.MALFORMED, problem)
        prefix = f"r.{domain.queue_id(kind, players)}."
        rows = [
            rating_row(key[len(prefix):], kind, players, value)
            for key, (value, _) in self.mirror.entries.items()
            if key.startswith(prefix)
        ]
        rows.sort(key=lambda r: (-r["rating"], -r["games"], r["profile_id"]))
        return rows[: max(1, min(limit or LEADERBOARD_MAX, LEADERBOARD_MAX))]

    def of_profile(self, profile_id: str) -> list[dict[str, Any]]:
        """Every rating of a profile (one per queue it played rated), by queue."""
        out = []
        suffix = f".{profile_id}"
        for key, (value, _) in sorted(self.mirror.entries.items()):
            if profile_id and key.endswith(suffix):
                queue = key[2 : -len(suffix)]
                kind, _, players = queue.rpartition("-")
                out.append(rating_row(profile_id, kind, int(players), value))
        return out
