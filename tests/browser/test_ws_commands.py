"""The browser client sends its commands over the seat's open WebSocket stream
(``{"type": "action"|"end_turn", "id", ...}`` frames, docs/api/websocket.md) and falls back
to REST, with the same idempotency key, when no socket is open.

A hot-seat Life game: player 1 draws cells and hands over, player 2 draws; with the
streams open no ``POST /game/{id}/action`` or ``/end_turn`` is made and every command
travels as a frame answered by a ``result`` frame of the same id. With a WebSocket that
never opens (replaced by an init script), the same game is played over REST.
"""

from __future__ import annotations

import json

import pytest

from tests.browser.lifekit import wait_snapshot
from tests.browser.test_hotseat import SIZE, Board, new_hotseat_game

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

#: A WebSocket that never connects: the client must play over REST.
NO_WEBSOCKET = """
window.WebSocket = class {
  static CONNECTING = 0; static OPEN = 1; static CLOSING = 2; static CLOSED = 3;
  constructor() { this.readyState = 0; }
  send() { throw new Error('not open'); }
  close() { this.readyState = 3; }
};
"""


def _traffic(page) -> dict[str, list]:
    """What the page sends: ``posts`` (command URLs by REST), ``sent`` / ``received``
    (frames), ``order`` (``"rest"`` or ``"frame"`` per command, in the order sent)."""
    seen: dict[str, list] = {"posts": [], "sent": [], "received": [], "order": []}

    def on_request(req) -> None:
        if req.method == "POST" and req.url.rstrip("/").rsplit("/", 1)[-1] in ("action", "end_turn"):
            seen["posts"].append(req.url)
            seen["order"].append("rest")

    def on_sent(payload: str) -> None:
        frame = json.loads(payload)
        seen["sent"].append(frame)
        if frame.get("type") in ("action", "end_turn"):
            seen["order"].append("frame")

    def on_socket(ws) -> None:
        ws.on("framesent", on_sent)
        ws.on("framereceived", lambda payload: seen["received"].append(json.loads(payload)))

    page.on("request", on_request)
    page.on("websocket", on_socket)
    return seen


def _play_two_turns(page, live_url: str) -> None:
    from playwright.sync_api import expect

    new_hotseat_game(page, live_url)
    # both seats' streams are open before the first click (hot seat opens one per seat)
    board = Board(page, SIZE)
    for x, y in [(5, 5), (6, 5), (7, 5)]:
        board.click(x, y)
    expect(page.get_by_test_id("budget-1")).to_have_text("97")
    wait_snapshot(page, "!s.pending")
    page.get_by_test_id("btn-done").click()
    page.get_by_test_id("handover-accept").click()
    expect(page.get_by_test_id("screen-game")).to_have_attribute("data-turn", "2")
    wait_snapshot(page, "s.acting === 2 && !s.pending")
    board = Board(page, SIZE)
    for x, y in [(30, 25), (31, 25), (30, 26), (31, 26)]:
        board.click(x, y)
    expect(page.get_by_test_id("budget-2")).to_have_text("96")
    wait_snapshot(page, "!s.pending")


def test_commands_travel_over_the_open_stream(page, live_url, problems) -> None:
    seen = _traffic(page)
    _play_two_turns(page, live_url)
    commands = [f for f in seen["sent"] if f.get("type") in ("action", "end_turn")]
    # a command sent before the seat's socket opened goes by REST; none after that
    order = seen["order"]
    assert "frame" in order and "rest" not in order[order.index("frame"):], order
    assert len(commands) >= 3, commands  # placements (queued cells go as one) and an end_turn
    assert {f["type"] for f in commands} == {"action", "end_turn"}
    ids = [f["id"] for f in commands]
    assert len(set(ids)) == len(ids)
    results = {f["id"]: f for f in seen["received"] if f.get("type") == "result"}
    assert set(ids) <= set(results), set(ids) - set(results)
    assert all(isinstance(results[i]["seq"], int) and results[i]["view"] for i in ids)
    assert not problems.all()


def test_without_a_socket_commands_go_by_rest(page, live_url, problems) -> None:
    page.add_init_script(NO_WEBSOCKET)
    seen = _traffic(page)
    _play_two_turns(page, live_url)
    assert seen["sent"] == []
    actions = [u for u in seen["posts"] if u.endswith("/action")]
    assert len(actions) >= 2, seen["posts"]
    assert any(u.endswith("/end_turn") for u in seen["posts"]), seen["posts"]
