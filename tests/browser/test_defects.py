"""The defects players reported in the Life client, each at the viewport where it occurs,
against the real stack:

1. the rotate button (↻) shows outside drawing phases (running, paused, result, the
   waiting screen of a new online game);
2. a tap on a touch phone (390×844, tap mode) places where the finger is, although the
   coordinate readout appears at the touch;
6. the board takes the space it has: a 300×300 board is ≥ 900 px high on 1920×1080; on
   a phone the running board starts ≤ 120 px below the top of the game area, the menu
   button is a button (not a bar), and the board follows a rotation of the phone;
7. a pencil or brush at budget 0 says so;
8. the result screen says why the game ended (extinction, an empty redraw round, budget
   deadlock, agreement, resignation, the generation limit).
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import TIMEOUT_MS, doc_shot
from tests.browser.lifekit import (
    Board,
    board_cells,
    new_game,
    select_pattern,
    snapshot,
    wait_snapshot,
    watch,
)
from tests.browser.restkit import BLOCK, GLIDER, LifeGame, at, open_saved, paused_game

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

PHONE = {"width": 390, "height": 844}


def _box(page, test_id: str) -> dict:
    box = page.get_by_test_id(test_id).bounding_box()
    assert box, test_id
    return box


def test_rotate_button_only_in_drawing_phases(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    # A glider on a torus flies for ever: the simulation is still running when the
    # test pauses it, however slow the machine.
    new_game(page, live_url, size="40", budget=100, torus=True)
    board = Board(page)
    rotate = page.get_by_test_id("btn-rotate")
    select_pattern(page, "glider")
    expect(rotate).to_be_visible()
    board.click(8, 18)
    page.get_by_test_id("btn-done").click()
    page.get_by_test_id("handover-accept").click()
    wait_snapshot(page, "s.acting === 2 && !s.handover")
    expect(rotate).to_be_visible()  # the pattern stays chosen for the next player
    select_pattern(page, "block")
    board.click(30, 30)
    page.get_by_test_id("btn-done").click()

    wait_snapshot(page, "s.phase === 'running'")
    assert snapshot(page)["pattern"] == "block"
    expect(rotate).to_be_hidden()
    page.get_by_test_id("btn-pause").click()
    wait_snapshot(page, "s.phase === 'paused'")
    expect(rotate).to_be_hidden()
    page.get_by_test_id("btn-finish").click()
    page.get_by_test_id("confirm-yes").click()
    expect(page.get_by_test_id("winner")).to_be_visible()
    expect(rotate).to_be_hidden()

    # A new online game waits for the second player: no tools at all.
    page.get_by_test_id("winner-menu").click()
    page.get_by_test_id("btn-online").click()
    page.get_by_test_id("setup-start").click()
    wait_snapshot(page, "s.online && s.phase === 'waiting'")
    expect(page.get_by_test_id("online-share")).to_be_visible()
    assert snapshot(page)["pattern"] == "block"
    expect(rotate).to_be_hidden()
    expect(page.get_by_test_id("toolbar")).to_be_hidden()
    assert problems.all() == []


def test_phone_tap_lands_under_the_finger(browser, live_url, problems) -> None:
    ctx = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    try:
        page = ctx.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        watch(page, problems)
        new_game(page, live_url, size="40", budget=100)
        page.get_by_test_id("pattern").wait_for()
        page.get_by_test_id("btn-tap").tap()
        wait_snapshot(page, "s.tap === true")
        placed = set()
        for x, y in [(10, 12), (3, 30), (17, 2)]:
            box = _box(page, "board")
            cell = box["width"] / 40
            page.touchscreen.tap(box["x"] + (x + 0.5) * cell, box["y"] + (y + 0.5) * cell)
            placed.add((x, y))
            page.wait_for_function(
                f"() => document.getElementById('cells-1').textContent === '{len(placed)}'"
            )
            assert set(board_cells(page)) == placed
        # A stamp in tap mode lands under the finger too.
        select_pattern(page, "block")
        box = _box(page, "board")
        cell = box["width"] / 40
        page.touchscreen.tap(box["x"] + 5.5 * cell, box["y"] + 20.5 * cell)
        placed |= {(5 + dx, 20 + dy) for dx, dy in BLOCK}
        page.wait_for_function("() => document.getElementById('cells-1').textContent === '7'")
        assert set(board_cells(page)) == placed
    finally:
        ctx.close()
    assert problems.all() == []


def test_big_board_fills_a_big_screen(browser, live_url, problems) -> None:
    """300×300 on 1920×1080: ≥ 900 px high while placing and during the simulation
    (paused at once, so that it does not load the machine)."""
    placing = LifeGame(live_url, {"width": 300, "height": 300, "budget": 50})
    running = paused_game(live_url, 300)  # the simulation's layout, without its CPU
    ctx = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        page = ctx.new_page()
        watch(page, problems)
        for game, phase in ((placing, "placement"), (running, "paused")):
            open_saved(page, live_url, game)
            wait_snapshot(page, f"s.gameId === '{game.id}' && s.phase === '{phase}'")
            # The board is fitted by a ResizeObserver after the layout: wait for the fit.
            page.wait_for_function(
                "() => document.getElementById('board').getBoundingClientRect().height >= 900"
            )
            box = _box(page, "board")
            assert box["height"] >= 900 and box["width"] >= 900, box
            assert box["y"] >= 0 and box["y"] + box["height"] <= 1080, box
    finally:
        ctx.close()
        for pid in (1, 2):
            running.act(pid, {"type": "propose_finish"})
        placing.close()
        running.close()
    assert problems.all() == []


@pytest.mark.screenshots
def test_phone_board_near_the_top_and_follows_rotation(browser, live_url, problems) -> None:
    from playwright.sync_api import expect

    game = paused_game(live_url, 100)  # the simulation's layout, without its CPU
    ctx = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    try:
        page = ctx.new_page()
        watch(page, problems)
        open_saved(page, live_url, game)
        wait_snapshot(page, f"s.gameId === '{game.id}' && s.phase === 'paused'")
        expect(page.get_by_test_id("btn-pause")).to_be_visible()
        # The board is fitted by a ResizeObserver after the layout: wait for the fit.
        page.wait_for_function(
            "() => document.getElementById('board').getBoundingClientRect().width"
            " >= 0.85 * (innerWidth - 24)"
        )
        area = _box(page, "screen-game")
        board = _box(page, "board")
        assert board["y"] - area["y"] <= 120, (board, area)
        assert board["width"] >= 0.85 * (PHONE["width"] - 24), board
        assert board["y"] + board["height"] <= PHONE["height"]
        menu = _box(page, "btn-menu")
        assert menu["width"] <= 64 and menu["height"] <= 64, menu
        doc_shot(page, "phone")

        # Rotated to landscape: the board refits into what is free, fully on screen.
        page.set_viewport_size({"width": 844, "height": 390})
        page.wait_for_function(
            "() => { const r = document.getElementById('board').getBoundingClientRect();"
            " return r.bottom <= innerHeight && r.height >= 0.85 * (innerHeight - 24); }"
        )
        # And back to portrait.
        page.set_viewport_size(PHONE)
        page.wait_for_function(
            "() => { const r = document.getElementById('board').getBoundingClientRect();"
            " return r.width >= 0.85 * (innerWidth - 24) && r.right <= innerWidth; }"
        )
    finally:
        ctx.close()
        for pid in (1, 2):
            game.act(pid, {"type": "propose_finish"})
        game.close()
    assert problems.all() == []


def test_pencil_and_brush_at_budget_zero_say_so(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    new_game(page, live_url, size="40", budget=1)
    board = Board(page)
    board.click(3, 3)
    expect(page.get_by_test_id("budget-1")).to_have_text("0")
    toast = page.get_by_test_id("toast")
    expect(toast).to_be_hidden()
    board.click(6, 6)
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("No budget left")
    toast.click()
    expect(toast).to_be_hidden()
    page.get_by_test_id("tool-brush").click()
    board.click(10, 10)
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("No budget left")
    assert set(board_cells(page)) == {(3, 3)}
    assert problems.all() == []


def _finished(live_url: str, reason: str) -> LifeGame:
    """A 16×16 game finished over REST for one Life end condition (docs/architecture/rules.md)."""
    config = {"budget": 4} if reason == "budget_deadlock" else {}
    if reason == "generation_limit":
        config = {"max_generations": 3}
    g = LifeGame(live_url, config)
    if reason == "resign":
        g.act(1, {"type": "resign"})
        return g
    g.place(1, [[2, 2]] if reason == "extinction" else at(GLIDER if reason == "generation_limit" else BLOCK, 2, 2))
    g.end_turn(1)
    g.place(2, at(GLIDER if reason == "generation_limit" else BLOCK, 10, 2))
    g.end_turn(2)
    if reason in ("empty_redraw", "agreed"):
        g.wait_phase("redraw")
        for pid in (1, 2):
            if reason == "agreed":
                g.act(pid, {"type": "propose_finish"})
            else:
                g.end_turn(pid)
    g.wait_phase("finished")
    return g


@pytest.mark.parametrize(
    ("reason", "text"),
    [
        ("extinction", "died out"),
        ("empty_redraw", "nobody added a cell"),
        ("budget_deadlock", "budget"),
        ("agreed", "agreed"),
        ("resign", "resigned"),
        ("generation_limit", "generation limit"),
    ],
)
def test_result_screen_says_why_the_game_ended(page, live_url, problems, reason, text) -> None:
    from playwright.sync_api import expect

    game = _finished(live_url, reason)
    try:
        open_saved(page, live_url, game)
        expect(page.get_by_test_id("winner")).to_be_visible()
        why = page.get_by_test_id("winner-reason")
        expect(why).to_have_attribute("data-reason", reason)
        expect(why).to_contain_text(text)
    finally:
        game.close()
    assert problems.all() == []
