"""The lobby's "Watch" of a running CellWar game whose creator did not allow live
spectators (the default, docs/spectators.md): the server refuses the stream (close 4409,
``SPECTATORS_AFTER_END``) and the screen says, in the reader's language, that spectators
may watch once the game has ended; no board and no unit is drawn."""

from __future__ import annotations

import pytest

from tests.browser.test_fork_watch import duel

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

TEXTS = {
    "en": "Spectators may watch once the game has ended: its players play under fog of war.",
    "ru": "Зрители смогут посмотреть партию, когда она закончится: игроки играют в тумане войны.",
}


@pytest.mark.parametrize("locale", ["en", "ru"])
def test_watching_a_fog_game_says_spectators_may_watch_once_it_has_ended(
    browser, live_url, problems, locale
) -> None:
    from playwright.sync_api import expect

    from tests.browser.conftest import TIMEOUT_MS
    from tests.browser.lifekit import watch

    gid, _ = duel(live_url, p2_x=7)
    ctx = browser.new_context(locale=f"{locale}-{'RU' if locale == 'ru' else 'US'}")
    try:
        page = ctx.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        watch(page, problems)
        page.goto(live_url + "/")
        page.get_by_test_id("mode-lobby").click()
        expect(page.get_by_test_id(f"lobby-game-{gid}")).to_be_visible()
        page.get_by_test_id(f"lobby-watch-{gid}").click()
        expect(page.get_by_test_id("watch-message")).to_have_text(TEXTS[locale])
        seen = page.evaluate("window.cellwarModes.watch()")
        assert seen["refused"] == "SPECTATORS_AFTER_END"
        assert seen["frames"] == 0 and seen["view"] is None
        expect(page.get_by_test_id("watch-board-cw")).to_be_hidden()
        page.get_by_test_id("watch-menu").click()
        expect(page.get_by_test_id("screen-lobby")).to_be_visible()
    finally:
        ctx.close()
    assert problems.all() == []
