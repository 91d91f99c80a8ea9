"""Helpers of the Life browser tests: board clicks through the canvas, snapshots of
``window.cellwar.snapshot()``, a decoded board, problem recording for extra contexts,
and the pattern library rotated the way the server does (numpy ``rot90``)."""

from __future__ import annotations

import numpy as np

from tests.browser.conftest import HTTP_TIMEOUT_S, TIMEOUT_MS, Problems


def snapshot(page) -> dict:
    return page.evaluate("window.cellwar.snapshot()")


def wait_snapshot(page, predicate_js: str, timeout: float = TIMEOUT_MS) -> None:
    """Wait until ``predicate_js`` (an expression over ``s``, the snapshot) holds."""
    page.wait_for_function(
        f"() => {{ const s = window.cellwar.snapshot(); return !!s && ({predicate_js}); }}",
        timeout=timeout,
    )


def board_cells(page) -> dict[tuple[int, int], int]:
    """The shown board as {(x, y): colour} (live cells only), decoded by the client, once
    every queued stroke has been answered by the server."""
    wait_snapshot(page, "!s.pending")
    return {
        (x, y): c
        for x, y, c in page.evaluate(
            """async () => {
                const { decodeBoard } = await import('/js/rle.js');
                const s = window.cellwar.snapshot();
                const cells = decodeBoard(s.board, s.width, s.height);
                const out = [];
                cells.forEach((c, i) => { if (c) out.push([i % s.width, Math.floor(i / s.width), c]); });
                return out;
            }"""
        )
    }


class Board:
    """Clicks on board cells through the canvas (re-measured on every call)."""

    def __init__(self, page) -> None:
        self.page = page

    def _xy(self, x: int, y: int) -> tuple[float, float]:
        box = self.page.get_by_test_id("board").bounding_box()
        s = snapshot(self.page)
        assert box and box["width"] > 0
        cell = box["width"] / s["width"]
        return box["x"] + (x + 0.5) * cell, box["y"] + (y + 0.5) * cell

    def click(self, x: int, y: int, button: str = "left") -> None:
        self.page.mouse.click(*self._xy(x, y), button=button)

    def move(self, x: int, y: int) -> None:
        self.page.mouse.move(*self._xy(x, y))

    def drag(self, cells: list[tuple[int, int]], button: str = "left") -> None:
        m = self.page.mouse
        m.move(*self._xy(*cells[0]))
        m.down(button=button)
        for x, y in cells[1:]:
            m.move(*self._xy(x, y), steps=2)
        m.up(button=button)


def settled_box(page, test_id: str, frames: int = 3) -> dict:
    """The bounding box of ``[data-testid=test_id]`` once it has not moved for ``frames``
    animation frames (a board is fitted by a ResizeObserver, a frame after a change)."""
    return page.evaluate(
        """([id, frames]) => new Promise((resolve) => {
            let last = null;
            let same = 0;
            const tick = () => {
                const r = document.querySelector(`[data-testid="${id}"]`).getBoundingClientRect();
                const key = [r.x, r.y, r.width, r.height].join();
                same = key === last ? same + 1 : 0;
                last = key;
                if (same >= frames) resolve({ x: r.x, y: r.y, width: r.width, height: r.height });
                else requestAnimationFrame(tick);
            };
            requestAnimationFrame(tick);
        })""",
        [test_id, frames],
    )


def act_as_seat(page, base: str, action: dict, seat: int = 1) -> int:
    """Send ``action`` for ``seat`` of the Life game the page plays (its token read from
    the page's localStorage) from outside the page; the HTTP status. For a step the test
    cannot time against the server (a pause while the board may settle by itself): a
    refusal (409) is then the test's to judge, not an error of the page."""
    import uuid

    import httpx

    game = page.evaluate("JSON.parse(localStorage.getItem('cellwar.v1')).game")
    r = httpx.post(
        f"{base}/game/{game['gameId']}/action",
        json=action,
        headers={
            "Authorization": f"Bearer {game['tokens'][str(seat)]}",
            "Idempotency-Key": str(uuid.uuid4()),
        },
        timeout=HTTP_TIMEOUT_S,
    )
    assert r.status_code in (200, 409), r.text
    return r.status_code


def watch(page, problems: Problems) -> None:
    """Record console errors, page errors, failed requests and HTTP errors of a page of
    an extra browser context (the ``page`` fixture does this itself)."""
    page.on(
        "console", lambda msg: problems.console.append(msg.text) if msg.type == "error" else None
    )
    page.on("pageerror", lambda exc: problems.page_errors.append(str(exc)))
    page.on(
        "requestfailed",
        lambda req: problems.failed.append(f"{req.method} {req.url}: {req.failure}"),
    )
    page.on(
        "response",
        lambda resp: (
            problems.bad_status.append(f"{resp.status} {resp.request.method} {resp.url}")
            if resp.status >= 400
            else None
        ),
    )


def rotated_pattern(pattern_id: str, rotation: int) -> set[tuple[int, int]]:
    """The live cells of a library pattern after ``rotation`` clockwise quarter turns,
    top-left of the live box at (0, 0), as the server computes them."""
    from engine.life import patterns

    board = np.asarray(patterns.get(pattern_id).board) != 0
    rows, cols = np.nonzero(board)
    live = board[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
    turned = np.rot90(live, -rotation)
    ys, xs = np.nonzero(turned)
    return {(int(x), int(y)) for x, y in zip(xs, ys, strict=True)}


def new_game(
    page,
    live_url: str,
    *,
    mode: str = "hotseat",
    size: str = "40",
    budget: int = 100,
    players: int = 2,
    torus: bool = False,
) -> None:
    """Menu → settings → a new game (waits for placement, or 'waiting' online)."""
    page.goto(live_url + "/")
    page.get_by_test_id("btn-online" if mode == "online" else "btn-hotseat").click()
    page.get_by_test_id("setup-size").select_option(size)
    page.get_by_test_id("setup-budget").fill(str(budget))
    page.get_by_test_id("setup-players").select_option(str(players))
    if torus:
        page.get_by_test_id("setup-torus").check()
    page.get_by_test_id("setup-start").click()
    if mode == "online":
        wait_snapshot(page, "s.phase === 'waiting' || s.phase === 'placement'")
    else:
        wait_snapshot(page, "s.phase === 'placement' && s.turn === 1")


def select_pattern(page, pattern_id: str) -> None:
    page.get_by_test_id("pattern").select_option(pattern_id)
    wait_snapshot(page, f"s.pattern === '{pattern_id}'")
