"""The SDK's request and error handling, each test against the blocking and the async
client (tests/client/flavours.py), on the real gateway app (uvicorn in process) or an
httpx mock transport."""

from __future__ import annotations

import asyncio
import importlib.abc
import inspect
import json
import ssl
import sys

import httpx
import pytest

from client.sdk import ApiError, AsyncCellWarClient, CellWarClient, stream_url
from client.sdk.core import tls_context
from gateway.app import create_app
from services.common.settings import Settings
from tests.client.flavours import client
from tests.support.nats import free_port
from tests.support.serve import serve


def public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(m) for name, m in inspect.getmembers(cls, callable) if not name.startswith("_")}


def test_both_clients_have_the_same_methods_and_signatures():
    sync, aio = public_methods(CellWarClient), public_methods(AsyncCellWarClient)
    assert set(sync) - {"close", "__enter__", "__exit__"} == set(aio) - {"aclose"}
    for name in set(sync) & set(aio):
        assert sync[name].parameters == aio[name].parameters, name
        returns = sync[name].return_annotation, aio[name].return_annotation
        assert returns[0] == returns[1] or returns in {
            ("Iterator[dict[str, Any]]", "AsyncIterator[dict[str, Any]]"), ("Commands", "AsyncCommands")
        }, name
    assert str(aio["create_game"]) == (
        "(self, kind: 'str' = 'life', config: 'dict[str, Any] | None' = None, *, "
        "idempotency_key: 'str | None' = None, profile_token: 'str | None' = None) -> 'str'"
    )
    assert inspect.iscoroutinefunction(AsyncCellWarClient.join) and not inspect.iscoroutinefunction(CellWarClient.join)
    assert inspect.isasyncgenfunction(AsyncCellWarClient.stream) and inspect.isgeneratorfunction(CellWarClient.stream)
    assert "GAME_FULL" in (CellWarClient.join.__doc__ or "") and CellWarClient.join.__doc__ == AsyncCellWarClient.join.__doc__


def test_stream_url_follows_the_scheme_and_quotes_the_token():
    assert stream_url("http://h:8000", "g1", None) == "ws://h:8000/game/g1/stream"
    assert stream_url("https://h/api/", "g1", "a.b=") == "wss://h/api/game/g1/stream?token=a.b%3D"


def test_every_client_checks_servers_with_one_tls_context(monkeypatch):
    built = []
    create = ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: built.append(1) or create(*a, **k))
    tls_context.cache_clear()
    clients = [CellWarClient("https://h"), CellWarClient("http://h"), AsyncCellWarClient("https://h")]
    try:
        assert len(built) == 1  # httpx on its own builds one a client (~30 ms each)
        context = tls_context()
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
        assert context.cert_store_stats()["x509_ca"] > 0  # the CA bundle is loaded
    finally:
        for c in clients[:2]:
            c.close()
        asyncio.run(clients[2].aclose())


