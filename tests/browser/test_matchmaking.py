"""Quick match and the leaderboard (docs/matchmaking.md) against the real stack with its
matchmaker: the waiting screen shows the queue's statistics and the elapsed time, Cancel
takes the ticket back, two browsers pressing Quick match land in the same game (Life,
then CellWar), and once their rated game is over the leaderboard lists both. Without a
matchmaker (a gateway whose OpenAPI document lacks /matchmaking/queues) the start screen
offers neither screen."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from tests.browser.conftest import HTTP_TIMEOUT_S, TIMEOUT_MS
from tests.browser.lifekit import wait_snapshot, watch

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def has_matchmaking(live_url: str) -> bool:
    paths = httpx.get(f"{live_url}/openapi.json", timeout=10).json().get("paths", {})
    return "/matchmaking/queues" in paths


def quick_match(page, kind: str, players: int = 2, *, alone: bool = True) -> None:
    """Press Quick match for `kind`. A player who queues `alone` sees the waiting screen.
    One who completes a waiting player's match may be matched and in the game before that
    screen is ever polled visible; the caller checks the game that opens."""
    from playwright.sync_api import expect

    page.get_by_test_id("mode-quickmatch").click()
    page.get_by_test_id("qm-kind").select_option(kind)
    page.get_by_test_id("qm-players").select_option(str(players))
    page.get_by_test_id("qm-start").click()
    if alone:
        expect(page.get_by_test_id("qm-wait")).to_be_visible()


def test_quick_match_two_browsers_same_game_and_leaderboard(browser, live_url, problems) -> None:
    from playwright.sync_api import expect

    if not has_matchmaking(live_url):
        page = browser.new_page()
        try:
            watch(page, problems)
            page.goto(live_url + "/")
            assert page.evaluate("window.cellwarModes.matchmaking()") is False
            expect(page.get_by_test_id("mode-quickmatch")).to_be_hidden()
            expect(page.get_by_test_id("mode-leaderboard")).to_be_hidden()
        finally:
            page.close()
        assert problems.all() == []
        return

    pages, contexts = [], []
    try:
        for name in ("Ann", "Bob"):
            ctx = browser.new_context(viewport={"width": 1280, "height": 900})
            contexts.append(ctx)
            p = ctx.new_page()
            p.set_default_timeout(TIMEOUT_MS)
            watch(p, problems)
            p.goto(live_url + "/")
            # A campaign profile is the rated identity the tickets carry.
            p.get_by_test_id("mode-campaign").click()
            p.get_by_test_id("camp-level-1").wait_for()
            p.get_by_test_id("camp-levels-back").click()
            expect(p.get_by_test_id("mode-quickmatch")).to_be_visible()
            p.get_by_test_id("mode-quickmatch").click()
            p.get_by_test_id("qm-name").fill(name)
            p.get_by_test_id("qm-back").click()
            pages.append(p)
        a, b = pages

        # Ann waits alone: the queue's statistics and the elapsed time; Cancel.
        quick_match(a, "life")
        expect(a.get_by_test_id("qm-status")).to_have_text("Searching for players…")
        expect(a.locator("#qm-queue dd[data-key='qm.waiting']")).to_have_text("1")
        expect(a.get_by_test_id("qm-elapsed")).not_to_have_text("0:00")
        a.get_by_test_id("qm-cancel").click()
        expect(a.get_by_test_id("qm-form")).to_be_visible()
        a.wait_for_function("() => !localStorage.getItem('cellwar.mm.v1')")
        expect(a.locator("#qm-queue dd[data-key='qm.waiting']")).to_have_count(0)
        a.get_by_test_id("qm-back").click()

        # Both press Quick match: the same Life game opens in both browsers.
        quick_match(a, "life")
        quick_match(b, "life", alone=False)
        for p in pages:
            wait_snapshot(p, "s.online && !!s.gameId", timeout=2 * TIMEOUT_MS)
        games = {p.evaluate("window.cellwar.snapshot().gameId") for p in pages}
        assert len(games) == 1, games
        assert {p.evaluate("window.cellwar.snapshot().me") for p in pages} == {1, 2}
        (life_id,) = games

        # The same for CellWar (from the menu; the Life game stays saved).
        for p in pages:
            p.get_by_test_id("btn-menu").click()
            quick_match(p, "cellwar", alone=p is a)
        for p in pages:
            p.wait_for_function(
                "() => { const s = window.cellwarModes.cellwar(); return s && s.phase === 'playing'; }",
                timeout=2 * TIMEOUT_MS,
            )
        assert len({p.evaluate("window.cellwarModes.cellwar().gameId") for p in pages}) == 1

        # Both agree to finish the rated Life game: the leaderboard lists both.
        with httpx.Client(base_url=live_url, timeout=HTTP_TIMEOUT_S) as c:
            for p in pages:
                save = json.loads(p.evaluate("localStorage.getItem('cellwar.v1')"))["game"]
                assert save["gameId"] == life_id
                (pid, token), = save["tokens"].items()
                r = c.post(f"/game/{life_id}/action", json={"type": "propose_finish"},
                           headers={"Authorization": f"Bearer {token}", "Idempotency-Key": str(uuid.uuid4())})
                assert r.status_code == 200, r.text
        a.get_by_test_id("cw-menu").click()
        a.get_by_test_id("mode-leaderboard").click()
        for _ in range(60):  # the ratings projection runs beside: reopen until it has
            if a.locator("#lb-rows tr").count() >= 2:
                break
            a.wait_for_timeout(500)
            a.get_by_test_id("lb-players").select_option("4")
            a.get_by_test_id("lb-players").select_option("2")
        expect(a.locator("#lb-rows tr")).to_have_count(2)
    finally:
        for ctx in contexts:
            ctx.close()
    assert problems.all() == []
