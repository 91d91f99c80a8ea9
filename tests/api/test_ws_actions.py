"""Commands over the game stream (``WS /game/{id}/stream``, docs/api/websocket.md
"Commands") on the real stack (gateway, session, engine, NATS):

- every refusal REST gives for an action or an end of turn (the rules' 409s of CellWar
  and Life, 422 ``MALFORMED`` and ``IDEMPOTENCY_KEY_REUSED``) comes as an error frame with
  the same status and the same ``error`` body, and nothing is applied; 401
  ``TOKEN_EXPIRED``, 403 (a spectator), 413 and 429 (the seat's one command bucket for
  REST and the socket) with REST's status and code;
- bad frames (not JSON, not an object, unknown type, bad or missing id, extra fields, an
  action body off the schema, too big) are answered with their machine code, nothing is
  applied and the socket stays open; a player's commands are not held to the socket's
  flood burst;
- a frame resent after a reconnect (its reply read or not) is applied once, with the
  same ``seq``, and REST with the same key finds it; another body under the key is
  refused as REST refuses it;
- replies come in the order the frames were sent;
- fog: the error for a hidden enemy unit's id is byte for byte the error for an id that
  no unit has (two games that differ only in the hidden unit);
- a seeded random CellWar game played through the socket gives the same events and state
  hashes as the same game played through REST.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
import pytest
import websockets
from fastapi import FastAPI

from gateway.app import create_app
from services.common.settings import Settings
from tests.api.conftest import TEST_SECRET
from tests.support.serve import serve

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

#: 8x8, two players far apart: player 1's units 1 (0, 1) and 3 (1, 1); player 2's units
#: 2 (7, 6) and 4 (6, 6) (player p's n-th unit is n * players + p, engine/cellwar/ids.py).
CELLWAR_UNITS = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 1},
    {"owner": 1, "type": "infantry", "x": 1, "y": 1},
    {"owner": 2, "type": "infantry", "x": 7, "y": 6},
    {"owner": 2, "type": "infantry", "x": 6, "y": 6},
]
CELLWAR = {"width": 8, "height": 8, "players": 2, "units": CELLWAR_UNITS, "disconnect_timeout_s": 600}
#: 16x16 Life, player 1 draws in x < 8, player 2 in x >= 8; 4 cells each.
LIFE = {"width": 16, "height": 16, "players": 2, "budget": 4}


# --------------------------------------------------------------------------- helpers


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def frame(kind: str, key: Any, action: Any = None) -> str:
    """A command frame's text (``action`` left out when None)."""
    body: dict[str, Any] = {"type": kind, "id": key}
    if action is not None:
        body["action"] = action
    return json.dumps(body)


class Socket:
    """A game stream socket: commands sent, their replies read in order; the view frames
    that come between them are kept in ``views``."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.views: list[dict[str, Any]] = []

    async def send(self, text: str | bytes) -> None:
        await self.ws.send(text)

    async def reply(self, timeout_s: float = 30) -> dict[str, Any]:
        """The next ``result``, ``valid_actions`` or ``error`` frame."""
        while True:
            message = json.loads(await asyncio.wait_for(self.ws.recv(), timeout_s))
            if message["type"] in ("result", "valid_actions", "error"):
                return message
            self.views.append(message)

    async def command(self, text: str | bytes) -> dict[str, Any]:
        await self.send(text)
        return await self.reply()


@contextlib.asynccontextmanager
async def socket(base: str, game_id: str, token: str | None = None, query: str = "") -> AsyncIterator[Socket]:
    """The game stream of ``token``'s seat (a spectator's without one), token as the
    ``bearer.`` subprotocol."""
    protocols = ["cellwar.v1"] + ([f"bearer.{token}"] if token else [])
    url = base.replace("http", "ws", 1) + f"/game/{game_id}/stream{query}"
    async with websockets.connect(url, subprotocols=protocols, max_size=None, max_queue=None) as ws:
        yield Socket(ws)


@contextlib.asynccontextmanager
async def gateway_with(stack: Any, **settings: Any) -> AsyncIterator[tuple[FastAPI, str]]:
    """Another gateway in front of the test stack, with ``settings``."""
    app = create_app(Settings(session_addr=stack.session_target, secret=TEST_SECRET, **settings))
    async with serve(app) as url:
        yield app, url


@pytest.fixture
async def http(gateway: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as client:
        yield client


async def new_game(http: httpx.AsyncClient, kind: str, config: dict[str, Any], seats: int = 2) -> tuple[str, list[str]]:
    """A game and the tokens of its first ``seats`` seats."""
    created = await http.post("/game/create", json={"kind": kind, "config": config})
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]
    tokens = []
    for i in range(seats):
        joined = await http.post(f"/game/{game_id}/join", json={"name": f"p{i + 1}"})
        assert joined.status_code == 200, joined.text
        tokens.append(joined.json()["player_token"])
    return game_id, tokens


async def rest_action(
    http: httpx.AsyncClient, game_id: str, token: str, action: Any, key: str | None = None
) -> httpx.Response:
    headers = {**bearer(token), **({"Idempotency-Key": key} if key else {})}
    # json.dumps writes NaN and Infinity as JavaScript does (httpx's json= refuses them)
    headers["Content-Type"] = "application/json"
    return await http.post(f"/game/{game_id}/action", content=json.dumps(action), headers=headers)


async def rest_end_turn(http: httpx.AsyncClient, game_id: str, token: str, key: str | None = None) -> httpx.Response:
    headers = {**bearer(token), **({"Idempotency-Key": key} if key else {})}
    return await http.post(f"/game/{game_id}/end_turn", headers=headers)


async def observed(http: httpx.AsyncClient, game_id: str, tokens: list[str]) -> list[Any]:
    """What a refused command must leave as it was: every seat's view and log."""
    seen = []
    for token in tokens:
        state = await http.get(f"/game/{game_id}/state", headers=bearer(token))
        events = await http.get(f"/game/{game_id}/events", headers=bearer(token))
        seen += [state.json(), events.json()]
    return seen


