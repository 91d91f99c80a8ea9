"""The whole Life experience in one browser (hot-seat): the tools, stamps (rotated, one
per click, wheel rotation), tap mode, the space bar, 4 players with a rotating hand-over,
a redraw round with per-colour buttons, the winner screen. No console error, failed
request or HTTP error answer on the way.

The first game is a 40×40 torus with a glider: it never settles (the glider comes back
every 160 generations, no "stable" board), so pausing, resuming and finishing never
race with the board settling by itself (see test_hotseat.py)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import shot
from tests.browser.lifekit import (
    Board,
    board_cells,
    new_game,
    rotated_pattern,
    select_pattern,
    snapshot,
    wait_snapshot,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

GLIDER = [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]  # flies south-east


def test_hotseat_tools_stamps_space_to_winner(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    new_game(page, live_url, size="40", budget=100, torus=True)
    board = Board(page)
    budget1 = page.get_by_test_id("budget-1")

    # Space does nothing during placement (a pause it sent would be refused: a 409 the
    # final check of problems catches).
    page.keyboard.press(" ")
    assert snapshot(page)["phase"] == "placement"

    # Pencil, right button erase, brush 3×3, eraser 1×1, eraser 4×4 (and the right button
    # keeps the 4×4 size while an eraser is active), reset turn.
    for x in (2, 3, 4):
        board.click(x, 2)
    expect(budget1).to_have_text("97")
    board.click(3, 2, button="right")
    expect(page.get_by_test_id("cells-1")).to_have_text("2")
    page.get_by_test_id("tool-brush").click()
    board.click(10, 10)
    expect(page.get_by_test_id("cells-1")).to_have_text("11")
    page.get_by_test_id("tool-eraser").click()
    board.click(10, 10)
    expect(page.get_by_test_id("cells-1")).to_have_text("10")
    page.get_by_test_id("tool-eraser4").click()
    board.click(10, 30)  # nothing there
    board.click(10, 10, button="right")  # 4×4 around (10, 10): the rest of the brush
    expect(page.get_by_test_id("cells-1")).to_have_text("2")
    expect(budget1).to_have_text("98")
    page.get_by_test_id("btn-reset").click()
    expect(budget1).to_have_text("100")
    expect(page.get_by_test_id("cells-1")).to_have_text("0")

    # Tap mode: the press only shows where, the release places (no line while dragging).
    page.get_by_test_id("tool-pencil").click()
    page.get_by_test_id("btn-tap").click()
    board.drag([(5, 5), (6, 5), (7, 5), (8, 5)])
    expect(page.get_by_test_id("cells-1")).to_have_text("1")
    assert set(board_cells(page)) == {(8, 5)}
    board.click(8, 5, button="right")  # the right button erases on release too
    expect(page.get_by_test_id("cells-1")).to_have_text("0")
    select_pattern(page, "block")  # a stamp in tap mode: placed once, where released
    board.drag([(5, 30), (6, 31), (7, 32)])
    expect(page.get_by_test_id("cells-1")).to_have_text("4")
    assert set(board_cells(page)) == {(7, 32), (8, 32), (7, 33), (8, 33)}
    page.get_by_test_id("btn-reset").click()
    expect(page.get_by_test_id("cells-1")).to_have_text("0")
    page.get_by_test_id("btn-tap").click()
    assert snapshot(page)["tap"] is False
    page.get_by_test_id("tool-pencil").click()  # a tool drops the pattern
    wait_snapshot(page, "s.pattern === null")
    expect(page.get_by_test_id("btn-rotate")).to_be_hidden()

    # Player 1: a glider (flies round the torus for ever; clear of player 2's cells).
    for dx, dy in GLIDER:
        board.click(8 + dx, 18 + dy)
    expect(budget1).to_have_text("95")
    page.get_by_test_id("btn-done").click()
    expect(page.get_by_test_id("handover")).to_be_visible()
    page.get_by_test_id("handover-accept").click()
    expect(page.get_by_test_id("handover")).to_be_hidden()
    wait_snapshot(page, "s.acting === 2")

    # Player 2: an eater turned once clockwise by the ↻ button, then once by the wheel
    # and back; exactly the rotated cells appear, the top-left at the click.
    select_pattern(page, "eater")
    expect(page.get_by_test_id("btn-rotate")).to_be_visible()
    page.get_by_test_id("btn-rotate").click()
    board.move(28, 8)
    page.mouse.wheel(0, 120)
    wait_snapshot(page, "s.rotation === 2")
    page.mouse.wheel(0, -120)
    wait_snapshot(page, "s.rotation === 1")
    expected = {(28 + x, 8 + y) for x, y in rotated_pattern("eater", 1)}
    assert expected != {(28 + x, 8 + y) for x, y in rotated_pattern("eater", 0)}
    board.drag([(28, 8), (30, 12), (33, 20)])  # dragging does not repeat the stamp
    page.wait_for_function("() => document.getElementById('budget-2').textContent === '93'")
    wait_snapshot(page, "s.board.includes('B')")
    assert {xy for xy, c in board_cells(page).items() if c == 2} == expected
    # A stamp across the zone border: the cells beyond it are skipped and free.
    select_pattern(page, "block")
    board.move(19, 30)  # the preview: grey beyond the zone border, green inside
    pixels = """() => {
        const c = document.getElementById('board');
        const ctx = c.getContext('2d');
        const px = (x, y) => Array.from(ctx.getImageData(
            Math.floor((x + 0.5) * c.width / 40), Math.floor((y + 0.5) * c.height / 40), 1, 1).data);
        return [px(19, 30), px(20, 30)];
    }"""
    grey_and_green = (
        "([o, i]) => Math.abs(o[0] - o[1]) < 20 && Math.abs(o[1] - o[2]) < 25 && i[1] > i[0] + 40"
    )
    # The preview is drawn on the next animation frame: wait for it, then check it.
    page.wait_for_function(f"() => ({grey_and_green})(({pixels})())")
    outside, inside = page.evaluate(pixels)
    assert abs(outside[0] - outside[1]) < 20 and abs(outside[1] - outside[2]) < 25, outside
    assert inside[1] > inside[0] + 40, inside
    board.click(19, 30)  # columns 19..20: only column 20 is player 2's
    expect(page.get_by_test_id("budget-2")).to_have_text("91")
    assert {(20, 30), (20, 31)} <= set(board_cells(page))
    assert (19, 30) not in board_cells(page)
    shot(page, "life-player2-stamps")
    page.get_by_test_id("btn-done").click()

    # Running: space pauses and resumes (not while focus is in a text field).
    wait_snapshot(page, "s.phase === 'running' && s.generation >= 2")
    page.keyboard.press(" ")
    wait_snapshot(page, "s.phase === 'paused'")
    expect(page.get_by_test_id("btn-pause")).to_have_attribute("data-state", "paused")
    page.get_by_test_id("speed-2").click()
    expect(page.get_by_test_id("speed-2")).to_have_class("speed active")
    expect(page.get_by_test_id("speed-1")).to_have_class("speed")
    gen = snapshot(page)["generation"]
    page.keyboard.press(" ")
    wait_snapshot(page, f"s.phase === 'running' && s.generation > {gen}")
    page.keyboard.press(" ")
    wait_snapshot(page, "s.phase === 'paused'")

    # Finish with confirmation (cancel first), then the winner screen.
    page.get_by_test_id("btn-finish").click()
    expect(page.get_by_test_id("confirm")).to_be_visible()
    page.keyboard.press(" ")  # no effect under the dialog
    expect(page.get_by_test_id("confirm")).to_be_visible()
    page.get_by_test_id("confirm-no").click()
    expect(page.get_by_test_id("confirm")).to_be_hidden()
    assert snapshot(page)["phase"] == "paused"
    page.get_by_test_id("btn-finish").click()
    page.get_by_test_id("confirm-yes").click()
    expect(page.get_by_test_id("winner")).to_be_visible()
    s = snapshot(page)
    assert s["phase"] == "finished" and s["result"] == "win" and s["winner"] == 2, s
    # Menu after the end: nothing to continue.
    page.get_by_test_id("winner-menu").click()
    expect(page.get_by_test_id("screen-start")).to_be_visible()
    expect(page.get_by_test_id("btn-continue")).to_be_hidden()

    assert problems.all() == []


def test_four_players_redraw_and_rematch(page, live_url, problems) -> None:
    """4 players: quadrant zones, a hand-over to each next colour, a redraw round with
    the four colour buttons, an empty round ends the game, rematch keeps the settings."""
    from playwright.sync_api import expect

    new_game(page, live_url, size="40", players=4, budget=20)
    for pid in (1, 2, 3, 4):
        expect(page.get_by_test_id(f"hud-p{pid}")).to_be_visible()
    board = Board(page)
    # A block in each quadrant (1 top-left, 2 top-right, 3 bottom-left, 4 bottom-right).
    corners = {1: (5, 5), 2: (25, 5), 3: (5, 25), 4: (25, 25)}
    select_pattern(page, "block")
    for pid in (1, 2, 3, 4):
        wait_snapshot(page, f"s.acting === {pid} && !s.handover")
        x, y = corners[pid]
        if pid == 1:
            board.click(25, 25)  # another quadrant: nothing placed
        board.click(x, y)
        if pid == 4:
            board.click(x + 5, y)  # player 4 places two blocks and wins
        expect(page.get_by_test_id(f"budget-{pid}")).to_have_text("12" if pid == 4 else "16")
        page.get_by_test_id("btn-done").click()
        if pid < 4:
            expect(page.get_by_test_id("handover")).to_be_visible()
            names = {2: "Green", 3: "Blue", 4: "Yellow"}
            expect(page.locator("#handover-title")).to_contain_text(names[pid + 1])
            page.get_by_test_id("handover-accept").click()

    # Still lifes only: stable at once → redraw with four colour buttons.
    wait_snapshot(page, "s.phase === 'redraw'")
    expect(page.get_by_test_id("stable")).to_be_visible()
    for pid in (1, 2, 3, 4):
        expect(page.get_by_test_id(f"btn-redraw-{pid}")).to_be_visible()
    page.get_by_test_id("btn-redraw-3").click()
    wait_snapshot(page, "s.acting === 3")
    shot(page, "life-4p-redraw")
    page.get_by_test_id("btn-ready").click()  # nobody placed: the game ends
    page.get_by_test_id("confirm-yes").click()  # "Nobody drew this round: the game will end."
    expect(page.get_by_test_id("winner")).to_be_visible()
    s = snapshot(page)
    assert s["result"] == "win" and s["winner"] == 4, s
    expect(page.get_by_test_id("winner-text")).to_contain_text("Yellow")

    old = s["gameId"]
    page.get_by_test_id("winner-rematch").click()
    wait_snapshot(page, f"s.gameId !== '{old}' && s.phase === 'placement'")
    s = snapshot(page)
    assert s["players"] == 4 and s["width"] == 40
    expect(page.get_by_test_id("budget-1")).to_have_text("20")
    assert problems.all() == []
