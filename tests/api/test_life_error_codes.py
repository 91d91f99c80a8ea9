"""Every error code of the REST API (docs/api/index.md "Errors") for a Life game, through
the gateway: the status, the ``{"error": {"code", "message"}}`` body, and the game left
exactly as it was (views and event log). Complements tests/api/test_errors.py (which has the
first cases of OUT_OF_ZONE, BUDGET_EXCEEDED, NOT_YOUR_TURN, GAME_FULL, 401, 403, 404 and
MALFORMED)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx
import pytest
from itsdangerous import URLSafeSerializer, URLSafeTimedSerializer

from client.sdk import ApiError, AsyncCellWarClient, Seat
from tests.api.conftest import TEST_SECRET

pytestmark = pytest.mark.integration

#: 16×16, two players: player 1 draws in x < 8, player 2 in x >= 8.
CONFIG = {"width": 16, "height": 16, "players": 2, "budget": 4}
BLOCK_1 = [[2, 2], [3, 2], [2, 3], [3, 3]]
BLOCK_2 = [[11, 2], [12, 2], [11, 3], [12, 3]]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_error(response: httpx.Response, status: int, code: str) -> str:
    """The answer is ``status`` + exactly ``{"error": {"code", "message"}}``; returns the
    message."""
    sent = response.request.content.decode(errors="replace")[:200]
    assert response.status_code == status, f"{response.request.url} {sent}: {response.text}"
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    assert body["error"]["code"] == code, f"{response.request.url} {sent}: {body}"
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]["message"]


async def observe(api: AsyncCellWarClient, game_id: str, *seats: Seat) -> list[Any]:
    """What a refused request must not change: every seat's view and event log."""
    seen: list[Any] = []
    for seat in seats:
        seen += [await api.state(game_id, seat.token), await api.events(game_id, seat.token)]
    return seen


async def new_game(api: AsyncCellWarClient, **config: Any) -> tuple[str, list[Seat]]:
    """A Life game with every seat taken: ``placement``, player 1 to draw."""
    cfg = {**CONFIG, **config}
    game_id = await api.create_game("life", cfg)
    seats = [await api.join(game_id, f"p{i}") for i in range(1, cfg["players"] + 1)]
    return game_id, seats


async def wait_phase(api: AsyncCellWarClient, game_id: str, seat: Seat, *phases: str) -> dict:
    """Poll the view until its phase is one of ``phases`` (bounded)."""
    view: dict = {}
    for _ in range(1000):
        view = await api.state(game_id, seat.token)
        if view["phase"] in phases:
            return view
        await asyncio.sleep(0.01)
    raise AssertionError(f"phase {view.get('phase')!r} never became one of {phases}")


async def redraw_game(api: AsyncCellWarClient, budget: int = 5) -> tuple[str, Seat, Seat]:
    """Two blocks, the board is stable: phase ``redraw`` with ``budget - 4`` left each."""
    game_id, (one, two) = await new_game(api, budget=budget)
    await api.place(game_id, one.token, BLOCK_1)
    await api.end_turn(game_id, one.token)
    await api.place(game_id, two.token, BLOCK_2)
    await api.end_turn(game_id, two.token)
    await wait_phase(api, game_id, one, "redraw")
    return game_id, one, two


async def paused_game(api: AsyncCellWarClient) -> tuple[str, Seat, Seat]:
    """Two gliders on a torus (never stable), the simulation paused."""
    game_id, (one, two) = await new_game(api, budget=10, torus=True, max_generations=1_000_000)
    await api.stamp(game_id, one.token, 1, 1, "glider")
    await api.end_turn(game_id, one.token)
    await api.stamp(game_id, two.token, 9, 1, "glider")
    await api.end_turn(game_id, two.token)
    await api.simple(game_id, one.token, "pause")
    await wait_phase(api, game_id, one, "paused")
    return game_id, one, two