def error_of(reply: dict[str, Any]) -> tuple[int, str]:
    assert reply["type"] == "error", reply
    return reply["status"], reply["error"]["code"]


# ------------------------------------------------- the same refusals as REST, by kind


#: (seat index, command, body) → the rules' refusal in a fresh CellWar game, player 1 to
#: move: (status, code) REST answers.
CELLWAR_REFUSALS: list[tuple[int, str, Any, int, str]] = [
    (1, "action", {"unit_id": 2, "dx": -1, "dy": 0}, 409, "NOT_YOUR_TURN"),
    (1, "end_turn", None, 409, "NOT_YOUR_TURN"),
    (0, "action", {"unit_id": 2, "dx": -1, "dy": 0}, 409, "INVALID_ACTION"),  # not its unit
    (0, "action", {"unit_id": 1, "dx": -1, "dy": 0}, 409, "INVALID_ACTION"),  # off the board
    (0, "action", {"unit_id": 1, "dx": 1, "dy": 0}, 409, "INVALID_ACTION"),  # its own unit
    (0, "action", {"unit_id": 99, "dx": 0, "dy": 1}, 409, "INVALID_ACTION"),  # no such unit
    (0, "end_turn", None, 409, "UNITS_NOT_DONE"),
    (0, "action", {"type": "pause"}, 409, "MALFORMED"),  # a Life action in CellWar
    (0, "action", {"unit_id": 1, "dx": 2, "dy": 0}, 422, "MALFORMED"),
    (0, "action", {"unit_id": 1, "dx": 0}, 422, "MALFORMED"),
    (0, "action", {"unit_id": 1, "dx": 0, "dy": 0, "x": 1}, 422, "MALFORMED"),
    (0, "action", {"type": "nosuch"}, 422, "MALFORMED"),
    (0, "action", [1, 2], 422, "MALFORMED"),
]
#: The same in a fresh Life game in placement, player 1 to draw.
LIFE_REFUSALS: list[tuple[int, str, Any, int, str]] = [
    (1, "action", {"type": "place", "cells": [[10, 10]]}, 409, "NOT_YOUR_TURN"),
    (1, "end_turn", None, 409, "NOT_YOUR_TURN"),
    (0, "action", {"type": "place", "cells": [[12, 2]]}, 409, "OUT_OF_ZONE"),
    (0, "action", {"type": "place", "cells": [[1, 1], [1, 2], [1, 3], [1, 4], [1, 5]]}, 409, "BUDGET_EXCEEDED"),
    (0, "action", {"type": "erase", "cells": [[1, 1]]}, 409, "NO_CHANGE"),
    (0, "action", {"type": "pause"}, 409, "WRONG_PHASE"),
    (0, "action", {"type": "resume"}, 409, "WRONG_PHASE"),
    (0, "action", {"unit_id": 1, "dx": 0, "dy": 0}, 409, "MALFORMED"),  # a CellWar move in Life
    (0, "action", {"type": "place", "cells": []}, 422, "MALFORMED"),
    (0, "action", {"type": "place", "cells": [[1, 1.5]]}, 422, "MALFORMED"),
    (0, "action", {"type": "stamp", "pattern": "glider", "rle": "o!", "x": 1, "y": 1}, 422, "MALFORMED"),
    (0, "action", {"type": "speed", "multiplier": 3}, 422, "MALFORMED"),
    (0, "action", {"type": "speed", "multiplier": True}, 422, "MALFORMED"),
    # longer than 64 bits: read as the same integer by both (orjson would read a float)
    (0, "action", {"type": "place", "cells": [[99999999999999999999, 5]]}, 422, "MALFORMED"),
    (0, "action", {"type": "place", "cells": [[-9223372036854775809, 5]]}, 422, "MALFORMED"),
    # NaN and Infinity, which orjson refuses and REST's json reads
    (0, "action", {"type": "place", "cells": [[float("nan"), 5]]}, 422, "MALFORMED"),
    (0, "action", {"type": "speed", "multiplier": float("inf")}, 422, "MALFORMED"),
    (0, "action", {}, 422, "MALFORMED"),
    (0, "action", {"type": "fly"}, 422, "MALFORMED"),
]


