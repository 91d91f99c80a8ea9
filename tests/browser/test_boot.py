"""Loading the client on a slow or failing network: the start screen is part of the page
itself, so it shows while the client's scripts are still on their way (its controls wait,
inert, until they are wired); a script that cannot be loaded gets a message on the start
screen and a few reloads, never a blank page."""

from __future__ import annotations

import time

import pytest

from tests.browser.conftest import TIMEOUT_MS

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


def test_start_screen_shows_while_the_client_loads(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    held = []
    page.route("**/js/main.js", lambda route: held.append(route))  # the entry, held back
    page.goto(live_url + "/", wait_until="commit")
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not held:  # the browser asked for main.js: the page is parsed
        assert time.monotonic() < deadline, "main.js was never requested"
        page.wait_for_timeout(20)
    start = page.get_by_test_id("screen-start")
    expect(start).to_be_visible()
    expect(page.get_by_test_id("btn-hotseat")).to_be_visible()
    # Not wired yet: inert (a click would do nothing), and shown as waiting.
    assert page.evaluate("document.querySelector('#screen-start .menu').inert") is True

    held[0].continue_()
    page.wait_for_function("() => !document.querySelector('#screen-start .menu').inert")
    page.get_by_test_id("btn-hotseat").click()
    expect(page.get_by_test_id("screen-setup")).to_be_visible()
    expect(start).to_be_hidden()
    assert problems.all() == []


def test_a_script_that_cannot_load_is_said_and_retried(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    requests = []
    page.on("request", lambda r: r.url.endswith("/js/rle.js") and requests.append(r.url))
    page.route("**/js/rle.js", lambda route: route.abort())  # imported by main.js's modules
    page.goto(live_url + "/")
    status = page.get_by_test_id("boot-status")
    expect(page.get_by_test_id("screen-start")).to_be_visible()
    expect(status).to_contain_text("Could not load the game")
    # Three reloads (1, 2, 3 s apart), then the message stays.
    expect(status).to_have_text(
        "Could not load the game. Check the connection and reload the page.",
        timeout=TIMEOUT_MS + 6_000,
    )
    assert len(requests) == 4, requests
    expect(page.get_by_test_id("screen-start")).to_be_visible()
    assert page.evaluate("document.querySelector('#screen-start .menu').inert") is True

    # The network is back: a reload starts the client (and forgets the failed tries).
    page.unroute("**/js/rle.js")
    page.reload()
    expect(status).to_be_hidden()
    page.wait_for_function("() => !document.querySelector('#screen-start .menu').inert")
    assert page.evaluate("sessionStorage.getItem('cellwar.boot.retries')") is None
    # rle.js failed on purpose; the client's own reloads cut the other module fetches
    # still in flight (net::ERR_ABORTED of /js/*.js, depending on timing).
    problems.failed = [
        f for f in problems.failed
        if "/js/rle.js" not in f and not ("/js/" in f and f.endswith("net::ERR_ABORTED"))
    ]
    problems.console[:] = [c for c in problems.console if "net::ERR_FAILED" not in c]
    assert problems.all() == []
