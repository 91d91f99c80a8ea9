"""Commands over the stream socket (``client.commands(game_id, token)``), each test against
the blocking and the async client (tests/client/flavours.py).

Two parts: a scripted socket (websockets on 127.0.0.1:0) and a mock REST transport check
the client's own rules (answers routed by ``id``, stream frames kept for the reader, the
REST fallback with the same key when the socket closes, times out or answers 503); the
real gateway checks the protocol end to end (docs/api/websocket.md "Commands")."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
import websockets
from websockets.asyncio.server import ServerConnection

from client.sdk import ApiError, Seat
from tests.client.flavours import Face, client

#: 60×60, two players: player 1 draws in x < 30, player 2 in x >= 30.
CONFIG = {"width": 60, "height": 60, "players": 2, "budget": 10}

VIEW = {"kind": "life", "phase": "placement"}


# -- the client's rules, on a scripted socket


@contextlib.asynccontextmanager
async def scripted(answer: Callable[[dict[str, Any]], list[dict[str, Any]] | None]) -> AsyncIterator[tuple[str, list]]:
    """A stream socket that sends ``{"type": "view"}`` on open and then, for each command
    frame, the frames ``answer(frame)`` gives (None: close the socket); yields (base URL,
    the frames received)."""
    received: list[dict[str, Any]] = []

    async def handler(ws: ServerConnection) -> None:
        await ws.send(json.dumps({"type": "view", "seq": 3, "view": VIEW}))
        async for raw in ws:
            frame = json.loads(raw)
            received.append(frame)
            frames = answer(frame)
            if frames is None:
                await ws.close(1011)
                return
            for out in frames:
                await ws.send(json.dumps(out))

    async with websockets.serve(handler, "127.0.0.1", 0, subprotocols=["cellwar.v1"]) as server:
        port = server.sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}", received


def rest(seen: list[tuple[str, str, dict]]) -> httpx.MockTransport:
    """REST that answers every command ``{"seq": 50, "view"}``, but 409 ``OUT_OF_ZONE`` to a
    placement at x >= 30; records (path, Idempotency-Key, body)."""

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else {}
        seen.append((request.url.path, request.headers["Idempotency-Key"], body))
        if any(x >= 30 for x, _ in body.get("cells", [])):
            return httpx.Response(409, json={"error": {"code": "OUT_OF_ZONE", "message": "not your zone"}})
        return httpx.Response(200, json={"seq": 50, "view": VIEW})

    return httpx.MockTransport(handler)


def result_of(frame: dict[str, Any]) -> list[dict[str, Any]]:
    """A view frame, then the command's result (seq 10 + cells placed)."""
    seq = 10 + len(frame.get("action", {}).get("cells", []))
    return [{"type": "view", "seq": seq, "view": VIEW}, {"type": "result", "id": frame["id"], "seq": seq, "view": VIEW}]


async def test_answers_are_routed_by_id_and_stream_frames_kept_for_the_reader(flavour):
    seen: list = []
    async with scripted(result_of) as (url, received), client(flavour, url, transport=rest(seen)) as api:
        async with api.commands("g1", "tok") as cmds:
            assert cmds.over_socket and cmds.open_error is None
            placed = await cmds.act({"type": "place", "cells": [[1, 1], [2, 1]]}, idempotency_key="k-1")
            ended = await cmds.end_turn()
            messages = await cmds.collect("messages", limit=3)
    assert placed == {"seq": 12, "view": VIEW} and ended == {"seq": 10, "view": VIEW}
    assert received[0] == {"type": "action", "id": "k-1", "action": {"type": "place", "cells": [[1, 1], [2, 1]]}}
    assert received[1]["type"] == "end_turn" and set(received[1]) == {"type", "id"} and len(received[1]["id"]) == 36
    assert [(m["type"], m["seq"]) for m in messages] == [("view", 3), ("view", 12), ("view", 10)]
    assert seen == []  # nothing over REST


@pytest.mark.parametrize("frame_after", [False, True])
async def test_a_results_view_is_a_stream_message_once(flavour, frame_after):
    """The server does not send a command's view frame again on the socket whose result
    carried it: the reader gets the result's view among the stream messages, once (also
    from a server that sends the frame after the result anyway)."""

    def result_only(frame: dict[str, Any]) -> list[dict[str, Any]]:
        seq = 10 + len(frame.get("action", {}).get("cells", []))
        out = [{"type": "result", "id": frame["id"], "seq": seq, "view": {**VIEW, "n": seq}}]
        return out + ([{"type": "view", "seq": seq, "view": {**VIEW, "n": seq}}] if frame_after else [])

    async with scripted(result_only) as (url, _), client(flavour, url, transport=rest([])) as api:
        async with api.commands("g1", "tok") as cmds:
            await cmds.act({"type": "place", "cells": [[1, 1], [2, 1]]})
            await cmds.act({"type": "place", "cells": [[3, 1]]})
            messages = await cmds.collect("messages", limit=3)
    assert [(m["type"], m["seq"], m["view"].get("n")) for m in messages] == [
        ("view", 3, None), ("view", 12, 12), ("view", 11, 11)
    ]