@pytest.fixture
async def api(api: AsyncCellWarClient):
    """The SDK client; every game created through it is brought to its end afterwards, so
    that no game is left ticking (or waiting) for the next stack to rebuild."""
    created: dict[str, list[Seat]] = {}
    create_game, join = api.create_game, api.join

    async def tracked_create(*args: Any, **kwargs: Any) -> str:
        game_id = await create_game(*args, **kwargs)
        created[game_id] = []
        return game_id

    async def tracked_join(game_id: str, *args: Any, **kwargs: Any) -> Seat:
        seat = await join(game_id, *args, **kwargs)
        created.setdefault(game_id, []).append(seat)
        return seat

    api.create_game, api.join = tracked_create, tracked_join  # type: ignore[method-assign]
    yield api
    for game_id, seats in created.items():
        try:
            while True:  # fill the open seats, then everyone leaves: finished
                seats.append(await join(game_id, "closer"))
        except ApiError:
            pass
        for seat in seats:
            with contextlib.suppress(ApiError):
                await api.leave(game_id, seat.token)


@pytest.fixture
async def http(gateway: str):
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as client:
        yield client


async def post_action(
    http: httpx.AsyncClient, game_id: str, seat: Seat, body: Any
) -> httpx.Response:
    return await http.post(f"/game/{game_id}/action", json=body, headers=bearer(seat.token))


# ---------------------------------------------------------------- 409 NOT_YOUR_TURN


async def test_drawing_out_of_turn_is_not_your_turn(http, api):
    game_id, (one, two) = await new_game(api)
    await api.place(game_id, one.token, [[1, 1]])
    before = await observe(api, game_id, one, two)
    for body in (
        {"type": "stamp", "pattern": "block", "x": 10, "y": 10},
        {"type": "erase", "cells": [[10, 10]]},
        {"type": "reset_turn"},
    ):
        assert_error(await post_action(http, game_id, two, body), 409, "NOT_YOUR_TURN")
    assert await observe(api, game_id, one, two) == before


async def test_four_players_draw_in_order(http, api):
    game_id, seats = await new_game(api, players=4, width=20, height=20)
    await api.end_turn(game_id, seats[0].token)
    before = await observe(api, game_id, *seats)
    for seat in (seats[0], seats[2], seats[3]):
        assert_error(
            await post_action(http, game_id, seat, {"type": "place", "cells": [[1, 1]]}),
            409,
            "NOT_YOUR_TURN",
        )
        assert_error(
            await http.post(f"/game/{game_id}/end_turn", headers=bearer(seat.token)),
            409,
            "NOT_YOUR_TURN",
        )
    assert await observe(api, game_id, *seats) == before


# ---------------------------------------------------------------- 409 WRONG_PHASE


async def test_waiting_game_refuses_play_with_wrong_phase(http, api):
    game_id = await api.create_game("life", CONFIG)
    one = await api.join(game_id, "alice")
    before = await observe(api, game_id, one)
    for body in (
        {"type": "place", "cells": [[1, 1]]},
        {"type": "pause"},
        {"type": "propose_finish"},
        {"type": "resign"},
    ):
        assert_error(await post_action(http, game_id, one, body), 409, "WRONG_PHASE")
    assert_error(
        await http.post(f"/game/{game_id}/end_turn", headers=bearer(one.token)), 409, "WRONG_PHASE"
    )
    assert await observe(api, game_id, one) == before


async def test_pause_or_resume_in_placement_is_wrong_phase(http, api):
    game_id, (one, two) = await new_game(api)
    before = await observe(api, game_id, one, two)
    for seat in (one, two):
        for body in ({"type": "pause"}, {"type": "resume"}):
            assert_error(await post_action(http, game_id, seat, body), 409, "WRONG_PHASE")
    assert await observe(api, game_id, one, two) == before


async def test_drawing_while_running_is_wrong_phase(http, api):
    """The simulation runs on (ticks are recorded), but no refused command is."""
    game_id, (one, two) = await new_game(api, budget=10, torus=True, max_generations=1_000_000)
    await api.stamp(game_id, one.token, 1, 1, "glider")
    await api.end_turn(game_id, one.token)
    await api.stamp(game_id, two.token, 9, 1, "glider")
    await api.end_turn(game_id, two.token)

    def commands(events: list[dict]) -> list[dict]:
        return [e for e in events if e["type"] != "GenerationsTicked"]

    before = commands(await api.events(game_id, one.token))
    for body in (
        {"type": "place", "cells": [[5, 12]]},
        {"type": "stamp", "pattern": "block", "x": 4, "y": 10},
        {"type": "erase", "cells": [[2, 2]]},
        {"type": "reset_turn"},
        {"type": "resume"},
    ):
        assert_error(await post_action(http, game_id, one, body), 409, "WRONG_PHASE")
    assert_error(
        await http.post(f"/game/{game_id}/end_turn", headers=bearer(two.token)), 409, "WRONG_PHASE"
    )
    view = await api.state(game_id, one.token)
    assert view["phase"] == "running"
    assert [p["budget_left"] for p in view["players"]] == [5, 5]
    assert commands(await api.events(game_id, one.token)) == before


