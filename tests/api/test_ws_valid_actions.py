"""Legal moves asked over the game stream (``{"type": "valid_actions", "id", "unit_id"}``
frames, docs/api/websocket.md "Legal moves") on the real stack (gateway, session, engine,
NATS):

- every answer equals REST's ``GET /game/{id}/valid_actions`` for the same seat and unit:
  own units, another player's, an id no unit has, every unit, the player whose turn it is
  not, a Life game (the last four: no moves);
- fog: the answers for a hidden enemy unit's id are byte for byte those for an id no unit
  has (two games that differ only in the hidden unit);
- it takes its place in the order of the socket's commands: asked right after an action,
  it answers on the state after it;
- bad frames (a ``unit_id`` that is not null or an integer 1..2³²-1, an extra field, no
  id, a spectator's socket) are answered with their code and change nothing; a float
  with no fraction is that unit's id, as REST's query takes it; the frame takes nothing
  from the seat's command bucket, as REST's GET takes nothing; the metrics count it.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.api.test_ws_actions import (
    CELLWAR,
    CELLWAR_UNITS,
    LIFE,
    bearer,
    error_of,
    frame,
    gateway_with,
    new_game,
    socket,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def ask(key: str, unit_id: Any = None, **extra: Any) -> str:
    """A ``valid_actions`` frame (``unit_id`` left out when None)."""
    body: dict[str, Any] = {"type": "valid_actions", "id": key, **extra}
    if unit_id is not None:
        body["unit_id"] = unit_id
    return json.dumps(body)


async def rest_valid_actions(http: httpx.AsyncClient, game_id: str, token: str, unit_id: int | None) -> dict[str, Any]:
    """REST's answer as the socket's frame would carry it."""
    params = {} if unit_id is None else {"unit_id": unit_id}
    answer = await http.get(f"/game/{game_id}/valid_actions", headers=bearer(token), params=params)
    if answer.status_code == 200:
        return {"type": "valid_actions", **answer.json()}
    return {"type": "error", "status": answer.status_code, **answer.json()}


async def observed(http: httpx.AsyncClient, game_id: str, tokens: list[str]) -> list[Any]:
    """What a question must leave as it was: the game's log as every seat reads it."""
    return [(await http.get(f"/game/{game_id}/events", headers=bearer(t))).json() for t in tokens]


@pytest.fixture
async def http(gateway: str):
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as client:
        yield client


async def test_every_answer_equals_rests(gateway, http):
    game_id, tokens = await new_game(http, "cellwar", CELLWAR)
    life_id, life_tokens = await new_game(http, "life", LIFE)
    cases = [(game_id, tokens, unit) for unit in (None, 1, 2, 3, 4, 99, 2**32 - 1)]
    cases += [(life_id, life_tokens, unit) for unit in (None, 1)]
    before = await observed(http, game_id, tokens)
    answers: dict[tuple[str, int, Any], dict[str, Any]] = {}
    for gid, seat_tokens, unit in cases:
        for seat, token in enumerate(seat_tokens):
            async with socket(gateway, gid, token) as sock:
                reply = await sock.command(ask(f"q{seat}-{unit}", unit))
            assert reply.pop("id") == f"q{seat}-{unit}"
            assert reply == await rest_valid_actions(http, gid, token, unit), (gid, seat, unit)
            answers[(gid, seat, unit)] = reply
    # Real answers: player 1 (to move) has its two units' moves; player 2, waiting, none;
    # another player's unit, an id no unit has and a Life game have none either.
    mine = answers[(game_id, 0, None)]["actions"]
    assert {a["unit_id"] for a in mine} == {1, 3} and {"move", "fortify"} <= {a["kind"] for a in mine}
    assert answers[(game_id, 0, 1)]["actions"] == [a for a in mine if a["unit_id"] == 1]
    assert answers[(game_id, 0, 3)]["actions"] == [a for a in mine if a["unit_id"] == 3]
    nothing = {"type": "valid_actions", "actions": []}
    assert answers[(game_id, 1, None)] == nothing
    assert all(answers[(game_id, 0, unit)] == nothing for unit in (2, 4, 99, 2**32 - 1))
    assert answers[(life_id, 0, None)] == nothing
    assert await observed(http, game_id, tokens) == before


async def test_a_hidden_units_id_is_answered_as_an_id_no_unit_has(gateway, http):
    seen: list[list[str]] = []
    for config in (CELLWAR, {**CELLWAR, "units": CELLWAR_UNITS[:3]}):
        game_id, (one, _) = await new_game(http, "cellwar", config)
        texts = []
        async with socket(gateway, game_id, one) as sock:
            for unit in (4, 99, None):
                texts.append(json.dumps(await sock.command(ask(f"h{unit}", unit))))
        seen.append([t.replace(game_id, "<game>") for t in texts])
    assert seen[0] == seen[1]
    assert json.loads(seen[0][0])["actions"] == json.loads(seen[0][1])["actions"] == []
    assert {a["unit_id"] for a in json.loads(seen[0][2])["actions"]} == {1, 3}


