"""The browser client under the platform's Content-Security-Policy (gateway/headers.py,
docs/security.md): the page and its files carry the security headers, the main screens
(start, hot-seat placement, every mode's first screen, a CellWar game over the stream)
raise no console error and no CSP violation, and the policy is really enforced (an
inline script injected into the page does not run)."""

from __future__ import annotations

import pytest

from gateway.headers import CONTENT_SECURITY_POLICY
from tests.browser.lifekit import wait_snapshot
from tests.browser.test_cellwar_play import cellwar_game, open_cellwar

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

#: Records every CSP violation of the page in window.__cspViolations (before any script).
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
});
"""

MODES = ("btn-online", "mode-cellwar", "mode-campaign", "mode-replay", "mode-lobby")


def violations(page) -> list[str]:
    return page.evaluate("window.__cspViolations")


def test_the_main_screens_run_under_the_csp_without_a_console_error(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    page.add_init_script(RECORD_VIOLATIONS)
    answer = page.goto(live_url + "/")
    assert answer is not None
    headers = answer.headers
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    page.wait_for_function("() => !document.querySelector('#screen-start .menu').inert")

    # Every mode's first screen, each from a fresh start screen.
    for mode in MODES:
        page.evaluate("localStorage.clear()")
        page.goto(live_url + "/")
        page.wait_for_function("() => !document.querySelector('#screen-start .menu').inert")
        page.get_by_test_id(mode).click()
        expect(page.get_by_test_id("screen-start")).to_be_hidden()
        page.wait_for_load_state("networkidle")
        assert violations(page) == [], mode

    # Hot seat: setup, then the placement board.
    page.evaluate("localStorage.clear()")
    page.goto(live_url + "/")
    page.get_by_test_id("btn-hotseat").click()
    page.get_by_test_id("setup-start").click()
    wait_snapshot(page, "s.phase === 'placement'")
    assert violations(page) == []

    # A CellWar game over REST and the stream (WebSocket: connect-src 'self').
    page.evaluate("localStorage.clear()")
    save = cellwar_game(live_url, 8, 8)
    open_cellwar(page, live_url, save)
    page.wait_for_load_state("networkidle")
    assert violations(page) == []
    # This test's own navigations cut fetches still in flight (net::ERR_ABORTED).
    problems.failed = [f for f in problems.failed if not f.endswith("net::ERR_ABORTED")]
    assert problems.all() == []

    # The policy is enforced: an injected inline script is refused and reported.
    ran = page.evaluate(
        """() => { const s = document.createElement('script');
                   s.textContent = 'window.__inlineRan = true;';
                   document.head.appendChild(s); return window.__inlineRan === true; }"""
    )
    assert ran is False
    page.wait_for_function("() => window.__cspViolations.length > 0")
    assert violations(page)[0].startswith("script-src")
