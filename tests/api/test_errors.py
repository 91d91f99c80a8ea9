"""Every refusal of the REST API is an HTTP status + ``{"error": {"code", "message"}}``
(docs/api/index.md "Errors") and leaves the game as it was: same view, same event log."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from itsdangerous import URLSafeSerializer

from client.sdk import AsyncCellWarClient, Seat

pytestmark = pytest.mark.integration

#: 60×60, two players: player 1 draws in x < 30, player 2 in x >= 30.
CONFIG = {"width": 60, "height": 60, "players": 2, "budget": 10}


async def two_player_game(api: AsyncCellWarClient, **config: Any) -> tuple[str, Seat, Seat]:
    """A Life game in placement, player 1 to draw."""
    game_id = await api.create_game("life", {**CONFIG, **config})
    first = await api.join(game_id, "alice")
    second = await api.join(game_id, "bob")
    return game_id, first, second


async def observe(api: AsyncCellWarClient, game_id: str, seat: Seat) -> tuple[dict, list[dict]]:
    """What must not change after a refused request: the view and the event log."""
    return await api.state(game_id, seat.token), await api.events(game_id, seat.token)


def assert_error(response: httpx.Response, status: int, code: str) -> None:
    """The answer is ``status`` with exactly the error body shape and ``code``."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]


def bearer(seat: Seat) -> dict[str, str]:
    return {"Authorization": f"Bearer {seat.token}"}


@pytest.fixture
async def http(gateway: str):
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as client:
        yield client


@pytest.fixture
async def game(api: AsyncCellWarClient):
    """(game_id, player 1, player 2, observation before the test's request)."""
    game_id, first, second = await two_player_game(api)
    before = await observe(api, game_id, first)
    assert before[0]["phase"] == "placement" and before[0]["turn"] == 1
    return game_id, first, second, before


async def test_cell_out_of_own_zone_is_409_out_of_zone(http, api, game):
    game_id, first, _, before = game
    response = await http.post(
        f"/game/{game_id}/action", json={"type": "place", "cells": [[5, 5], [45, 5]]}, headers=bearer(first)
    )
    assert_error(response, 409, "OUT_OF_ZONE")
    assert await observe(api, game_id, first) == before


async def test_more_cells_than_budget_is_409_budget_exceeded(http, api, game):
    game_id, first, _, before = game
    cells = [[x, 3] for x in range(2, 13)]  # 11 cells, budget 10
    response = await http.post(f"/game/{game_id}/action", json={"type": "place", "cells": cells}, headers=bearer(first))
    assert_error(response, 409, "BUDGET_EXCEEDED")
    assert await observe(api, game_id, first) == before


async def test_acting_out_of_turn_is_409_not_your_turn(http, api, game):
    game_id, first, second, before = game
    response = await http.post(
        f"/game/{game_id}/action", json={"type": "place", "cells": [[40, 5]]}, headers=bearer(second)
    )
    assert_error(response, 409, "NOT_YOUR_TURN")
    response = await http.post(f"/game/{game_id}/end_turn", headers=bearer(second))
    assert_error(response, 409, "NOT_YOUR_TURN")
    assert await observe(api, game_id, first) == before


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/game/{id}/state", None),
        ("POST", "/game/{id}/action", {"type": "place", "cells": [[1, 1]]}),
        ("POST", "/game/{id}/end_turn", None),
        ("POST", "/game/{id}/leave", None),
    ],
)
async def test_missing_token_is_401(http, api, game, method, path, body):
    game_id, first, _, before = game
    response = await http.request(method, path.format(id=game_id), json=body)
    assert_error(response, 401, "UNAUTHORIZED")
    assert await observe(api, game_id, first) == before


async def test_a_game_that_does_not_exist_is_404_without_a_token_too(http):
    response = await http.get("/game/nosuchgame/state")
    assert_error(response, 404, "GAME_NOT_FOUND")