@pytest.mark.parametrize(
    ("kind", "config", "cases"),
    [("cellwar", CELLWAR, CELLWAR_REFUSALS), ("life", LIFE, LIFE_REFUSALS)],
    ids=["cellwar", "life"],
)
async def test_every_refusal_rest_gives_comes_as_the_same_error_frame(gateway, http, kind, config, cases):
    game_id, tokens = await new_game(http, kind, config)
    before = await observed(http, game_id, tokens)
    async with socket(gateway, game_id, tokens[0]) as one, socket(gateway, game_id, tokens[1]) as two:
        sockets = (one, two)
        for i, (seat, command, body, status, code) in enumerate(cases):
            if command == "action":
                rest = await rest_action(http, game_id, tokens[seat], body, key=f"rest-{i}")
            else:
                rest = await rest_end_turn(http, game_id, tokens[seat], key=f"rest-{i}")
            assert (rest.status_code, rest.json()["error"]["code"]) == (status, code), (body, rest.text)
            reply = await sockets[seat].command(frame(command, f"ws-{i}", body))
            assert reply == {"type": "error", "id": f"ws-{i}", "status": status, **rest.json()}, body
        assert await observed(http, game_id, tokens) == before
        # Nothing was applied, and the sockets still take commands.
        moved = await one.command(frame("action", "ok", {"unit_id": 1, "dx": 0, "dy": 1}
                                        if kind == "cellwar" else {"type": "place", "cells": [[1, 1]]}))
        assert moved["type"] == "result" and moved["id"] == "ok"


async def test_wrong_phase_and_a_reused_key_as_rest(gateway, http):
    # A CellWar game whose second seat is still open: WRONG_PHASE.
    game_id, (token,) = await new_game(http, "cellwar", CELLWAR, seats=1)
    async with socket(gateway, game_id, token) as one:
        for i, (command, body) in enumerate((("action", {"unit_id": 1, "dx": 0, "dy": 1}), ("end_turn", None))):
            rest = await (rest_action(http, game_id, token, body) if body else rest_end_turn(http, game_id, token))
            assert (rest.status_code, rest.json()["error"]["code"]) == (409, "WRONG_PHASE")
            assert await one.command(frame(command, f"w{i}", body)) == {
                "type": "error", "id": f"w{i}", "status": 409, **rest.json()
            }
    # A key used again with another body, or for another command: 422 as REST.
    game_id, (token, _) = await new_game(http, "cellwar", CELLWAR)
    async with socket(gateway, game_id, token) as one:
        first = await one.command(frame("action", "key-1", {"unit_id": 1, "dx": 0, "dy": 1}))
        assert first["type"] == "result"
        rest = await rest_action(http, game_id, token, {"unit_id": 3, "dx": 0, "dy": 1}, key="key-1")
        assert (rest.status_code, rest.json()["error"]["code"]) == (422, "IDEMPOTENCY_KEY_REUSED")
        assert await one.command(frame("action", "key-1", {"unit_id": 3, "dx": 0, "dy": 1})) == {
            "type": "error", "id": "key-1", "status": 422, **rest.json()
        }
        rest = await rest_end_turn(http, game_id, token, key="key-1")
        assert (rest.status_code, rest.json()["error"]["code"]) == (422, "IDEMPOTENCY_KEY_REUSED")
        assert await one.command(frame("end_turn", "key-1")) == {
            "type": "error", "id": "key-1", "status": 422, **rest.json()
        }
        # The unit that moved, again: UNIT_ALREADY_ACTED.
        rest = await rest_action(http, game_id, token, {"unit_id": 1, "dx": 0, "dy": 1})
        assert (rest.status_code, rest.json()["error"]["code"]) == (409, "UNIT_ALREADY_ACTED")
        assert await one.command(frame("action", "again", {"unit_id": 1, "dx": 0, "dy": 1})) == {
            "type": "error", "id": "again", "status": 409, **rest.json()
        }


class _SessionDown:
    """The gateway's session stub, but ``Act`` and ``EndTurn`` fail as an unreachable
    session fails them (gRPC UNAVAILABLE, no error code in the trailers)."""

    def __init__(self, stub: Any) -> None:
        self._stub = stub

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stub, name)

    async def _down(self, *_args: Any, **_kwargs: Any) -> Any:
        raise grpc.aio.AioRpcError(
            grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), details="connection refused"
        )

    Act = EndTurn = _down


async def test_an_unavailable_session_is_503_with_a_retry_after_as_rest(stack):
    async with gateway_with(stack) as (app, url), httpx.AsyncClient(base_url=url) as http:
        game_id, (token, _) = await new_game(http, "cellwar", CELLWAR)
        app.state.session = _SessionDown(app.state.session)  # the commands' stub (not the Watch's)
        async with socket(url, game_id, token) as one:
            for i, (command, body) in enumerate((("action", {"unit_id": 1, "dx": 0, "dy": 1}), ("end_turn", None))):
                rest = await (rest_action(http, game_id, token, body) if body else rest_end_turn(http, game_id, token))
                assert (rest.status_code, rest.json()["error"]["code"]) == (503, "UNAVAILABLE")
                assert rest.headers["Retry-After"] == "1"
                assert await one.command(frame(command, f"u{i}", body)) == {
                    "type": "error", "id": f"u{i}", "status": 503, "retry_after": 1, **rest.json()
                }
        # Back: the same id is applied now (retried as the 503 says, on a new socket).
        app.state.session = app.state.session._stub
        async with socket(url, game_id, token) as one:
            assert (await one.command(frame("action", "u0", {"unit_id": 1, "dx": 0, "dy": 1})))["type"] == "result"