async def test_drawing_while_paused_is_wrong_phase(http, api):
    game_id, one, two = await paused_game(api)
    before = await observe(api, game_id, one, two)
    for seat, body in (
        (one, {"type": "place", "cells": [[5, 12]]}),
        (two, {"type": "stamp", "pattern": "block", "x": 12, "y": 12}),
        (one, {"type": "pause"}),
    ):
        assert_error(await post_action(http, game_id, seat, body), 409, "WRONG_PHASE")
    assert_error(
        await http.post(f"/game/{game_id}/end_turn", headers=bearer(one.token)), 409, "WRONG_PHASE"
    )
    assert await observe(api, game_id, one, two) == before


# ---------------------------------------------------------------- 409 OUT_OF_ZONE


OUT_OF_ZONE_BODIES = [
    {"type": "place", "cells": [[-1, 0]]},  # off the board
    {"type": "place", "cells": [[0, 16]]},  # below the last row
    {"type": "place", "cells": [[7, 7], [8, 7]]},  # x = 8: player 2's first column
    {"type": "erase", "cells": [[12, 3]]},
    {"type": "stamp", "pattern": "block", "x": 10, "y": 2},  # wholly in player 2's half
    {"type": "stamp", "pattern": "glider", "x": 2, "y": -5},  # wholly above the board
]


async def test_outside_own_zone_is_out_of_zone(http, api):
    game_id, (one, two) = await new_game(api)
    before = await observe(api, game_id, one, two)
    for body in OUT_OF_ZONE_BODIES:
        assert_error(await post_action(http, game_id, one, body), 409, "OUT_OF_ZONE")
    assert await observe(api, game_id, one, two) == before


async def test_out_of_zone_in_redraw_and_in_quadrants(http, api):
    game_id, one, two = await redraw_game(api)
    before = await observe(api, game_id, one, two)
    assert_error(
        await post_action(http, game_id, two, {"type": "place", "cells": [[5, 5]]}),
        409,
        "OUT_OF_ZONE",
    )
    assert_error(
        await post_action(http, game_id, one, {"type": "erase", "cells": [[11, 2]]}),
        409,
        "OUT_OF_ZONE",
    )
    assert await observe(api, game_id, one, two) == before

    game_id, seats = await new_game(api, players=4, width=20, height=20)
    before = await observe(api, game_id, *seats)
    # Player 1 owns [0, 0, 10, 10): player 3's quadrant is below, player 2's to the right.
    for cell in ([5, 10], [10, 5], [10, 10]):
        assert_error(
            await post_action(http, game_id, seats[0], {"type": "place", "cells": [cell]}),
            409,
            "OUT_OF_ZONE",
        )
    assert await observe(api, game_id, *seats) == before


# ---------------------------------------------------------------- 409 BUDGET_EXCEEDED


async def test_stamp_over_budget_is_budget_exceeded(http, api):
    game_id, (one, two) = await new_game(api)  # budget 4; a glider has 5 cells
    before = await observe(api, game_id, one, two)
    body = {"type": "stamp", "pattern": "glider", "x": 1, "y": 1}
    assert_error(await post_action(http, game_id, one, body), 409, "BUDGET_EXCEEDED")
    rle = {"type": "stamp", "rle": "5o!", "x": 1, "y": 1}
    assert_error(await post_action(http, game_id, one, rle), 409, "BUDGET_EXCEEDED")
    assert await observe(api, game_id, one, two) == before


