"""Turn timers through the public API (docs/playing.md "Turn timers"): ``turn_time_s`` in a
create body, ``turn_deadline`` in REST views and WebSocket frames (ISO 8601 UTC, the same
for every seat), a turn that nobody plays passing by itself (the stream pushes the new
turn), and the schema's errors."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

import httpx
import pytest
import websockets

from client.sdk import AsyncCellWarClient, stream_url

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

UNITS = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 2, "type": "infantry", "x": 7, "y": 7},
]


def parse(deadline: str) -> float:
    assert deadline.endswith("Z"), deadline
    return datetime.fromisoformat(deadline.replace("Z", "+00:00")).timestamp()


async def test_the_stream_shows_the_deadline_and_the_turn_passing_by_itself(
    api: AsyncCellWarClient, gateway: str
):
    game_id = await api.create_game(
        "cellwar", {"width": 8, "height": 8, "units": UNITS, "turn_time_s": 2}
    )
    one = await api.join(game_id, "ann")
    two = await api.join(game_id, "bob")
    view = await api.state(game_id, one.token)
    assert view["turn"] == 1
    other = await api.state(game_id, two.token)
    assert view["turn_deadline"] == other["turn_deadline"]  # public: one deadline per turn
    joined = (await api.events(game_id, one.token))[-1]
    assert joined["type"] == "PlayerJoined"
    began = datetime.fromisoformat(joined["time"].replace("Z", "+00:00")).timestamp()
    assert parse(view["turn_deadline"]) == pytest.approx(began + 2, abs=0.002)

    frames = []
    async with websockets.connect(stream_url(gateway, game_id, two.token)) as ws:
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
            frames.append(frame)
            if frame["view"]["turn"] == 2:
                break
    first, last = frames[0]["view"], frames[-1]["view"]
    assert first["turn"] == 1 and first["turn_deadline"] == view["turn_deadline"]
    assert parse(last["turn_deadline"]) >= parse(first["turn_deadline"]) + 2 - 0.01
    log = await api.events(game_id, two.token)
    assert [(e["type"], e["actor"], e["payload"]) for e in log[3:4]] == [
        ("TurnTimedOut", 1, {"players": [1]})
    ]
    await api.leave(game_id, one.token)
    final = await api.state(game_id, two.token)
    assert final["phase"] == "finished" and final["turn_deadline"] is None


async def test_a_game_without_a_timer_shows_a_null_deadline(api: AsyncCellWarClient):
    game_id = await api.create_game("life", {"width": 16, "height": 16})
    seat = await api.join(game_id, "ann")
    await api.join(game_id, "bob")
    view = await api.state(game_id, seat.token)
    assert view["phase"] == "placement" and view["turn_deadline"] is None
    created = (await api.events(game_id, seat.token))[0]
    assert "turn_time_s" not in created["payload"]["config"]
    assert "rated" not in created["payload"]["config"]


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "cellwar", "config": {"turn_time_s": 0}},
        {"kind": "cellwar", "config": {"turn_time_s": 86_401}},
        {"kind": "life", "config": {"turn_time_s": 1.5}},
        {"kind": "life", "config": {"turn_time_s": "60"}},
        {"kind": "life", "config": {"rated": "yes"}},
        {"kind": "life", "rated": 1},
        {"kind": "campaign", "config": {"level": 1, "turn_time_s": 30}},
        {"kind": "campaign", "config": {"level": 1}, "rated": True},
    ],
    ids=repr,
)
async def test_bad_timer_and_rated_fields_are_422(gateway: str, body: dict):
    async with httpx.AsyncClient(base_url=gateway) as http:
        response = await http.post("/game/create", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "MALFORMED"


async def test_null_turn_time_means_no_timer_and_rated_normalises(api: AsyncCellWarClient):
    game_id = await api.create_game("life", {"turn_time_s": None, "rated": True})
    seat = await api.join(game_id, "ann")
    config = (await api.events(game_id, seat.token))[0]["payload"]["config"]
    assert "turn_time_s" not in config and config["rated"] is True
