"""Lobby pages (docs/api/index.md "Games"): ``GET /games?limit=50&cursor=...`` → ``{"games",
"next_cursor"}``, default 50 a page, at most 200, oldest first; the session pages and the
gateway passes its cursor through."""

from __future__ import annotations

import httpx
import pytest

from client.sdk import AsyncCellWarClient
from gateway.lobby import LOBBY_DEFAULT_LIMIT, LOBBY_MAX_LIMIT

pytestmark = pytest.mark.integration


async def test_the_lobby_pages_over_rest(gateway):
    async with AsyncCellWarClient(gateway, timeout=30) as api, httpx.AsyncClient(
        base_url=gateway, timeout=30
    ) as http:
        mine = [await api.create_game("life", {"width": 16, "height": 16}) for _ in range(5)]
        first = (await http.get("/games")).json()
        assert set(first) == {"games", "next_cursor"}
        assert len(first["games"]) <= LOBBY_DEFAULT_LIMIT
        ids: list[str] = []
        cursor = None
        pages = 0
        while True:
            params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
            page = (await http.get("/games", params=params)).json()
            assert len(page["games"]) <= 2
            ids += [g["game_id"] for g in page["games"]]
            pages += 1
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert len(ids) == len(set(ids))  # no game twice
        assert ids[-5:] == mine  # oldest first: the newest games end the lobby
        assert pages == (len(ids) + 1) // 2
        assert ids == [g["game_id"] for g in await api.games()]  # the SDK reads every page
        for bad in ({"limit": 0}, {"limit": LOBBY_MAX_LIMIT + 1}, {"cursor": "not a cursor"}):
            answer = await http.get("/games", params=bad)
            assert answer.status_code == 422 and answer.json()["error"]["code"] == "MALFORMED"
        # Fits the schema, but no page gave it: the session refuses it (409).
        unknown = await http.get("/games", params={"cursor": "AAAA"})
        assert unknown.status_code == 409 and unknown.json()["error"]["code"] == "MALFORMED"