async def test_an_expired_token_is_refused_at_the_command_as_rest_refuses_it(stack):
    async with gateway_with(stack, token_max_age_s=1.5) as (_, url), httpx.AsyncClient(base_url=url) as http:
        game_id, (token, _) = await new_game(http, "cellwar", CELLWAR)
        async with socket(url, game_id, token) as one:
            assert (await one.command(frame("action", "a", {"unit_id": 1, "dx": 0, "dy": 1})))["type"] == "result"
            await asyncio.sleep(1.7)
            rest = await rest_action(http, game_id, token, {"unit_id": 3, "dx": 0, "dy": 1})
            assert (rest.status_code, rest.json()["error"]["code"]) == (401, "TOKEN_EXPIRED")
            assert await one.command(frame("action", "b", {"unit_id": 3, "dx": 0, "dy": 1})) == {
                "type": "error", "id": "b", "status": 401, **rest.json()
            }


async def test_a_spectators_commands_are_forbidden_and_its_stream_goes_on(gateway, http):
    game_id, tokens = await new_game(http, "life", LIFE)
    before = await observed(http, game_id, tokens)
    for query in ("", "?spectate=1&delay_s=0"):
        async with socket(gateway, game_id, query=query) as watcher:
            assert json.loads(await asyncio.wait_for(watcher.ws.recv(), 30))["type"] == "view"
            for i, (command, body) in enumerate((("action", {"type": "place", "cells": [[1, 1]]}), ("end_turn", None))):
                reply = await watcher.command(frame(command, f"s{i}", body))
                assert error_of(reply) == (403, "FORBIDDEN") and reply["id"] == f"s{i}"
            # A token of another game is REST's 403 FORBIDDEN too.
            other, (stranger, _) = await new_game(http, "life", LIFE)
            rest = await rest_action(http, game_id, stranger, {"type": "place", "cells": [[1, 1]]})
            assert (rest.status_code, rest.json()["error"]["code"]) == (403, "FORBIDDEN")
    assert await observed(http, game_id, tokens) == before


# --------------------------------------------------------------------------- bad frames


async def test_bad_frames_are_answered_with_their_code_and_nothing_is_applied(stack):
    # Bad frames count against the socket's flood burst (20): this gateway's holds them all.
    async with gateway_with(stack, ws_message_burst=50) as (_, url), httpx.AsyncClient(base_url=url) as http:
        await _bad_frames(url, http)


async def _bad_frames(gateway: str, http: httpx.AsyncClient) -> None:
    game_id, tokens = await new_game(http, "cellwar", CELLWAR)
    before = await observed(http, game_id, tokens)
    move = {"unit_id": 1, "dx": 0, "dy": 1}
    cases: list[tuple[str | bytes, Any, int, str]] = [
        ("not json", None, 422, "MALFORMED"),
        ("", None, 422, "MALFORMED"),
        ('{"type": "action", "id": "a", "action": ', None, 422, "MALFORMED"),
        (b"\xff\xfe{}", None, 422, "MALFORMED"),
        ("[1, 2]", None, 422, "MALFORMED"),
        ('"action"', None, 422, "MALFORMED"),
        (frame("move", "k1", move), "k1", 422, "UNKNOWN_FRAME_TYPE"),
        (json.dumps({"id": "k2", "action": move}), "k2", 422, "UNKNOWN_FRAME_TYPE"),
        (json.dumps({"type": 7, "id": "k3"}), "k3", 422, "UNKNOWN_FRAME_TYPE"),
        (frame("result", "k4"), "k4", 422, "UNKNOWN_FRAME_TYPE"),
        (json.dumps({"type": "action", "action": move}), None, 422, "MALFORMED"),
        (frame("action", None, move), None, 422, "MALFORMED"),
        (frame("action", 17, move), None, 422, "MALFORMED"),
        (frame("action", "", move), "", 422, "MALFORMED"),
        (frame("action", "has space", move), "has space", 422, "MALFORMED"),
        (frame("action", "é", move), "é", 422, "MALFORMED"),
        (frame("action", "k" * 201, move), "k" * 201, 422, "MALFORMED"),
        (frame("end_turn", "k5", move), "k5", 422, "MALFORMED"),  # end_turn has no action
        (json.dumps({"type": "action", "id": "k6", "action": move, "x": 1}), "k6", 422, "MALFORMED"),
        (frame("action", "k7"), "k7", 422, "MALFORMED"),  # no action
        (frame("action", "k8", {"unit_id": 1, "dx": 0, "dy": "1"}), "k8", 422, "MALFORMED"),
        (frame("action", "k9", {"unit_id": True, "dx": 0, "dy": 1}), "k9", 422, "MALFORMED"),
        (frame("action", "k10", {"unit_id": 10**30, "dx": 0, "dy": 1}), "k10", 422, "MALFORMED"),
        (json.dumps({"type": "action", "id": "k11", "action": move, "pad": "x" * 5000}), None, 413, "PAYLOAD_TOO_LARGE"),
    ]
    async with socket(gateway, game_id, tokens[0]) as one:
        for text, key, status, code in cases:
            reply = await one.command(text)
            assert (reply["id"], *error_of(reply)) == (key, status, code), text[:80]
            assert set(reply) == {"type", "id", "status", "error"} and set(reply["error"]) == {"code", "message"}
        assert await observed(http, game_id, tokens) == before
        # The socket stayed open throughout: a good command now is applied.
        reply = await one.command(frame("action", "good", move))
        assert reply["type"] == "result" and reply["seq"] > before[0]["seq"]


