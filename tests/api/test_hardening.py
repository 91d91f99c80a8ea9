"""Hardening of the REST API against a hostile or careless client (docs/security.md), on the
real stack: idempotency keys scoped by game and player and bound to their body, bounded
numbers, bodies that do not parse, names, the body size limit, the rate limit, and
/docs served without a CDN."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
import pytest

from client.sdk import AsyncCellWarClient, Seat
from gateway.app import create_app
from services.common.errors import error_from_rpc
from services.common.settings import Settings
from tests.api.conftest import TEST_SECRET, serve
from tests.support.client import SessionClient

pytestmark = pytest.mark.integration

#: 60×60, two players: player 1 draws in x < 30, player 2 in x >= 30.
CONFIG = {"width": 60, "height": 60, "players": 2, "budget": 10}


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The answer is ``status`` + ``{"error": {"code": code, "message"}}``; returns the error."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]
    return body["error"]


def bearer(seat: Seat) -> dict[str, str]:
    """The Authorization header of a seat."""
    return {"Authorization": f"Bearer {seat.token}"}


def budget_left(view: dict[str, Any], player_id: int) -> int:
    """``budget_left`` of a player in a view."""
    return next(p for p in view["players"] if p["id"] == player_id)["budget_left"]


@pytest.fixture
async def http(gateway: str) -> AsyncIterator[httpx.AsyncClient]:
    """A plain httpx client of the test gateway."""
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as client:
        yield client


async def two_player_game(api: AsyncCellWarClient) -> tuple[str, Seat, Seat]:
    """A Life game in placement, player 1 to draw."""
    game_id = await api.create_game("life", CONFIG)
    return game_id, await api.join(game_id, "alice"), await api.join(game_id, "bob")


async def place(
    http: httpx.AsyncClient, game_id: str, seat: Seat, cells: list[list[int]], key: str
) -> httpx.Response:
    """POST a place action with an Idempotency-Key."""
    return await http.post(
        f"/game/{game_id}/action",
        json={"type": "place", "cells": cells},
        headers={**bearer(seat), "Idempotency-Key": key},
    )


# --------------------------------------------------------------------------- idempotency


async def test_a_key_used_in_one_game_is_a_new_key_in_another(api, http):
    game_a, alice_a, _ = await two_player_game(api)
    game_b, alice_b, _ = await two_player_game(api)
    key = "shared-" + uuid.uuid4().hex
    in_a = await place(http, game_a, alice_a, [[3, 3]], key)
    assert in_a.status_code == 200, in_a.text
    in_b = await place(http, game_b, alice_b, [[5, 5], [6, 5]], key)
    assert in_b.status_code == 200, in_b.text
    # applied in B: its own event (seq 4 = after create, 2 joins), two cells paid for
    assert in_b.json()["seq"] == 4
    assert budget_left(in_b.json()["view"], 1) == CONFIG["budget"] - 2
    assert budget_left(await api.state(game_b, alice_b.token), 1) == CONFIG["budget"] - 2
    assert budget_left(await api.state(game_a, alice_a.token), 1) == CONFIG["budget"] - 1


async def test_one_players_key_never_answers_another_players_command(api, http):
    game_id, alice, bob = await two_player_game(api)
    key = "mine-" + uuid.uuid4().hex
    placed = await place(http, game_id, alice, [[3, 3]], key)
    assert placed.status_code == 200 and placed.json()["seq"] == 4
    ended = await http.post(
        f"/game/{game_id}/end_turn", headers={**bearer(alice), "Idempotency-Key": key}
    )
    # Alice's own key with another command is refused, and her turn goes on
    assert_error(ended, 422, "IDEMPOTENCY_KEY_REUSED")
    await api.end_turn(game_id, alice.token)
    bobs = await place(http, game_id, bob, [[40, 40], [41, 40]], key)
    assert bobs.status_code == 200, bobs.text
    # a new event, not Alice's: Bob's 5th observed (her blind placement is not counted)
    assert bobs.json()["seq"] == 5 and bobs.json()["view"]["seq"] == 5
    assert budget_left(await api.state(game_id, bob.token), 2) == CONFIG["budget"] - 2


async def test_a_key_sent_again_with_another_body_is_refused(api, http):
    game_id, alice, _ = await two_player_game(api)
    key = "body-" + uuid.uuid4().hex
    first = await place(http, game_id, alice, [[3, 3]], key)
    assert first.status_code == 200
    other = await place(http, game_id, alice, [[4, 4], [5, 5]], key)
    err = assert_error(other, 422, "IDEMPOTENCY_KEY_REUSED")
    assert "different request" in err["message"]
    same = await place(http, game_id, alice, [[3, 3]], key)
    assert same.status_code == 200 and same.json()["seq"] == first.json()["seq"] == 4
    assert budget_left(await api.state(game_id, alice.token), 1) == CONFIG["budget"] - 1
    # a join key too: another name with the same key is not the same join
    join_key = "join-" + uuid.uuid4().hex
    game_2 = await api.create_game("life", CONFIG)
    joined = await http.post(
        f"/game/{game_2}/join", json={"name": "carol"}, headers={"Idempotency-Key": join_key}
    )
    assert joined.status_code == 200 and joined.json()["player_id"] == 1
    stolen = await http.post(
        f"/game/{game_2}/join", json={"name": "mallory"}, headers={"Idempotency-Key": join_key}
    )
    assert_error(stolen, 422, "IDEMPOTENCY_KEY_REUSED")
    # and a create key with another config
    create_key = "create-" + uuid.uuid4().hex
    made = await http.post(
        "/game/create", json={"kind": "life", "config": CONFIG}, headers={"Idempotency-Key": create_key}
    )
    assert made.status_code == 201
    again = await http.post(
        "/game/create", json={"kind": "life", "config": CONFIG}, headers={"Idempotency-Key": create_key}
    )
    assert again.status_code == 201 and again.json() == made.json()
    changed = await http.post(
        "/game/create",
        json={"kind": "life", "config": {**CONFIG, "budget": 99}},
        headers={"Idempotency-Key": create_key},
    )
    assert_error(changed, 422, "IDEMPOTENCY_KEY_REUSED")


async def test_concurrent_retries_are_applied_once(api, http):
    game_id, alice, _ = await two_player_game(api)
    key = "burst-" + uuid.uuid4().hex
    answers = await asyncio.gather(*(place(http, game_id, alice, [[7, 7]], key) for _ in range(8)))
    assert [a.status_code for a in answers] == [200] * 8
    assert {a.json()["seq"] for a in answers} == {4}
    assert budget_left(await api.state(game_id, alice.token), 1) == CONFIG["budget"] - 1


async def test_key_scope_and_digest_survive_a_session_restart(stack, api, http):
    game_id, alice, _ = await two_player_game(api)
    key = "restart-" + uuid.uuid4().hex
    first = await place(http, game_id, alice, [[3, 3]], key)
    assert first.status_code == 200
    await stack.restart_session()
    settings = Settings(session_addr=stack.session_target, secret=TEST_SECRET)
    async with serve(create_app(settings)) as url, httpx.AsyncClient(base_url=url, timeout=30) as later:
        same = await place(later, game_id, alice, [[3, 3]], key)
        assert same.status_code == 200 and same.json()["seq"] == first.json()["seq"]
        other = await place(later, game_id, alice, [[4, 4]], key)
        assert_error(other, 422, "IDEMPOTENCY_KEY_REUSED")
        view = (await later.get(f"/game/{game_id}/state", headers=bearer(alice))).json()
        assert view["seq"] == 4 and budget_left(view, 1) == CONFIG["budget"] - 1


@pytest.mark.parametrize("key", ["has space", "ключ", "x" * 201])
async def test_an_idempotency_key_is_printable_ascii(api, http, key):
    game_id, alice, _ = await two_player_game(api)
    answer = await http.post(
        f"/game/{game_id}/action",
        json={"type": "place", "cells": [[3, 3]]},
        headers={**bearer(alice), "Idempotency-Key": key.encode()},
    )
    assert_error(answer, 422, "MALFORMED")


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("replay?seq=1000000000000000000000000000000", "1000000000000000000000000000000"),
        ("replay?seq=9223372036854775808", "9223372036854775808"),
        ("events?from_seq=18446744073709551616", "18446744073709551616"),
        ("events?from_seq=-1", "-1"),
        ("valid_actions?unit_id=4294967296", "4294967296"),
    ],
)
async def test_huge_query_numbers_are_malformed(api, http, path, shown):
    game_id, alice, _ = await two_player_game(api)
    err = assert_error(await http.get(f"/game/{game_id}/{path}", headers=bearer(alice)), 422, "MALFORMED")
    assert shown in err["message"]


async def test_the_largest_query_numbers_reach_the_session(api, http):
    game_id, alice, _ = await two_player_game(api)
    events = await http.get(f"/game/{game_id}/events?from_seq={2**63 - 1}", headers=bearer(alice))
    assert events.status_code == 200 and events.json() == {"events": []}
    replay = await http.get(f"/game/{game_id}/replay?seq={2**63 - 1}", headers=bearer(alice))
    # Fits the schema, beyond the game's last event: the rules refuse it (409).
    assert "within 1..3" in assert_error(replay, 409, "SEQ_OUT_OF_RANGE")["message"]


@pytest.mark.parametrize(
    "cell",
    [[10**30, 1], [2**63, 0], [2**31, 0], [1024, 0], [0, 1024], [-1025, 0], [3, -(2**40)]],
)
async def test_coordinates_beyond_any_board_are_malformed_with_the_real_value(api, http, cell):
    game_id, alice, _ = await two_player_game(api)
    answer = await place(http, game_id, alice, [cell], "c-" + uuid.uuid4().hex)
    err = assert_error(answer, 422, "MALFORMED")
    bad = next(v for v in cell if not -1024 <= v <= 1023)
    assert f"(got {bad})" in err["message"]
    assert budget_left(await api.state(game_id, alice.token), 1) == CONFIG["budget"]


async def test_coordinates_in_bounds_reach_the_rules_unchanged(api, http):
    game_id, alice, _ = await two_player_game(api)
    for cell in ([1023, 0], [-1024, 5], [-1, 0]):
        answer = await place(http, game_id, alice, [cell], "c-" + uuid.uuid4().hex)
        err = assert_error(answer, 409, "OUT_OF_ZONE")
        assert f"[{cell[0]}, {cell[1]}]" in err["message"]
    for x, y in ((1024, 0), (-1025, 3), (0, 2**40)):
        stamp = await http.post(
            f"/game/{game_id}/action",
            json={"type": "stamp", "pattern": "glider", "x": x, "y": y},
            headers=bearer(alice),
        )
        assert_error(stamp, 422, "MALFORMED")


async def test_the_engine_refuses_huge_cells_with_the_real_value(stack, api):
    """Behind the gateway too (a gRPC caller): no clamped stand-in in the message."""
    game_id, _, _ = await two_player_game(api)
    client = SessionClient.open(stack.session_target)
    try:
        for cell in ([2**31, 0], [10**30, 1]):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await client.act(game_id, 1, {"type": "place", "cells": [cell]})
            code, message = error_from_rpc(caught.value)
            assert code == "MALFORMED"
            assert f"cell [{cell[0]}, {cell[1]}]" in message
    finally:
        await client.close()


# --------------------------------------------------------------------------- bodies


@pytest.mark.parametrize(
    "body",
    [
        b'{"type": "place", "cells": [[3, 3]], "x": "\xff\xfe"}',
        b"[" * 100_000 + b"]" * 100_000,
        b'{"type": "place", "cells": [[3, 3]]',
        b"",
    ],
    ids=["invalid-utf8", "nested-100k", "truncated", "empty"],
)
async def test_a_body_that_does_not_parse_is_422_malformed(api, http, body):
    game_id, alice, _ = await two_player_game(api)
    answer = await http.post(
        f"/game/{game_id}/action",
        content=body,
        headers={**bearer(alice), "Content-Type": "application/json"},
    )
    assert_error(answer, 422, "MALFORMED")


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "name",
    ["nul\x00byte", "\u202eevil", "tab\tname", "line\nbreak", "zero\u200bwidth", "   ", "", "x" * 41],
)
async def test_names_with_control_or_format_characters_are_refused(api, http, name):
    game_id = await api.create_game("life", CONFIG)
    assert_error(await http.post(f"/game/{game_id}/join", json={"name": name}), 422, "MALFORMED")
    if name:
        assert_error(await http.post("/profiles", json={"name": name}), 422, "MALFORMED")
    assert (await api.state(game_id, (await api.join(game_id, "ok")).token))["players"][0]["name"] == "ok"


async def test_names_in_any_script_are_kept(api):
    game_id = await api.create_game("life", CONFIG)
    first = await api.join(game_id, "Алиса")
    await api.join(game_id, "李")
    longest = "Ж" * 40
    view = await api.state(game_id, first.token)
    assert [p["name"] for p in view["players"]] == ["Алиса", "李"]
    assert (await api.create_profile(longest))["profile_id"]


# --------------------------------------------------------------------------- size limit


async def test_a_declared_huge_body_is_refused_before_it_is_read(gateway):
    """64 MiB announced, none sent: the 413 comes at once (the body is never awaited)."""
    host, port = gateway.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(
            b"POST /game/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 67108864\r\n\r\n{"
        )
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
        assert head.startswith(b"HTTP/1.1 413 ")
        length = int(re.search(rb"content-length: (\d+)", head.lower()).group(1))
        body = json.loads(await asyncio.wait_for(reader.readexactly(length), timeout=5))
        assert body["error"]["code"] == "PAYLOAD_TOO_LARGE"
        assert "4194304" in body["error"]["message"]
    finally:
        writer.close()


@pytest.fixture
async def small_body_gateway(stack) -> AsyncIterator[str]:
    """A gateway accepting bodies of at most 1,000 bytes."""
    settings = Settings(session_addr=stack.session_target, secret=TEST_SECRET, max_body_bytes=1000)
    async with serve(create_app(settings)) as url:
        yield url


async def test_a_streamed_body_is_cut_at_the_limit(small_body_gateway):
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"kind": "life", "config": {}, "pad": "'
        for _ in range(10):
            yield b"x" * 500
        yield b'"}'

    async with httpx.AsyncClient(base_url=small_body_gateway, timeout=30) as http:
        answer = await http.post(
            "/game/create", content=chunks(), headers={"Content-Type": "application/json"}
        )
        assert "content-length" not in answer.request.headers  # chunked
        err = assert_error(answer, 413, "PAYLOAD_TOO_LARGE")
        assert "1000 bytes" in err["message"]
        small = await http.post("/game/create", json={"kind": "life", "config": CONFIG})
        assert small.status_code == 201, small.text
        sized = await http.post("/game/create", content=b" " * 1001, headers={"Content-Type": "application/json"})
        assert_error(sized, 413, "PAYLOAD_TOO_LARGE")


# --------------------------------------------------------------------------- rate limit


@pytest.fixture
async def limited_gateway(stack) -> AsyncIterator[str]:
    """A gateway whose POST buckets hold 3 requests and refill one per 100 s."""
    settings = Settings(
        session_addr=stack.session_target,
        secret=TEST_SECRET,
        rate_limit_per_s=0.01,
        rate_limit_burst=3,
    )
    async with serve(create_app(settings)) as url:
        yield url


async def test_posts_are_rate_limited_per_player_else_per_address(limited_gateway):
    async with AsyncCellWarClient(limited_gateway, timeout=30) as api, httpx.AsyncClient(
        base_url=limited_gateway, timeout=30
    ) as http:
        game_id = await api.create_game("life", CONFIG)  # address bucket: 1
        alice = await api.join(game_id, "alice")  # 2
        bob = await api.join(game_id, "bob")  # 3
        limited = await http.post("/game/create", json={"kind": "life", "config": CONFIG})
        assert_error(limited, 429, "RATE_LIMITED")
        assert 1 <= int(limited.headers["Retry-After"]) <= 100
        # GETs are not limited; each player has its own bucket
        assert (await http.get("/games")).status_code == 200
        for cell in ([1, 1], [2, 2], [3, 3]):
            assert (await place(http, game_id, alice, [cell], uuid.uuid4().hex)).status_code == 200
        assert_error(await place(http, game_id, alice, [[4, 4]], uuid.uuid4().hex), 429, "RATE_LIMITED")
        ended = await http.post(f"/game/{game_id}/end_turn", headers=bearer(bob))
        assert_error(ended, 409, "NOT_YOUR_TURN")  # Bob's bucket still had tokens
        forged = {"Authorization": "Bearer not-a-token"}
        assert_error(await http.post(f"/game/{game_id}/end_turn", headers=forged), 429, "RATE_LIMITED")


# --------------------------------------------------------------------------- docs


async def test_docs_are_served_without_a_cdn(http):
    page = await http.get("/docs")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|url: ?["']([^"']+)["']""", page.text)
    found = [a or b for a, b in urls]
    assert "/_docs/swagger-ui-bundle.js" in found and "/_docs/swagger-ui.css" in found
    assert "/openapi.json" in found
    assert "//" not in "".join(found)  # no absolute (CDN) URL
    for url in found:
        answer = await http.get(url)
        assert answer.status_code == 200, url
        assert len(answer.content) > 100
    assert_error(await http.get("/redoc"), 404, "NOT_FOUND")  # ReDoc needs a CDN: off