@pytest.mark.parametrize("kind", ["garbage", "other_secret", "swapped_signature"])
async def test_forged_or_garbled_token_is_401(http, api, game, kind):
    game_id, first, _, before = game
    if kind == "garbage":
        token = "not-a-token"
    elif kind == "other_secret":
        token = URLSafeSerializer("another-secret", salt="cellwar-player").dumps({"g": game_id, "p": 1})
    else:  # player 2's payload under player 1's signature
        payload = URLSafeSerializer("x", salt="cellwar-player").dumps({"g": game_id, "p": 2}).split(".")[0]
        token = payload + "." + first.token.split(".")[-1]
    response = await http.post(
        f"/game/{game_id}/action",
        json={"type": "place", "cells": [[1, 1]]},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert_error(response, 401, "UNAUTHORIZED")
    assert await observe(api, game_id, first) == before


async def test_token_of_another_game_is_403(http, api, game):
    game_id, first, _, before = game
    _, other, _ = await two_player_game(api)
    response = await http.post(
        f"/game/{game_id}/action", json={"type": "place", "cells": [[1, 1]]}, headers=bearer(other)
    )
    assert_error(response, 403, "FORBIDDEN")
    response = await http.get(f"/game/{game_id}/state", headers=bearer(other))
    assert_error(response, 403, "FORBIDDEN")
    assert await observe(api, game_id, first) == before


async def test_unknown_game_is_404(http):
    assert_error(await http.post("/game/no-such-game/join", json={"name": "carol"}), 404, "GAME_NOT_FOUND")
    assert_error(await http.get("/game/no-such-game/events"), 404, "GAME_NOT_FOUND")
    assert_error(await http.get("/game/no-such-game/replay", params={"seq": 1}), 404, "GAME_NOT_FOUND")


@pytest.mark.parametrize(
    "body",
    [
        {"type": "place"},  # no cells
        {"type": "place", "cells": []},
        {"type": "place", "cells": [[1]]},
        {"type": "place", "cells": [[1, "a"]]},
        {"type": "place", "cells": [[1, 2]], "colour": 3},  # unknown field
        {"type": "fly"},
        {"type": "speed", "multiplier": 3},
        {"type": "stamp", "x": 1, "y": 1},  # neither pattern nor rle
        {"type": "stamp", "pattern": "glider", "x": 1, "y": 1, "rotation": 4},
        {"unit_id": 1, "dx": 2, "dy": 0},
        [1, 2],
    ],
)
async def test_malformed_action_is_422(http, api, game, body):
    game_id, first, _, before = game
    response = await http.post(f"/game/{game_id}/action", json=body, headers=bearer(first))
    assert_error(response, 422, "MALFORMED")
    assert await observe(api, game_id, first) == before


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        # neither a Life action nor a move: the message names both, not a move's fields
        ({}, "unknown action: an action is a JSON object with 'type' one of"),
        ("place", "unknown action: an action is a JSON object with 'type' one of"),
        ([1, 2], "unknown action: an action is a JSON object with 'type' one of"),
        ({"cells": [[1, 1]]}, "or a CellWar move {unit_id, dx, dy}"),
        ({"type": "fly"}, "'resign'] (Life; 'restart' too in the campaign)"),
        # a body naming a move's field is a move: its missing fields are named
        ({"unit_id": 1}, "body.move.dx: Field required; body.move.dy: Field required"),
        ({"type": "place"}, "body.place.cells: Field required"),
        # what the body was, in the refusal
        ({"type": "fly"}, '(got type "fly")'),
        ({}, "(got an object with neither)"),
        ([1, 2], "(got an array)"),
        ({"type": "speed", "multiplier": True}, "body.speed.multiplier: Input should be 1, 2, 4 or 8"),
        ({"type": "place", "cells": [[99999999999999999999, 5]]}, "(got 99999999999999999999)"),
    ],
)
async def test_a_malformed_action_names_what_it_lacks(http, api, game, body, shown):
    game_id, first, _, before = game
    response = await http.post(f"/game/{game_id}/action", json=body, headers=bearer(first))
    assert_error(response, 422, "MALFORMED")
    message = response.json()["error"]["message"]
    assert shown in message
    if "unknown action" in message:
        assert "body.move" not in message
    assert await observe(api, game_id, first) == before


async def test_a_number_longer_than_the_int_limit_is_named(http, api, game):
    game_id, first, _, before = game
    response = await http.post(
        f"/game/{game_id}/action",
        content=b'{"type": "place", "cells": [[' + b"9" * 5000 + b", 1]]}",
        headers={**bearer(first), "Content-Type": "application/json"},
    )
    assert_error(response, 422, "MALFORMED")
    assert response.json()["error"]["message"] == "body: a number has more than 4300 digits"
    assert await observe(api, game_id, first) == before


async def test_body_that_is_not_json_is_422(http, api, game):
    game_id, first, _, before = game
    response = await http.post(
        f"/game/{game_id}/action",
        content=b"place 1,1",
        headers={**bearer(first), "Content-Type": "application/json"},
    )
    assert_error(response, 422, "MALFORMED")
    assert response.json()["error"]["message"] == "body: not valid JSON (Expecting value at character 0)"
    assert await observe(api, game_id, first) == before


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "life", "config": {"width": 5}},
        {"kind": "life", "config": {"players": 3}},
        {"kind": "life", "config": {"budget": -1}},
        {"kind": "chess"},
        {"config": {}},
        {"kind": "cellwar", "config": {"players": 9}},
    ],
)
async def test_malformed_create_is_422(http, body):
    games_before = (await http.get("/games")).json()
    response = await http.post("/game/create", json=body)
    assert_error(response, 422, "MALFORMED")
    assert (await http.get("/games")).json() == games_before


async def test_malformed_join_is_422(http, api, game):
    game_id, first, _, before = game
    assert_error(await http.post(f"/game/{game_id}/join", json={}), 422, "MALFORMED")
    assert_error(await http.post(f"/game/{game_id}/join", json={"name": ""}), 422, "MALFORMED")
    assert await observe(api, game_id, first) == before


async def test_third_player_is_409_game_full(http, api, game):
    game_id, first, _, before = game
    assert_error(await http.post(f"/game/{game_id}/join", json={"name": "carol"}), 409, "GAME_FULL")
    assert await observe(api, game_id, first) == before
