"""Ratings (docs/ratings.md): OpenSkill Plackett–Luce per profile × kind × players.

Pure code: :func:`ranks_from_view` reads the finishing order of a finished game from its
final (public) view, :func:`ranks_of_game` puts the players removed during the game
after it in reverse order of removal (docs/ratings.md "Ranks"); :func:`rate_game` turns the ratings before the game and that order
into per-player changes; :func:`apply_change` applies one change to a stored rating
record, at most once per game (the record remembers the games it has counted).

Why changes and not new values: one profile may play two rated games of the same queue
at once (it may queue again while a game runs), and the two games may be processed in
either order. A change (``mu`` delta and ``sigma`` ratio) computed once per game and
applied once per record composes with the other game's change; a new absolute value
would erase it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openskill.models import PlackettLuce

from services.matchmaker.domain import MU0, display_rating

#: OpenSkill's default prior: mu 25, sigma 25/3.
SIGMA0 = 25.0 / 3.0
#: Smallest sigma kept (a floor so a veteran's rating can still move).
MIN_SIGMA = 0.5
#: How many game ids a rating record remembers for exactly-once application.
APPLIED_KEEP = 200

_MODEL = PlackettLuce(mu=MU0, sigma=SIGMA0)


@dataclass(frozen=True)
class Change:
    """What one game does to one player's rating.

    Attributes:
        profile_id: the rated profile.
        mu_delta: added to mu.
        sigma_ratio: sigma is multiplied by it (≤ 1 for a finished game).
        rank: 1 = first place; equal ranks are ties.
    """

    profile_id: str
    mu_delta: float
    sigma_ratio: float
    rank: int

    def to_json(self) -> dict[str, Any]:
        return {
            "profile_id": self.profile_id,
            "mu_delta": self.mu_delta,
            "sigma_ratio": self.sigma_ratio,
            "rank": self.rank,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Change:
        return cls(
            str(data["profile_id"]),
            float(data["mu_delta"]),
            float(data["sigma_ratio"]),
            int(data["rank"]),
        )


def ranks_from_view(view: Mapping[str, Any]) -> dict[int, int]:
    """Finishing ranks of a finished game from its public view: ``{player_id: rank}``.

    The winner (``view["winner"]``) is first; everyone else is ordered by ``cells``
    (live cells in Life, units in CellWar; 0 when out or hidden), more is better, equal
    counts tie. A draw (no winner) ranks everyone by ``cells``. Ranks are dense-competition
    style: 1, 2, 2, 4.

    Raises:
        ValueError: a view without players.
    """
    players = [p for p in view.get("players") or () if isinstance(p, Mapping) and "id" in p]
    if not players:
        raise ValueError("the view has no players")
    winner = view.get("winner")

    def score(p: Mapping[str, Any]) -> tuple[int, int]:
        cells = p.get("cells")
        return (1 if winner is not None and p["id"] == winner else 0, int(cells or 0))

    ordered = sorted(players, key=score, reverse=True)
    ranks: dict[int, int] = {}
    for i, p in enumerate(ordered):
        if i and score(p) == score(ordered[i - 1]):
            ranks[int(p["id"])] = ranks[int(ordered[i - 1]["id"])]
        else:
            ranks[int(p["id"])] = i + 1
    return ranks


def ranks_of_game(view: Mapping[str, Any], removals: Sequence[tuple[int, int]]) -> dict[int, int]:
    """Finishing ranks of a finished game: ``{player_id: rank}`` (1 = first, equal = tie,
    dense-competition style 1, 2, 2, 4).

    The winner first, then the players still in the game at its end by the rules' order
    (:func:`ranks_from_view`: more ``cells`` is better), then the players removed during
    the game (``PlayerRemoved``) in reverse order of removal: the one who left last ranks
    highest, and only removals recorded in the same event tie (osu!, ppy/osu#35923:
    leaving order decides placement).

    Args:
        view: the final public view (``{"winner", "players": [{"id", "cells"}]}``).
        removals: ``(event seq, player_id)`` of each ``PlayerRemoved`` in log order; a
            player named again later (a rollback records the removals since its anchor
            once more) keeps the seq of its first removal.

    Raises:
        ValueError: a view without players.
    """
    return ranks_after_removals(ranks_from_view(view), view.get("winner"), removals)


def ranks_after_removals(
    view_ranks: Mapping[int, int], winner: Any, removals: Sequence[tuple[int, int]]
) -> dict[int, int]:
    """:func:`ranks_of_game` from the view's ranks (:func:`ranks_from_view`, e.g. kept in
    a rating marker), the winner (a player id or None) and the removals
    (``(seq, player_id)`` in log order)."""
    by_view = {int(k): int(v) for k, v in view_ranks.items()}
    removed_at: dict[int, int] = {}
    for seq, pid in removals:
        if int(pid) in by_view and pid != winner:
            removed_at.setdefault(int(pid), int(seq))
    order = sorted(((p, r) for p, r in by_view.items() if p not in removed_at), key=lambda kv: kv[1])
    ranks: dict[int, int] = {}
    for i, (pid, rank) in enumerate(order):  # survivors, re-numbered among themselves
        ranks[pid] = ranks[order[i - 1][0]] if i and rank == order[i - 1][1] else i + 1
    leavers = sorted(removed_at.items(), key=lambda kv: -kv[1])  # left last = first
    for i, (pid, seq) in enumerate(leavers):
        tie = i and seq == leavers[i - 1][1]
        ranks[pid] = ranks[leavers[i - 1][0]] if tie else len(order) + i + 1
    return ranks


def rate_game(
    before: Mapping[str, tuple[float, float]], ranks: Mapping[str, int]
) -> list[Change]:
    """The rating changes of one game (OpenSkill Plackett–Luce, one player per team).

    Args:
        before: ``{profile_id: (mu, sigma)}`` before the game, for every rated player.
        ranks: ``{profile_id: rank}`` (1 = first, equal = tie) for the same players.

    Returns:
        One :class:`Change` per profile, in ``before``'s order; empty when fewer than two
        rated players took part (nothing to compare).
    """
    ids = [p for p in before if p in ranks]
    if len(ids) < 2:
        return []
    teams = [[_MODEL.rating(mu=before[p][0], sigma=before[p][1])] for p in ids]
    after = _MODEL.rate(teams, ranks=[ranks[p] for p in ids])
    return [
        Change(p, after[i][0].mu - before[p][0], after[i][0].sigma / before[p][1], ranks[p])
        for i, p in enumerate(ids)
    ]


def new_record(name: str) -> dict[str, Any]:
    """A rating record of a profile that has not played the queue rated yet."""
    return {"mu": MU0, "sigma": SIGMA0, "games": 0, "name": name, "applied": []}


def apply_change(record: Mapping[str, Any], game_id: str, change: Change, name: str) -> dict[str, Any] | None:
    """The record after ``change`` from ``game_id``, or None when that game is already
    counted in it (exactly once per record and game).

    The record is ``{"mu", "sigma", "games", "name", "applied": [game ids]}``; ``rating``
    (the display rating) is stored beside them for readers.
    """
    applied = list(record.get("applied") or [])
    if game_id in applied:
        return None
    mu = float(record.get("mu", MU0)) + change.mu_delta
    sigma = max(MIN_SIGMA, float(record.get("sigma", SIGMA0)) * change.sigma_ratio)
    applied.append(game_id)
    return {
        "mu": mu,
        "sigma": sigma,
        "rating": round(display_rating(mu), 1),
        "games": int(record.get("games", 0)) + 1,
        "name": name or str(record.get("name", "")),
        "applied": applied[-APPLIED_KEEP:],
    }


#: Key prefix of an anonymous seat in :func:`seat_ranks` (never a profile id: those are hex).
ANONYMOUS_PREFIX = "~seat"


def seat_key(seat: Mapping[str, Any]) -> str:
    """The rating key of a seat: its profile id, or ``~seat<player_id>`` when anonymous."""
    profile = str(seat.get("profile_id") or "")
    return profile or f"{ANONYMOUS_PREFIX}{int(seat.get('player_id', 0))}"


def is_anonymous(key: str) -> bool:
    """True for the key of an anonymous seat (rated at the provisional prior, never stored)."""
    return key.startswith(ANONYMOUS_PREFIX)


def seat_ranks(
    seats: Sequence[Mapping[str, Any]], ranks_by_player: Mapping[int, int]
) -> dict[str, int]:
    """``{seat key: rank}`` (:func:`seat_key`) from ``{player_id: rank}``. Anonymous seats
    take part at the provisional prior (so beating one counts), but their change is
    never stored."""
    out: dict[str, int] = {}
    for seat in seats:
        pid = int(seat.get("player_id", 0))
        if pid in ranks_by_player:
            out[seat_key(seat)] = ranks_by_player[pid]
    return out
