"""Lobby pages (``GET /games?limit=50&cursor=...``) cut from the session's lobby list.

The session answers ``ListGames`` with every open and running game, oldest first; the
gateway cuts one page from it. A cursor names the last game of the previous page and
where it stood: ``"<position>-<game_id>"`` (opaque to clients). The next page starts
after that game; when it has left the lobby meanwhile (started or finished), after the
position it held, so a page may repeat or skip a game that changed between two pages
but never loops.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

#: Games per page when ``limit`` is not given, and the most a page may hold.
LOBBY_DEFAULT_LIMIT = 50
LOBBY_MAX_LIMIT = 200
#: What a cursor looks like (the query parameter's schema pattern).
CURSOR_PATTERN = r"^[0-9]{1,9}-[0-9A-Za-z_-]{1,64}$"
_CURSOR = re.compile(CURSOR_PATTERN)


class _Game(Protocol):
    game_id: str


G = TypeVar("G", bound="_Game")


def cursor_after(position: int, game_id: str) -> str:
    """The cursor of a page whose last game is ``game_id`` at ``position`` (0-based)."""
    return f"{position}-{game_id}"


def page_of(
    games: Sequence[G], limit: int, cursor: str | None
) -> tuple[list[G], str | None]:
    """One page of ``games`` (lobby order) after ``cursor``.

    Args:
        games: the whole lobby, oldest first.
        limit: games per page (>= 1).
        cursor: ``next_cursor`` of the previous page, None for the first.

    Returns:
        ``(page, next_cursor)``; ``next_cursor`` is None on the last page.

    Raises:
        ValueError: a cursor that does not match :data:`CURSOR_PATTERN` (the route's
            schema refuses those first).
    """
    start = 0
    if cursor is not None:
        if not _CURSOR.match(cursor):
            raise ValueError(f"not a lobby cursor: {cursor!r}")
        position_text, _, game_id = cursor.partition("-")
        position = int(position_text)
        start = next(
            (i + 1 for i, g in enumerate(games) if g.game_id == game_id),
            min(position + 1, len(games)),
        )
    page = list(games[start : start + limit])
    end = start + len(page)
    more = end < len(games)
    return page, cursor_after(end - 1, page[-1].game_id) if more and page else None
