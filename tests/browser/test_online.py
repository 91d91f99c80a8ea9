"""Online Life in two browsers: player 1 creates a game and gets a share link, player 2
opens it in a second browser context (its own localStorage, its own token). Each sees
only its own view while placing and waits for its turn; the simulation is seen in both;
a redraw round, finish by agreement (propose_finish, confirmed in both), the winner in
both; rematch creates a new game with a new link."""

from __future__ import annotations

import pytest

from tests.browser.conftest import TIMEOUT_MS, Problems, shot
from tests.browser.lifekit import Board, new_game, select_pattern, snapshot, wait_snapshot, watch

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def test_online_two_browsers(page, browser, live_url, problems) -> None:
    from playwright.sync_api import expect

    new_game(page, live_url, mode="online", size="40", budget=50)
    share = page.get_by_test_id("online-share")
    expect(share).to_be_visible()
    link = page.get_by_test_id("online-link").input_value()
    game_id = snapshot(page)["gameId"]
    assert link.endswith(f"/#join={game_id}"), link
    expect(page.get_by_test_id("online-status")).to_contain_text("1 of 2")
    page.get_by_test_id("online-copy").click()
    shot(page, "life-online-share")

    ctx2 = browser.new_context(viewport={"width": 1280, "height": 900})
    problems2 = Problems()
    try:
        page2 = ctx2.new_page()
        page2.set_default_timeout(TIMEOUT_MS)
        watch(page2, problems2)
        page2.goto(link)
        wait_snapshot(page2, f"s.gameId === '{game_id}' && s.phase === 'placement'")
        assert snapshot(page2)["me"] == 2
        assert "join=" not in page2.url  # a reload must not take another seat
        # Each browser keeps its own token.
        tokens = [
            p.evaluate("JSON.parse(localStorage.getItem('cellwar.v1')).game.tokens")
            for p in (page, page2)
        ]
        assert list(tokens[0]) == ["1"] and list(tokens[1]) == ["2"]

        # Player 1's turn: player 2 waits (no toolbar, no Done), player 1 draws two blocks.
        wait_snapshot(page, "s.phase === 'placement' && s.acting === 1")
        expect(share).to_be_hidden()
        expect(page2.get_by_test_id("online-status")).to_contain_text("Waiting for Red")
        expect(page2.get_by_test_id("btn-done")).to_be_hidden()
        select_pattern(page, "block")
        board1 = Board(page)
        board1.click(5, 5)
        board1.click(5, 20)
        expect(page.get_by_test_id("budget-1")).to_have_text("42")
        page.get_by_test_id("btn-done").click()

        # Player 2's turn, blind: none of player 1's cells on its board.
        wait_snapshot(page2, "s.acting === 2")
        assert "A" not in snapshot(page2)["board"]
        expect(page2.get_by_test_id("budget-1")).to_have_text("?")
        expect(page.get_by_test_id("online-status")).to_contain_text("Waiting for Green")
        board2 = Board(page2)
        for x, y in [(30, 10), (31, 10), (30, 11), (31, 11)]:
            board2.click(x, y)
        expect(page2.get_by_test_id("budget-2")).to_have_text("46")
        shot(page2, "life-online-player2")
        page2.get_by_test_id("btn-done").click()

        # The simulation (still lifes: stable at once) is seen in both → redraw.
        for p in (page, page2):
            wait_snapshot(
                p, "s.generation >= 1 && (s.phase === 'redraw' || s.phase === 'finished')"
            )
            assert snapshot(p)["board"].count("A") >= 1 and "B" in snapshot(p)["board"]
        wait_snapshot(page, "s.phase === 'redraw'")
        expect(page2.get_by_test_id("stable")).to_be_visible()
        expect(page2.get_by_test_id("btn-redraw-1")).to_be_hidden()

        # Finish by agreement: player 1 proposes (confirmed), player 2 sees it and agrees.
        page.get_by_test_id("btn-finish").click()
        page.get_by_test_id("confirm-yes").click()
        expect(page.get_by_test_id("online-status")).to_contain_text("Waiting for the others")
        expect(page2.get_by_test_id("online-status")).to_contain_text("Red proposes")
        page2.get_by_test_id("btn-finish").click()
        page2.get_by_test_id("confirm-yes").click()
        for p in (page, page2):
            expect(p.get_by_test_id("winner")).to_be_visible()
            expect(p.get_by_test_id("winner-text")).to_have_text("Red wins!")
        shot(page2, "life-online-winner")

        # Rematch (online): a new game and a new link.
        page.get_by_test_id("winner-rematch").click()
        wait_snapshot(page, f"s.gameId !== '{game_id}' && s.phase === 'waiting'")
        expect(share).to_be_visible()
        new_link = page.get_by_test_id("online-link").input_value()
        assert new_link != link and new_link.endswith(snapshot(page)["gameId"])
        page2.get_by_test_id("winner-menu").click()
        expect(page2.get_by_test_id("screen-start")).to_be_visible()
    finally:
        ctx2.close()
    assert problems.all() == []
    assert problems2.all() == []