class _Imports(importlib.abc.MetaPathFinder):
    """Records every module name an import looks for on sys.path (none found here)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, name, path=None, target=None):
        self.names.append(name)
        return None


async def test_an_async_request_imports_nothing():
    # httpcore asks for sniffio on every async lock and event; were it missing, each ask
    # would be a failed import searching sys.path again (encode/httpcore#1103)
    async def answer(reader, writer):
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionResetError):
            pass  # the client closed its connection
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    imports = _Imports()
    try:
        async with httpx.AsyncClient() as http:
            assert (await http.get(url)).text == "ok"  # modules a first request loads
            sys.meta_path.insert(0, imports)
            for _ in range(3):
                assert (await http.get(url)).text == "ok"
    finally:
        if imports in sys.meta_path:
            sys.meta_path.remove(imports)
        server.close()
    assert imports.names == []


@pytest.fixture
async def sessionless() -> tuple[str, object]:
    """A gateway whose session service is down (nothing on 127.0.0.1:9): (url, app)."""
    app = create_app(Settings(session_addr="127.0.0.1:9", web_dir="/nonexistent"))
    async with serve(app) as url:
        yield url, app


async def test_error_answers_raise_api_error_with_status_and_code(flavour, sessionless):
    url, app = sessionless
    async with client(flavour, url) as api:
        with pytest.raises(ApiError) as unauthorized:
            await api.state("g1", "bad-token")
        assert (unauthorized.value.status, unauthorized.value.code) == (401, "UNAUTHORIZED")
        with pytest.raises(ApiError) as malformed:
            await api.speed("g1", app.state.signer.issue("g1", 1), 3)
        assert (malformed.value.status, malformed.value.code) == (422, "MALFORMED")


async def test_an_unreachable_session_is_a_503_that_names_no_address(sessionless):
    """gRPC's text of a transport failure (the address, the socket error) stays in the
    gateway's log; REST and the stream socket's close both say 503 UNAVAILABLE."""
    url, app = sessionless
    token = app.state.signer.issue("g1", 1)
    async with httpx.AsyncClient(base_url=url) as http:
        r = await http.get("/game/g1/state", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 503 and r.json()["error"]["code"] == "UNAVAILABLE"
    assert r.json()["error"]["message"] == (
        "the session service is unavailable: it cannot be reached or did not answer in time"
    )
    async with AsyncCellWarClient(url) as api:
        with pytest.raises(ApiError) as err:
            async for _ in api.stream("g1", token):
                pass
    assert (err.value.status, err.value.code) == (503, "UNAVAILABLE")
    async with httpx.AsyncClient(base_url=url) as http:
        ready = await http.get("/readyz")  # public: no token
    assert ready.status_code == 503 and ready.json()["error"]["message"] == r.json()["error"]["message"]
    for text in (r.text, err.value.message, ready.text):
        assert "127.0.0.1" not in text and ":9" not in text and "refused" not in text.lower()


async def test_a_call_safe_to_repeat_is_tried_again_while_the_session_is_down(flavour, sessionless):
    """503 UNAVAILABLE (the gateway's session is down): tried again for the budget, then
    the 503 is raised; without a budget (the default) at once. (The budget leaves room
    for slow answers: a loaded machine took 1.3 s for the gateway's first 503.)"""
    url, _ = sessionless
    said: list[tuple[str, float]] = []
    async with client(flavour, url, retry_unavailable_s=4.0, on_retry=lambda r, w: said.append((r, w))) as patient:
        with pytest.raises(ApiError) as err:
            await patient.create_game("life")
    assert (err.value.status, err.value.code) == (503, "UNAVAILABLE")
    assert len(said) >= 2 and {r for r, _ in said} == {"503 UNAVAILABLE"}
    assert said[0][1] == 0.25 and 0 < said[1][1] <= 0.5  # doubling, cut to what is left
    said.clear()
    async with client(flavour, url, on_retry=lambda r, w: said.append((r, w))) as hasty:
        with pytest.raises(ApiError) as err:
            await hasty.health()
    assert err.value.status == 503 and said == []


async def test_a_command_waits_for_a_restarting_server_and_is_applied_once(flavour):
    """Nothing listens yet (connection refused): the POST, with its Idempotency-Key, is
    tried again until the server is up, and answered."""
    from bench._bare import create_app as bare_app
    from gateway.tokens import TokenSigner

    port = free_port()
    secret = "k" * 40
    said: list[str] = []
    async with client(flavour, f"http://127.0.0.1:{port}", retry_unavailable_s=30.0,
                      on_retry=lambda reason, wait: said.append(reason)) as api:
        call = asyncio.create_task(api.place("g1", TokenSigner(secret).issue("g1", 1), [(1, 1)]))
        while not said:  # refused at least once
            await asyncio.sleep(0.02)
        assert not call.done() and said[0].startswith("ConnectError")
        async with serve(bare_app(secret), port=port):
            answer = await call
    assert answer["seq"] == 1 and answer["view"]["kind"] == "life"


async def test_a_non_json_error_raises_api_error_http_error(flavour):
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["Idempotency-Key"]
        return httpx.Response(502, text="bad gateway")

    async with client(flavour, "http://gw", transport=httpx.MockTransport(handler)) as api:
        with pytest.raises(ApiError) as err:
            await api.create_game("life")
    assert (err.value.status, err.value.code, err.value.message) == (502, "HTTP_ERROR", "bad gateway")


async def test_an_error_body_gives_its_seq(flavour):
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["Content-Type"] == "application/x-ndjson" and request.content == b'{"seq":1}\n'
        error = {"code": "LOG_MISMATCH", "message": "event 4 differs", "seq": 4}
        return httpx.Response(422, json={"error": error})

    async with client(flavour, "http://gw", transport=httpx.MockTransport(handler)) as api:
        with pytest.raises(ApiError) as err:
            await api.import_log('{"seq":1}\n')
    assert (err.value.status, err.value.code, err.value.seq) == (422, "LOG_MISMATCH", 4)


async def test_stamp_with_swapped_arguments_fails_before_any_request(flavour):
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json={"seq": 1, "view": {}})

    async with client(flavour, "http://gw", transport=httpx.MockTransport(handler)) as api:
        with pytest.raises(TypeError, match="x and y must be ints"):
            await api.stamp("g1", "t", "glider", 3, 4)
        with pytest.raises(TypeError, match="exactly one of pattern"):
            await api.stamp("g1", "t", 3, 4)
        assert await api.stamp("g1", "t", 3, 4, "glider", rotation=1) == {"seq": 1, "view": {}}
    assert len(calls) == 1
    assert json.loads(calls[0].content) == {"type": "stamp", "x": 3, "y": 4, "rotation": 1, "pattern": "glider"}


def ticket_server(statuses: list[str], seen: list[str]) -> httpx.MockTransport:
    """A matchmaker answering POST /matchmaking/tickets, then ``statuses`` one GET at a time."""

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        if request.method == "POST":
            return httpx.Response(201, json={"ticket_id": "t1", "ticket_token": "tt"})
        if request.method == "DELETE":
            return httpx.Response(200, json={"status": "cancelled"})
        status = statuses.pop(0) if len(statuses) > 1 else statuses[0]
        match = {"game_id": "g7", "player_id": 2, "player_token": "pt"} if status == "matched" else None
        return httpx.Response(200, json={"status": status, "match": match, "reason": "no one came"})

    return httpx.MockTransport(handler)


#: A base URL where no WebSocket answers (connection refused): the ticket's stream falls
#: back to polling.
NOWHERE = "http://127.0.0.1:9"


async def test_find_match_polls_the_ticket_until_matched(flavour):
    seen: list[str] = []
    transport = ticket_server(["searching", "searching", "matched"], seen)
    async with client(flavour, NOWHERE, transport=transport) as api:
        seat = await api.find_match("cellwar", 2, "me")
    assert (seat.game_id, seat.player_id, seat.token) == ("g7", 2, "pt")
    assert seen == ["POST /matchmaking/tickets"] + ["GET /matchmaking/tickets/t1"] * 3


async def test_find_match_cancels_the_ticket_when_the_wait_fails(flavour):
    seen: list[str] = []
    async with client(flavour, NOWHERE, transport=ticket_server(["expired"], seen)) as api:
        with pytest.raises(ApiError) as expired:
            await api.find_match("life")
        assert (expired.value.status, expired.value.code) == (409, "TICKET_EXPIRED")
        assert "no one came" in expired.value.message
        assert seen == ["POST /matchmaking/tickets", "GET /matchmaking/tickets/t1", "DELETE /matchmaking/tickets/t1"]
    async with client(flavour, NOWHERE, transport=ticket_server(["searching"], seen)) as api:
        with pytest.raises(TimeoutError):
            await api.wait_for_match("t1", "tt", timeout=0.1, poll_s=0.02)


@pytest.mark.integration
async def test_both_clients_play_through_the_real_gateway(flavour, gateway: str):
    async with client(flavour, gateway) as api:
        game_id = await api.create_game("life", {"width": 20, "height": 20, "budget": 5})
        alice, bob = await api.join(game_id, "alice"), await api.join(game_id, "bob")
        placed = await api.place(game_id, alice.token, [(1, 1), (2, 1), (1, 2), (2, 2)])
        ended = await api.end_turn(game_id, alice.token)
        [message] = await api.collect("stream", game_id, bob.token, limit=1)
        bob_view = await api.state(game_id, bob.token)
        events = await api.events(game_id, bob.token)
        assert await api.collect("events_jsonl", game_id, bob.token) == events
        assert await api.collect("events_jsonl", game_id, bob.token, from_seq=events[-1]["seq"]) == events[-1:]
        assert game_id in {g["game_id"] for g in await api.games()}
        with pytest.raises(ApiError) as refused:
            await api.collect("stream", game_id, "not-a-token", limit=1)
        with pytest.raises(ApiError) as wrong_game:
            await api.collect("events_jsonl", "no-such-game", bob.token)
    assert placed["seq"] == ended["seq"] - 1 and placed["view"]["players"][0]["budget_left"] == 1
    assert bob_view["turn"] == 2 and bob_view["you"] == 2
    assert message["type"] == "view" and message["view"]["you"] == 2
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1)) and events[-1]["type"] == "TurnEnded"
    assert (refused.value.status, refused.value.code) == (401, "UNAUTHORIZED")
    assert wrong_game.value.status in (401, 403)


