"""The edge's limits on the real gateway in front of the real stack (docs/security.md):
WebSocket message rate (close 1008) and size (an error frame), the per-address socket cap (429 before
the handshake, by the real client address behind a trusted proxy), security headers on
every answer, and the body read timeout (a body trickled at 10 B/s is cut)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import websockets
from fastapi import FastAPI
from websockets.exceptions import ConnectionClosed, InvalidStatus

from client.sdk import AsyncCellWarClient
from gateway.app import create_app
from gateway.headers import CONTENT_SECURITY_POLICY
from gateway.ws_protocol import deflating_protocol
from services.common.settings import Settings
from tests.api.conftest import TEST_SECRET
from tests.support.serve import serve
from tests.support.trickle import trickled_post

pytestmark = pytest.mark.integration

LIFE = {"width": 20, "height": 20}


@contextlib.asynccontextmanager
async def _gateway(stack, **settings: Any) -> AsyncIterator[tuple[FastAPI, str]]:
    app = create_app(Settings(session_addr=stack.session_target, secret=TEST_SECRET, **settings))
    async with serve(app) as url:
        yield app, url


def _sample(app: FastAPI, name: str, labels: dict[str, str] | None = None) -> float:
    return app.state.metrics.registry.get_sample_value(name, labels or {}) or 0.0


async def _game(url: str) -> str:
    async with AsyncCellWarClient(url, timeout=30) as api:
        return await api.create_game("life", LIFE)


async def _closed_by_server(ws: Any) -> ConnectionClosed:
    """Read until the server closes; the close it sent."""
    with pytest.raises(ConnectionClosed) as info:
        while True:
            await asyncio.wait_for(ws.recv(), 30)
    return info.value


# --------------------------------------------------------------------------- WebSockets


async def test_a_websocket_flood_is_closed_with_1008_after_the_burst(stack):
    async with _gateway(stack) as (app, url):
        game_id = await _game(url)
        async with websockets.connect(url.replace("http", "ws") + f"/game/{game_id}/stream") as ws:
            assert json.loads(await asyncio.wait_for(ws.recv(), 30))["type"] == "view"
            with contextlib.suppress(ConnectionClosed):
                for _ in range(5000):
                    await ws.send("x")
            closed = await _closed_by_server(ws)
        assert closed.rcvd is not None and closed.rcvd.code == 1008
        assert closed.rcvd.reason.startswith("RATE_LIMITED")
        # The route saw the burst (20) and not one frame more; the rest was cut.
        assert _sample(app, "cellwar_ws_inbound_messages_total") == 20
        assert _sample(app, "cellwar_ws_limit_closes_total", {"reason": "RATE_LIMITED"}) == 1


async def test_a_websocket_message_above_the_size_limit_is_answered_and_the_socket_stays(stack):
    async with _gateway(stack, ws_max_message_bytes=1000) as (app, url):
        game_id = await _game(url)
        async with websockets.connect(url.replace("http", "ws") + f"/game/{game_id}/stream") as ws:
            assert json.loads(await asyncio.wait_for(ws.recv(), 30))["type"] == "view"
            await ws.send("y" * 1000)  # at the limit: read (and refused as not JSON)
            await ws.send("y" * 1001)  # above: not read at all
            first = json.loads(await asyncio.wait_for(ws.recv(), 30))
            second = json.loads(await asyncio.wait_for(ws.recv(), 30))
            assert (first["status"], first["error"]["code"]) == (422, "MALFORMED")
            assert second == {
                "type": "error",
                "id": None,
                "status": 413,
                "error": {
                    "code": "PAYLOAD_TOO_LARGE",
                    "message": "a frame of 1001 bytes is above the stream's limit "
                    "(CELLWAR_WS_MAX_MESSAGE_BYTES); send this command over REST",
                },
            }
            await ws.ping()  # still open
        assert _sample(app, "cellwar_ws_inbound_messages_total") == 2
        assert _sample(app, "cellwar_ws_limit_closes_total", {"reason": "PAYLOAD_TOO_LARGE"}) == 0


async def test_the_ticket_stream_has_the_same_limits(stack):
    async with _gateway(stack, ws_message_burst=3) as (app, url):
        async with websockets.connect(url.replace("http", "ws") + "/matchmaking/tickets/t1/stream") as ws:
            # A socket without a ticket token is told so and closed; before that it is
            # policed like any other (the close may come first: either is a close).
            with contextlib.suppress(ConnectionClosed):
                for _ in range(10):
                    await ws.send("z")
            closed = await _closed_by_server(ws)
        assert closed.rcvd is not None and closed.rcvd.code in (1008, 4401)
        assert _sample(app, "cellwar_ws_inbound_messages_total") <= 3


@pytest.mark.parametrize(
    ("level", "extensions"),
    [(1, "permessage-deflate; server_max_window_bits=12; client_max_window_bits=12"), (0, None)],
)
async def test_views_are_deflated_as_configured_or_not_at_all(stack, level, extensions):
    app = create_app(Settings(session_addr=stack.session_target, secret=TEST_SECRET))
    async with serve(app, ws=deflating_protocol(level)) as url:
        game_id = await _game(url)
        async with websockets.connect(url.replace("http", "ws") + f"/game/{game_id}/stream") as ws:
            assert ws.response.headers.get("Sec-WebSocket-Extensions") == extensions
            view = json.loads(await asyncio.wait_for(ws.recv(), 30))
            assert (view["type"], view["view"]["width"]) == ("view", 20)


def test_a_deflate_level_outside_zlibs_is_refused():
    with pytest.raises(ValueError, match="0..9"):
        deflating_protocol(10)
    with pytest.raises(ValueError, match="ws_deflate_level"):
        Settings(secret=TEST_SECRET, ws_deflate_level=-1)


async def test_600_sockets_from_one_address_are_refused_past_the_cap(stack):
    async with _gateway(stack) as (app, url):  # the default cap: 64
        game_id = await _game(url)
        stream = url.replace("http", "ws") + f"/game/{game_id}/stream"
        opened: list[Any] = []
        refused: list[int] = []

        async def attempt() -> None:
            try:
                opened.append(await websockets.connect(stream))
            except InvalidStatus as exc:
                refused.append(exc.response.status_code)
                body = json.loads(exc.response.body)
                assert body["error"]["code"] == "RATE_LIMITED"
                assert exc.response.headers["Retry-After"] == "5"

        try:
            for _ in range(12):
                await asyncio.gather(*(attempt() for _ in range(50)))
            assert (len(opened), len(refused)) == (64, 536)
            assert set(refused) == {429}
            assert _sample(app, "cellwar_ws_refused_total") == 536
            # A socket that closes frees its place.
            await opened.pop().close()
            for _ in range(100):
                if _open_from_loopback(app) < 64:
                    break
                await asyncio.sleep(0.05)
            await attempt()
            assert len(opened) == 64
        finally:
            await asyncio.gather(*(ws.close() for ws in opened), return_exceptions=True)


def _open_from_loopback(app: FastAPI) -> int:
    """Sockets the app's WebSocketLimits counts for 127.0.0.1 now."""
    layer: Any = app.middleware_stack
    while layer is not None and type(layer).__name__ != "WebSocketLimits":
        layer = getattr(layer, "app", None)
    assert layer is not None
    return int(layer.open.get("127.0.0.1", 0))


