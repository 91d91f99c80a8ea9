"""Every machine code the server answers has a text in English and in Russian
(client/web/js/errors-i18n.js, i18n.js, modes-i18n.js), and a refused no-op
(``NO_CHANGE``) reads as a calm notice in the player's language, not as a raw code."""

from __future__ import annotations

import pytest

from cellwar.v1.codes import ErrorCode
from gateway.errors import Code as GatewayCode
from tests.browser.conftest import TIMEOUT_MS
from tests.browser.lifekit import new_game, wait_snapshot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]

#: Codes of the gateway's own answers (gateway/errors.py), and its fallback for an HTTP
#: error of no known status.
GATEWAY_CODES = [c.value for c in GatewayCode] + ["ERROR"]

TEXTS = """async (codes) => {
    const i18n = await import('/js/i18n.js');
    await import('/js/modes-i18n.js');
    const { apiErrorText } = await import('/js/screens/dialogs.js');
    const out = {};
    for (const lang of ['en', 'ru']) {
        i18n.setLang(lang);
        out[lang] = Object.fromEntries(codes.map((code) => [code,
            apiErrorText({ code, status: 409, message: 'сообщение' })]));
    }
    i18n.setLang('en');
    return out;
}"""


def test_every_error_code_has_a_text_in_both_languages(page, live_url, problems) -> None:
    codes = sorted({c.value for c in ErrorCode} | set(GATEWAY_CODES))
    page.goto(live_url + "/")
    texts = page.evaluate(TEXTS, codes)
    for code in codes:
        en, ru = texts["en"][code], texts["ru"][code]
        # No fallback "Error: CODE: message": the code has its own words.
        assert code not in en and code not in ru, (code, en, ru)
        assert en != ru, (code, en)
        assert not any("a" <= ch.lower() <= "z" for ch in ru), (code, ru)
    assert texts["ru"]["NO_CHANGE"] == "Нечего делать: это ничего не изменит."
    assert problems.all() == []


def test_no_op_command_is_a_notice_in_russian(browser, live_url, problems) -> None:
    """"Reset turn" with nothing drawn: the server refuses it (409 NO_CHANGE) and the
    player reads why, in Russian, as a notice; the game is unchanged."""
    from playwright.sync_api import expect

    from tests.browser.lifekit import watch

    ctx = browser.new_context(locale="ru-RU", viewport={"width": 1280, "height": 900})
    try:
        page = ctx.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        watch(page, problems)
        new_game(page, live_url, size="40", budget=10)
        page.get_by_test_id("btn-reset").click()
        toast = page.get_by_test_id("toast")
        expect(toast).to_be_visible()
        expect(toast).to_have_text("Нечего делать: это ничего не изменит.")
        expect(toast).to_have_attribute("data-kind", "info")
        wait_snapshot(page, "s.phase === 'placement' && s.acting === 1 && !s.pending")
        expect(page.get_by_test_id("budget-1")).to_have_text("10")
    finally:
        ctx.close()
    # The one refusal: an error frame over the seat's open stream (no HTTP answer), or,
    # when the socket was not open yet, a REST answer (the answer and its console line).
    assert len(problems.bad_status) <= 1, problems
    if problems.bad_status:
        assert "409 POST" in problems.bad_status[0] and "/action" in problems.bad_status[0]
    problems.bad_status.clear()
    problems.console[:] = [c for c in problems.console if "status of 409" not in c]
    assert problems.all() == []
