"""A hot-seat Life game played in the browser client against the real stack.

Player 1 draws a glider in the left half, hands the device over, player 2 draws blind
in the right half, the simulation runs over the WebSocket stream (pause, speed, resume)
until the generation limit ends it → the winner screen, the reason, a rematch. No
console error, failed request or HTTP error answer is allowed on the way.

The board is a 40×40 torus: the glider flies for ever (it comes back every 160
generations, which is no "stable" board), so the simulation runs until it is paused or
reaches the generation limit (5000) — nothing the test does races with the board
settling by itself, however slow the machine is.
"""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import TIMEOUT_MS, shot
from tests.browser.lifekit import snapshot, wait_snapshot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

SIZE = 40
GLIDER = [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]  # flies south-east


def canvas_pixels(page) -> str:
    return page.evaluate("document.getElementById('board').toDataURL()")


def wait_canvas_changed(page, before: str) -> None:
    """Wait until the board's canvas shows something else than ``before`` (a data URL):
    the canvas is drawn on an animation frame after the view arrives."""
    page.wait_for_function(
        "(before) => document.getElementById('board').toDataURL() !== before", arg=before
    )


class Board:
    """Clicks on board cells through the canvas, where it is at each click (a readout
    that appears above the board after a placement moves it, as a player sees)."""

    def __init__(self, page, size: int) -> None:
        self.page, self.size = page, size
        self._measure()

    def _measure(self) -> None:
        box = self.page.get_by_test_id("board").bounding_box()
        assert box and box["width"] > 0
        self.x, self.y = box["x"], box["y"]
        self.cell = box["width"] / self.size

    def click(self, x: int, y: int, button: str = "left") -> None:
        self._measure()
        self.page.mouse.click(
            self.x + (x + 0.5) * self.cell, self.y + (y + 0.5) * self.cell, button=button
        )

    def drag(self, cells: list[tuple[int, int]]) -> None:
        self._measure()
        m = self.page.mouse
        x, y = cells[0]
        m.move(self.x + (x + 0.5) * self.cell, self.y + (y + 0.5) * self.cell)
        m.down()
        for x, y in cells[1:]:
            m.move(self.x + (x + 0.5) * self.cell, self.y + (y + 0.5) * self.cell, steps=2)
        m.up()


def new_hotseat_game(
    page, live_url: str, size: int = SIZE, budget: int = 100, torus: bool = False
) -> None:
    page.goto(live_url + "/")
    page.get_by_test_id("btn-hotseat").click()
    page.get_by_test_id("setup-size").select_option(str(size))
    page.get_by_test_id("setup-budget").fill(str(budget))
    if torus:
        page.get_by_test_id("setup-torus").check()
    shot(page, "01-setup")
    page.get_by_test_id("setup-start").click()
    wait_snapshot(page, "s.phase === 'placement' && s.turn === 1")


def test_hotseat_game_to_winner(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    game = page.get_by_test_id("screen-game")
    new_hotseat_game(page, live_url, torus=True)
    expect(page.get_by_test_id("budget-1")).to_have_text("100")
    board = Board(page, SIZE)

    # Player 1: a glider in the left half, one stray cell erased with the right button.
    for dx, dy in GLIDER:
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
    wait_snapshot(page, "!s.pending")
    shot(page, "04-player2-drew")
    before_board = snapshot(page)["board"]
    before_pixels = canvas_pixels(page)
    page.get_by_test_id("btn-done").click()

    # The simulation runs over the stream: the board and the canvas change, and go on
    # changing (the glider moves) generation after generation.
    wait_snapshot(page, f"s.phase === 'running' && s.generation >= 3 && s.board !== {json.dumps(before_board)}")
    wait_canvas_changed(page, before_pixels)
    shot(page, "05-running")
    s = snapshot(page)
    wait_snapshot(page, f"s.generation >= {s['generation'] + 4} && s.board !== {json.dumps(s['board'])}")
    wait_canvas_changed(page, canvas_pixels(page))

    # Pause (the button), 8× while paused, resume with the space bar (focus is on 8×).
    page.get_by_test_id("btn-pause").click()
    wait_snapshot(page, "s.phase === 'paused'")
    expect(page.get_by_test_id("btn-pause")).to_have_attribute("data-state", "paused")
    gen = snapshot(page)["generation"]
    page.get_by_test_id("speed-8").click()
    expect(page.get_by_test_id("speed-8")).to_have_class("speed active")
    wait_snapshot(page, "s.speed === 8")
    page.keyboard.press(" ")
    wait_snapshot(page, f"s.phase !== 'paused' && s.generation > {gen}")

    # At 8× the glider reaches the generation limit within seconds: the game ends by
    # itself, by score (the blinker and the block outnumber the glider).
    expect(page.get_by_test_id("winner")).to_be_visible(timeout=max(TIMEOUT_MS, 60_000))
    s = snapshot(page)
    assert s["phase"] == "finished" and s["result"] == "win" and s["winner"] == 2, s
    expect(page.get_by_test_id("winner-text")).to_have_text("Green wins!")
    expect(page.get_by_test_id("winner-reason")).to_have_attribute("data-reason", "generation_limit")
    shot(page, "07-winner")

    # Rematch: a new game in placement, same settings.
    old_id = s["gameId"]
    page.get_by_test_id("winner-rematch").click()
    wait_snapshot(page, f"s.phase === 'placement' && s.gameId !== '{old_id}'")
    expect(page.get_by_test_id("winner")).to_be_hidden()
    assert snapshot(page)["width"] == SIZE

    assert problems.all() == []


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
    wait_snapshot(page, "!s.pending")  # the strokes are in: a reload must not cut them

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