async def test_a_players_commands_are_not_held_to_the_sockets_flood_burst(stack):
    """150 commands at once on one socket (the flood bucket holds 20) are all answered,
    in order, and the socket stays open; 25 bad frames are cut at 20 as a flood."""
    async with gateway_with(stack, rate_limit_per_s=1000, rate_limit_burst=1000) as (app, url):
        async with httpx.AsyncClient(base_url=url) as http:
            game_id, (_, two) = await new_game(http, "cellwar", CELLWAR)
        async with socket(url, game_id, two) as sock:
            for i in range(150):
                await sock.send(frame("end_turn", f"e{i}"))
            replies = [await sock.reply() for _ in range(150)]
            assert [r["id"] for r in replies] == [f"e{i}" for i in range(150)]
            assert {error_of(r) for r in replies} == {(409, "NOT_YOUR_TURN")}
            await sock.ws.ping()
            for _ in range(25):
                with contextlib.suppress(websockets.ConnectionClosed):
                    await sock.send("garbage")
            with pytest.raises(websockets.ConnectionClosed) as closed:
                while True:
                    await sock.reply()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        registry = app.state.metrics.registry
        assert registry.get_sample_value("cellwar_ws_commands_total", {"type": "end_turn", "status": "409"}) == 150


async def test_the_seats_command_bucket_is_one_for_rest_and_the_socket(stack):
    async with gateway_with(stack, rate_limit_per_s=0.01, rate_limit_burst=4) as (_, url):
        async with httpx.AsyncClient(base_url=url) as http:
            game_id, (one, _) = await new_game(http, "cellwar", CELLWAR)
            assert (await rest_action(http, game_id, one, {"unit_id": 1, "dx": 0, "dy": 1})).status_code == 200
            assert (await rest_action(http, game_id, one, {"unit_id": 1, "dx": 0, "dy": 1})).status_code == 409
            async with socket(url, game_id, one) as sock:
                again = await sock.command(frame("action", "a", {"unit_id": 1, "dx": 0, "dy": 1}))
                assert error_of(again) == (409, "UNIT_ALREADY_ACTED")
                assert (await sock.command(frame("action", "b", {"unit_id": 3, "dx": 0, "dy": 1})))["type"] == "result"
                # The fifth command of the seat: refused (the end of turn would be applied).
                refused = await sock.command(frame("end_turn", "c"))
                assert error_of(refused) == (429, "RATE_LIMITED") and refused["retry_after"] >= 1
                assert refused["error"]["message"].startswith("too many requests; retry in ")
                rest = await rest_end_turn(http, game_id, one)
                assert (rest.status_code, rest.json()["error"]["code"]) == (429, "RATE_LIMITED")
                assert int(rest.headers["Retry-After"]) >= 1
                # Refused for its rate, nothing was applied: the turn is still player 1's.
                view = (await http.get(f"/game/{game_id}/state", headers=bearer(one))).json()
                assert view["turn"] == 1


# ----------------------------------------------------------- idempotency and order


async def test_a_frame_resent_after_a_reconnect_is_applied_once(gateway, http):
    game_id, (one, _) = await new_game(http, "cellwar", CELLWAR)
    move = {"unit_id": 1, "dx": 0, "dy": 1}
    async with socket(gateway, game_id, one) as sock:
        first = await sock.command(frame("action", "move-1", move))
    assert first["type"] == "result"
    async with socket(gateway, game_id, one) as sock:
        again = await sock.command(frame("action", "move-1", move))
        # Sent, then the socket dropped before the reply: resent on the next socket.
        await sock.send(frame("action", "move-3", {"unit_id": 3, "dx": 0, "dy": 1}))
    assert (again["id"], again["type"], again["seq"]) == ("move-1", "result", first["seq"])
    async with socket(gateway, game_id, one) as sock:
        third = await sock.command(frame("action", "move-3", {"unit_id": 3, "dx": 0, "dy": 1}))
        assert third["type"] == "result" and third["seq"] == first["seq"] + 1
        again = await sock.command(frame("action", "move-3", {"unit_id": 3, "dx": 0, "dy": 1}))
        assert again["seq"] == third["seq"]
    # REST with the same key finds the command (the fallback of a client whose socket failed).
    rest = await rest_action(http, game_id, one, move, key="move-1")
    assert rest.status_code == 200 and rest.json()["seq"] == first["seq"]
    events = (await http.get(f"/game/{game_id}/events", headers=bearer(one))).json()["events"]
    applied = [e["payload"]["action"] for e in events if e["type"] == "ActionApplied"]
    assert applied == [move, {"unit_id": 3, "dx": 0, "dy": 1}]


