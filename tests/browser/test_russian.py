"""Russian: every screen of the client in Russian shows no untranslated UI string.

The sweep walks the screens a player sees (start, settings, rules, a hot-seat Life game
from placement through the hand-over, the budget message, redraw, the confirmation, the
result with its reason and chart, the replay with its event list and an unknown id, the
online waiting screen, CellWar from the hand-over through a selected unit's help, the
legend, the combat log, Leave's confirmation and the result, the campaign's level list,
a level and its end, quick match and the leaderboard) and on each fails on any Latin
letter in visible text, in a visible element's title, placeholder or aria-label, or in
the options of a visible menu — outside names and patterns (elements marked
``translate="no"``: player and pattern names, game ids, the language menu's "English")
and the rule notation B3/S23 and the name CellWar. Plural forms (Intl.PluralRules) are
checked on a count of 22 (клетки) and the replay's event names.
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.browser.conftest import TIMEOUT_MS, settle
from tests.browser.lifekit import Board, act_as_seat, select_pattern, wait_snapshot, watch

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

LATIN = """() => {
    const allowed = /B3\\/S23|CellWar/g;
    const bad = [];
    const named = (el) => !!el.closest('[translate="no"]');
    const shown = (el) => {
        if (!el.isConnected) return false;
        const st = getComputedStyle(el);
        return st.visibility !== 'hidden' && st.display !== 'none' && el.getClientRects().length > 0;
    };
    const latin = (s) => /[A-Za-z]/.test(String(s).replace(allowed, ''));
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const el = n.parentElement;
        if (!el || ['SCRIPT', 'STYLE', 'OPTION', 'OPTGROUP'].includes(el.tagName)) continue;
        if (named(el) || !shown(el)) continue;
        if (latin(n.textContent)) bad.push(`text: ${n.textContent.trim().slice(0, 90)}`);
    }
    for (const el of document.querySelectorAll('[title], [placeholder], [aria-label]')) {
        if (named(el) || !shown(el)) continue;
        for (const a of ['title', 'placeholder', 'aria-label']) {
            const v = el.getAttribute(a);
            if (v && latin(v)) bad.push(`${a}: ${v.slice(0, 90)}`);
        }
    }
    for (const sel of document.querySelectorAll('select')) {
        if (named(sel) || !shown(sel)) continue;
        for (const o of sel.querySelectorAll('option, optgroup')) {
            if (named(o)) continue;
            const text = o.tagName === 'OPTGROUP' ? o.label : o.textContent;
            if (latin(text)) bad.push(`option: ${text}`);
        }
    }
    return bad;
}"""


class Sweep:
    """Checks screens and remembers which were checked."""

    def __init__(self, page) -> None:
        self.page = page
        self.seen: list[str] = []

    def check(self, screen: str) -> None:
        settle(self.page)  # the screen's fade-in and a frame
        bad = self.page.evaluate(LATIN)
        assert bad == [], f"{screen}: untranslated {bad}"
        self.seen.append(screen)


def test_every_screen_in_russian(browser, live_url, problems) -> None:
    from playwright.sync_api import expect

    ctx = browser.new_context(locale="ru-RU", viewport={"width": 1280, "height": 900})
    try:
        page = ctx.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        watch(page, problems)
        sweep = Sweep(page)
        page.goto(live_url + "/")
        expect(page.get_by_test_id("pref-lang")).to_have_value("ru")
        expect(page.get_by_test_id("mode-quickmatch")).to_be_visible()
        sweep.check("start")

        # Life, hot-seat: settings, rules, placement, the budget message, hand-over.
        page.get_by_test_id("btn-hotseat").click()
        sweep.check("settings")
        page.get_by_test_id("setup-help").click()
        sweep.check("rules")
        page.keyboard.press("Escape")
        page.get_by_test_id("setup-size").select_option("40")
        page.get_by_test_id("setup-budget").fill("26")
        page.get_by_test_id("setup-start").click()
        wait_snapshot(page, "s.phase === 'placement' && s.acting === 1")
        page.get_by_test_id("pattern").wait_for()
        board = Board(page)
        select_pattern(page, "glider")
        board.click(2, 2)
        sweep.check("placement")
        page.get_by_test_id("tool-brush").click()
        for x, y in ((5, 30), (9, 30)):  # 18 more cells: a count of 22 on the HUD
            board.click(x, y)
        page.get_by_test_id("tool-pencil").click()
        board.click(15, 15)
        expect(page.get_by_test_id("cells-1")).to_have_text("24")
        expect(page.get_by_test_id("budget-1")).to_have_text("2")
        board.click(16, 16)
        board.click(17, 17)
        board.click(18, 18)  # budget 0: the message says so
        expect(page.get_by_test_id("toast")).to_be_visible()
        expect(page.get_by_test_id("toast")).to_contain_text("Бюджет исчерпан")
        sweep.check("budget message")
        page.get_by_test_id("toast").click()
        page.get_by_test_id("tool-eraser").click()
        for x, y in ((16, 16), (17, 17), (15, 15), (5, 30)):
            board.click(x, y)
        expect(page.get_by_test_id("cells-1")).to_have_text("22")
        expect(page.locator("#cells-label-1")).to_have_text("клетки")  # 22 клетки, not клеток
        page.get_by_test_id("btn-done").click()
        expect(page.get_by_test_id("handover")).to_be_visible()
        sweep.check("hand-over")
        page.get_by_test_id("handover-accept").click()
        wait_snapshot(page, "s.acting === 2 && !s.handover")
        select_pattern(page, "block")
        board.click(30, 5)
        page.get_by_test_id("btn-done").click()
        wait_snapshot(page, "s.phase !== 'placement'")
        # Paused from outside the page: this board settles by itself, so a click on
        # Pause could land after it did (a refused pause is no failure here).
        if act_as_seat(page, live_url, {"type": "pause"}) == 200:
            wait_snapshot(page, "s.phase === 'paused'")
            sweep.check("simulation")
            page.get_by_test_id("btn-pause").click()  # resume
        wait_snapshot(page, "s.phase === 'redraw' || s.phase === 'finished'")
        if page.evaluate("window.cellwar.snapshot().phase") == "redraw":
            sweep.check("redraw")
            page.get_by_test_id("btn-ready").click()
            expect(page.get_by_test_id("confirm")).to_be_visible()
            sweep.check("confirmation")
            page.get_by_test_id("confirm-yes").click()
        expect(page.get_by_test_id("winner")).to_be_visible()
        page.wait_for_function(
            "() => document.getElementById('winner-reason').dataset.reason"
        )
        sweep.check("result")

        # The replay of that game, then an unknown id.
        page.get_by_test_id("winner-replay").click()
        page.wait_for_function("() => window.cellwarModes.replay().shownSeq")
        expect(page.locator("#replay-events li").first).to_contain_text("Партия создана")
        page.get_by_test_id("replay-event-3").click()  # a moment of the game: "Fork from here"
        expect(page.get_by_test_id("replay-fork")).to_be_enabled()
        sweep.check("replay")
        problems.allowed_status.add(("/events", 404))
        page.get_by_test_id("replay-id").fill("no-such-game")
        page.get_by_test_id("replay-open").click()
        expect(page.get_by_test_id("replay-message")).to_contain_text("Партии")
        sweep.check("replay unknown")
        page.get_by_test_id("replay-menu").click()

        # Online: the waiting screen with the link.
        page.get_by_test_id("btn-online").click()
        sweep.check("online settings")
        page.get_by_test_id("setup-start").click()
        wait_snapshot(page, "s.online && s.phase === 'waiting'")
        sweep.check("online waiting")
        page.get_by_test_id("btn-menu").click()

        # CellWar, hot-seat: hand-over, a selected unit with help, Leave, the result.
        page.get_by_test_id("mode-cellwar").click()
        page.get_by_test_id("cw-width").fill("8")
        page.get_by_test_id("cw-height").fill("8")
        page.get_by_test_id("cw-mode").select_option("hotseat")
        sweep.check("cellwar settings")
        page.get_by_test_id("cw-setup-start").click()
        if page.get_by_test_id("confirm").is_visible():
            page.get_by_test_id("confirm-yes").click()
        expect(page.get_by_test_id("cw-handover")).to_be_visible()
        sweep.check("cellwar hand-over")
        page.get_by_test_id("cw-handover-accept").click()
        box = page.get_by_test_id("cw-board").bounding_box()
        cell = box["width"] / 8
        page.mouse.click(box["x"] + 0.5 * cell, box["y"] + 0.5 * cell)
        page.wait_for_function("() => window.cellwarModes.cellwar().targets.length > 0")
        page.mouse.move(box["x"] + 1.5 * cell, box["y"] + 1.5 * cell)
        expect(page.get_by_test_id("cw-tip")).to_be_visible()
        expect(page.get_by_test_id("cw-legend")).to_be_visible()
        sweep.check("cellwar turn")
        page.mouse.click(box["x"] + 1.5 * cell, box["y"] + 1.5 * cell)  # move: the log says so
        page.wait_for_function("() => document.querySelectorAll('#cw-log li').length > 0")
        sweep.check("cellwar log")
        page.get_by_test_id("cw-leave").click()
        expect(page.get_by_test_id("confirm")).to_be_visible()
        sweep.check("cellwar leave")
        page.get_by_test_id("confirm-yes").click()
        expect(page.get_by_test_id("cw-winner")).to_be_visible()
        page.wait_for_function("() => document.getElementById('cw-winner-reason').dataset.reason")
        sweep.check("cellwar result")
        page.get_by_test_id("cw-winner-replay").click()
        page.wait_for_function("() => window.cellwarModes.replay().view && window.cellwarModes.replay().view.kind === 'cellwar'")
        sweep.check("cellwar replay")
        page.get_by_test_id("replay-menu").click()

        # The campaign: levels, a level, its end.
        if httpx.get(f"{live_url}/campaign/levels", timeout=10).status_code != 404:
            page.get_by_test_id("mode-campaign").click()
            page.get_by_test_id("camp-level-1").wait_for()
            page.get_by_test_id("camp-howto").locator("summary").click()
            sweep.check("campaign levels")
            page.get_by_test_id("camp-level-1").click()
            page.wait_for_function("() => { const s = window.cellwarModes.campaign(); return s && s.phase === 'placement'; }")
            sweep.check("campaign level")
            b = page.get_by_test_id("camp-board").bounding_box()
            c = b["width"] / 20
            page.mouse.click(b["x"] + 9.5 * c, b["y"] + 8.5 * c)  # level 1's solution
            page.wait_for_function("() => window.cellwarModes.campaign().budget === 9")
            page.get_by_test_id("camp-ready").click()
            expect(page.get_by_test_id("camp-end")).to_be_visible()
            sweep.check("campaign end")
            page.get_by_test_id("camp-end-levels").click()
            page.get_by_test_id("camp-levels-back").click()

        # The lobby and a delayed spectator's screen.
        page.get_by_test_id("mode-lobby").click()
        page.wait_for_function(
            "() => window.cellwarModes.lobby().games.length > 0 || !document.getElementById('lobby-message').hidden"
        )
        sweep.check("lobby")
        watch_buttons = page.locator("[data-testid^=lobby-watch-]")
        if watch_buttons.count():
            watch_buttons.first.click()
            expect(page.get_by_test_id("watch-info")).to_be_visible()
            sweep.check("spectator")
            page.get_by_test_id("watch-menu").click()
        page.get_by_test_id("lobby-back").click()

        # Quick match and the leaderboard.
        page.get_by_test_id("mode-quickmatch").click()
        sweep.check("quick match")
        page.get_by_test_id("qm-start").click()
        expect(page.get_by_test_id("qm-wait")).to_be_visible()
        page.wait_for_function("() => document.querySelectorAll('#qm-queue dd').length > 0")
        sweep.check("quick match waiting")
        page.get_by_test_id("qm-cancel").click()
        page.get_by_test_id("qm-back").click()
        page.get_by_test_id("mode-leaderboard").click()
        page.wait_for_function(
            "() => document.querySelectorAll('#lb-rows tr').length > 0 || !document.getElementById('lb-message').hidden"
        )
        sweep.check("leaderboard")
        assert len(sweep.seen) >= 24, sweep.seen
    finally:
        ctx.close()
    problems.console[:] = [c for c in problems.console if "404" not in c]
    problems.bad_status[:] = [b for b in problems.bad_status if not b.startswith("404 GET") or "/events" not in b]
    assert problems.all() == [], json.dumps(problems.all(), ensure_ascii=False)
