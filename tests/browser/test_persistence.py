"""Resume: a reload continues the game where it was (placement with a pending hand-over,
the simulation, the redraw round); "Menu" parks the game and "Continue game" returns to
it; a new game while one is unfinished asks first; broken or old saved data opens the
menu without any error.

A reload is made only once every stroke has been answered (``!s.pending``): a reload
cuts the requests in flight, and a stroke the server never got is not on the board
after it (the strokes are shown at once, before the server has them). The running game
is a glider on a torus: it never settles, so "still running after the reload" and the
pause never race with the board settling by itself."""

from __future__ import annotations

import json

import pytest

from tests.browser.lifekit import Board, new_game, select_pattern, snapshot, wait_snapshot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def _no_reload_noise(problems) -> None:
    problems.failed = [f for f in problems.failed if "ERR_ABORTED" not in f]  # reloads cut requests


def reload_when_sent(page) -> None:
    """Reload once the server has every stroke (the page shows them before)."""
    wait_snapshot(page, "!s.pending")
    page.reload()


def test_reload_in_placement_running_and_redraw(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    new_game(page, live_url, size="100", budget=60, torus=True)
    board = Board(page)
    select_pattern(page, "glider")  # flies round the torus for ever
    board.click(20, 45)
    expect(page.get_by_test_id("budget-1")).to_have_text("55")
    game_id = snapshot(page)["gameId"]

    # Reload in placement: same turn, same cells; the pattern choice is not kept.
    reload_when_sent(page)
    wait_snapshot(page, f"s.gameId === '{game_id}' && s.phase === 'placement' && s.acting === 1")
    expect(page.get_by_test_id("budget-1")).to_have_text("55")
    expect(page.get_by_test_id("cells-1")).to_have_text("5")
    assert snapshot(page)["pattern"] is None

    # Reload on the hand-over screen: it is still covering the board.
    page.get_by_test_id("btn-done").click()
    expect(page.get_by_test_id("handover")).to_be_visible()
    page.reload()
    wait_snapshot(page, f"s.gameId === '{game_id}' && s.handover === true")
    expect(page.get_by_test_id("handover")).to_be_visible()
    page.get_by_test_id("handover-accept").click()
    wait_snapshot(page, "s.acting === 2 && !s.handover")
    select_pattern(page, "block")  # player 2 needs a cell that survives the first generation
    Board(page).click(85, 85)  # clear of the glider's path
    expect(page.get_by_test_id("cells-2")).to_have_text("4")
    reload_when_sent(page)
    wait_snapshot(page, "s.acting === 2 && s.phase === 'placement'")
    expect(page.get_by_test_id("cells-2")).to_have_text("4")
    page.get_by_test_id("btn-done").click()

    # Reload while the simulation runs: it goes on (generation keeps growing).
    wait_snapshot(page, "s.phase === 'running' && s.generation > 5")
    gen = snapshot(page)["generation"]
    page.reload()
    wait_snapshot(page, f"s.gameId === '{game_id}' && s.phase === 'running' && s.generation > {gen}")

    # Paused stays paused across a reload.
    wait_snapshot(page, "s.phase === 'running'")
    page.get_by_test_id("btn-pause").click()
    wait_snapshot(page, "s.phase === 'paused'")
    page.reload()
    wait_snapshot(page, f"s.gameId === '{game_id}' && s.phase === 'paused'")
    expect(page.get_by_test_id("btn-pause")).to_have_attribute("data-state", "paused")

    # Menu parks the game, "Continue game" comes back; a new game asks first.
    page.get_by_test_id("btn-menu").click()
    expect(page.get_by_test_id("btn-continue")).to_be_visible()
    page.get_by_test_id("btn-hotseat").click()
    expect(page.get_by_test_id("confirm")).to_be_visible()
    page.get_by_test_id("confirm-no").click()
    expect(page.get_by_test_id("screen-start")).to_be_visible()
    page.reload()  # parked: the reload stays in the menu
    expect(page.get_by_test_id("screen-start")).to_be_visible()
    page.get_by_test_id("btn-continue").click()
    wait_snapshot(page, f"s.gameId === '{game_id}'")
    expect(page.get_by_test_id("screen-game")).to_be_visible()
    page.get_by_test_id("btn-finish").click()
    page.get_by_test_id("confirm-yes").click()
    expect(page.get_by_test_id("winner")).to_be_visible()
    page.reload()  # a finished game is not resumed
    expect(page.get_by_test_id("screen-start")).to_be_visible()
    expect(page.get_by_test_id("btn-continue")).to_be_hidden()

    _no_reload_noise(problems)
    assert problems.all() == []


def test_reload_in_redraw(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    new_game(page, live_url, size="40")
    select_pattern(page, "beehive")
    Board(page).click(5, 5)
    page.get_by_test_id("btn-done").click()
    page.get_by_test_id("handover-accept").click()
    wait_snapshot(page, "s.acting === 2")
    select_pattern(page, "boat")
    Board(page).click(30, 5)
    page.get_by_test_id("btn-done").click()
    wait_snapshot(page, "s.phase === 'redraw'")
    page.get_by_test_id("btn-redraw-2").click()
    Board(page).click(30, 30)
    expect(page.get_by_test_id("budget-2")).to_have_text("90")
    reload_when_sent(page)
    wait_snapshot(page, "s.phase === 'redraw'")
    expect(page.get_by_test_id("stable")).to_be_visible()
    expect(page.get_by_test_id("btn-ready")).to_be_visible()
    expect(page.get_by_test_id("budget-2")).to_have_text("90")
    _no_reload_noise(problems)
    assert problems.all() == []


@pytest.mark.parametrize(
    "saved",
    [
        "{not json",
        json.dumps({"game": {"board": [[0, 1]], "turn": 1, "budget": [100, 100]}, "prefs": "dark"}),
        json.dumps(
            {"game": {"gameId": 7, "tokens": ["x"]}, "prefs": {"theme": "purple", "lang": 3}}
        ),
        json.dumps([1, 2, 3]),
    ],
    ids=["garbage", "old-format", "wrong-types", "array"],
)
def test_broken_save_opens_menu(page, live_url, problems, saved) -> None:
    from playwright.sync_api import expect

    page.goto(live_url + "/")
    page.evaluate(
        """(saved) => {
            localStorage.setItem('cellwar.v1', saved);
            localStorage.setItem('life-save-v1', '{"version":0,"grid":"???"}');
        }""",
        saved,
    )
    page.reload()
    expect(page.get_by_test_id("screen-start")).to_be_visible()
    expect(page.get_by_test_id("btn-continue")).to_be_hidden()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    # The app still works: a new game starts.
    page.get_by_test_id("btn-hotseat").click()
    page.get_by_test_id("setup-start").click()
    wait_snapshot(page, "s.phase === 'placement'")
    _no_reload_noise(problems)
    assert problems.all() == []