async def test_replies_come_in_the_order_the_frames_were_sent(gateway, http):
    game_id, (one, _) = await new_game(http, "cellwar", CELLWAR)
    sent = [
        (frame("action", "m1", {"unit_id": 1, "dx": 0, "dy": 1}), "m1", "result"),
        ("garbage", None, "MALFORMED"),
        (frame("action", "m2", {"unit_id": 1, "dx": 0, "dy": 1}), "m2", "UNIT_ALREADY_ACTED"),
        (frame("end_turn", "t1"), "t1", "UNITS_NOT_DONE"),
        (frame("hello", "h1"), "h1", "UNKNOWN_FRAME_TYPE"),
        (frame("action", "m3", {"unit_id": 3, "dx": 1, "dy": 1}), "m3", "result"),
        (frame("action", "bad", {"unit_id": 3}), "bad", "MALFORMED"),
        (frame("end_turn", "t2"), "t2", "result"),
        (frame("end_turn", "t3"), "t3", "NOT_YOUR_TURN"),
        (frame("action", "m1", {"unit_id": 1, "dx": 0, "dy": 1}), "m1", "result"),  # a retry
    ]
    async with socket(gateway, game_id, one) as sock:
        for text, _, _ in sent:
            await sock.send(text)
        replies = [await sock.reply() for _ in sent]
    got = [(r["id"], "result" if r["type"] == "result" else r["error"]["code"]) for r in replies]
    assert got == [(key, outcome) for _, key, outcome in sent]
    seqs = [r["seq"] for r in replies if r["type"] == "result"]
    assert seqs[:3] == sorted(seqs[:3]) and len(set(seqs[:3])) == 3 and seqs[3] == seqs[0]


async def test_a_result_stands_for_the_view_frame_of_its_change(gateway, http):
    """The socket that sent a command gets its change as the ``result`` (seq and view),
    not again as a ``view`` frame; a second socket of the same seat gets the frame."""
    game_id, (one, _) = await new_game(http, "life", LIFE)
    async with socket(gateway, game_id, one) as sender, socket(gateway, game_id, one) as other:
        first = json.loads(await asyncio.wait_for(sender.ws.recv(), 30))  # the view now
        assert first["type"] == "view"
        assert json.loads(await asyncio.wait_for(other.ws.recv(), 30)) == first
        results = []
        for i, cell in enumerate([[1, 1], [2, 2], [3, 3]]):
            reply = await sender.command(frame("action", f"p{i}", {"type": "place", "cells": [cell]}))
            assert reply["type"] == "result", reply
            results.append(reply)
        frames = [json.loads(await asyncio.wait_for(other.ws.recv(), 30)) for _ in results]
        assert [(f["type"], f["seq"], f["view"]) for f in frames] == [
            ("view", r["seq"], r["view"]) for r in results
        ]
        # a change the sender did not make (REST) comes to it as a view frame
        placed = await rest_action(http, game_id, one, {"type": "place", "cells": [[4, 4]]})
        assert placed.status_code == 200
        pushed = json.loads(await asyncio.wait_for(sender.ws.recv(), 30))
    # every view the sender saw before the REST change came as a result, never as a frame
    assert [v["seq"] for v in sender.views if v["seq"] in {r["seq"] for r in results}] == []
    assert (pushed["type"], pushed["seq"]) == ("view", placed.json()["seq"])


async def read_until(sock: Socket, done: Any, timeout_s: float = 10) -> list[dict[str, Any]]:
    """The socket's frames until ``done(frame)`` holds for one (included)."""
    frames = []
    while True:
        frames.append(json.loads(await asyncio.wait_for(sock.ws.recv(), timeout_s)))
        if done(frames[-1]):
            return frames


async def test_a_command_sent_at_once_is_not_followed_by_an_older_view(gateway, http):
    """A command sent before the socket's opening view was read: whatever comes first, no
    view older than the result follows it (the socket's seqs never go back)."""
    game_id, (one, _) = await new_game(http, "life", LIFE)
    for attempt in range(3):
        async with socket(gateway, game_id, one) as sock:
            await sock.send(frame("action", f"now{attempt}", {"type": "place", "cells": [[attempt, 5]]}))
            frames = await read_until(sock, lambda f: f["type"] == "result")
            with contextlib.suppress(TimeoutError):  # and what comes just after it
                frames.append(json.loads(await asyncio.wait_for(sock.ws.recv(), 0.5)))
        seqs = [f["seq"] for f in frames]
        assert seqs == sorted(seqs), frames


async def test_the_command_that_ends_the_game_stands_for_its_view_and_finished_follows(stack, gateway, http):
    """A resign over the socket ends a running Life game: the sender gets the result and
    then ``finished`` (no view frame of the same change in between), even when the
    Watch's view and ``finished`` reach the gateway before the result (the reply is
    slowed here); a second socket of the seat gets the view and ``finished``."""
    loop = stack.session.loop
    version_after = loop.version_after

    async def slowed(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0.1)  # the Watch's frames of the change go first
        return await version_after(*args, **kwargs)

    loop.version_after = slowed
    try:
        game_id, (one, two) = await new_game(http, "life", LIFE)
        for token, cells in ((one, [[1, 1], [2, 1], [1, 2], [2, 2]]), (two, [[12, 12], [13, 12], [12, 13]])):
            assert (await rest_action(http, game_id, token, {"type": "place", "cells": cells})).status_code == 200
            assert (await rest_end_turn(http, game_id, token)).status_code == 200
        async with socket(gateway, game_id, one) as sender, socket(gateway, game_id, one) as other:
            await asyncio.sleep(0.5)  # the run goes on: views of its generations come
            while True:  # everything sent so far, read
                try:
                    await asyncio.wait_for(sender.ws.recv(), 0.3)
                except TimeoutError:
                    break
            reply = await sender.command(frame("action", "bye", {"type": "resign"}))
            assert reply["type"] == "result", reply
            after = await read_until(sender, lambda f: f["type"] == "finished")
            seen = await read_until(other, lambda f: f["type"] == "finished")
    finally:
        loop.version_after = version_after
    assert [f["type"] for f in after] == ["finished"], after
    assert after[0]["seq"] == reply["seq"] and after[0]["view"] == reply["view"]
    assert not [v for v in sender.views if v["seq"] == reply["seq"] and v["view"] == reply["view"]]
    assert seen[-1]["type"] == "finished" and seen[-1]["seq"] == reply["seq"]