async def test_an_error_frame_raises_the_rest_error(flavour):
    def refuse(frame: dict[str, Any]) -> list[dict[str, Any]]:
        error = {"code": "NOT_YOUR_TURN", "message": "player 2 draws now"}
        return [{"type": "error", "id": frame["id"], "status": 409, "error": error}]

    async with scripted(refuse) as (url, _), client(flavour, url, transport=rest([])) as api:
        async with api.commands("g1", "tok") as cmds:
            with pytest.raises(ApiError) as refused:
                await cmds.act({"type": "place", "cells": [[1, 1]]})
            assert cmds.over_socket  # an error answer leaves the socket open
    assert (refused.value.status, refused.value.code, refused.value.message) == (409, "NOT_YOUR_TURN",
                                                                                "player 2 draws now")


@pytest.mark.parametrize("failure", ["close", "silence", "503", "413"])
async def test_an_unanswered_command_is_sent_again_over_rest_with_its_key(flavour, failure):
    """The socket closes under the command, says nothing within the timeout, answers 503,
    or 413 (a frame above the server's limit, answered with ``"id": null``): the same
    command goes over REST with the frame's id as its Idempotency-Key."""

    def fail(frame: dict[str, Any]) -> list[dict[str, Any]] | None:
        if failure == "close":
            return None
        if failure == "silence":
            return []
        if failure == "413":
            error = {"code": "PAYLOAD_TOO_LARGE", "message": "send this command over REST"}
            return [{"type": "error", "id": None, "status": 413, "error": error}]
        return [{"type": "error", "id": frame["id"], "status": 503, "error": {"code": "UNAVAILABLE", "message": ""}}]

    seen: list = []
    async with scripted(fail) as (url, received), client(flavour, url, transport=rest(seen), timeout=0.5) as api:
        async with api.commands("g1", "tok") as cmds:
            answer = await cmds.act({"type": "place", "cells": [[1, 1]]})
            assert cmds.over_socket == (failure != "close")
            with pytest.raises(ApiError) as refused:
                await cmds.act({"type": "place", "cells": [[40, 1]]})
    assert answer == {"seq": 50, "view": VIEW}
    assert [(path, key) for path, key, _ in seen][0] == ("/game/g1/action", received[0]["id"])
    assert seen[0][2] == received[0]["action"] == {"type": "place", "cells": [[1, 1]]}
    assert (refused.value.status, refused.value.code) == (409, "OUT_OF_ZONE")  # over REST, as REST raises it


async def test_a_command_above_the_frame_limit_goes_over_rest_at_once(flavour):
    seen: list = []
    cells = [[x, y] for x in range(30) for y in range(20)]  # 600 cells: about 5 KB of JSON
    async with scripted(result_of) as (url, received), client(flavour, url, transport=rest(seen)) as api:
        async with api.commands("g1", "tok") as cmds:
            assert await cmds.act({"type": "place", "cells": cells}) == {"seq": 50, "view": VIEW}
            assert (await cmds.act({"type": "place", "cells": cells[:2]}))["seq"] == 12  # over the socket
    assert [path for path, _, _ in seen] == ["/game/g1/action"] and seen[0][2]["cells"] == cells
    assert [f["action"]["cells"] for f in received] == [cells[:2]]


async def test_without_a_socket_every_command_goes_over_rest(flavour):
    """Nothing answers WebSockets at the base URL (connection refused): REST only, with the
    REST errors; reading the stream raises why there is no socket."""
    seen: list = []
    async with client(flavour, "http://127.0.0.1:9", transport=rest(seen)) as api:
        async with api.commands("g1", "tok") as cmds:
            assert not cmds.over_socket and isinstance(cmds.open_error, OSError)
            assert await cmds.end_turn(idempotency_key="e-1") == {"seq": 50, "view": VIEW}
            with pytest.raises(ApiError) as refused:
                await cmds.act({"type": "place", "cells": [[31, 1]]})
            with pytest.raises(OSError):
                await cmds.collect("messages")
    assert [(path, key) for path, key, _ in seen[:1]] == [("/game/g1/end_turn", "e-1")]
    assert (refused.value.status, refused.value.code) == (409, "OUT_OF_ZONE")


