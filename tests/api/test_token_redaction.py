"""Tokens never reach a log line (docs/hosting.md "Security and limits"): a real
uvicorn with its access log on, every logger at its lowest level, REST calls with
``Authorization`` (and one with a token in the query) and WebSockets authenticated both
ways (``?token=`` and the ``bearer.<token>`` subprotocol); ALL log output (every log
record, and whatever reached stdout/stderr) is searched for the tokens."""

from __future__ import annotations

import json
import logging
from urllib.parse import quote

import httpx
import pytest
import websockets

from client.sdk import AsyncCellWarClient, stream_subprotocols
from gateway.app import create_app
from gateway.redact import REDACTED, redact
from services.common.settings import Settings
from tests.api.conftest import TEST_SECRET, serve

pytestmark = pytest.mark.integration

#: Loggers whose level is lowered for the test (everything they write is captured).
LOUD = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi", "websockets", "websockets.server")


class Capture(logging.Handler):
    """Keeps every record as text: its message, or a structlog event dict as JSON."""

    def __init__(self) -> None:
        super().__init__(level=1)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, dict):
            self.lines.append(json.dumps(record.msg, default=str))
        else:
            self.lines.append(record.getMessage())


def test_redact_keeps_the_name_and_drops_the_value():
    assert redact('1.2.3.4 - "WebSocket /game/g/stream?token=abc.Def-1_x" [accepted]') == (
        f'1.2.3.4 - "WebSocket /game/g/stream?token={REDACTED}" [accepted]'
    )
    assert redact("GET /x?a=1&player_token=t.1.2&b=2") == f"GET /x?a=1&player_token={REDACTED}&b=2"
    assert redact("Authorization: Bearer eyJ.abc.def") == f"Authorization: Bearer {REDACTED}"
    assert redact("Sec-WebSocket-Protocol: cellwar.v1, bearer.eyJ.abc") == (
        f"Sec-WebSocket-Protocol: cellwar.v1, bearer.{REDACTED}"
    )
    assert redact("nothing secret here") == "nothing secret here"


async def test_no_token_reaches_any_log_line(stack, capfd):
    capture = Capture()
    root = logging.getLogger()
    levels = {name: logging.getLogger(name).level for name in LOUD}
    access = logging.getLogger("uvicorn.access")
    propagate = access.propagate  # a server started with access_log=False turned it off
    root.addHandler(capture)  # before create_app, as `python -m gateway` configures logging first
    access.propagate = True
    for name in LOUD:
        logging.getLogger(name).setLevel(1)
    tokens: list[str] = []
    try:
        app = create_app(Settings(session_addr=stack.session_target, secret=TEST_SECRET))
        async with serve(app, access_log=True, log_level="trace") as url, AsyncCellWarClient(
            url, timeout=30
        ) as api, httpx.AsyncClient(base_url=url, timeout=30) as http:
            game_id = await api.create_game("life", {"width": 20, "height": 20})
            alice, bob = await api.join(game_id, "alice"), await api.join(game_id, "bob")
            tokens += [alice.token, bob.token]
            await api.state(game_id, alice.token)
            await api.place(game_id, alice.token, [(1, 1)])
            await http.get(f"/game/{game_id}/state", params={"token": bob.token})  # a token in a REST query
            renewed = await http.post(f"/game/{game_id}/token", headers={"Authorization": f"Bearer {bob.token}"})
            tokens.append(renewed.json()["player_token"])
            ws_url = url.replace("http://", "ws://") + f"/game/{game_id}/stream"
            async with websockets.connect(f"{ws_url}?token={quote(alice.token)}") as old_style:
                assert json.loads(await old_style.recv())["type"] == "view"
            async with websockets.connect(ws_url, subprotocols=stream_subprotocols(bob.token)) as new_style:
                assert new_style.subprotocol == "cellwar.v1"
                assert json.loads(await new_style.recv())["view"]["you"] == bob.player_id
            forged = alice.token[:-4] + "AAAA"
            tokens.append(forged)
            async with websockets.connect(f"{ws_url}?token={quote(forged)}") as refused:
                assert json.loads(await refused.recv())["error"]["code"] == "UNAUTHORIZED"
    finally:
        root.removeHandler(capture)
        access.propagate = propagate
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
    out, err = capfd.readouterr()
    everything = "\n".join([*capture.lines, out, err])
    for token in tokens:
        assert token not in everything
        assert token.rsplit(".", 1)[-1] not in everything  # not even the signature
    # The lines that used to carry them are there, redacted: the test saw real log output.
    assert f"/stream?token={REDACTED}" in everything
    assert f"/state?token={REDACTED}" in everything
    assert '"WebSocket /game/' in everything
    assert f"POST /game/{game_id}/token" in everything
    assert "ASGI [" in everything  # uvicorn's trace of every ASGI message, headers included
