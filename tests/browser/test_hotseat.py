"""A hot-seat Life game played in the browser client against the real stack.

Player 1 draws an R-pentomino in the left half, hands the device over, player 2 draws
blind in the right half, the simulation runs over the WebSocket stream (pause, resume,
speed), a redraw round if the board settles, then "Finish game" → the winner screen.
No console error, failed request or HTTP error answer is allowed on the way.
"""

from __future__ import annotations

import time

import pytest

from tests.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

SIZE = 40
R_PENTOMINO = [(1, 0), (2, 0), (0, 1), (1, 1), (1, 2)]


def snapshot(page) -> dict:
    return page.evaluate("window.cellwar.snapshot()")


def canvas_pixels(page) -> str:
    return page.evaluate("document.getElementById('board').toDataURL()")


def wait_snapshot(page, predicate_js: str, timeout: float = 15_000) -> None:
    """Wait until ``predicate_js`` (an expression over ``s``, the snapshot) holds."""
    page.wait_for_function(
        f"() => {{ const s = window.cellwar.snapshot(); return !!s && ({predicate_js}); }}",
        timeout=timeout,
    )


class Board:
    """Clicks on board cells through the canvas."""

    def __init__(self, page, size: int) -> None:
        self.page = page
        box = page.get_by_test_id("board").bounding_box()
        assert box and box["width"] > 0
        self.x, self.y = box["x"], box["y"]
        self.cell = box["width"] / size

    def click(self, x: int, y: int, button: str = "left") -> None:
        self.page.mouse.click(
            self.x + (x + 0.5) * self.cell, self.y + (y + 0.5) * self.cell, button=button
        )

    def drag(self, cells: list[tuple[int, int]]) -> None:
        m = self.page.mouse
        x, y = cells[0]
        m.move(self.x + (x + 0.5) * self.cell, self.y + (y + 0.5) * self.cell)
        m.down()
        for x, y in cells[1:]:
            m.move(self.x + (x + 0.5) * self.cell, self.y + (y + 0.5) * self.cell, steps=2)
        m.up()


def new_hotseat_game(page, live_url: str, size: int = SIZE, budget: int = 100) -> None:
    page.goto(live_url + "/")
    page.get_by_test_id("btn-hotseat").click()
    page.get_by_test_id("setup-size").select_option(str(size))
    page.get_by_test_id("setup-budget").fill(str(budget))
    shot(page, "01-setup")
    page.get_by_test_id("setup-start").click()
    wait_snapshot(page, "s.phase === 'placement' && s.turn === 1")


