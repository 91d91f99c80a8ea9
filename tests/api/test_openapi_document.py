"""The OpenAPI document says what the server does (docs/api/openapi.md): optional tokens are
optional, 405 answers list the route's own methods, every error status a route answers is
declared with the error model (and Retry-After on 429/503). The gateway alone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.app import create_app
from services.common.settings import Settings


@pytest.fixture
async def app_and_client(tmp_path: Path) -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    (tmp_path / "index.html").write_text("<!doctype html><title>CellWar</title>")
    app = create_app(Settings(session_addr="127.0.0.1:9", secret="s" * 40, web_dir=str(tmp_path)))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            yield app.openapi(), client


def _operation(doc: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    return doc["paths"][path][method.lower()]


@pytest.mark.parametrize(
    "path",
    ["/game/{game_id}/events", "/game/{game_id}/replay", "/campaign/levels", "/game/{game_id}/state"],
)
async def test_a_token_that_is_optional_is_optional_in_the_document(app_and_client, path):
    doc, _ = app_and_client
    security = _operation(doc, "get", path)["security"]
    assert {} in security and len(security) == 2


async def test_a_token_that_is_required_stays_required(app_and_client):
    doc, _ = app_and_client  # /state is optional: a delayed spectator asks ?spectate=1
    assert _operation(doc, "get", "/game/{game_id}/valid_actions")["security"] == [{"PlayerToken": []}]
    assert _operation(doc, "post", "/game/{game_id}/action")["security"] == [{"PlayerToken": []}]


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("GET", "/game/create", "POST"),
        ("PUT", "/game/create", "POST"),
        ("OPTIONS", "/game/g1/action", "POST"),
        ("GET", "/game/g1/join", "POST"),
        ("POST", "/games", "GET"),
        ("DELETE", "/game/g1/replay", "GET"),
        ("POST", "/docs", "GET"),
    ],
)
async def test_a_wrong_method_is_405_with_the_routes_own_allow(app_and_client, method, path, allow):
    _, client = app_and_client
    answer = await client.request(method, path)
    assert answer.status_code == 405
    assert answer.headers["allow"] == allow
    assert answer.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


async def test_the_web_client_files_still_answer_get_only(app_and_client):
    _, client = app_and_client
    assert (await client.get("/")).status_code == 200
    assert (await client.post("/index.html")).headers["allow"] == "GET, HEAD"


async def test_every_post_declares_413_422_429_and_every_route_503(app_and_client):
    doc, _ = app_and_client
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            declared = operation["responses"]
            if path in ("/healthz", "/metrics"):
                continue
            if path != "/game/{game_id}/token":  # answered by the gateway alone
                assert "503" in declared, (method, path)
            if method == "post":
                assert {"413", "422", "429"} <= set(declared), (method, path)
            for status, answer in declared.items():
                if status.startswith(("4", "5")):
                    schema = answer["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (method, path, status)
                if status in ("429", "503"):
                    assert "Retry-After" in answer["headers"], (method, path, status)


async def test_the_schema_says_what_the_rules_want_of_a_cellwar_start(app_and_client):
    doc, _ = app_and_client
    units = doc["components"]["schemas"]["CellWarConfigBody"]["properties"]["units"]
    array = next(s for s in units["anyOf"] if s.get("type") == "array")
    assert array["minItems"] == 1
    unit = doc["components"]["schemas"]["CellWarUnitBody"]["properties"]
    assert unit["x"]["maximum"] == unit["y"]["maximum"] == 63
