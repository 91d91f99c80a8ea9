"""CellWar that people keep playing, against the real stack: the legend, unit counts per
player (only what the shown seat may know), help for the cell under the pointer and the
keyboard cursor (what a target would do), keyboard play, the combat log of what each
seat saw (an attack told to both sides; nothing of what the fog hid), Leave with a
confirmation and the result's reason; a 64×64 board on a phone is readable (zoom, pan to
one's units); the turn timer when the view has a deadline."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest

from tests.browser.conftest import HTTP_TIMEOUT_S, TIMEOUT_MS, doc_shot
from tests.browser.lifekit import watch
from tests.browser.restkit import seed_storage

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def cw(page) -> dict:
    return page.evaluate("window.cellwarModes.cellwar()")


def wait_cw(page, predicate_js: str, timeout: float = TIMEOUT_MS) -> None:
    page.wait_for_function(
        f"() => {{ const s = window.cellwarModes.cellwar(); return !!s && ({predicate_js}); }}",
        timeout=timeout,
    )


def cellwar_game(base: str, width: int, height: int, units: list[dict] | None = None) -> dict:
    """A 2-player CellWar game made over REST, both seats joined; the client's save."""
    config: dict = {"width": width, "height": height, "players": 2, "disconnect_timeout_s": 86400}
    if units:
        config["units"] = units
    with httpx.Client(base_url=base, timeout=HTTP_TIMEOUT_S) as c:
        r = c.post("/game/create", json={"kind": "cellwar", "config": config},
                   headers={"Idempotency-Key": str(uuid.uuid4())})
        assert r.status_code == 201, r.text
        gid = r.json()["game_id"]
        tokens = {}
        for name in ("Red", "Green"):
            seat = c.post(f"/game/{gid}/join", json={"name": name},
                          headers={"Idempotency-Key": str(uuid.uuid4())}).json()
            tokens[str(seat["player_id"])] = seat["player_token"]
    return {"gameId": gid, "tokens": tokens, "config": config, "mode": "hotseat", "accepted": None}


def open_cellwar(page, base: str, save: dict) -> None:
    seed_storage(page, "cellwar.cw.v1", json.dumps(save), save["gameId"])
    page.goto(base + "/")
    page.get_by_test_id("cw-handover-accept").click()
    wait_cw(page, "!s.handover && s.shownPid === s.turn")


def cell_xy(page, x: int, y: int) -> tuple[float, float]:
    box = page.get_by_test_id("cw-board").bounding_box()
    s = cw(page)
    cell = box["width"] / s["width"]
    return box["x"] + (x + 0.5) * cell, box["y"] + (y + 0.5) * cell


def click_cell(page, x: int, y: int) -> None:
    page.mouse.click(*cell_xy(page, x, y))


def log_texts(page) -> list[str]:
    return page.locator("#cw-log li").all_inner_texts()


