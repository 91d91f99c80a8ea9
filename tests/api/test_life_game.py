"""A whole Life game through the public API: two bots play it to the end over REST and
WebSocket; the log, the replay, the session's event store and a local fold all tell the
same story."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest
import websockets

import engine
from cellwar.v1 import events_pb2
from client.bots import LifeBot
from client.sdk import ApiError, AsyncCellWarClient
from tests.support.versions import versions

pytestmark = pytest.mark.integration

GAME = {"width": 60, "height": 60, "players": 2, "budget": 100, "max_generations": 600}


async def stored_log(stack, game_id: str) -> list[events_pb2.Event]:
    """The game's events as the session's event store holds them (the in-memory log of
    the ``stack`` of tests/api, JetStream's on NATS)."""
    return await stack.session.store.read(game_id)


async def watch(api: AsyncCellWarClient, game_id: str, token: str | None, out: list[dict[str, Any]]) -> None:
    async for message in api.stream(game_id, token):
        out.append(message)


async def test_two_bots_play_a_game_to_the_end(api: AsyncCellWarClient, stack):
    game_id = await api.create_game("life", GAME)
    red = LifeBot(api, game_id, "red", seed=11, speed=8)
    green = LifeBot(api, game_id, "green", seed=12, speed=8)
    await red.join()
    await green.join()
    assert (red.seat.player_id, green.seat.player_id) == (1, 2)
    spectated: list[dict[str, Any]] = []
    spectator = asyncio.create_task(watch(api, game_id, None, spectated))

    finals = await asyncio.wait_for(asyncio.gather(red.play(), green.play()), timeout=240)

    assert all(view["phase"] == "finished" for view in finals)
    assert finals[0]["result"] in ("win", "draw")
    await asyncio.wait_for(spectator, timeout=30)

    # The event log: every event, in order, from GameCreated to GameFinished.
    events = await api.events(game_id, red.seat.token)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["type"] == "GameCreated" and events[-1]["type"] == "GameFinished"
    assert [e["type"] for e in events[1:3]] == ["PlayerJoined", "PlayerJoined"]
    assert any(e["type"] == "GenerationsTicked" for e in events)
    actions = [e["payload"]["action"]["type"] for e in events if e["type"] == "ActionApplied"]
    assert {"stamp", "place"} <= set(actions)
    assert all(e["engine_version"] and len(e["state_hash"]) == 64 for e in events)
    spectator_events = await api.events(game_id)  # a finished game's log is public
    assert [e["seq"] for e in spectator_events] == [e["seq"] for e in events]

    # Replay at the last event is the final state.
    last = events[-1]["seq"]
    final_state = await api.state(game_id, red.seat.token)
    replayed = await api.replay(game_id, last, red.seat.token)
    assert replayed["seq"] == last  # a finished game's log is public: game seqs
    assert {**replayed["view"], "seq": 0} == {**final_state, "seq": 0}
    assert final_state["seq"] == versions(events)[red.seat.player_id]  # red's own version

    # The stored log is the same log, and folding it gives the recorded final hash.
    stored = await stored_log(stack, game_id)
    assert [(e.seq, e.type, e.state_hash) for e in stored] == [
        (e["seq"], e["type"], e["state_hash"]) for e in events
    ]
    state = engine.fold(None, [(e.type, e.actor, json.loads(e.payload)) for e in stored])
    assert engine.state_hash(state) == events[-1]["state_hash"]

    # The spectator's stream: views, then finished, in sequence order.
    assert spectated, "the stream sent nothing"
    assert [m["type"] for m in spectated[:-1]] == ["view"] * (len(spectated) - 1)
    assert spectated[-1]["type"] == "finished"
    assert spectated[-1]["view"]["phase"] == "finished"
    seqs = [m["seq"] for m in spectated]
    assert seqs == sorted(seqs)
    assert any(m["view"]["phase"] == "running" for m in spectated)


async def test_retried_request_is_applied_once(api: AsyncCellWarClient):
    game_id = await api.create_game("life", GAME)
    first = await api.join(game_id, "alice")
    await api.join(game_id, "bob")
    key = str(uuid.uuid4())
    one = await api.place(game_id, first.token, [(3, 3), (4, 3)], idempotency_key=key)
    two = await api.place(game_id, first.token, [(3, 3), (4, 3)], idempotency_key=key)
    assert one["seq"] == two["seq"]
    events = await api.events(game_id, first.token)
    assert [e["type"] for e in events].count("ActionApplied") == 1
    me = next(p for p in two["view"]["players"] if p["id"] == first.player_id)
    assert me["budget_left"] == GAME["budget"] - 2


async def test_join_answers_a_token_for_the_seat(api: AsyncCellWarClient):
    game_id = await api.create_game("life", GAME)
    seat = await api.join(game_id, "alice")
    assert seat.player_id == 1
    view = await api.state(game_id, seat.token)
    assert view["game_id"] == game_id and view["you"] == 1 and view["kind"] == "life"
    assert view["phase"] == "waiting"
    lobby = await api.games()
    assert any(g["game_id"] == game_id and g["players_joined"] == 1 for g in lobby)


async def test_stream_closes_4401_on_a_bad_token_and_4404_on_an_unknown_game(api: AsyncCellWarClient, gateway: str):
    game_id = await api.create_game("life", GAME)
    with pytest.raises(ApiError) as bad:
        async for _ in api.stream(game_id, "forged-token"):
            pass
    assert (bad.value.status, bad.value.code) == (401, "UNAUTHORIZED")
    with pytest.raises(ApiError) as unknown:
        async for _ in api.stream("no-such-game"):
            pass
    assert (unknown.value.status, unknown.value.code) == (404, "GAME_NOT_FOUND")
    async with websockets.connect(gateway.replace("http", "ws") + "/game/no-such-game/stream") as ws:
        await ws.wait_closed()
        assert ws.close_code == 4404


async def test_stream_ends_when_the_client_goes(api: AsyncCellWarClient, gateway: str):
    game_id = await api.create_game("life", GAME)
    async with websockets.connect(gateway.replace("http", "ws") + f"/game/{game_id}/stream") as ws:
        first = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
        assert first["type"] == "view" and first["view"]["game_id"] == game_id
    # The gateway still serves after the viewer left.
    assert (await api.state(game_id, (await api.join(game_id, "alice")).token))["phase"] == "waiting"


async def test_operations_endpoints_answer(gateway: str):
    async with httpx.AsyncClient(base_url=gateway) as http:
        assert (await http.get("/healthz")).json() == {"status": "ok"}
        ready = await http.get("/readyz")
        assert ready.status_code == 200 and ready.json() == {"status": "ready"}
        await http.get("/games")
        metrics = await http.get("/metrics")
        assert metrics.status_code == 200
        assert 'cellwar_http_requests_total{method="GET",route="/games",status="200"}' in metrics.text
        assert "cellwar_http_request_duration_seconds_bucket" in metrics.text
        docs = await http.get("/docs")
        assert docs.status_code == 200 and "swagger" in docs.text.lower()
        spec = (await http.get("/openapi.json")).json()
        assert {"/game/create", "/game/{game_id}/action", "/game/{game_id}/events"} <= set(spec["paths"])
