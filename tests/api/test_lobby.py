"""Lobby pages (issue 10 §3): ``GET /games?limit=50&cursor=...`` → ``{"games",
"next_cursor"}``, default 50 a page, at most 200; pages cut from the lobby in its order."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import pytest

from client.sdk import AsyncCellWarClient
from gateway.lobby import LOBBY_DEFAULT_LIMIT, LOBBY_MAX_LIMIT, page_of


@dataclass(frozen=True)
class Game:
    game_id: str


LOBBY = [Game(f"g{i:02d}") for i in range(7)]


def test_pages_walk_the_lobby_once_in_order():
    seen, cursor = [], None
    while True:
        page, cursor = page_of(LOBBY, 3, cursor)
        seen.append([g.game_id for g in page])
        if cursor is None:
            break
    assert seen == [["g00", "g01", "g02"], ["g03", "g04", "g05"], ["g06"]]


def test_a_page_that_ends_the_lobby_has_no_next_cursor():
    assert page_of(LOBBY, 7, None) == (LOBBY, None)
    assert page_of([], 50, None) == ([], None)


def test_a_cursor_whose_game_left_the_lobby_goes_on_after_its_place():
    first, cursor = page_of(LOBBY, 3, None)
    assert cursor == "2-g02"
    shrunk = [g for g in LOBBY if g.game_id != "g02"]  # g02 started and left the lobby
    page, _ = page_of(shrunk, 3, cursor)
    assert [g.game_id for g in page] == ["g04", "g05", "g06"]  # g03 moved to place 2: skipped
    moved = [Game("new"), *LOBBY]  # the lobby grew in front: the cursor's game is found
    page, _ = page_of(moved, 3, cursor)
    assert [g.game_id for g in page] == ["g03", "g04", "g05"]


def test_a_cursor_beyond_the_end_is_an_empty_last_page():
    assert page_of(LOBBY, 3, "999-gone") == ([], None)


@pytest.mark.integration
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
