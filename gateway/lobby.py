"""Lobby pages (``GET /games?limit=50&cursor=...``): the session pages its lobby
(``Session.ListGames`` with ``page_size`` and ``cursor``, oldest first); the gateway
bounds the page size and passes the cursor through unchanged (it is opaque: the session
encodes where the page ended)."""

from __future__ import annotations

#: Games per page when ``limit`` is not given, and the most a page may hold.
LOBBY_DEFAULT_LIMIT = 50
LOBBY_MAX_LIMIT = 200
#: What a cursor looks like (the query parameter's schema pattern): URL-safe base64, as
#: the session writes it. One that fits but no page gave is refused by the session
#: (409 ``MALFORMED``: it fits the schema).
CURSOR_PATTERN = r"^[A-Za-z0-9_=-]{1,512}$"