@pytest.mark.screenshots
def test_legend_counts_help_keyboard_log_attack_and_leave(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    units = [
        {"owner": 1, "type": "infantry", "x": 2, "y": 2},
        {"owner": 1, "type": "infantry", "x": 0, "y": 7},
        {"owner": 2, "type": "infantry", "x": 3, "y": 3},
        {"owner": 2, "type": "infantry", "x": 9, "y": 0},
    ]
    save = cellwar_game(live_url, 10, 8, units)
    open_cellwar(page, live_url, save)

    # The legend: three unit types, four kinds of targets, the fog.
    expect(page.locator("#cw-legend-list li")).to_have_count(8)
    expect(page.get_by_test_id("cw-legend")).to_contain_text("Fortification")
    # Counts: Red knows its own units; Green's are hidden by the fog.
    expect(page.get_by_test_id("cw-units-1")).to_have_attribute("data-units", "2")
    expect(page.get_by_test_id("cw-units-1")).to_have_text("2 units")
    expect(page.get_by_test_id("cw-units-2")).to_have_attribute("data-units", "")

    # Help under the pointer: our unit, then (selected) what each target does.
    page.mouse.move(*cell_xy(page, 2, 2))
    expect(page.get_by_test_id("cw-tip")).to_contain_text("(2, 2) your infantry")
    click_cell(page, 2, 2)
    wait_cw(page, "s.selected !== null && s.targets.length > 0")
    kinds = {(t["dx"], t["dy"]): t["kind"] for t in cw(page)["targets"]}
    assert kinds[(1, 1)] == "attack" and kinds[(0, 0)] == "fortify" and kinds[(-1, 0)] == "move"
    page.mouse.move(*cell_xy(page, 3, 3))
    expect(page.get_by_test_id("cw-tip")).to_contain_text("Attack Green's infantry")
    page.mouse.move(*cell_xy(page, 1, 2))
    expect(page.get_by_test_id("cw-tip")).to_contain_text("Move here")
    doc_shot(page, "cellwar")

    # The attack, by the keyboard: the cursor starts on the selected unit's cell.
    page.get_by_test_id("cw-zoom-out").focus()
    page.keyboard.press("Shift+Tab")  # back to the board, from the keyboard
    assert page.evaluate("document.activeElement.id") == "cw-board"
    page.keyboard.press("Escape")  # drops the selection
    wait_cw(page, "s.cursor !== null")
    assert cw(page)["cursor"] == [2, 2]
    wait_cw(page, "s.selected === null")
    page.keyboard.press("Enter")  # selects the unit under the cursor
    wait_cw(page, "s.selected !== null && s.targets.length > 0")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    expect(page.get_by_test_id("cw-hint")).to_contain_text("(3, 3) Attack")
    page.keyboard.press("Enter")
    wait_cw(page, "s.units.some((u) => u.x === 3 && u.y === 3 && u.owner === 1) && !s.busy")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#cw-log li')].some((li) => li.textContent.includes('attacked'))"
    )
    assert any("Your infantry attacked the infantry at (3, 3)" in t for t in log_texts(page))
    expect(page.get_by_test_id("sr-status")).not_to_be_empty()

    # The other unit digs in (a click on itself); end the turn.
    click_cell(page, 0, 7)
    wait_cw(page, "s.targets.some((t) => t.kind === 'fortify')")
    click_cell(page, 0, 7)
    wait_cw(page, "s.units.some((u) => u.x === 0 && u.y === 7 && u.type === 'fortification') && !s.busy")
    page.get_by_test_id("cw-end-turn").click()
    wait_cw(page, "s.turn === 2 && s.handover")
    page.get_by_test_id("cw-handover-accept").click()
    wait_cw(page, "s.shownPid === 2 && !s.handover")

    # Green's log: it saw Red's attack on its unit (the cell was in its sight), and
    # nothing of Red's far unit digging in (fogged); Green has one unit left.
    page.wait_for_function(
        "() => [...document.querySelectorAll('#cw-log li')].some((li) => li.textContent.includes('attacked your'))"
    )
    texts = log_texts(page)
    assert any("Red attacked your infantry at (3, 3)" in t for t in texts), texts
    assert not any("(0, 7)" in t for t in texts), texts
    assert any("Red ended the turn" in t for t in texts), texts
    expect(page.get_by_test_id("cw-units-2")).to_have_attribute("data-units", "1")
    expect(page.get_by_test_id("cw-units-1")).to_have_attribute("data-units", "")

    # Leave, confirmed: Red wins because Green left.
    page.get_by_test_id("cw-leave").click()
    expect(page.get_by_test_id("confirm")).to_be_visible()
    expect(page.locator("#confirm-text")).to_contain_text("Green")
    page.get_by_test_id("confirm-no").click()
    assert cw(page)["phase"] == "playing"
    page.get_by_test_id("cw-leave").click()
    page.get_by_test_id("confirm-yes").click()
    expect(page.get_by_test_id("cw-winner")).to_be_visible()
    expect(page.get_by_test_id("cw-winner-text")).to_contain_text("Red")
    expect(page.get_by_test_id("cw-winner-reason")).to_have_attribute("data-reason", "left")
    # At the end the winner's seat is shown with what it saw, and nobody reads "disconnected"
    # (a hot-seat game's seats share one device).
    wait_cw(page, "s.shownPid === 1")
    page.wait_for_function("() => document.querySelectorAll('#cw-log li').length > 0")
    texts = log_texts(page)
    assert texts[0] == "Red wins" and "Green left the game" in texts, texts
    # its own actions in words, from its views before them (js/cellwar/log.js)
    assert "Your infantry attacked the infantry at (3, 3)" in texts, texts
    assert page.locator("#cw-players-list li.disconnected").count() == 0
    assert "disconnected" not in page.locator("#cw-players-list").inner_text()
    assert problems.all() == []


