"""Regression tests of a new user's reports against the browser client (real stack).

1. Join errors (409 GAME_FULL, 404) are shown on the screen the user lands on; a
   `#join=` / `#replay=` hash typed into an open tab is acted on (hashchange).
2. Budget above 2147483647: validation message, nothing saved; create errors (422, 503)
   shown; broken saved preferences heal.
3. Campaign: rapid clicks while a batch is in flight are all placed (a stream view that
   arrives before the REST answer must not charge that batch twice).
4. The board never moves when a pattern is chosen or cleared (1280 and 1440 wide); the
   hovered cell's coordinates are shown.
5. 4 players: redraw starts with the first colour still in; out colours' buttons are
   disabled; the HUD shows the hand-over; "Ready" in a round nobody drew asks first.
Touch screens do not show "Right mouse button erases".
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.browser.lifekit import (
    Board,
    board_cells,
    new_game,
    select_pattern,
    settled_box,
    snapshot,
    wait_snapshot,
    watch,
)
from tests.browser.restkit import LifeGame

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def _expected_failures(problems, *statuses: int) -> None:
    """Drop Chromium's console lines about the HTTP errors a test provokes on purpose."""
    problems.console[:] = [
        c
        for c in problems.console
        if not ("Failed to load resource" in c and any(str(s) in c for s in statuses))
    ]


def _life_game(live_url: str, seats: int) -> str:
    """A 2-player Life game created over REST with `seats` seats taken; its id."""
    game = LifeGame(live_url, {"width": 40, "height": 40, "players": 2}, seats=seats)
    game.close()
    return game.id


def _in_viewport(page, test_id: str) -> bool:
    box = page.get_by_test_id(test_id).bounding_box()
    vp = page.viewport_size
    return bool(box) and box["y"] >= 0 and box["y"] + box["height"] <= vp["height"]