async def test_a_slow_command_does_not_hold_the_sockets_view_frames(stack, gateway, http):
    """While a command of the socket runs its Watch frames wait for its result (the frame
    it stands for is left out), but not past HOLD_MAX_S: a change made meanwhile by
    another command comes before the slow one's result."""
    from gateway.ws_commands import HOLD_MAX_S

    game_id, (one, _) = await new_game(http, "life", LIFE)
    loop = stack.session.loop
    handle = loop.handle

    async def slow(command: Any, *args: Any, **kwargs: Any) -> Any:
        if command.command_id == "slow":  # before the game's lock: others go on
            await asyncio.sleep(1.5)
        return await handle(command, *args, **kwargs)

    loop.handle = slow
    try:
        async with socket(gateway, game_id, one) as sock:
            await asyncio.wait_for(sock.ws.recv(), 30)  # the view now
            await sock.send(frame("action", "slow", {"type": "place", "cells": [[1, 1]]}))
            await asyncio.sleep(0.2)  # the slow command is running
            started = asyncio.get_running_loop().time()
            placed = await rest_action(http, game_id, one, {"type": "place", "cells": [[2, 2]]})
            assert placed.status_code == 200
            first = json.loads(await asyncio.wait_for(sock.ws.recv(), 30))
            waited = asyncio.get_running_loop().time() - started
            reply = await sock.reply()
    finally:
        loop.handle = handle
    assert (first["type"], first["seq"]) == ("view", placed.json()["seq"])
    assert waited < HOLD_MAX_S + 0.9, waited  # not held for the slow command's 1.5 s
    assert reply["type"] == "result" and reply["id"] == "slow" and reply["seq"] > first["seq"]


async def test_a_commands_reply_and_the_watch_frame_are_rendered_once(stack, gateway, http):
    """The session renders a player's view once per change (its reply and the Watch frame
    of the same seq share it, services/session/entrypoints/grpc_service.py ``_view``):
    a watched seat's commands cost one view each, not two."""
    game_id, (one, _) = await new_game(http, "life", LIFE)
    games = stack.session.games
    renders: list[tuple[int, int]] = []
    view = games.view

    async def counted(game: Any, player_id: int) -> Any:
        renders.append((game.seq, player_id))
        return await view(game, player_id)

    games.view = counted
    try:
        async with socket(gateway, game_id, one) as sock, socket(gateway, game_id, one) as watcher:
            await asyncio.wait_for(watcher.ws.recv(), 30)
            renders.clear()
            for i, cell in enumerate([[1, 1], [2, 2], [3, 3]]):
                reply = await sock.command(frame("action", f"r{i}", {"type": "place", "cells": [cell]}))
                assert reply["type"] == "result", reply
                pushed = json.loads(await asyncio.wait_for(watcher.ws.recv(), 30))
                assert (pushed["seq"], pushed["view"]) == (reply["seq"], reply["view"])
    finally:
        games.view = view
    assert len([r for r in renders if r[1] == 1]) == 3, renders


# --------------------------------------------------------------------------- fog


async def test_a_hidden_units_id_is_refused_as_an_id_no_unit_has(gateway, http):
    """Two games that differ only in player 2's unit 4, far in player 1's fog: player 1
    acting with unit 4 gets the same bytes over the socket (and REST) in both."""
    with_hidden = CELLWAR
    without = {**CELLWAR, "units": CELLWAR_UNITS[:3]}
    seen: list[list[str]] = []
    for config in (with_hidden, without):
        game_id, (one, _) = await new_game(http, "cellwar", config)
        texts = []
        async with socket(gateway, game_id, one) as sock:
            first = json.loads(await asyncio.wait_for(sock.ws.recv(), 30))
            texts.append(json.dumps(first))
            for i, action in enumerate(
                ({"unit_id": 4, "dx": 0, "dy": 0}, {"unit_id": 4, "dx": -1, "dy": 1}, {"unit_id": 99, "dx": 1, "dy": 0})
            ):
                texts.append(json.dumps(await sock.command(frame("action", f"f{i}", action))))
                rest = await rest_action(http, game_id, one, action, key=f"r{i}")
                texts.append(f"{rest.status_code} {rest.text}")
        seen.append([t.replace(game_id, "<game>") for t in texts])
    assert seen[0] == seen[1]
    assert json.loads(seen[0][1])["error"]["code"] == "INVALID_ACTION"


# ------------------------------------------------- one game, through REST and the socket


