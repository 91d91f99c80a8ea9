"""The lobby's "Join" for a game still waiting for players: it takes the free seat through
the share link's own route (Life on the game screen, CellWar on its own), and a game
whose seats are all taken offers "Watch" only."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.conftest import HTTP_TIMEOUT_S
from tests.browser.restkit import post

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


def _waiting_game(base: str, kind: str, config: dict) -> str:
    with httpx.Client(base_url=base, timeout=HTTP_TIMEOUT_S) as c:
        gid = post(c, "/game/create", body={"kind": kind, "config": config})["game_id"]
        post(c, f"/game/{gid}/join", body={"name": "Host"})
    return gid


def _joined(base: str, gid: str) -> int:
    games = httpx.get(f"{base}/games", timeout=HTTP_TIMEOUT_S).json()["games"]
    entry = next((g for g in games if g["game_id"] == gid), None)
    return entry["players_joined"] if entry else -1


@pytest.mark.parametrize(
    ("kind", "config", "screen"),
    [
        ("life", {"width": 40, "height": 40, "players": 2, "budget": 20}, "screen-game"),
        ("cellwar", {"width": 8, "height": 8, "players": 2}, "screen-cw"),
    ],
)
def test_join_from_the_lobby_takes_the_free_seat(page, live_url, problems, kind, config, screen) -> None:
    from playwright.sync_api import expect

    gid = _waiting_game(live_url, kind, config)
    full = _waiting_game(live_url, kind, config)
    with httpx.Client(base_url=live_url, timeout=HTTP_TIMEOUT_S) as c:
        post(c, f"/game/{full}/join", body={"name": "Guest"})
    page.goto(live_url + "/")
    page.get_by_test_id("mode-lobby").click()
    expect(page.get_by_test_id(f"lobby-join-{gid}")).to_be_visible()
    if page.get_by_test_id(f"lobby-game-{full}").count():  # a full game offers Watch only
        expect(page.get_by_test_id(f"lobby-join-{full}")).to_have_count(0)
    page.get_by_test_id(f"lobby-join-{gid}").click()
    expect(page.locator(f"#{screen}")).to_be_visible()
    page.wait_for_function(
        f"async () => (await (await fetch('/games')).json()).games.every((g) => g.game_id !== '{gid}' || g.players_joined === 2)"
    )
    assert _joined(live_url, gid) in (2, -1)  # -1: a game that started may leave the open list
    assert problems.all() == []
