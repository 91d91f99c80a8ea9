"""The gateway on its own (no session service reachable): tokens, schema checks, error
shape, 503 when the backend is down, static files, metrics. The real app, served in
process through httpx's ASGI transport."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from gateway.app import create_app
from gateway.errors import ApiError
from gateway.tokens import TokenSigner
from services.common.settings import Settings


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
async def lonely(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, TokenSigner]]:
    """A client of a gateway whose session service does not answer, serving ``tmp_path``."""
    (tmp_path / "index.html").write_text("<!doctype html><title>CellWar</title>")
    settings = Settings(session_addr=f"127.0.0.1:{_closed_port()}", secret="s3cret", web_dir=str(tmp_path))
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            yield client, app.state.signer


def test_token_is_bound_to_game_and_player():
    signer = TokenSigner("k")
    token = signer.issue("g1", 2)
    assert signer.verify(token, "g1").player_id == 2
    with pytest.raises(ApiError) as other_game:
        signer.verify(token, "g2")
    assert (other_game.value.status, other_game.value.code) == (403, "FORBIDDEN")
    for bad in (None, "", "x.y", TokenSigner("other").issue("g1", 2), token[:-2] + "aa"):
        with pytest.raises(ApiError) as err:
            signer.verify(bad, "g1")
        assert (err.value.status, err.value.code) == (401, "UNAUTHORIZED")


def test_any_replica_with_the_same_secret_accepts_the_token():
    assert TokenSigner("shared").verify(TokenSigner("shared").issue("g", 1), "g").player_id == 1


async def test_session_down_is_503_unavailable(lonely):
    client, _ = lonely
    response = await client.post("/game/create", json={"kind": "life"})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "UNAVAILABLE"
    ready = await client.get("/readyz")
    assert ready.status_code == 503 and ready.json()["error"]["code"] == "UNAVAILABLE"
    assert (await client.get("/healthz")).json() == {"status": "ok"}


async def test_schema_is_checked_before_the_session_is_called(lonely):
    client, signer = lonely
    headers = {"Authorization": f"Bearer {signer.issue('g1', 1)}"}
    for body in ({"type": "place", "cells": [[1, 2, 3]]}, {"type": "erase"}, {"dx": 1}, "text"):
        response = await client.post("/game/g1/action", json=body, headers=headers)
        assert response.status_code == 422, body
        assert response.json()["error"]["code"] == "MALFORMED"
    too_many = {"type": "place", "cells": [[0, 0]] * 100_001}
    assert (await client.post("/game/g1/action", json=too_many, headers=headers)).status_code == 422


async def test_token_is_checked_before_the_body(lonely):
    client, _ = lonely
    response = await client.post("/game/g1/action", json={"type": "fly"})
    assert response.status_code == 401 and response.json()["error"]["code"] == "UNAUTHORIZED"


async def test_unknown_route_and_wrong_method_use_the_error_shape(lonely):
    client, _ = lonely
    missing = await client.get("/no/such/thing")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "NOT_FOUND"
    wrong = await client.delete("/games")
    assert wrong.status_code == 405 and wrong.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


async def test_browser_client_is_served_at_root_after_the_api(lonely):
    client, _ = lonely
    index = await client.get("/")
    assert index.status_code == 200 and "CellWar" in index.text
    assert (await client.get("/healthz")).json() == {"status": "ok"}


async def test_metrics_count_requests_by_route_template(lonely):
    client, signer = lonely
    headers = {"Authorization": f"Bearer {signer.issue('abc', 1)}"}
    await client.post("/game/abc/action", json={"type": "fly"}, headers=headers)
    text = (await client.get("/metrics")).text
    assert 'cellwar_http_requests_total{method="POST",route="/game/{game_id}/action",status="422"} 1.0' in text


def test_missing_web_folder_is_not_mounted(tmp_path: Path):
    app = create_app(Settings(web_dir=str(tmp_path / "absent")))
    assert all(getattr(r, "name", None) != "web" for r in app.routes)
