"""Accessibility against the real stack: the colour-blind palette (colours apart by more
than hue: a mark on every live cell, patterned swatches, dashed chart lines, remembered),
placement by keyboard alone (arrow keys move a cursor, Space/Enter place, Delete
erases, R rotates a stamp; Space still pauses the running game), visible focus, and the
polite live region that announces the phase, the turn and the result."""

from __future__ import annotations

import pytest

from tests.browser.lifekit import (
    board_cells,
    new_game,
    rotated_pattern,
    select_pattern,
    wait_snapshot,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]


def test_colour_blind_palette_marks_cells(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    page.goto(live_url + "/")
    page.get_by_test_id("pref-palette").select_option("cb")
    assert page.evaluate("document.documentElement.dataset.palette") == "cb"
    page.reload()
    expect(page.get_by_test_id("pref-palette")).to_have_value("cb")  # remembered
    new_game(page, live_url, size="40", budget=20)
    page.get_by_test_id("tool-brush").click()
    box = page.get_by_test_id("board").bounding_box()
    cell = box["width"] / 40
    page.mouse.click(box["x"] + 5.5 * cell, box["y"] + 5.5 * cell)
    wait_snapshot(page, "!s.pending")
    page.mouse.move(box["x"] + 30 * cell, box["y"] + 30 * cell)  # no preview over the cells
    pixels = """() => {
        const c = document.getElementById('board');
        const ctx = c.getContext('2d');
        const s = c.width / 40;
        const px = (x, y) => Array.from(ctx.getImageData(Math.floor(x), Math.floor(y), 1, 1).data);
        return [px(5.5 * s, 5.5 * s), px(5 * s + 2, 5 * s + 2)];
    }"""
    # The board is drawn on an animation frame: wait until the placed cell is drawn
    # (its edge no longer the empty board's dark colour), then read it.
    page.wait_for_function(f"() => ({pixels})()[1][0] > 180")
    # A red cell is no longer one flat colour: its centre carries the dot mark.
    centre, edge = page.evaluate(pixels)
    assert sum(abs(a - b) for a, b in zip(centre[:3], edge[:3], strict=True)) > 60, (centre, edge)
    # The Okabe–Ito vermillion, and a patterned swatch in the HUD.
    assert edge[0] > 180 and 70 < edge[1] < 120 and edge[2] < 40, edge
    bg = page.evaluate("getComputedStyle(document.querySelector('#hud-p1 .swatch')).backgroundImage")
    assert "gradient" in bg
    assert problems.all() == []


def test_placement_by_keyboard_alone(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    # A torus: the glider placed below flies for ever, so the simulation is still running
    # when the space bar pauses it, however slow the machine.
    new_game(page, live_url, size="40", budget=100, torus=True)
    page.get_by_test_id("pattern").wait_for()
    board = page.get_by_test_id("board")
    # Tab from the toolbar's last button reaches the board: the focus is visible (an
    # outline of the focus colour) and the cursor starts in the middle of the zone
    # (x 0..19, y 0..39).
    page.get_by_test_id("btn-tap").focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "board"
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    expect(page.get_by_test_id("coords")).to_have_text("(9, 19)")
    page.keyboard.press("Space")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.keyboard.press("Shift+ArrowUp")  # 5 cells
    page.keyboard.press("Space")
    expect(page.get_by_test_id("coords")).to_have_text("(10, 14)")
    assert set(board_cells(page)) == {(9, 19), (10, 19), (10, 14)}
    page.keyboard.press("Delete")
    wait_snapshot(page, "!s.pending")
    assert set(board_cells(page)) == {(9, 19), (10, 19)}

    # A stamp: R turns it, Space places it at the cursor.
    select_pattern(page, "glider")
    board.focus()
    page.keyboard.press("r")
    wait_snapshot(page, "s.rotation === 1")
    for _ in range(5):
        page.keyboard.press("ArrowLeft")
    page.keyboard.press("Space")
    expected = {(5 + x, 14 + y) for x, y in rotated_pattern("glider", 1)}
    wait_snapshot(page, "!s.pending")
    assert set(board_cells(page)) == {(9, 19), (10, 19)} | expected

    # Tab reaches the buttons; Done by keyboard; the live region tells the hand-over.
    page.get_by_test_id("btn-done").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("handover")).to_be_visible()
    expect(page.get_by_test_id("sr-status")).to_have_attribute("aria-live", "polite")
    expect(page.get_by_test_id("sr-status")).to_contain_text("Hand-over")
    page.get_by_test_id("handover-accept").focus()
    page.keyboard.press("Enter")
    wait_snapshot(page, "s.acting === 2 && !s.handover")
    expect(page.get_by_test_id("sr-status")).to_contain_text("Green places cells")
    select_pattern(page, "block")  # a still life: Green stays in the game
    board.focus()
    expect(page.get_by_test_id("coords")).to_have_text("(29, 19)")  # the middle of Green's zone
    page.keyboard.press("Space")
    wait_snapshot(page, "!s.pending")
    assert {(29, 19), (30, 19), (29, 20), (30, 20)} <= set(board_cells(page))
    page.get_by_test_id("btn-done").focus()
    page.keyboard.press("Enter")

    # While the simulation runs Space on the focused board pauses, as elsewhere.
    wait_snapshot(page, "s.phase === 'running' && s.generation > 0")
    board.focus()
    page.keyboard.press("Space")
    wait_snapshot(page, "s.phase === 'paused'")
    assert problems.all() == []
