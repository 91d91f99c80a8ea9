"""Computer players from the browser (docs/bot-seats.md), on the real stack with its bot
runner (tests/browser/conftest.py): "Add a bot" on a waiting online Life game and on a
waiting online CellWar game brings bots that join through the public API and play to
the end; quick match's "Play the computer" opens a game against one at once."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.browser.conftest import HTTP_TIMEOUT_S, TIMEOUT_MS
from tests.browser.lifekit import new_game, snapshot, wait_snapshot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]


def _wait_cw(page, predicate_js: str, timeout: float = TIMEOUT_MS) -> None:
    page.wait_for_function(
        f"() => {{ const s = window.cellwarModes.cellwar(); return !!s && ({predicate_js}); }}",
        timeout=timeout,
    )


def _events(base: str, game_id: str, token: str | None = None) -> list[dict]:
    """The game's log (a finished game's reads without a token)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=base, timeout=HTTP_TIMEOUT_S) as c:
        answer = c.get(f"/game/{game_id}/events", headers=headers)
        assert answer.status_code == 200, answer.text
        return answer.json()["events"]


def _moves_of(events: list[dict], seat: int) -> list[dict]:
    return [e for e in events if e["actor"] == seat and e["type"] in ("ActionApplied", "TurnEnded")]


def test_add_a_bot_to_an_online_life_game_plays_it_to_the_end(page, live_url, problems) -> None:
    """2 players, budget 10: the person ends the first turn with nothing drawn, the bot
    places its figures, and the person's colour dies out in the first generation: the
    bot wins, seen in the browser."""
    from playwright.sync_api import expect

    new_game(page, live_url, mode="online", size="40", budget=10, players=2)
    bots = page.get_by_test_id("online-bots")
    expect(bots).to_be_visible()
    options = page.get_by_test_id("online-bots-policy").locator("option")
    assert options.evaluate_all("(os) => os.map((o) => o.value)") == ["heuristic", "random"]
    button = bots.get_by_test_id("add-bot")
    expect(button).to_have_count(1)
    expect(button).to_have_text("Add a bot")
    button.click()
    wait_snapshot(page, "s.phase === 'placement' && s.acting === 1")
    expect(bots).to_be_hidden()
    game_id = snapshot(page)["gameId"]
    page.get_by_test_id("btn-done").click()
    wait_snapshot(page, "s.phase === 'finished'", timeout=2 * TIMEOUT_MS)
    s = snapshot(page)
    assert s["winner"] == 2 and s["result"] == "win", s
    events = _events(live_url, game_id)
    assert [e["actor"] for e in events if e["type"] == "PlayerJoined"] == [1, 2]
    assert any(e["type"] == "ActionApplied" for e in _moves_of(events, 2)), [e["type"] for e in events]
    assert problems.all() == []


