"""Browser test fixtures: the whole stack (real NATS, engine + session in-process, the
gateway on a free port) and a headless system Chromium driven by Playwright.

The stack and the gateway run on their own event loop in a background thread, so the
tests can use Playwright's sync API. ``CELLWAR_BROWSER_BASE_URL`` points the tests at an
already running deployment instead (no stack is started then).

Chromium: ``/usr/bin/chromium`` (Debian package ``chromium``) or ``CELLWAR_CHROMIUM``;
the tests skip when it is missing. Playwright never downloads a browser here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CELLWAR_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
#: Life tick rate of the test stack (generations/s before the speed multiplier).
GENERATIONS_PER_SECOND = 200.0
#: How long a browser test waits for anything (ms): Playwright actions and navigations,
#: ``expect`` assertions, ``wait_for_function``. Generous, because the suite runs on a
#: loaded 2-core machine (CI, other engineers' work, the stack in this very process):
#: a deadline only costs time when something is really wrong.
TIMEOUT_MS = 30_000
#: Seconds a test's own HTTP request to the stack may take.
HTTP_TIMEOUT_S = 60.0
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """The system Chromium; skips the test when it is not installed."""
    if not Path(CHROMIUM).exists():
        pytest.skip(
            f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set CELLWAR_CHROMIUM)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("Python package playwright is not installed")
    return CHROMIUM


@pytest.fixture(scope="package")
def live_url(
    request: pytest.FixtureRequest, chromium_path: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """Base URL of a running CellWar (gateway serving client/web at "/").

    The stack gets a NATS of its own (a fresh ``nats-server`` subprocess) unless
    ``CELLWAR_TEST_NATS_URL`` names one: on the suite's shared server, its session would
    rebuild and tick every unfinished game the earlier tests left running (never-ending
    torus gliders, a Gosper gun), and the CPU they take makes timing in the browser flaky.
    """
    external = os.environ.get("CELLWAR_BROWSER_BASE_URL")
    if external:
        yield external.rstrip("/")
        return
    try:
        import gateway.app  # noqa: F401
        import tests.support.stack  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"stack not importable yet: {exc}")
    from tests.support.threaded import ThreadedStack

    own_nats = None
    if os.environ.get("CELLWAR_TEST_NATS_URL"):
        nats_url = request.getfixturevalue("nats_url")
    else:
        from tests.support.nats import NatsProcess

        own_nats = NatsProcess(tmp_path_factory.mktemp("browser-nats")).start()
        nats_url = own_nats.url
    # Every browser test of the package shares this gateway from 127.0.0.1: the
    # per-address create/join windows (30 and 60 a minute) would refuse the suite's later
    # games. The limits have tests of their own (tests/api).
    server = ThreadedStack(
        nats_url,
        generations_per_second=GENERATIONS_PER_SECOND,
        gateway={"create_limit_per_min": 0, "join_limit_per_min": 0},
        name="cellwar-live-server",
        # The bot runner of "Add a bot" (docs/bot-seats.md), as make run starts it.
        bots={"max_seats": 8},
    )
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
        if own_nats is not None:
            own_nats.stop()


@pytest.fixture(scope="package")
def browser(chromium_path: str):
    """Headless system Chromium, for the browser tests only: torn down after them, because
    Playwright's sync API keeps an event loop running that would break async tests."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


#: Background requests of a page that a navigation may cut (ERR_ABORTED) without harm:
#: the matchmaking feature check of the start screen.
PROBES = ("/openapi.json", "/matchmaking/queues")


@dataclass
class Problems:
    """Console errors, page errors, failed requests and HTTP answers >= 400 of a page."""

    console: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    bad_status: list[str] = field(default_factory=list)
    allowed_status: set[tuple[str, int]] = field(default_factory=set)

    def all(self) -> list[str]:
        failed = [
            f for f in self.failed
            if not ("ERR_ABORTED" in f and any(p + ":" in f for p in PROBES))
        ]
        return self.console + self.page_errors + failed + self.bad_status


@pytest.fixture
def problems() -> Problems:
    return Problems()


@pytest.fixture
def page(browser, problems: Problems, request: pytest.FixtureRequest):
    """A fresh page (own context, empty localStorage, 1280×900) that records problems;
    the test asserts ``problems.all() == []``. A screenshot is saved when the test fails."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    p = context.new_page()
    p.set_default_timeout(TIMEOUT_MS)

    def on_console(msg) -> None:
        if msg.type == "error":
            problems.console.append(msg.text)

    def on_response(resp) -> None:
        if resp.status >= 400:
            path = resp.url.split("?")[0]
            if not any(
                path.endswith(suffix) and resp.status == status
                for suffix, status in problems.allowed_status
            ):
                problems.bad_status.append(f"{resp.status} {resp.request.method} {resp.url}")

    p.on("console", on_console)
    p.on("pageerror", lambda exc: problems.page_errors.append(str(exc)))
    p.on(
        "requestfailed",
        lambda req: problems.failed.append(f"{req.method} {req.url}: {req.failure}"),
    )
    p.on("response", on_response)
    yield p
    if getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed:
        shot(p, f"FAILED-{request.node.name}")
    context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


def settle(page) -> None:
    """Wait until the page's animations (the screens' fade-in) have finished and two more
    frames have been drawn: what a screenshot should show."""
    page.wait_for_function(
        "() => document.getAnimations().every((a) => a.playState !== 'running')"
    )
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def shot(page, name: str) -> Path:
    """Save a screenshot to test-artifacts/screenshots/<name>.png (once the screen has
    settled)."""
    settle(page)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


#: Where ``make screenshots`` wants the README's pictures (unset: none are written).
DOC_SCREENSHOTS = os.environ.get("CELLWAR_DOC_SCREENSHOTS", "")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "screenshots: takes a README picture (make screenshots runs these tests)"
    )


def doc_shot(page, name: str) -> Path | None:
    """The README picture ``docs/screenshots/<name>.png`` of what ``page`` shows now,
    when ``make screenshots`` runs the tests (``CELLWAR_DOC_SCREENSHOTS`` names the
    folder); otherwise nothing. Waits for the screens' fade-in and the chart's frame."""
    if not DOC_SCREENSHOTS:
        return None
    folder = Path(DOC_SCREENSHOTS)
    folder.mkdir(parents=True, exist_ok=True)
    settle(page)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    return path
