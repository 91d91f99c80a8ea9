"""A hot-seat CellWar turn in the browser client against the real stack.

Red selects a unit (legal targets highlighted, asked over the seat's stream), moves it, digs the other one in, tries
nothing illegal, ends the turn; the hand-over screen covers the board; Green's view shows
fog (only the cells around Green's units, no Red unit). Then Green leaves over the REST
API, the winner screen appears, and "Watch replay" opens the replay of that game.
Screenshots in the dark and light themes; no console error or failed request.
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.browser.conftest import HTTP_TIMEOUT_S, TIMEOUT_MS, shot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

SIZE = 8  # default start: Red (0,0),(1,0); Green (7,7),(6,7)


def cw(page) -> dict:
    return page.evaluate("window.cellwarModes.cellwar()")


def wait_cw(page, predicate_js: str, timeout: float = TIMEOUT_MS) -> None:
    page.wait_for_function(
        f"() => {{ const s = window.cellwarModes.cellwar(); return !!s && ({predicate_js}); }}",
        timeout=timeout,
    )


def click_cell(page, x: int, y: int) -> None:
    box = page.get_by_test_id("cw-board").bounding_box()
    assert box and box["width"] > 0
    cell = box["width"] / SIZE
    page.mouse.click(box["x"] + (x + 0.5) * cell, box["y"] + (y + 0.5) * cell)


def visible_cells(rle: str, width: int) -> set[tuple[int, int]]:
    """Decode the two-state RLE of the visible mask (every row written in full)."""
    out, x, y, count = set(), 0, 0, ""
    for ch in rle:
        if ch.isdigit():
            count += ch
            continue
        n = int(count or 1)
        count = ""
        if ch == "!":
            break
        if ch == "$":
            y, x = y + n, 0
        elif ch in "ob":
            if ch == "o":
                out |= {(x + k, y) for k in range(n)}
            x += n
    return out


def test_cellwar_hotseat_turn(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    answers: list[dict] = []  # the valid_actions frames the seats' streams received
    page.on(
        "websocket",
        lambda ws: ws.on(
            "framereceived",
            lambda payload: answers.append(json.loads(payload)) if '"valid_actions"' in payload else None,
        ),
    )
    page.goto(live_url + "/")
    page.get_by_test_id("mode-cellwar").click()
    page.get_by_test_id("cw-width").fill(str(SIZE))
    page.get_by_test_id("cw-height").fill(str(SIZE))
    page.get_by_test_id("cw-players").select_option("2")
    page.get_by_test_id("cw-mode").select_option("hotseat")
    shot(page, "cellwar-01-setup-dark")
    page.get_by_test_id("cw-setup-start").click()

    # Hand-over to Red first: nothing of the board is shown before it is accepted.
    expect(page.get_by_test_id("cw-handover")).to_be_visible()
    wait_cw(page, "s.handover && s.shownPid === null && s.turn === 1")
    page.get_by_test_id("cw-handover-accept").click()
    wait_cw(page, "!s.handover && s.shownPid === 1")
    expect(page.get_by_test_id("cw-left")).to_have_text("2")
    expect(page.get_by_test_id("cw-turn")).to_contain_text("Red")

    # End turn too early: the API refuses (UNITS_NOT_DONE), the page says so.
    problems.allowed_status.add(("/end_turn", 409))
    page.get_by_test_id("cw-end-turn").click()
    expect(page.get_by_test_id("modes-toast")).to_contain_text("not acted")
    problems.console[:] = [c for c in problems.console if "409" not in c]

    # Select unit 1 at (0,0): its legal targets are highlighted.
    click_cell(page, 0, 0)
    wait_cw(page, "s.selected === 1 && s.targets.length > 0")
    targets = {(t["dx"], t["dy"]): t["kind"] for t in cw(page)["targets"]}
    assert targets[(0, 0)] == "fortify"
    assert targets[(1, 1)] == "move" and targets[(0, 1)] == "move"
    assert (1, 0) not in targets  # own unit there
    # The legal moves came over the seat's open stream (a frame, no HTTP request).
    asked = [a for a in answers if a["type"] == "valid_actions"]
    assert asked and {(a["dx"], a["dy"]) for a in asked[-1]["actions"]} == set(targets)
    shot(page, "cellwar-02-selected-dark")

    # Move it diagonally to (1,1).
    click_cell(page, 1, 1)
    wait_cw(page, "s.units.some((u) => u.id === 1 && u.x === 1 && u.y === 1 && u.acted) && !s.busy")
    expect(page.get_by_test_id("cw-left")).to_have_text("1")

    # Unit 3 at (1,0) (ids per owner: Red's 2nd unit is 1 * 2 + 1) stays: it becomes a
    # fortification (click the unit itself).
    click_cell(page, 1, 0)
    wait_cw(page, "s.selected === 3 && s.targets.some((t) => t.kind === 'fortify')")
    click_cell(page, 1, 0)
    wait_cw(page, "s.units.some((u) => u.id === 3 && u.type === 'fortification' && u.acted) && !s.busy")
    expect(page.get_by_test_id("cw-left")).to_have_text("0")
    shot(page, "cellwar-03-acted-dark")

    # End the turn: hand-over to Green, the board is covered.
    page.get_by_test_id("cw-end-turn").click()
    wait_cw(page, "s.turn === 2 && s.handover")
    expect(page.get_by_test_id("cw-handover")).to_be_visible()
    expect(page.get_by_test_id("cw-handover-accept")).to_contain_text("Green")
    shot(page, "cellwar-04-handover-dark")
    page.get_by_test_id("cw-handover-accept").click()
    wait_cw(page, "s.shownPid === 2 && !s.handover")

    # Green's view: fog everywhere but around Green's units; no Red unit visible.
    s = cw(page)
    seen = visible_cells(s["visible"], SIZE)
    assert seen == {(x, y) for x in range(5, 8) for y in range(6, 8)}
    assert s["units"] and all(u["owner"] == 2 for u in s["units"])
    expect(page.get_by_test_id("cw-left")).to_have_text("2")
    expect(page.get_by_test_id("cw-player-2")).to_have_class("cw-player p2 acting")
    shot(page, "cellwar-05-green-fog-dark")

    # Park the game, switch to the light theme, continue it.
    page.get_by_test_id("cw-menu").click()
    page.get_by_test_id("pref-theme").select_option("light")
    page.get_by_test_id("mode-cellwar").click()
    shot(page, "cellwar-01-setup-light")
    page.get_by_test_id("cw-continue").click()
    wait_cw(page, "s.shownPid === 2 && !s.handover")
    click_cell(page, 7, 7)
    wait_cw(page, "s.selected === 2 && s.targets.length > 0")  # Green's 1st unit
    shot(page, "cellwar-05-green-fog-light")

    # Green leaves (REST): Red wins; the winner screen offers the replay.
    save = json.loads(page.evaluate("localStorage.getItem('cellwar.cw.v1')"))
    r = httpx.post(
        f"{live_url}/game/{save['gameId']}/leave",
        headers={"Authorization": f"Bearer {save['tokens']['2']}", "Idempotency-Key": "leave-1"},
        timeout=HTTP_TIMEOUT_S,
    )
    assert r.status_code == 200, r.text
    expect(page.get_by_test_id("cw-winner")).to_be_visible()
    expect(page.get_by_test_id("cw-winner-text")).to_contain_text("Red")
    shot(page, "cellwar-06-winner-light")
    page.get_by_test_id("cw-winner-replay").click()
    page.wait_for_function(
        "() => { const s = window.cellwarModes.replay(); return s.shownSeq && s.view.kind === 'cellwar'; }"
    )
    expect(page.get_by_test_id("replay-board-cw")).to_be_visible()
    shot(page, "cellwar-07-replay-light")
    assert problems.all() == []


def test_cellwar_online_share_link(page, browser, live_url, problems) -> None:
    """Online: the creator gets a share link; a second browser opens it and takes seat 2;
    each sees only its own seat (no hand-over screen)."""
    from playwright.sync_api import expect

    page.goto(live_url + "/")
    page.get_by_test_id("mode-cellwar").click()
    page.get_by_test_id("cw-width").fill(str(SIZE))
    page.get_by_test_id("cw-height").fill(str(SIZE))
    page.get_by_test_id("cw-mode").select_option("online")
    page.get_by_test_id("cw-setup-start").click()
    expect(page.get_by_test_id("cw-share")).to_be_visible()
    expect(page.get_by_test_id("cw-turn")).to_contain_text("Waiting for players (1/2)")
    link = page.get_by_test_id("cw-share-link").input_value()
    assert "#cellwar=" in link
    shot(page, "cellwar-08-online-waiting-dark")

    other_ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    try:
        other = other_ctx.new_page()
        other.on("console", lambda m: m.type == "error" and errors.append(m.text))
        other.on("pageerror", lambda e: errors.append(str(e)))
        other.goto(link)
        other.wait_for_function(
            "() => { const s = window.cellwarModes.cellwar(); return s && s.phase === 'playing'; }"
        )
        wait_cw(page, "s.phase === 'playing' && s.shownPid === 1 && !s.handover")
        expect(page.get_by_test_id("cw-share")).to_be_hidden()
        theirs = other.evaluate("window.cellwarModes.cellwar()")
        assert theirs["shownPid"] == 2 and not theirs["handover"]
        assert all(u["owner"] == 2 for u in theirs["units"])
        expect(other.get_by_test_id("cw-turn")).to_contain_text("Red is playing")
        expect(other.get_by_test_id("cw-end-turn")).to_be_disabled()
        expect(page.get_by_test_id("cw-turn")).to_contain_text("Your turn, Red")
        # Red acts; Green's browser gets the turn over its stream.
        for x in (0, 1):
            click_cell(page, x, 0)
            wait_cw(page, f"s.selected === {2 * x + 1} && s.targets.length > 0")  # ids 1, 3
            click_cell(page, x, 0)
            wait_cw(page, f"s.units.some((u) => u.id === {2 * x + 1} && u.acted) && !s.busy")
        page.get_by_test_id("cw-end-turn").click()
        other.wait_for_function("() => window.cellwarModes.cellwar().turn === 2")
        expect(other.get_by_test_id("cw-turn")).to_contain_text("Your turn, Green")
        expect(other.get_by_test_id("cw-left")).to_have_text("2")
    finally:
        other_ctx.close()
    assert errors == []
    assert problems.all() == []