def test_add_bots_to_an_online_cellwar_game_they_play_it_to_the_end(page, live_url, problems) -> None:
    """3 players on 8×8: the person adds the trained bot to seat 2 and the heuristic one
    to seat 3 (a button per free seat), leaves once the game starts, and the two bots
    play the game to its end."""
    from playwright.sync_api import expect

    page.goto(live_url + "/")
    page.get_by_test_id("mode-cellwar").click()
    page.get_by_test_id("cw-width").fill("8")
    page.get_by_test_id("cw-height").fill("8")
    page.get_by_test_id("cw-players").select_option("3")
    page.get_by_test_id("cw-mode").select_option("online")
    page.get_by_test_id("cw-setup-start").click()
    bots = page.get_by_test_id("cw-bots")
    expect(bots).to_be_visible()
    buttons = bots.get_by_test_id("add-bot")
    expect(buttons).to_have_count(2)
    expect(buttons.first).to_have_text("Add a bot to seat 2")
    policy = page.get_by_test_id("cw-bots-policy")
    assert policy.locator("option").evaluate_all("(os) => os.map((o) => o.value)") == [
        "trained", "heuristic", "search", "random",
    ]
    policy.select_option("trained")
    buttons.first.click()
    expect(buttons).to_have_count(1)  # seat 2 taken: one button left, for seat 3
    expect(buttons.first).to_have_text("Add a bot")
    page.get_by_test_id("cw-bots-policy").select_option("heuristic")
    buttons.first.click()
    _wait_cw(page, "s.phase === 'playing'")
    expect(bots).to_be_hidden()
    save = json.loads(page.evaluate("localStorage.getItem('cellwar.cw.v1')"))
    game_id, token = save["gameId"], save["tokens"]["1"]
    _wait_cw(page, "s.turn === 1 && !s.busy")
    page.get_by_test_id("cw-leave").click()
    page.get_by_test_id("confirm-yes").click()
    with httpx.Client(base_url=live_url, timeout=HTTP_TIMEOUT_S) as c:
        state = {}
        for _ in range(1200):  # the bots play on (at most about two minutes)
            state = c.get(f"/game/{game_id}/state", headers={"Authorization": f"Bearer {token}"}).json()
            if state.get("phase") == "finished":
                break
            page.wait_for_timeout(100)
    assert state.get("phase") == "finished" and state.get("winner") in (2, 3), state
    events = _events(live_url, game_id, token)
    names = {e["actor"]: e["payload"].get("name") for e in events if e["type"] == "PlayerJoined"}
    assert names == {1: names[1], 2: "bot-trained", 3: "bot-heuristic"}
    assert _moves_of(events, 2) and _moves_of(events, 3)
    assert events[-1]["type"] == "GameFinished"
    assert problems.all() == []


def test_quick_match_plays_the_computer(page, live_url, problems) -> None:
    """"Play the computer" creates an online CellWar game, adds the trained bot and opens
    the game: the person's turn comes at once, no waiting for anyone."""
    from playwright.sync_api import expect

    page.goto(live_url + "/")
    page.get_by_test_id("mode-quickmatch").click()
    page.get_by_test_id("qm-kind").select_option("cellwar")
    page.get_by_test_id("qm-players").select_option("2")
    expect(page.get_by_test_id("qm-computer")).to_have_text("Play the computer")
    page.get_by_test_id("qm-computer").click()
    _wait_cw(page, "s.phase === 'playing' && s.turn === 1")
    expect(page.get_by_test_id("cw-turn")).to_contain_text("Your turn")
    save = json.loads(page.evaluate("localStorage.getItem('cellwar.cw.v1')"))
    events = _events(live_url, save["gameId"], save["tokens"]["1"])
    names = [e["payload"].get("name") for e in events if e["type"] == "PlayerJoined"]
    assert names[1] == "bot-trained", names
    assert problems.all() == []


def test_add_a_bot_speaks_russian(browser, live_url, problems) -> None:
    """The same controls in Russian: the label, the button and the policies' names."""
    from playwright.sync_api import expect

    from tests.browser.lifekit import watch

    ctx = browser.new_context(locale="ru-RU", viewport={"width": 1280, "height": 900})
    try:
        page = ctx.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        watch(page, problems)
        new_game(page, live_url, mode="online", size="40", budget=10, players=4)
        bots = page.get_by_test_id("online-bots")
        expect(bots).to_contain_text("Компьютерный игрок:")
        buttons = bots.get_by_test_id("add-bot")
        expect(buttons).to_have_count(3)
        expect(buttons.first).to_have_text("Добавить бота на место 2")
        names = page.get_by_test_id("online-bots-policy").locator("option").all_inner_texts()
        assert names == ["Эвристический", "Случайный (самый лёгкий)"]
        buttons.first.click()
        expect(buttons).to_have_count(2)
        expect(buttons.first).to_have_text("Добавить бота на место 3")
    finally:
        ctx.close()
    assert problems.all() == []