async def test_the_socket_cap_counts_the_real_client_behind_a_trusted_proxy(stack):
    async with _gateway(stack, trusted_proxies="127.0.0.1", ws_max_per_address=2) as (_, url):
        game_id = await _game(url)
        stream = url.replace("http", "ws") + f"/game/{game_id}/stream"

        def connect(client: str) -> Any:
            return websockets.connect(stream, additional_headers={"X-Forwarded-For": client})

        first = [await connect("198.51.100.1"), await connect("198.51.100.1")]
        try:
            with pytest.raises(InvalidStatus) as info:
                await connect("198.51.100.1")
            assert info.value.response.status_code == 429
            # A spoofed first entry does not move the client out of its count ...
            with pytest.raises(InvalidStatus):
                await connect("203.0.113.7, 198.51.100.1")
            # ... and another client has a cap of its own.
            other = await connect("198.51.100.2")
            await other.close()
        finally:
            for ws in first:
                await ws.close()


# --------------------------------------------------------------------------- headers


SECURITY = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


async def test_every_answer_carries_the_security_headers(stack):
    async with _gateway(stack, create_limit_per_min=1) as (_, url):
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            answers = [
                await http.get("/"),
                await http.get("/js/main.js"),
                await http.get("/healthz"),
                await http.get("/openapi.json"),
                await http.get("/game/no-such-game/state"),
                await http.post("/game/create", json={"kind": "life", "config": LIFE}),
                await http.post("/game/create", json={"kind": "life", "config": LIFE}),
                await http.post("/game/create", content=b"{", headers={"Content-Type": "application/json"}),
            ]
            assert [a.status_code for a in answers] == [200, 200, 200, 200, 404, 201, 429, 429]
            for answer in answers:
                for name, value in SECURITY.items():
                    assert answer.headers.get(name) == value, (answer.url, name)
            # The CSP forbids inline script and framing.
            assert "script-src 'self';" in CONTENT_SECURITY_POLICY
            assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
            # /docs runs Swagger UI's one inline script, allowed by its hash only.
            docs = await http.get("/docs")
            policy = docs.headers["content-security-policy"]
            assert "'sha256-" in policy and "'unsafe-inline'" not in policy.split("style-src")[0]
            assert docs.headers["x-frame-options"] == "DENY"


# --------------------------------------------------------------------------- timeouts


async def test_a_body_trickled_at_10_bytes_a_second_is_cut_at_the_timeout(stack):
    async with _gateway(stack, body_read_timeout_s=1.0) as (_, url):
        port = int(url.rsplit(":", 1)[1])
        body = json.dumps({"kind": "life", "config": LIFE}).encode().ljust(1000)
        async with trickled_post(port, "/game/create", body) as trickle:
            reader = trickle.reader
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
            status_line, *header_lines = head.decode().split("\r\n")
            headers = dict(line.split(": ", 1) for line in header_lines if line)
            answer = await reader.readexactly(int(headers["content-length"]))
            assert status_line.startswith("HTTP/1.1 408")
            assert json.loads(answer)["error"]["code"] == "REQUEST_TIMEOUT"
            assert headers["connection"] == "close"
            # Cut long before the body's end, and the connection is closed.
            assert trickle.sent < len(body)
            assert await asyncio.wait_for(reader.read(), 10) == b""


async def test_a_whole_body_is_not_cut_by_the_timeout(stack):
    async with _gateway(stack, body_read_timeout_s=1.0) as (_, url):
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            created = await http.post("/game/create", json={"kind": "life", "config": LIFE})
            assert created.status_code == 201