async def test_asked_after_an_action_it_answers_on_the_state_after_it(gateway, http):
    game_id, (one, _) = await new_game(http, "cellwar", CELLWAR)
    async with socket(gateway, game_id, one) as sock:
        first = await sock.command(ask("before", 1))
        assert first["actions"] and all(a["unit_id"] == 1 for a in first["actions"])
        # Sent together: the question is answered after the action, in order.
        await sock.send(frame("action", "move", {"unit_id": 1, "dx": 0, "dy": 1}))
        await sock.send(ask("after", 1))
        await sock.send(ask("other", 3))
        replies = [await sock.reply() for _ in range(3)]
    assert [(r["type"], r["id"]) for r in replies] == [
        ("result", "move"), ("valid_actions", "after"), ("valid_actions", "other")
    ]
    assert replies[1]["actions"] == []  # unit 1 has acted this turn
    assert replies[2]["actions"] and {a["unit_id"] for a in replies[2]["actions"]} == {3}
    assert replies[2] == {"id": "other", **await rest_valid_actions(http, game_id, one, 3)}


async def test_bad_frames_are_refused_with_their_code_and_change_nothing(stack):
    async with gateway_with(stack, ws_message_burst=50) as (app, url), httpx.AsyncClient(base_url=url) as http:
        game_id, tokens = await new_game(http, "cellwar", CELLWAR)
        before = await observed(http, game_id, tokens)
        cases: list[tuple[str, Any, int, str]] = [
            (ask("s", "1"), "s", 422, "MALFORMED"),
            (ask("z", 0), "z", 422, "MALFORMED"),
            (ask("n", -1), "n", 422, "MALFORMED"),
            (ask("big", 2**32), "big", 422, "MALFORMED"),
            (ask("b", True), "b", 422, "MALFORMED"),
            (ask("f", 1.5), "f", 422, "MALFORMED"),
            (ask("x", 1, action={"unit_id": 1, "dx": 0, "dy": 1}), "x", 422, "MALFORMED"),
            (json.dumps({"type": "valid_actions", "unit_id": 1}), None, 422, "MALFORMED"),
            (json.dumps({"type": "valid_actions", "id": "has space"}), "has space", 422, "MALFORMED"),
        ]
        async with socket(url, game_id, tokens[0]) as sock:
            for text, key, status, code in cases:
                reply = await sock.command(text)
                assert error_of(reply) == (status, code) and reply["id"] == key, (text, reply)
            assert "unit_id" in (await sock.command(ask("m", "7")))["error"]["message"]
            # 1.0 is unit 1, as REST's ?unit_id=1.0; null is every unit, as no unit_id
            assert (await sock.command(ask("float", 1.0)))["actions"] == (await sock.command(ask("int", 1)))["actions"]
            # null is every unit, as no unit_id
            everything = await sock.command(json.dumps({"type": "valid_actions", "id": "all", "unit_id": None}))
            assert {a["unit_id"] for a in everything["actions"]} == {1, 3}
        async with socket(url, game_id) as watcher:
            refused = await watcher.command(ask("spy", 1))
            assert error_of(refused) == (403, "FORBIDDEN") and refused["id"] == "spy"
        assert await observed(http, game_id, tokens) == before
        registry = app.state.metrics.registry
        assert registry.get_sample_value("cellwar_ws_commands_total", {"type": "valid_actions", "status": "200"}) == 3
        assert registry.get_sample_value("cellwar_ws_commands_total", {"type": "valid_actions", "status": "422"}) == 10


async def test_it_takes_nothing_from_the_seats_command_bucket(stack):
    """As REST's GET: 150 questions sent at once on a seat whose bucket holds 3 are all
    answered in order, and the seat's commands still have their bucket."""
    # burst 3: the create and the two joins take the address's three; the seat has its own
    async with gateway_with(stack, rate_limit_per_s=0.01, rate_limit_burst=3) as (_, url):
        async with httpx.AsyncClient(base_url=url) as http:
            game_id, (one, _) = await new_game(http, "cellwar", CELLWAR)
            async with socket(url, game_id, one) as sock:
                for i in range(150):
                    await sock.send(ask(f"q{i}", 1 + 2 * (i % 2)))
                replies = [await sock.reply() for _ in range(150)]
                assert [(r["type"], r["id"]) for r in replies] == [("valid_actions", f"q{i}") for i in range(150)]
                assert {a["unit_id"] for r in replies[:2] for a in r["actions"]} == {1, 3}
                moved = await sock.command(frame("action", "m", {"unit_id": 1, "dx": 0, "dy": 1}))
                assert moved["type"] == "result"
