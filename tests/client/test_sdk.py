"""The SDK's request and error handling, against the real gateway app in process."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from client.sdk import ApiError, AsyncCellWarClient, CellWarClient, stream_url
from gateway.app import create_app
from services.common.settings import Settings


def test_stream_url_follows_the_scheme_and_quotes_the_token():
    assert stream_url("http://h:8000", "g1", None) == "ws://h:8000/game/g1/stream"
    assert stream_url("https://h/api/", "g1", "a.b=") == "wss://h/api/game/g1/stream?token=a.b%3D"


async def test_error_answers_raise_api_error_with_status_and_code():
    app = create_app(Settings(session_addr="127.0.0.1:9", web_dir="/nonexistent"))
    async with app.router.lifespan_context(app):
        api = AsyncCellWarClient("http://gw", transport=httpx.ASGITransport(app=app))
        async with api:
            with pytest.raises(ApiError) as unauthorized:
                await api.state("g1", "bad-token")
            assert (unauthorized.value.status, unauthorized.value.code) == (401, "UNAUTHORIZED")
            with pytest.raises(ApiError) as malformed:
                await api.speed("g1", app.state.signer.issue("g1", 1), 3)
            assert (malformed.value.status, malformed.value.code) == (422, "MALFORMED")


async def test_a_call_safe_to_repeat_is_tried_again_while_the_session_is_down():
    """503 UNAVAILABLE (the gateway's session is down): tried again for the budget, then
    the 503 is raised; without a budget (the default) at once."""
    app = create_app(Settings(session_addr="127.0.0.1:9", web_dir="/nonexistent"))
    async with app.router.lifespan_context(app):
        said: list[tuple[str, float]] = []
        transport = httpx.ASGITransport(app=app)
        patient = AsyncCellWarClient("http://gw", transport=transport, retry_unavailable_s=0.6,
                                     on_retry=lambda reason, wait: said.append((reason, wait)))
        async with patient:
            with pytest.raises(ApiError) as err:
                await patient.create_game("life")
        assert (err.value.status, err.value.code) == (503, "UNAVAILABLE")
        assert len(said) >= 2 and {r for r, _ in said} == {"503 UNAVAILABLE"}
        assert said[0][1] == 0.25 and 0 < said[1][1] <= 0.5  # doubling, cut to what is left
        said.clear()
        hasty = AsyncCellWarClient("http://gw", transport=transport, on_retry=lambda r, w: said.append((r, w)))
        async with hasty:
            with pytest.raises(ApiError) as err:
                await hasty.health()
        assert err.value.status == 503 and said == []


async def test_a_command_waits_for_a_restarting_server_and_is_applied_once():
    """Nothing listens yet (connection refused): the POST, with its Idempotency-Key, is
    tried again until the server is up, and answered."""
    import socket

    from bench._bare import create_app as bare_app
    from gateway.tokens import TokenSigner
    from tests.support.serve import serve

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    secret = "k" * 40
    said: list[str] = []
    api = AsyncCellWarClient(f"http://127.0.0.1:{port}", retry_unavailable_s=30.0,
                             on_retry=lambda reason, wait: said.append(reason))
    async with api:
        call = asyncio.create_task(api.place("g1", TokenSigner(secret).issue("g1", 1), [(1, 1)]))
        while not said:  # refused at least once
            await asyncio.sleep(0.02)
        assert not call.done() and said[0].startswith("ConnectError")
        async with serve(bare_app(secret), port=port):
            answer = await call
    assert answer["seq"] == 1 and answer["view"]["kind"] == "life"


def test_sync_client_raises_api_error_on_a_non_json_error():
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["Idempotency-Key"]
        return httpx.Response(502, text="bad gateway")

    with CellWarClient("http://gw", transport=httpx.MockTransport(handler)) as api, pytest.raises(ApiError) as err:
        api.create_game("life")
    assert err.value.status == 502 and err.value.code == "HTTP_ERROR"


@pytest.mark.integration
async def test_sync_client_plays_through_the_real_gateway(gateway: str):
    """The blocking client runs in a thread (the gateway serves in this event loop)."""

    def scenario() -> tuple[dict, dict, dict]:
        with CellWarClient(gateway) as api:
            game_id = api.create_game("life", {"width": 20, "height": 20, "budget": 5})
            alice, bob = api.join(game_id, "alice"), api.join(game_id, "bob")
            placed = api.place(game_id, alice.token, [(1, 1), (2, 1), (1, 2), (2, 2)])
            api.end_turn(game_id, alice.token)
            first_message = next(iter(api.stream(game_id, bob.token)))
            return placed, api.state(game_id, bob.token), first_message

    placed, bob_view, message = await asyncio.to_thread(scenario)
    assert placed["view"]["players"][0]["budget_left"] == 1
    assert bob_view["turn"] == 2 and bob_view["you"] == 2
    assert message["type"] == "view" and message["view"]["you"] == 2


def test_stamp_with_swapped_arguments_fails_before_any_request():
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json={"seq": 1, "view": {}})

    with CellWarClient("http://gw", transport=httpx.MockTransport(handler)) as api:
        with pytest.raises(TypeError, match="x and y must be ints"):
            api.stamp("g1", "t", "glider", 3, 4)
        with pytest.raises(TypeError, match="exactly one of pattern"):
            api.stamp("g1", "t", 3, 4)
        api.stamp("g1", "t", 3, 4, "glider", rotation=1)
    assert len(calls) == 1
    assert json.loads(calls[0].content) == {"type": "stamp", "x": 3, "y": 4, "rotation": 1, "pattern": "glider"}
