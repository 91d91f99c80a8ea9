"""Screens: theme and language (switchable, remembered, the browser's language by
default), the "How to play" dialog, pattern categories translated, screenshots of the
main screens in both themes (test-artifacts/screenshots/life-<theme>-*.png) and the
canvas on a 300×300 board (no per-cell DOM, decode + draw per frame small)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import doc_shot, shot
from tests.browser.lifekit import Board, new_game, select_pattern, snapshot, wait_snapshot, watch

pytestmark = [pytest.mark.browser, pytest.mark.timeout(60)]


def test_theme_and_language_switch_remembered(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    page.goto(live_url + "/")
    expect(page.get_by_test_id("btn-hotseat")).to_contain_text("Hot-seat")
    expect(page.get_by_test_id("btn-online")).to_contain_text("Play online")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"

    page.get_by_test_id("pref-lang").select_option("ru")
    expect(page.get_by_test_id("btn-hotseat")).to_contain_text("За одним устройством")
    expect(page.get_by_test_id("btn-online")).to_contain_text("Играть онлайн")
    assert page.evaluate("document.documentElement.lang") == "ru"
    page.get_by_test_id("pref-theme").select_option("light")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    page.reload()
    expect(page.get_by_test_id("btn-hotseat")).to_contain_text("За одним устройством")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    expect(page.get_by_test_id("pref-lang")).to_have_value("ru")

    # Settings and the rules dialog in Russian; space in the dialog does nothing.
    page.get_by_test_id("btn-hotseat").click()
    expect(page.get_by_test_id("setup-title")).to_have_text("Игра за одним устройством")
    page.get_by_test_id("setup-help").click()
    expect(page.get_by_test_id("help")).to_be_visible()
    expect(page.get_by_test_id("help-body")).to_contain_text("B3/S23")
    expect(page.get_by_test_id("help-body")).to_contain_text("Побеждает")
    page.keyboard.press(" ")
    expect(page.get_by_test_id("help")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("help")).to_be_hidden()
    # Space in the budget box is just typing (nothing else happens).
    page.get_by_test_id("setup-budget").click()
    page.keyboard.press(" ")
    expect(page.get_by_test_id("screen-setup")).to_be_visible()

    # Pattern categories are translated.
    page.get_by_test_id("setup-size").select_option("40")
    page.get_by_test_id("setup-budget").fill("100")
    page.get_by_test_id("setup-start").click()
    wait_snapshot(page, "s.phase === 'placement'")
    expect(page.locator("[data-testid=pattern] optgroup")).to_have_count(5)
    groups = page.locator("[data-testid=pattern] optgroup").evaluate_all(
        "els => els.map(e => e.label)"
    )
    assert groups == ["Стойкие", "Осцилляторы", "Корабли", "Долгожители", "Ружья"]
    expect(page.get_by_test_id("hud-phase")).to_contain_text("Красные")
    # Back to English: the game screen follows.
    page.get_by_test_id("btn-menu").click()
    page.get_by_test_id("pref-lang").select_option("en")
    page.get_by_test_id("btn-continue").click()
    wait_snapshot(page, "s.phase === 'placement'")
    expect(page.locator("[data-testid=pattern] optgroup")).to_have_count(5)
    groups = page.locator("[data-testid=pattern] optgroup").evaluate_all(
        "els => els.map(e => e.label)"
    )
    assert groups == ["Still lifes", "Oscillators", "Spaceships", "Methuselahs", "Guns"]
    assert problems.all() == []


def test_language_follows_the_browser(browser, live_url, problems) -> None:
    from playwright.sync_api import expect

    ctx = browser.new_context(locale="ru-RU")
    try:
        page = ctx.new_page()
        watch(page, problems)
        page.goto(live_url + "/")
        expect(page.get_by_test_id("btn-hotseat")).to_contain_text("За одним устройством")
        expect(page.get_by_test_id("pref-lang")).to_have_value("ru")
    finally:
        ctx.close()
    assert problems.all() == []


@pytest.mark.screenshots
@pytest.mark.parametrize("theme", ["dark", "light"])
def test_main_screens_screenshots(page, live_url, problems, theme) -> None:
    """start, settings, placement, running, redraw, winner — in both themes."""
    from playwright.sync_api import expect

    page.goto(live_url + "/")
    page.get_by_test_id("pref-theme").select_option(theme)
    shot(page, f"life-{theme}-01-start")
    page.get_by_test_id("btn-hotseat").click()
    page.get_by_test_id("setup-size").select_option("40")
    shot(page, f"life-{theme}-02-settings")
    page.get_by_test_id("setup-start").click()
    wait_snapshot(page, "s.phase === 'placement'")
    board = Board(page)
    select_pattern(page, "glider")  # flies south-east, ends as a block at the edge
    board.click(5, 5)
    select_pattern(page, "block")
    board.click(2, 30)
    board.move(10, 20)
    shot(page, f"life-{theme}-03-placement")
    page.get_by_test_id("btn-done").click()
    page.get_by_test_id("handover-accept").click()
    wait_snapshot(page, "s.acting === 2")
    select_pattern(page, "block")
    board.click(35, 2)
    page.get_by_test_id("btn-done").click()
    wait_snapshot(page, "s.phase !== 'placement'")
    if snapshot(page)["phase"] == "running":
        shot(page, f"life-{theme}-04-running")
    wait_snapshot(page, "s.phase === 'redraw'")
    expect(page.get_by_test_id("stable")).to_be_visible()
    shot(page, f"life-{theme}-05-redraw")
    if theme == "dark":
        doc_shot(page, "life-redraw")
    page.get_by_test_id("btn-ready").click()  # nobody drew: the game ends
    page.get_by_test_id("confirm-yes").click()  # "Nobody drew this round: the game will end."
    expect(page.get_by_test_id("winner")).to_be_visible()
    expect(page.get_by_test_id("winner-text")).to_have_text("Red wins!")
    shot(page, f"life-{theme}-06-winner")
    assert problems.all() == []


def test_big_board_canvas(page, live_url, problems) -> None:
    """300×300: one canvas, no per-cell DOM; the view's RLE decoded and drawn frame after
    frame by the board's own code (how fast is for `make bench`, never a test)."""
    new_game(page, live_url, size="300", budget=500)
    select_pattern(page, "gosper_glider_gun")
    board = Board(page)
    board.click(10, 10)
    wait_snapshot(page, "s.board.length > 20")
    assert page.evaluate("document.querySelectorAll('*').length") < 600
    # The boards, the charts (uPlot draws on a canvas) and CellWar's legend icons.
    assert page.evaluate("document.querySelectorAll('canvas').length") < 30
    drawn = page.evaluate(
        """async () => {
            const { decodeBoard, encodeBoard } = await import('/js/rle.js');
            const { BoardView } = await import('/js/board.js');
            const W = 300, H = 300;
            const cells = new Uint8Array(W * H);
            let seed = 7;
            for (let i = 0; i < cells.length; i++) { seed = (seed * 1103515245 + 12345) >>> 0; cells[i] = (seed >>> 16) % 3; }
            const rle = encodeBoard(cells, W, H);
            const canvas = document.createElement('canvas');
            const wrap = document.createElement('div');
            wrap.style.width = '900px';
            wrap.append(canvas);
            document.body.append(wrap);
            const view = new BoardView(canvas);
            const out = new Uint8Array(W * H);
            for (let k = 0; k < 20; k++) {
                view.setBoard(decodeBoard(rle, W, H, out), W, H);
                view.dirty = true;
                view._render();
            }
            // The canvas holds the board: one pixel per cell, three colours (dead, 1, 2).
            const img = view.image || canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
            const colours = new Set();
            for (let i = 0; i < img.data.length; i += 4 * 97) colours.add(img.data.slice(i, i + 3).join());
            const same = Array.from(decodeBoard(rle, W, H)).every((c, i) => c === cells[i]);
            view.destroy();
            wrap.remove();
            return { colours: colours.size, same };
        }"""
    )
    assert drawn["same"] is True
    assert drawn["colours"] >= 3, drawn
    assert problems.all() == []