async def test_budget_exceeded_counts_only_new_cells_and_spans_turns(http, api):
    game_id, (one, two) = await new_game(api)
    await api.place(game_id, one.token, [[1, 1], [2, 1], [3, 1]])  # 1 left
    before = await observe(api, game_id, one, two)
    body = {"type": "place", "cells": [[1, 1], [2, 1], [4, 1], [5, 1]]}  # 2 new
    assert_error(await post_action(http, game_id, one, body), 409, "BUDGET_EXCEEDED")
    assert await observe(api, game_id, one, two) == before
    # One new cell among alive ones fits.
    view = (await api.place(game_id, one.token, [[1, 1], [2, 1], [4, 1]]))["view"]
    assert next(p for p in view["players"] if p["id"] == 1)["budget_left"] == 0

    # In redraw, the budget left from placement is what can be spent.
    game_id, one, two = await redraw_game(api, budget=5)
    before = await observe(api, game_id, one, two)
    assert_error(
        await post_action(http, game_id, two, {"type": "place", "cells": [[13, 12], [14, 14]]}),
        409,
        "BUDGET_EXCEEDED",
    )
    assert_error(
        await post_action(
            http, game_id, one, {"type": "stamp", "pattern": "blinker", "x": 4, "y": 12}
        ),
        409,
        "BUDGET_EXCEEDED",
    )
    assert await observe(api, game_id, one, two) == before


# ---------------------------------------------------------------- 409 GAME_FULL


async def test_join_after_the_seats_are_taken_is_game_full(http, api):
    game_id, seats = await new_game(api, players=4, width=20, height=20)
    before = await observe(api, game_id, seats[0])
    assert_error(await http.post(f"/game/{game_id}/join", json={"name": "eve"}), 409, "GAME_FULL")
    assert await observe(api, game_id, seats[0]) == before

    game_id, one, two = await redraw_game(api)
    before = await observe(api, game_id, one, two)
    assert_error(await http.post(f"/game/{game_id}/join", json={"name": "eve"}), 409, "GAME_FULL")
    assert await observe(api, game_id, one, two) == before


# ---------------------------------------------------------------- 409 GAME_FINISHED


async def test_any_command_after_the_end_is_game_finished(http, api):
    game_id, (one, two) = await new_game(api)
    await api.place(game_id, one.token, BLOCK_1)
    await api.simple(game_id, two.token, "resign")
    before = await observe(api, game_id, one, two)
    assert before[0]["phase"] == "finished" and before[1][-1]["type"] == "GameFinished"

    bodies = [
        {"type": "place", "cells": [[5, 5]]},
        {"type": "erase", "cells": [[2, 2]]},
        {"type": "stamp", "pattern": "glider", "x": 1, "y": 1},
        {"type": "reset_turn"},
        {"type": "pause"},
        {"type": "resume"},
        {"type": "speed", "multiplier": 2},
        {"type": "propose_finish"},
        {"type": "resign"},
        {"type": "restart"},
    ]
    for body in bodies:
        for seat in (one, two):
            assert_error(await post_action(http, game_id, seat, body), 409, "GAME_FINISHED")
    for seat in (one, two):
        assert_error(
            await http.post(f"/game/{game_id}/end_turn", headers=bearer(seat.token)),
            409,
            "GAME_FINISHED",
        )
        assert_error(
            await http.post(f"/game/{game_id}/leave", headers=bearer(seat.token)),
            409,
            "GAME_FINISHED",
        )
    assert_error(
        await http.post(f"/game/{game_id}/join", json={"name": "eve"}), 409, "GAME_FINISHED"
    )
    assert await observe(api, game_id, one, two) == before


# ---------------------------------------------------------------- 409 INVALID_ACTION


INVALID_ACTION_BODIES = [
    {"type": "restart"},  # campaign only
    {"type": "stamp", "pattern": "no_such_pattern", "x": 1, "y": 1},
    {"type": "stamp", "rle": "65o!", "x": 0, "y": 0},  # live area wider than 64
]

#: Commands that would change nothing: one code, 409 NO_CHANGE.
NO_CHANGE_BODIES = [
    {"type": "stamp", "pattern": "block", "x": 2, "y": 2},  # every cell already alive
    {"type": "stamp", "rle": "3b!", "x": 0, "y": 0},  # no live cell
    {"type": "place", "cells": BLOCK_1},  # own live cells
    {"type": "erase", "cells": [[0, 0]]},  # an empty cell
    {"type": "speed", "multiplier": 1},  # the speed it has
]