async def test_commands_sent_together_are_answered_each_its_own(flavour):
    """Async: three commands from three tasks at once, each gets its own result; the
    blocking client sends them one after the other."""
    async with scripted(result_of) as (url, received), client(flavour, url, transport=rest([])) as api:
        async with api.commands("g1", "tok") as cmds:
            actions = [{"type": "place", "cells": [[1, y]] * n} for y, n in ((1, 1), (2, 2), (3, 3))]
            if flavour == "async":
                answers = await asyncio.gather(*(cmds.act(a) for a in actions))
            else:
                answers = [await cmds.act(a) for a in actions]
    assert [a["seq"] for a in answers] == [11, 12, 13]
    assert [f["action"] for f in received] == actions


# -- the protocol end to end, on the real gateway


async def two_player_game(api: Face) -> tuple[str, Seat, Seat]:
    """A Life game in placement, player 1 to draw."""
    game_id = await api.create_game("life", CONFIG)
    return game_id, await api.join(game_id, "alice"), await api.join(game_id, "bob")


def counting(flavour: str, posts: list[str]) -> httpx.BaseTransport | httpx.AsyncBaseTransport:
    """The real HTTP transport of ``flavour``, recording the path of every POST."""

    class Sync(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            if request.method == "POST":
                posts.append(request.url.path)
            return super().handle_request(request)

    class Async(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            if request.method == "POST":
                posts.append(request.url.path)
            return await super().handle_async_request(request)

    return Sync() if flavour == "sync" else Async()


@pytest.mark.integration
async def test_actions_over_the_socket_answer_as_rest_does(flavour, gateway: str):
    posts: list[str] = []
    async with client(flavour, gateway, transport=counting(flavour, posts)) as api:
        game_id, alice, bob = await two_player_game(api)
        posts.clear()
        async with api.commands(game_id, alice.token) as cmds:
            placed = await cmds.act({"type": "place", "cells": [[1, 1], [2, 1]]})
            with pytest.raises(ApiError) as out_of_zone:
                await cmds.act({"type": "place", "cells": [[45, 5]]})
            ended = await cmds.end_turn()
            frames = await cmds.collect("messages", until=lambda m: m["seq"] >= ended["seq"])
            assert cmds.over_socket
        assert posts == []  # all over the socket
        with pytest.raises(ApiError) as over_rest:
            await api.act(game_id, bob.token, {"type": "place", "cells": [[5, 5]]})
        bob_view = await api.state(game_id, bob.token)
    assert set(placed) == {"seq", "view"} and placed["view"]["players"][0]["budget_left"] == 8
    assert (out_of_zone.value.status, out_of_zone.value.code) == (409, "OUT_OF_ZONE")
    assert (over_rest.value.status, over_rest.value.code) == (409, "OUT_OF_ZONE")
    assert ended["seq"] > placed["seq"] and ended["view"]["turn"] == 2 and bob_view["turn"] == 2
    assert frames[0]["type"] == "view" and frames[-1]["seq"] == ended["seq"]


@pytest.mark.integration
async def test_a_key_is_applied_once_over_the_socket_after_a_reconnect_and_over_rest(flavour, gateway: str):
    async with client(flavour, gateway) as api:
        game_id, alice, _ = await two_player_game(api)
        action = {"type": "place", "cells": [[3, 3]]}
        async with api.commands(game_id, alice.token) as cmds:
            first = await cmds.act(action, idempotency_key="cell-3-3")
            again = await cmds.act(action, idempotency_key="cell-3-3")
            with pytest.raises(ApiError) as reused:
                await cmds.act({"type": "place", "cells": [[4, 4]]}, idempotency_key="cell-3-3")
        async with api.commands(game_id, alice.token) as reconnected:
            after_reconnect = await reconnected.act(action, idempotency_key="cell-3-3")
        over_rest = await api.act(game_id, alice.token, action, idempotency_key="cell-3-3")
        view = await api.state(game_id, alice.token)
        events = await api.events(game_id, alice.token)
    assert first["seq"] == again["seq"] == after_reconnect["seq"] == over_rest["seq"] == events[-1]["seq"]
    assert view["players"][0]["budget_left"] == 9  # one cell, placed once
    assert (reused.value.status, reused.value.code) == (422, "IDEMPOTENCY_KEY_REUSED")


@pytest.mark.integration
async def test_commands_of_a_bad_token_raise_as_rest_does(flavour, gateway: str):
    async with client(flavour, gateway) as api:
        game_id, _, _ = await two_player_game(api)
        async with api.commands(game_id, "not-a-token") as cmds:
            with pytest.raises(ApiError) as refused:
                await cmds.act({"type": "place", "cells": [[1, 1]]})
            with pytest.raises(ApiError) as closed:
                await cmds.collect("messages")
    assert (refused.value.status, refused.value.code) == (401, "UNAUTHORIZED")
    assert (closed.value.status, closed.value.code) == (401, "UNAUTHORIZED")


@pytest.mark.integration
async def test_commands_sent_together_are_applied_in_the_order_sent(flavour, gateway: str):
    async with client(flavour, gateway) as api:
        game_id, alice, _ = await two_player_game(api)
        actions = [{"type": "place", "cells": [[1, y]]} for y in (1, 2, 3)]
        async with api.commands(game_id, alice.token) as cmds:
            if flavour == "async":
                answers = await asyncio.gather(*(cmds.act(a) for a in actions))
            else:
                answers = [await cmds.act(a) for a in actions]
        events = await api.events(game_id, alice.token)
    seqs = [a["seq"] for a in answers]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3
    assert [e["seq"] for e in events[-3:]] == seqs
    assert [e["payload"]["action"] for e in events[-3:]] == actions


@pytest.mark.integration
async def test_after_the_end_the_socket_is_gone_and_commands_raise_as_rest_does(flavour, gateway: str):
    async with client(flavour, gateway) as api:
        game_id, alice, bob = await two_player_game(api)
        async with api.commands(game_id, alice.token) as cmds:
            await cmds.act({"type": "resign"})
            frames = await cmds.collect("messages")  # to the end: ``finished``, then the server closes
            with pytest.raises(ApiError) as late:
                await cmds.end_turn()
        with pytest.raises(ApiError) as over_rest:
            await api.end_turn(game_id, bob.token)
    assert frames[-1]["type"] == "finished"
    assert late.value.status == over_rest.value.status == 409 and late.value.code == over_rest.value.code


# -- legal moves over the socket

MOVES = [{"unit_id": 7, "dx": 1, "dy": 0, "kind": "move"}]


def rest_moves(seen: list[str]) -> httpx.MockTransport:
    """REST that answers ``GET .../valid_actions`` with :data:`MOVES`; records the URLs."""

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}?{request.url.query.decode()}")
        return httpx.Response(200, json={"actions": MOVES})

    return httpx.MockTransport(handler)


@pytest.mark.parametrize("server", ["answers", "closes", "does_not_know_it"])
async def test_valid_actions_go_over_the_socket_else_over_rest(flavour, server):
    """Asked on the socket and routed by id; a socket that closes under it, or a server that
    does not know the frame (``UNKNOWN_FRAME_TYPE``), sends the question over REST."""

    def answer(frame: dict[str, Any]) -> list[dict[str, Any]] | None:
        if server == "closes":
            return None
        if server == "does_not_know_it":
            error = {"code": "UNKNOWN_FRAME_TYPE", "message": "a client sends 'action' or 'end_turn'"}
            return [{"type": "error", "id": frame["id"], "status": 422, "error": error}]
        return [{"type": "valid_actions", "id": frame["id"], "actions": [{**MOVES[0], "unit_id": frame["unit_id"]}]}]

    seen: list[str] = []
    async with scripted(answer) as (url, received), client(flavour, url, transport=rest_moves(seen)) as api:
        async with api.commands("g1", "tok") as cmds:
            moves = await cmds.valid_actions(7)
    assert received[0]["type"] == "valid_actions" and received[0]["unit_id"] == 7 and len(received[0]["id"]) == 36
    assert moves == MOVES
    assert seen == ([] if server == "answers" else ["GET /game/g1/valid_actions?unit_id=7"])


@pytest.mark.integration
async def test_valid_actions_over_the_socket_answer_as_rest_does(flavour, gateway: str):
    units = [
        {"owner": 1, "type": "infantry", "x": 0, "y": 1},
        {"owner": 1, "type": "infantry", "x": 1, "y": 1},
        {"owner": 2, "type": "infantry", "x": 7, "y": 6},
        {"owner": 2, "type": "infantry", "x": 6, "y": 6},
    ]
    async with client(flavour, gateway) as api:
        game_id = await api.create_game("cellwar", {"width": 8, "height": 8, "players": 2, "units": units})
        alice, _ = await api.join(game_id, "alice"), await api.join(game_id, "bob")
        async with api.commands(game_id, alice.token) as cmds:
            every = await cmds.valid_actions()
            one = await cmds.valid_actions(1)
            await cmds.act({"unit_id": 1, "dx": 0, "dy": 1})
            after = await cmds.valid_actions(1)
            after_every = await cmds.valid_actions()
            assert cmds.over_socket
        rest_every = await api.valid_actions(game_id, alice.token)
    assert {a["unit_id"] for a in every} == {1, 3} and one == [a for a in every if a["unit_id"] == 1]
    assert after == [] and {a["unit_id"] for a in after_every} == {3} and after_every == rest_every