def test_big_board_on_a_phone_zooms_and_pans(browser, live_url, problems) -> None:
    from playwright.sync_api import expect

    save = cellwar_game(live_url, 64, 64)  # default start: Red in the top-left corner
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        page = ctx.new_page()
        watch(page, problems)
        open_cellwar(page, live_url, save)
        wait_cw(page, "s.cellPx >= 14")  # readable cells, not 64 squeezed into 378 px
        s = cw(page)
        own = [u for u in s["units"] if u["owner"] == 1]
        assert own
        # The screen scrolled to Red's units: the first one is on screen and tappable.
        u = own[0]
        x, y = cell_xy(page, u["x"], u["y"])
        scroller = page.get_by_test_id("cw-scroll").bounding_box()
        assert scroller["x"] <= x <= scroller["x"] + scroller["width"]
        assert scroller["y"] <= y <= scroller["y"] + scroller["height"]
        page.touchscreen.tap(x, y)
        wait_cw(page, f"s.selected === {u['id']} && s.targets.length > 0")
        # Zoom in, out, and the whole board.
        px = cw(page)["cellPx"]
        page.get_by_test_id("cw-zoom-in").tap()
        wait_cw(page, f"s.cellPx > {px}")
        page.get_by_test_id("cw-zoom-fit").tap()
        wait_cw(page, "s.cellPx < 8")
        box = page.get_by_test_id("cw-board").bounding_box()
        assert box["width"] <= 390
        page.get_by_test_id("cw-zoom-in").tap()
        wait_cw(page, "s.cellPx > 7")
        expect(page.get_by_test_id("cw-board")).to_be_visible()
    finally:
        ctx.close()
    assert problems.all() == []


@pytest.mark.parametrize("form", ["epoch", "iso"])
def test_turn_timer_counts_down_when_the_view_has_a_deadline(page, live_url, problems, form) -> None:
    """The view's `turn_deadline` (docs/playing.md "Turn timers"; ISO time or epoch seconds)
    is added to every view here, over REST and the WebSocket, until the matchmaking team's
    session sends it itself."""
    from playwright.sync_api import expect

    started = time.time()
    deadline = started + 600
    value: float | str = deadline if form == "epoch" else time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(deadline)
    )

    def add_deadline(view: dict) -> dict:
        if view.get("phase") == "playing":
            view["turn_deadline"] = value
        return view

    def on_state(route) -> None:
        resp = route.fetch()
        route.fulfill(response=resp, json=add_deadline(resp.json()))

    def on_socket(ws) -> None:
        server = ws.connect_to_server()

        def down(message) -> None:
            msg = json.loads(message)
            if isinstance(msg.get("view"), dict):
                add_deadline(msg["view"])
            ws.send(json.dumps(msg))

        server.on_message(down)

    page.route("**/state", on_state)
    page.route_web_socket("**/stream*", on_socket)
    save = cellwar_game(live_url, 8, 8)
    open_cellwar(page, live_url, save)
    timer = page.get_by_test_id("cw-timer")
    expect(timer).to_be_visible()
    left = int(timer.get_attribute("data-left"))
    # The seconds to the deadline (the ISO form has whole seconds), however long the
    # page took to show it.
    assert 600 - (time.time() - started) - 2 <= left <= 601, left
    expect(timer).to_contain_text(":")
    page.wait_for_function(
        f"() => Number(document.getElementById('cw-timer').dataset.left) < {left}"
    )
    assert problems.all() == []