async def test_refused_action_is_invalid_action(http, api):
    game_id, (one, two) = await new_game(api)
    await api.place(game_id, one.token, BLOCK_1)
    before = await observe(api, game_id, one, two)
    for body in INVALID_ACTION_BODIES:
        assert_error(await post_action(http, game_id, one, body), 409, "INVALID_ACTION")
    for body in NO_CHANGE_BODIES:
        assert_error(await post_action(http, game_id, one, body), 409, "NO_CHANGE")
    assert await observe(api, game_id, one, two) == before


async def test_a_player_who_is_out_cannot_act(http, api):
    """Four players; player 3 resigns in placement and the game goes on without them."""
    game_id, seats = await new_game(api, players=4, width=20, height=20)
    three = seats[2]
    view = (await api.simple(game_id, three.token, "resign"))["view"]
    assert view["phase"] == "placement" and view["players"][2]["out"] is True
    before = await observe(api, game_id, *seats)
    for body in (
        {"type": "place", "cells": [[2, 12]]},
        {"type": "propose_finish"},
        {"type": "pause"},
    ):
        assert_error(await post_action(http, game_id, three, body), 409, "INVALID_ACTION")
    assert_error(
        await http.post(f"/game/{game_id}/end_turn", headers=bearer(three.token)),
        409,
        "INVALID_ACTION",
    )
    assert await observe(api, game_id, *seats) == before


# ---------------------------------------------------------------- 422 MALFORMED


MALFORMED_BODIES: list[Any] = [
    {},
    {"type": 5},
    {"type": "place", "cells": "1,1"},
    {"type": "place", "cells": [[True, 1]]},
    {"type": "place", "cells": [[1.5, 2]]},
    {"type": "place", "cells": [[1, 2, 3]]},
    {"type": "place", "cells": [[2**40, 1]]},  # beyond any board
    {"type": "erase", "cells": []},
    {"type": "stamp", "pattern": "glider", "x": "1", "y": 1},
    {"type": "stamp", "pattern": "glider", "x": 1},
    {"type": "stamp", "pattern": "glider", "rle": "o!", "x": 1, "y": 1},
    {"type": "stamp", "pattern": "", "x": 1, "y": 1},
    {"type": "stamp", "pattern": "glider", "x": 1, "y": 1, "rotation": -1},
    {"type": "speed"},
    {"type": "speed", "multiplier": "2"},
    {"type": "pause", "now": True},
    {"type": "resign", "player": 2},
    None,
    "place",
    42,
]


async def test_more_malformed_actions_are_422(http, api):
    game_id, (one, two) = await new_game(api)
    before = await observe(api, game_id, one, two)
    for body in MALFORMED_BODIES:
        assert_error(await post_action(http, game_id, one, body), 422, "MALFORMED")
    assert await observe(api, game_id, one, two) == before


async def test_text_that_fits_the_schema_but_is_not_rle_is_409_with_the_engines_code(http, api):
    """422 is only for what the OpenAPI schema refuses; the engine's RLE reader refuses
    this string (the schema says "a string"), so it is 409 with the engine's code."""
    game_id, (one, two) = await new_game(api)
    before = await observe(api, game_id, one, two)
    body = {"type": "stamp", "rle": "2o$%%!", "x": 1, "y": 1}
    message = assert_error(await post_action(http, game_id, one, body), 409, "MALFORMED")
    assert "RLE" in message or "plaintext" in message  # the engine's reader says why
    assert await observe(api, game_id, one, two) == before


async def test_malformed_join_bodies_are_422(http, api):
    game_id = await api.create_game("life", CONFIG)
    one = await api.join(game_id, "alice")
    before = await observe(api, game_id, one)
    for body in (
        {"name": "x" * 41},
        {"name": 42},
        {"name": "bob", "colour": 2},
        {"name": "   "},
        [],
        None,
    ):
        assert_error(await http.post(f"/game/{game_id}/join", json=body), 422, "MALFORMED")
    assert await observe(api, game_id, one) == before
    assert (await api.state(game_id, one.token))["phase"] == "waiting"


#: (config, a word the message must name: the field, hint: its limit or type)
BAD_CONFIGS = [
    ({"width": 7}, "width", "8"),
    ({"width": 1025}, "width", "1024"),
    ({"height": 7}, "height", "8"),
    ({"height": 1025}, "height", "1024"),
    ({"width": 1025, "height": 1025}, "height", "1024"),
    ({"players": 3}, "players", "2"),
    ({"players": 1}, "players", "4"),
    ({"budget": -1}, "budget", "0"),
    ({"max_generations": 0}, "max_generations", "1"),
    ({"width": "60"}, "width", "integer"),
    ({"torus": "yes"}, "torus", "bool"),
    ({"colours": 3}, "colours", "not permitted"),
]