def test_join_errors_shown_and_hash_links_followed(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    problems.allowed_status |= {("/join", 409), ("/join", 404)}
    full = _life_game(live_url, seats=2)

    # A share link of a full game: the start screen says why.
    page.goto(f"{live_url}/#join={full}")
    expect(page.get_by_test_id("screen-start")).to_be_visible()
    toast = page.get_by_test_id("toast")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("full")
    assert _in_viewport(page, "toast")
    assert "#join" not in page.url
    # The start page no longer says "for two".
    expect(page.locator(".tagline")).to_contain_text("2 or 4")
    expect(page.get_by_test_id("btn-hotseat")).to_contain_text("2 or 4 players")

    # Only the hash changes in the open tab: an unknown game (404) is reported.
    toast.click()  # dismissed
    expect(toast).to_be_hidden()
    page.evaluate("location.hash = '#join=doesnotexist'")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("not found")
    expect(page.get_by_test_id("screen-start")).to_be_visible()

    # A game with a free seat: the hash joins it (seat 2), without a reload.
    open_game = _life_game(live_url, seats=1)
    page.evaluate(f"location.hash = '#join={open_game}'")
    wait_snapshot(page, f"s.gameId === '{open_game}' && s.online && s.me === 2")
    expect(page.get_by_test_id("screen-game")).to_be_visible()
    assert "#join" not in page.url

    # A replay link pasted into the same tab opens the viewer (the game stays resumable).
    problems.allowed_status.add(("/events", 404))
    page.evaluate("location.hash = '#replay=no-such-game'")
    expect(page.get_by_test_id("screen-replay")).to_be_visible()
    expect(page.get_by_test_id("replay-message")).to_contain_text("No game with id")
    expect(page.get_by_test_id("screen-game")).to_be_hidden()
    page.get_by_test_id("replay-menu").click()
    expect(page.get_by_test_id("btn-continue")).to_be_visible()
    _expected_failures(problems, 404, 409)
    assert problems.all() == []


def test_budget_validation_and_create_errors(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    def saved_budget():
        data = json.loads(page.evaluate("localStorage.getItem('cellwar.v1')") or "{}")
        return (data.get("prefs") or {}).get("budget")

    # A broken budget saved by an older client heals to the default.
    page.goto(live_url + "/")
    page.evaluate("localStorage.setItem('cellwar.v1', JSON.stringify({prefs: {budget: 1e12}}))")
    page.reload()
    page.get_by_test_id("btn-hotseat").click()
    budget = page.get_by_test_id("setup-budget")
    expect(budget).to_have_value("100")
    assert budget.get_attribute("max") == "2147483647"
    expect(page.get_by_test_id("setup-budget-error")).to_be_hidden()

    # Too big: a message under the field, Start does nothing, nothing is saved.
    budget.fill("2147483648")
    expect(page.get_by_test_id("setup-budget-error")).to_be_visible()
    expect(page.get_by_test_id("setup-budget-error")).to_contain_text("2147483647")
    page.get_by_test_id("setup-start").click()
    expect(page.get_by_test_id("screen-setup")).to_be_visible()
    assert saved_budget() in (None, 1e12)
    for bad in ("-1", "1.5", ""):
        budget.fill(bad)
        page.get_by_test_id("setup-start").click()
        expect(page.get_by_test_id("setup-budget-error")).to_be_visible()
    assert saved_budget() in (None, 1e12)

    # The server refuses (422 INVALID_CONFIG, then 503): the settings screen shows it.
    budget.fill("2147483647")
    expect(page.get_by_test_id("setup-budget-error")).to_be_hidden()
    problems.allowed_status |= {("/game/create", 422), ("/game/create", 503)}
    answers = [
        (422, "INVALID_CONFIG", "budget must be an integer in 0..2147483647"),
        (503, "UNAVAILABLE", "session down"),
    ]
    for status, code, message in answers:
        body = json.dumps({"error": {"code": code, "message": message}})
        page.route(
            "**/game/create",
            lambda route, _req, s=status, b=body: route.fulfill(
                status=s, content_type="application/json", body=b
            ),
        )
        page.get_by_test_id("setup-start").click()
        toast = page.get_by_test_id("toast")
        expect(toast).to_be_visible()
        expect(toast).to_contain_text("Could not create the game")
        expect(toast).to_contain_text(message if status == 422 else "unavailable")
        assert _in_viewport(page, "toast")
        expect(page.get_by_test_id("screen-setup")).to_be_visible()
        assert saved_budget() in (None, 1e12)  # not saved: the game was not created
        page.unroute("**/game/create")
        toast.click()

    # A valid budget: the game starts and only now the settings are saved.
    budget.fill("57")
    page.get_by_test_id("setup-start").click()
    wait_snapshot(page, "s.phase === 'placement'")
    expect(page.get_by_test_id("budget-1")).to_have_text("57")
    assert saved_budget() == 57
    _expected_failures(problems, 422, 503)
    assert problems.all() == []


def test_campaign_rapid_clicks_none_lost(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    if httpx.get(f"{live_url}/campaign/levels", timeout=10).status_code == 404:
        pytest.skip("the campaign API is not in the gateway")
    page.goto(live_url + "/")
    page.get_by_test_id("mode-campaign").click()
    page.get_by_test_id("camp-level-1").click()
    page.wait_for_function(
        "() => { const s = window.cellwarModes.campaign(); return s && s.level === 1 && s.phase === 'placement'; }"
    )
    s = page.evaluate("window.cellwarModes.campaign()")
    budget = s["budget"]
    assert budget == 10
    # A slower network: each REST answer arrives after the stream's view of the same batch.
    page.evaluate(
        """() => { const f = window.fetch; window.fetch = async (...a) => { const r = await f(...a);
             if (String(a[0]).endsWith('/action')) await new Promise((ok) => setTimeout(ok, 250));
             return r; }; }"""
    )
    box = page.get_by_test_id("camp-board").bounding_box()
    cell = box["width"] / s["width"]
    for i in range(budget):  # row 3, x = 2..11: nothing of the level is there
        page.mouse.click(box["x"] + (2 + i + 0.5) * cell, box["y"] + 3.5 * cell)
        page.wait_for_timeout(60)
    page.wait_for_function(  # every answer is in
        "() => { const s = window.cellwarModes.campaign(); return s.budget === 0 && !s.busy && !s.pending; }"
    )
    placed = page.evaluate(
        """async () => {
            const { decodeBoard } = await import('/js/rle.js');
            const s = window.cellwarModes.campaign();
            const cells = decodeBoard(s.board, s.width, s.height);
            const out = [];
            cells.forEach((c, i) => { if (c === 1) out.push([i % s.width, Math.floor(i / s.width)]); });
            return out;
        }"""
    )
    assert sorted(map(tuple, placed)) == [(2 + i, 3) for i in range(budget)]
    expect(page.get_by_test_id("camp-budget")).to_have_text("0")
    # The hovered cell's coordinates (the level hints give coordinates).
    page.mouse.move(box["x"] + 7.5 * cell, box["y"] + 12.5 * cell)
    expect(page.get_by_test_id("camp-coords")).to_have_text("(7, 12)")
    assert problems.all() == []


def test_board_never_moves_when_tools_change(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    new_game(page, live_url, size="40", budget=100)
    page.get_by_test_id("pattern").wait_for()
    board = Board(page)
    for width in (1440, 1280):
        page.set_viewport_size({"width": width, "height": 900})

        def top() -> float:
            """The board's top once the layout has settled (the board is fitted by a
            ResizeObserver, a frame after a change)."""
            return settled_box(page, "board")["y"]

        y0 = top()
        select_pattern(page, "block")
        expect(page.get_by_test_id("btn-rotate")).to_be_visible()
        assert top() == y0
        page.get_by_test_id("pattern").select_option("")
        wait_snapshot(page, "s.pattern === null")
        expect(page.get_by_test_id("btn-rotate")).to_be_hidden()
        assert top() == y0
        for tool in ("brush", "eraser", "pencil"):
            page.get_by_test_id(f"tool-{tool}").click()
            assert top() == y0
        page.get_by_test_id("btn-tap").click()
        page.get_by_test_id("btn-tap").click()
        assert top() == y0
    # A click right after picking a pattern lands where aimed.
    select_pattern(page, "block")
    board.click(4, 6)
    wait_snapshot(page, "!s.pending")
    assert set(board_cells(page)) == {(4, 6), (5, 6), (4, 7), (5, 7)}
    board.move(12, 9)
    expect(page.get_by_test_id("coords")).to_have_text("(12, 9)")
    assert problems.all() == []


def test_four_players_redraw_handover_and_empty_round(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    new_game(page, live_url, size="40", budget=20, players=4)
    page.get_by_test_id("pattern").wait_for()
    board = Board(page)
    corners = {2: (25, 5), 3: (5, 25), 4: (25, 25)}
    for pid in (1, 2, 3, 4):
        wait_snapshot(page, f"s.acting === {pid} && !s.handover")
        if pid == 1:
            board.click(5, 5)  # one lonely cell: Red dies out in the first generation
            expect(page.get_by_test_id("budget-1")).to_have_text("19")
        else:
            select_pattern(page, "block")
            board.click(*corners[pid])
            expect(page.get_by_test_id(f"budget-{pid}")).to_have_text("16")
        page.get_by_test_id("btn-done").click()
        if pid < 4:
            expect(page.get_by_test_id("handover")).to_be_visible()
            nxt = {1: "Green", 2: "Blue", 3: "Yellow"}[pid]
            # The HUD tells the hand-over too (not "Red places cells").
            expect(page.get_by_test_id("hud-phase")).to_have_text(
                f"Hand-over: pass the device to {nxt}"
            )
            page.get_by_test_id("handover-accept").click()

    # Red is out: the redraw opens for Green; Red's button is disabled.
    wait_snapshot(page, "s.phase === 'redraw'")
    expect(page.get_by_test_id("hud-p1")).to_have_class("hud-player p1 out")
    assert snapshot(page)["acting"] == 2
    expect(page.get_by_test_id("hud-phase")).to_have_text("Redraw: Green draws")
    expect(page.get_by_test_id("btn-redraw-1")).to_be_disabled()
    expect(page.get_by_test_id("btn-redraw-2")).to_have_class("redraw p2 active")
    for pid in (2, 3, 4):
        expect(page.get_by_test_id(f"btn-redraw-{pid}")).to_be_enabled()

    # Somebody drew: Ready asks nothing (a lone cell dies, the board settles again).
    page.get_by_test_id("btn-redraw-3").click()
    wait_snapshot(page, "s.acting === 3")
    page.get_by_test_id("tool-pencil").click()
    board.click(12, 32)
    expect(page.get_by_test_id("budget-3")).to_have_text("15")
    gen = snapshot(page)["generation"]
    page.get_by_test_id("btn-ready").click()
    expect(page.get_by_test_id("confirm")).to_be_hidden()

    # A round nobody drew in: Ready asks first; Cancel keeps the round.
    wait_snapshot(page, f"s.phase === 'redraw' && s.generation > {gen}")
    expect(page.get_by_test_id("btn-ready")).to_be_enabled()
    page.get_by_test_id("btn-ready").click()
    expect(page.get_by_test_id("confirm")).to_be_visible()
    expect(page.locator("#confirm-text")).to_have_text(
        "Nobody drew this round: the game will end. Continue?"
    )
    page.get_by_test_id("confirm-no").click()
    expect(page.get_by_test_id("confirm")).to_be_hidden()
    assert snapshot(page)["phase"] == "redraw"
    page.get_by_test_id("btn-ready").click()
    page.get_by_test_id("confirm-yes").click()
    expect(page.get_by_test_id("winner")).to_be_visible()
    assert problems.all() == []


def test_touch_screen_hides_right_button_hint(browser, live_url, problems) -> None:
    from playwright.sync_api import expect

    ctx = browser.new_context(
        viewport={"width": 1024, "height": 768}, has_touch=True, is_mobile=True
    )
    try:
        p = ctx.new_page()
        watch(p, problems)
        new_game(p, live_url)
        assert p.evaluate("matchMedia('(pointer: coarse), (hover: none)').matches")
        expect(p.locator("#toolbar .hint.rmb")).to_be_hidden()
        expect(p.get_by_test_id("tool-pencil")).to_be_visible()
    finally:
        ctx.close()
    assert problems.all() == []