LIFE = {"width": 20, "height": 20, "players": 2, "budget": 10}


async def eventually(condition, what: str, timeout_s: float = 30.0) -> None:
    """Wait until ``condition()`` holds; fail with ``what`` after ``timeout_s``."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"no {what} within {timeout_s} s"
        await asyncio.sleep(0.02)


async def test_a_stream_closed_by_a_restarting_gateway_is_opened_again(flavour, gateway_settings):
    """The gateway stops (its sockets close 1012) and starts again on its port: a stream
    with a retry budget is opened again (told to ``on_retry``) and goes on, the state
    now first, then the next change."""
    port = free_port()
    seen: list[dict] = []
    said: list[str] = []
    async with serve(create_app(gateway_settings), port=port) as url:
        async with AsyncCellWarClient(url) as setup:
            game_id = await setup.create_game("life", LIFE)
            seat = await setup.join(game_id, "ann")
            await setup.join(game_id, "bob")  # placement begins

        def until(message: dict) -> bool:
            seen.append(message)
            return message["seq"] > first_seq

        first_seq = 10**9
        async with client(flavour, url, retry_unavailable_s=30.0, on_retry=lambda r, w: said.append(r)) as api:
            reading = asyncio.create_task(api.collect("stream", game_id, seat.token, until=until))
            await eventually(lambda: seen, "first view")
            first_seq = seen[0]["seq"]
    # the gateway is down: the stream waits for it (connection refused, retried)
    await eventually(lambda: said or reading.done(), "retry")
    assert not reading.done() and said[0] == "stream closed 1012"
    async with serve(create_app(gateway_settings), port=port) as url:
        await eventually(lambda: len(seen) >= 2, "view after the restart")  # the state now
        async with AsyncCellWarClient(url) as player:
            placed = await player.place(game_id, seat.token, [(1, 1)])
        out = await asyncio.wait_for(reading, 30)
    assert [m["seq"] for m in out] == [first_seq, first_seq, placed["seq"]]
    assert placed["seq"] == first_seq + 1 and out[-1]["view"]["board"] != out[0]["view"]["board"]


async def test_a_stream_closed_by_a_stopping_gateway_raises_503_without_a_retry_budget(flavour, gateway_settings):
    """Without a retry budget (the default) a stream the gateway's stop closed raises
    ``503 UNAVAILABLE``: a fault, never a silent end that reads as the game's."""
    seen: list[dict] = []
    async with serve(create_app(gateway_settings)) as url:
        async with AsyncCellWarClient(url) as setup:
            game_id = await setup.create_game("life", LIFE)
            seat = await setup.join(game_id, "ann")
        async with client(flavour, url) as api:
            reading = asyncio.create_task(
                api.collect("stream", game_id, seat.token, until=lambda m: seen.append(m) or False)
            )
            await eventually(lambda: seen, "first view")
    with pytest.raises(ApiError) as err:
        await asyncio.wait_for(reading, 30)
    assert (err.value.status, err.value.code) == (503, "UNAVAILABLE")
    assert "1012" in err.value.message and len(seen) == 1