async def test_config_outside_the_limits_is_422_with_a_clear_message(http):
    lobby = (await http.get("/games")).json()
    for config, field, hint in BAD_CONFIGS:
        response = await http.post(
            "/game/create", json={"kind": "life", "config": {**CONFIG, **config}}
        )
        message = assert_error(response, 422, "MALFORMED")
        assert field in message and hint in message, message
    assert (await http.get("/games")).json() == lobby


async def test_config_at_the_limits_is_accepted(api):
    for config in (
        {"width": 8, "height": 8, "budget": 0},
        {"width": 1024, "height": 1024, "max_generations": 1},
    ):
        game_id = await api.create_game("life", config)
        view = await api.state(game_id, (await api.join(game_id, "alice")).token)
        assert (view["width"], view["height"]) == (config["width"], config["height"])
        assert view["budget"] == config.get("budget", 100)


# ---------------------------------------------------------------- 401 / 403 / 404


async def test_bad_credentials_are_401_everywhere(http, api):
    game_id, (one, two) = await new_game(api)
    profile_token = (await api.create_profile("alice"))["profile_token"]
    wrong_seat = URLSafeSerializer(TEST_SECRET, salt="cellwar-player").dumps({"g": game_id, "p": 0})
    before = await observe(api, game_id, one, two)
    headers = [
        {"Authorization": f"Basic {one.token}"},  # not a bearer token
        {"Authorization": "Bearer"},
        {"Authorization": f"Bearer {one.token}x"},  # tampered signature
        bearer(profile_token),  # a profile token is no player token
        bearer(wrong_seat),  # signed, but seat 0
    ]
    for header in headers:
        assert_error(await http.get(f"/game/{game_id}/state", headers=header), 401, "UNAUTHORIZED")
        assert_error(
            await http.post(
                f"/game/{game_id}/action", json={"type": "place", "cells": [[1, 1]]}, headers=header
            ),
            401,
            "UNAUTHORIZED",
        )
        assert_error(
            await http.post(f"/game/{game_id}/end_turn", headers=header), 401, "UNAUTHORIZED"
        )
        assert_error(await http.post(f"/game/{game_id}/leave", headers=header), 401, "UNAUTHORIZED")
    assert await observe(api, game_id, one, two) == before


async def test_token_of_another_game_is_403_on_every_route(http, api):
    game_id, (one, two) = await new_game(api)
    _, (other, _) = await new_game(api)
    before = await observe(api, game_id, one, two)
    header = bearer(other.token)
    assert_error(await http.post(f"/game/{game_id}/end_turn", headers=header), 403, "FORBIDDEN")
    assert_error(await http.post(f"/game/{game_id}/leave", headers=header), 403, "FORBIDDEN")
    assert_error(await http.get(f"/game/{game_id}/events", headers=header), 403, "FORBIDDEN")
    assert_error(
        await http.get(f"/game/{game_id}/replay", params={"seq": 1}, headers=header),
        403,
        "FORBIDDEN",
    )
    assert await observe(api, game_id, one, two) == before


async def test_unknown_game_with_a_well_signed_token_is_404(http):
    token = URLSafeTimedSerializer(TEST_SECRET, salt="cellwar-player").dumps(
        {"g": "no-such-game", "p": 1}
    )
    header = bearer(token)
    base = "/game/no-such-game"
    assert_error(await http.get(f"{base}/state", headers=header), 404, "GAME_NOT_FOUND")
    assert_error(
        await http.post(
            f"{base}/action", json={"type": "place", "cells": [[1, 1]]}, headers=header
        ),
        404,
        "GAME_NOT_FOUND",
    )
    assert_error(await http.post(f"{base}/end_turn", headers=header), 404, "GAME_NOT_FOUND")
    assert_error(await http.post(f"{base}/leave", headers=header), 404, "GAME_NOT_FOUND")
    assert_error(await http.get(f"{base}/events", headers=header), 404, "GAME_NOT_FOUND")
    assert all(g["game_id"] != "no-such-game" for g in (await http.get("/games")).json()["games"])