async def _play(
    http: httpx.AsyncClient, base: str, over_ws: bool, seed: int
) -> tuple[list[dict[str, Any]], list[int]]:
    """A seeded random CellWar game: the player to move picks one of its legal moves
    (``valid_actions``), or ends its turn when it has none, for at most 60 commands; then
    player 2 leaves. Legal moves and commands over the players' sockets when ``over_ws``,
    else REST.
    Returns the public log of the finished game and the ``seq`` of every reply."""
    rng = random.Random(seed)
    seqs: list[int] = []
    game_id, tokens = await new_game(http, "cellwar", CELLWAR)
    async with contextlib.AsyncExitStack() as stack:
        sockets = [await stack.enter_async_context(socket(base, game_id, t)) for t in tokens] if over_ws else []
        for step in range(60):
            view = (await http.get(f"/game/{game_id}/state", headers=bearer(tokens[0]))).json()
            if view["phase"] != "playing":
                break
            seat = view["turn"] - 1
            key = f"step-{step}"
            if over_ws:
                asked = await sockets[seat].command(json.dumps({"type": "valid_actions", "id": f"ask-{step}"}))
                assert asked["type"] == "valid_actions" and asked["id"] == f"ask-{step}", asked
                legal = asked["actions"]
            else:
                legal = (await http.get(f"/game/{game_id}/valid_actions", headers=bearer(tokens[seat]))).json()["actions"]
            if legal:
                pick = rng.choice(legal)
                action = {"unit_id": pick["unit_id"], "dx": pick["dx"], "dy": pick["dy"]}
                if over_ws:
                    reply = await sockets[seat].command(frame("action", key, action))
                else:
                    reply = _as_frame(await rest_action(http, game_id, tokens[seat], action, key))
            elif over_ws:
                reply = await sockets[seat].command(frame("end_turn", key))
            else:
                reply = _as_frame(await rest_end_turn(http, game_id, tokens[seat], key))
            assert reply["type"] == "result", reply
            seqs.append(reply["seq"])
    left = await http.post(f"/game/{game_id}/leave", headers=bearer(tokens[1]))
    assert left.status_code in (200, 409), left.text
    events = (await http.get(f"/game/{game_id}/events")).json()["events"]
    assert events[-1]["type"] == "GameFinished"
    return [{k: v for k, v in e.items() if k != "time"} for e in events], seqs


def _as_frame(answer: httpx.Response) -> dict[str, Any]:
    """A REST command answer as the socket's reply would be."""
    if answer.status_code == 200:
        return {"type": "result", **answer.json()}
    return {"type": "error", "status": answer.status_code, **answer.json()}


async def test_a_random_game_through_the_socket_equals_it_through_rest(gateway, http):
    for seed in (3, 11):
        over_rest, rest_seqs = await _play(http, gateway, over_ws=False, seed=seed)
        over_ws, ws_seqs = await _play(http, gateway, over_ws=True, seed=seed)
        assert len(over_rest) > 20 and len(rest_seqs) > 10
        assert over_ws == over_rest
        assert ws_seqs == rest_seqs
        assert all(e["state_hash"] for e in over_ws)


async def test_the_command_that_ends_the_game_is_answered_before_the_close(gateway, http):
    """Player 1 takes player 2's only unit: the reply to that command and to the one read
    after it (``GAME_FINISHED``, as REST says it) come before the ``finished`` close."""
    config = {
        "width": 6, "height": 6, "players": 2,
        "units": [{"owner": 1, "type": "infantry", "x": 1, "y": 1}, {"owner": 2, "type": "infantry", "x": 2, "y": 1}],
    }
    game_id, (one, _) = await new_game(http, "cellwar", config)
    async with socket(gateway, game_id, one) as sock:
        await sock.send(frame("action", "take", {"unit_id": 1, "dx": 1, "dy": 0}))
        await sock.send(frame("end_turn", "after"))
        frames = []
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:
                frames.append(json.loads(await asyncio.wait_for(sock.ws.recv(), 30)))
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1000
    replies = [f for f in frames if f["type"] in ("result", "error")]
    assert [r["id"] for r in replies] == ["take", "after"]
    assert replies[0]["type"] == "result" and replies[0]["view"]["phase"] == "finished"
    rest = await rest_end_turn(http, game_id, one)
    assert (rest.status_code, rest.json()["error"]["code"]) == (409, "GAME_FINISHED")
    assert replies[1] == {"type": "error", "id": "after", "status": 409, **rest.json()}
    # ``finished`` is sent as it comes (here before the second reply); the close waits.
    assert [f["type"] for f in frames].count("finished") == 1


class _GoneSocket:
    """A socket whose client went: every send raises, as Starlette's does after a close."""

    scope: dict[str, Any] = {}

    async def send_text(self, text: str) -> None:
        raise RuntimeError('Cannot call "send" once a close message has been sent.')


async def test_the_end_of_a_game_waits_no_longer_for_replies_once_the_worker_failed():
    from gateway.errors import ApiError, Code
    from gateway.ws_commands import CommandChannel, Refusal

    channel = CommandChannel(_GoneSocket(), "g", None, 0, None, None, None, None)
    for n in range(3):  # read before the game finished, not answered yet
        channel._queue.put_nowait(Refusal("action", f"k{n}", ApiError(403, Code.FORBIDDEN, "spectator")))
    worker = asyncio.create_task(channel.work())
    # no deadline: it returns because the worker failed, not because a timer ran out
    await channel.finish(timeout_s=None, worker=worker)
    assert worker.done() and isinstance(worker.exception(), RuntimeError)
    assert channel._queue.qsize() == 2  # never answered: the socket is gone
