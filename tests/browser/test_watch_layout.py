"""The spectator's board takes its space as the game screen's does: at 1280×800 the
CellWar board of the Watch screen is as large as the CellWar game screen's board of the
same game (the play layout of client/web/css/play.css, which the watch screen shares
with the game and replay screens)."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.restkit import post
from tests.browser.test_cellwar_play import open_cellwar, wait_cw
from tests.browser.test_fork_watch import duel

pytestmark = [pytest.mark.browser, pytest.mark.timeout(150)]

DESKTOP = {"width": 1280, "height": 800}


def test_watch_board_fills_the_screen_as_the_game_board_does(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    page.set_viewport_size(DESKTOP)
    gid, tok = duel(live_url, p2_x=7, spectators="live")
    with httpx.Client(base_url=live_url, timeout=10) as c:  # an event for the spectator
        view = c.get(f"/game/{gid}/state", headers={"Authorization": f"Bearer {tok[1]}"}).json()
        unit = next(u["id"] for u in view["units"] if u["owner"] == 1)
        post(c, f"/game/{gid}/action", tok[1], {"unit_id": unit, "dx": 1, "dy": 0})

    # The game screen of the same game (hot-seat: this browser holds both seats).
    save = {"gameId": gid, "tokens": {str(k): v for k, v in tok.items()}, "mode": "hotseat",
            "accepted": None, "config": {"width": 8, "height": 8, "players": 2}}
    open_cellwar(page, live_url, save)
    wait_cw(page, "s.cellPx > 0")
    game_box = page.get_by_test_id("cw-board").bounding_box()

    # the link opens with the lobby's spectator delay: its shortest (10 s), so the first
    # frame does not wait the default 30 s
    page.evaluate("document.getElementById('lobby-delay').value = '10'")
    page.goto(f"{live_url}/#watch={gid}")
    page.wait_for_function("() => window.cellwarModes.watch().frames > 0", timeout=40_000)
    board = page.get_by_test_id("watch-board-cw")
    expect(board).to_be_visible()
    # the board follows its container (a ResizeObserver's fit after the screen's layout)
    page.wait_for_function(
        "() => document.getElementById('watch-board-cw').getBoundingClientRect().height >= 480"
    )
    box = board.bounding_box()
    assert box["height"] >= 0.6 * DESKTOP["height"], box
    assert box["width"] >= 0.6 * DESKTOP["height"], box
    assert box["height"] >= 0.85 * game_box["height"], (box, game_box)
    assert box["x"] + box["width"] <= DESKTOP["width"] and box["y"] + box["height"] <= DESKTOP["height"]
    assert problems.all() == []