def test_hotseat_game_to_winner(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    started = time.monotonic()
    game = page.get_by_test_id("screen-game")
    new_hotseat_game(page, live_url)
    expect(page.get_by_test_id("budget-1")).to_have_text("100")
    board = Board(page, SIZE)

    # Player 1: an R-pentomino in the left half, one stray cell erased with the right button.
    for dx, dy in R_PENTOMINO:
        board.click(8 + dx, 18 + dy)
    board.click(3, 3)
    expect(page.get_by_test_id("budget-1")).to_have_text("94")
    board.click(3, 3, button="right")
    expect(page.get_by_test_id("budget-1")).to_have_text("95")
    board.click(30, 5)  # player 2's half: refused by the client, nothing is sent
    expect(page.get_by_test_id("cells-1")).to_have_text("5")
    expect(page.get_by_test_id("budget-1")).to_have_text("95")
    shot(page, "02-player1-drew")

    # Hand-over, back to player 1, hand-over again, player 2 takes the device.
    page.get_by_test_id("btn-done").click()
    expect(page.get_by_test_id("handover")).to_be_visible()
    page.get_by_test_id("handover-back").click()
    expect(page.get_by_test_id("handover")).to_be_hidden()
    expect(game).to_have_attribute("data-turn", "1")
    page.get_by_test_id("btn-done").click()
    shot(page, "03-handover")
    page.get_by_test_id("handover-accept").click()
    expect(page.get_by_test_id("handover")).to_be_hidden()
    expect(game).to_have_attribute("data-turn", "2")

    # Player 2 draws blind: player 1's cells are not on player 2's board.
    s = snapshot(page)
    assert s["acting"] == 2 and "A" not in s["board"], s
    board = Board(page, SIZE)
    board.drag([(30, 10), (32, 10)])  # a blinker drawn by a drag
    for x, y in [(30, 25), (31, 25), (30, 26), (31, 26)]:  # a block
        board.click(x, y)
    expect(page.get_by_test_id("budget-2")).to_have_text("93")
    shot(page, "04-player2-drew")
    before_board = snapshot(page)["board"]
    before_pixels = canvas_pixels(page)
    page.get_by_test_id("btn-done").click()

    # The simulation runs over the stream.
    wait_snapshot(page, "s.generation >= 3")
    page.wait_for_timeout(100)
    s = snapshot(page)
    assert s["board"] != before_board
    assert canvas_pixels(page) != before_pixels
    shot(page, "05-running")
    # Later generations draw a different board (the R-pentomino keeps changing for long).
    wait_snapshot(page, f"s.generation >= {s['generation'] + 4} || s.phase !== 'running'")
    page.wait_for_timeout(50)
    later = snapshot(page)
    if later["generation"] > s["generation"]:
        assert later["board"] != s["board"]
        assert canvas_pixels(page) != before_pixels
    s = later

    if s["phase"] == "running":
        page.get_by_test_id("btn-pause").click()
        wait_snapshot(page, "s.phase !== 'running'")
        if snapshot(page)["phase"] == "paused":
            gen = snapshot(page)["generation"]
            page.wait_for_timeout(300)
            assert snapshot(page)["generation"] == gen
            page.get_by_test_id("speed-8").click()
            expect(page.get_by_test_id("speed-8")).to_have_class("speed active")
            page.keyboard.press(" ")  # space resumes (focus is on the 8× button)
            wait_snapshot(
                page, f"s.phase !== 'paused' && (s.phase !== 'running' || s.generation > {gen})"
            )

    # A redraw round when the board settles (else the game ends by itself or is finished below).
    deadline = time.monotonic() + 15
    while snapshot(page)["phase"] == "running" and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    if snapshot(page)["phase"] == "redraw":
        expect(page.get_by_test_id("stable")).to_be_visible()
        shot(page, "06-redraw")
        page.get_by_test_id("btn-redraw-2").click()
        expect(game).to_have_attribute("data-acting", "2")
        board = Board(page, SIZE)
        budget2 = int(page.get_by_test_id("budget-2").inner_text())
        board.click(35, 35)
        expect(page.get_by_test_id("budget-2")).to_have_text(str(budget2 - 1))
        page.get_by_test_id("btn-ready").click()
        wait_snapshot(page, "s.phase !== 'redraw'")

    # Finish by agreement (unless the game already ended by its rules).
    if snapshot(page)["phase"] != "finished":
        page.get_by_test_id("btn-finish").click()
        expect(page.get_by_test_id("confirm")).to_be_visible()
        page.get_by_test_id("confirm-yes").click()
    expect(page.get_by_test_id("winner")).to_be_visible(timeout=15_000)
    s = snapshot(page)
    assert s["phase"] == "finished" and s["result"] in ("win", "draw"), s
    text = page.get_by_test_id("winner-text").inner_text()
    assert ("Draw" in text) if s["result"] == "draw" else ("wins" in text), text
    shot(page, "07-winner")

    # Rematch: a new game in placement, same settings.
    old_id = s["gameId"]
    page.get_by_test_id("winner-rematch").click()
    wait_snapshot(page, f"s.phase === 'placement' && s.gameId !== '{old_id}'")
    expect(page.get_by_test_id("winner")).to_be_hidden()
    assert snapshot(page)["width"] == SIZE

    assert problems.all() == []
    assert time.monotonic() - started < 60


def test_resume_after_reload(page, live_url, problems) -> None:
    """A game in progress survives a reload (tokens and game id in localStorage); the
    menu offers "Continue game"."""
    from playwright.sync_api import expect

    new_hotseat_game(page, live_url)
    board = Board(page, SIZE)
    for x in (5, 6, 7):
        board.click(x, 5)
    expect(page.get_by_test_id("budget-1")).to_have_text("97")
    game_id = snapshot(page)["gameId"]
    page.wait_for_timeout(200)

    page.reload()
    wait_snapshot(page, f"s.gameId === '{game_id}' && s.phase === 'placement'")
    expect(page.get_by_test_id("budget-1")).to_have_text("97")
    expect(page.get_by_test_id("cells-1")).to_have_text("3")

    # Brush 3×3 and eraser 4×4 (the eraser refunds cells placed this turn).
    board = Board(page, SIZE)
    page.get_by_test_id("tool-brush").click()
    board.click(10, 20)
    expect(page.get_by_test_id("cells-1")).to_have_text("12")
    expect(page.get_by_test_id("budget-1")).to_have_text("88")
    page.get_by_test_id("tool-eraser4").click()
    board.click(10, 20)
    expect(page.get_by_test_id("cells-1")).to_have_text("3")
    expect(page.get_by_test_id("budget-1")).to_have_text("97")

    page.get_by_test_id("btn-menu").click()
    expect(page.get_by_test_id("screen-start")).to_be_visible()
    expect(page.get_by_test_id("btn-continue")).to_be_visible()
    page.get_by_test_id("btn-continue").click()
    wait_snapshot(page, f"s.gameId === '{game_id}'")
    expect(page.get_by_test_id("screen-game")).to_be_visible()

    # Theme and language are remembered.
    page.get_by_test_id("btn-menu").click()
    page.get_by_test_id("pref-theme").select_option("light")
    page.get_by_test_id("pref-lang").select_option("ru")
    page.reload()
    expect(page.get_by_test_id("btn-continue")).to_have_text("Продолжить партию")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    shot(page, "08-menu-ru-light")

    problems.failed = [f for f in problems.failed if "ERR_ABORTED" not in f]  # reloads cut requests
    assert problems.all() == []


def test_rle_decoder(page, live_url) -> None:
    """client/web/js/rle.js decodes the view's multi-state RLE (and encodes it back)."""
    page.goto(live_url + "/")
    result = page.evaluate(
        """async () => {
            const { decodeBoard, encodeBoard } = await import('/js/rle.js');
            const a = Array.from(decodeBoard('.A$2.B$$3A!', 4, 4));
            const b = Array.from(decodeBoard('bo$2bo$3o!', 3, 3));
            const round = encodeBoard(decodeBoard('2$.AB2.A$3B!', 6, 5), 6, 5);
            return { a, b, round };
        }"""
    )
    assert result["a"] == [0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 1, 1, 0]
    assert result["b"] == [0, 1, 0, 0, 0, 1, 1, 1, 1]
    assert result["round"] == "2$.AB2.A$3B!"