async def test_a_stream_first_opened_during_a_restart_waits_for_the_gateway(flavour, gateway_settings):
    """Nothing listens when the stream is first opened (the gateway restarting): with a
    retry budget the opening is tried again (told to ``on_retry``) until the gateway is
    back, then the stream delivers; without one the OSError is raised at once."""
    port = free_port()
    async with serve(create_app(gateway_settings), port=port) as url:
        async with AsyncCellWarClient(url) as setup:
            game_id = await setup.create_game("life", LIFE)
            seat = await setup.join(game_id, "ann")
    said: list[str] = []
    async with client(flavour, url) as hasty:
        with pytest.raises(OSError):
            await hasty.collect("stream", game_id, seat.token, limit=1)
    async with client(flavour, url, retry_unavailable_s=30.0, on_retry=lambda r, w: said.append(r)) as api:
        reading = asyncio.create_task(api.collect("stream", game_id, seat.token, limit=1))
        await eventually(lambda: said or reading.done(), "retry")
        assert not reading.done() and said[0].startswith("stream not opened: ")
        async with serve(create_app(gateway_settings), port=port):
            (first,) = await asyncio.wait_for(reading, 30)
    assert first["type"] == "view" and first["view"]["game_id"] == game_id


async def test_a_server_that_closes_every_reopened_stream_at_once_exhausts_the_budget(flavour):
    """A server that sends a view and closes 1011 at once, every time: the stream is not
    opened again forever (each reopening's first frame does not start a fresh budget);
    once the budget (1 s) is spent it raises 503 UNAVAILABLE."""
    from websockets.asyncio.server import serve as ws_serve

    opened: list[int] = []

    async def flapping(ws) -> None:
        opened.append(1)
        await ws.send(json.dumps({"type": "view", "seq": 7, "view": {}}))
        await ws.close(1011, "internal error")

    async with ws_serve(flapping, "127.0.0.1", 0, subprotocols=["cellwar.v1"]) as server:
        port = server.sockets[0].getsockname()[1]
        seen: list[dict] = []
        async with client(flavour, f"http://127.0.0.1:{port}", retry_unavailable_s=1.0) as api:
            with pytest.raises(ApiError) as err:
                await asyncio.wait_for(
                    api.collect("stream", "g1", "t", until=lambda m: seen.append(m) or False), 15
                )
    assert (err.value.status, err.value.code) == (503, "UNAVAILABLE") and "1011" in err.value.message
    assert 2 <= len(opened) <= 6 and len(seen) == len(opened)


@pytest.mark.parametrize(
    ("code", "reason", "frame", "expected"),
    [
        (1000, "", None, None),
        (1005, "", None, None),
        (1012, "", None, (503, "UNAVAILABLE")),
        (1014, "bad gateway", None, (503, "UNAVAILABLE")),
        (1006, None, None, (503, "UNAVAILABLE")),
        (4503, "bye", None, (503, "UNAVAILABLE")),
        (4503, "UNAVAILABLE", None, (503, "UNAVAILABLE")),
        (4404, "GAME_NOT_FOUND", {"code": "GAME_NOT_FOUND", "message": "no game g1"}, (404, "GAME_NOT_FOUND")),
        (1008, "RATE_LIMITED: 31 frames in a second", None, (429, "RATE_LIMITED")),
        (1008, "PAYLOAD_TOO_LARGE: 5000 bytes", None, (413, "PAYLOAD_TOO_LARGE")),
        (1008, "", None, (400, "POLICY_VIOLATION")),
        (1002, "protocol error", None, (502, "STREAM_CLOSED")),
        (3000, "", None, (502, "STREAM_CLOSED")),
    ],
)
def test_a_stream_close_is_a_clean_end_only_with_1000(code, reason, frame, expected):
    """Only 1000 (or a close frame without a code, 1005) ends a stream cleanly; every
    other close is an ApiError (docs/bots.md "Streams"), never a silent end."""
    from client.sdk import core

    frames = core._Frames(core._finished)
    if frame is not None:
        frames.read(json.dumps({"type": "error", "error": frame}))
    err = frames.close_error(code, reason)
    assert (None if err is None else (err.status, err.code)) == expected
    if err is not None and frame is not None:
        assert err.message == frame["message"]


def test_while_a_fault_lasts_an_opening_takes_at_most_what_is_left_of_the_budget():
    from client.sdk import core

    stream = core._Reopening(core._finished, 2.0, None)
    assert stream.open_timeout() == core.OPEN_TIMEOUT_S  # no fault yet
    stream.opened()
    assert stream.after_close(1012, "") == core.RETRY_FIRST_WAIT_S
    assert 1.5 < stream.open_timeout() <= 2.0
    with pytest.raises(ApiError) as err:  # a 4xxx is not retried, whatever the budget
        stream.after_close(4401, "UNAUTHORIZED")
    assert (err.value.status, err.value.code) == (401, "UNAUTHORIZED")
