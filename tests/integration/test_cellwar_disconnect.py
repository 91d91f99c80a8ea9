"""CellWar disconnects through the session against a real NATS (the CellWar seed's
"Отключение игрока"; docs/architecture/session.md): presence from Watch streams, the
timeout, the rollback to the snapshot after the previous player's turn, and leave (gRPC and
REST)."""

from __future__ import annotations

import asyncio
import base64
import json
import time

import grpc
import pytest

import engine
from cellwar.v1 import session_pb2
from client.sdk import AsyncCellWarClient
from gateway.app import create_app
from services.common.errors import error_from_rpc
from services.common.settings import Settings
from tests.api.conftest import serve
from tests.support.client import SessionClient, fold_from_scratch
from tests.support.versions import versions

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

#: 10x10, 3 players, two infantry each; ids are drawn per owner (engine/cellwar/ids.py):
#: p1 units 1, 4; p2 units 2, 5; p3 units 3, 6.
UNITS = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 1, "type": "infantry", "x": 1, "y": 0},
    {"owner": 2, "type": "infantry", "x": 5, "y": 5},
    {"owner": 2, "type": "infantry", "x": 6, "y": 5},
    {"owner": 3, "type": "infantry", "x": 9, "y": 9},
    {"owner": 3, "type": "infantry", "x": 8, "y": 9},
]


def config(timeout_s: float = 0.5) -> dict:
    return {"width": 10, "height": 10, "players": 3, "units": UNITS, "disconnect_timeout_s": timeout_s}


@pytest.fixture
async def client(stack):
    c = SessionClient.open(stack.session_target)
    yield c
    await c.close()


async def started_game(client: SessionClient, timeout_s: float = 0.5) -> str:
    gid = await client.create(config(timeout_s), kind="cellwar")
    for name in ("p1", "p2", "p3"):
        await client.join(gid, name)
    return gid


async def open_stream(client: SessionClient, gid: str, player_id: int):
    """A Watch stream of ``player_id``, after its first view (so presence counts it)."""
    call = client.stub.Watch(session_pb2.WatchRequest(game_id=gid, player_id=player_id))
    first = await call.read()
    assert first.type == "view"
    return call


async def full_log(stack, gid: str) -> list:
    """The whole log as stored in JetStream (a spectator may not read a running game's)."""
    return await stack.session.games.store.read(gid)


async def wait_for_event(stack, gid: str, etype: str, timeout: float = 15.0):
    """Poll the log until an event of ``etype`` is in it; returns the whole log (seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        events = await full_log(stack, gid)
        if any(e.type == etype for e in events):
            return events
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {etype} in {[e.type for e in events]}")
        await asyncio.sleep(0.05)


def units_of(view: dict, owner: int) -> list[tuple[int, int]]:
    return sorted((u["x"], u["y"]) for u in view["units"] if u["owner"] == owner)


async def board(stack, gid: str) -> dict:
    """The whole board now, as a view: the log read from NATS and folded by the engine
    library (a spectator's view shows no unit of a running CellWar game)."""
    events = await stack.session.games.store.read(gid)
    state = engine.fold(None, [(e.type, e.actor, json.loads(e.payload or b"{}")) for e in events])
    return {"turn": state.turn, "units": [{"owner": u.owner, "x": u.x, "y": u.y} for u in state.units]}


async def play_p1_turn(client: SessionClient, gid: str) -> None:
    await client.act(gid, 1, {"unit_id": 1, "dx": 0, "dy": 1})
    await client.act(gid, 1, {"unit_id": 4, "dx": 0, "dy": 1})
    await client.end_turn(gid, 1)


async def test_lost_connection_in_own_turn_rolls_back_then_removes(stack, client):
    gid = await started_game(client)
    stream = await open_stream(client, gid, 2)
    await play_p1_turn(client, gid)
    await client.act(gid, 2, {"unit_id": 2, "dx": -1, "dy": -1})  # (5, 5) -> (4, 4)
    mid = await board(stack, gid)
    assert (4, 4) in units_of(mid, 2) and mid["turn"] == 2
    stream.cancel()  # the connection drops in the middle of player 2's turn

    events = await wait_for_event(stack, gid, "PlayerRemoved")
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    turn_ended = events[6]
    assert (turn_ended.seq, turn_ended.type, turn_ended.actor) == (7, "TurnEnded", 1)
    assert [e.type for e in events[7:]] == ["ActionApplied", "RolledBack", "PlayerRemoved"]
    back, removed = events[8], events[9]
    payload = json.loads(back.payload)
    assert payload["to_seq"] == 7
    assert back.state_hash == turn_ended.state_hash  # exactly the state after p1's turn
    assert base64.b64decode(payload["state"])  # the engine state itself
    assert json.loads(removed.payload) == {"player_id": 2, "reason": "disconnected"}
    assert (back.actor, removed.actor) == (0, 0)
    folded = await fold_from_scratch(stack.engine_target, events)
    assert folded.state_hash == events[-1].state_hash
    # KV: the latest snapshot after each turn (its last one after the removal); a game
    # of 10 events keeps no history snapshot (one at least every 100 events)
    snapshots = stack.session.games.snapshots
    latest = await snapshots.latest(gid)
    assert (latest.seq, latest.state.state_hash) == (10, events[9].state_hash)
    assert await snapshots.at_or_before(gid, 10) == latest
    assert await snapshots.at_or_before(gid, 7) is None

    whole = await board(stack, gid)
    assert units_of(whole, 2) == []
    assert units_of(whole, 1) == [(0, 1), (1, 1)]  # player 1's turn stands
    assert units_of(whole, 3) == [(8, 9), (9, 9)]
    view = await client.view(gid, 3)
    assert view["turn"] == 3 and view["phase"] == "playing"
    p2 = view["players"][1]
    assert (p2["connected"], p2["out"]) == (False, True)
    reply = await client.act(gid, 3, {"unit_id": 3, "dx": 0, "dy": -1})  # player 3 moves next
    events = await full_log(stack, gid)
    assert events[-1].seq == 11 and events[-1].actor == 3
    # the reply's seq is player 3's own view version (the events it observed)
    assert reply.seq == versions(events)[3] == json.loads(reply.view)["seq"]


async def test_lost_connection_outside_own_turn_removes_at_once(stack, client):
    gid = await started_game(client)
    stream = await open_stream(client, gid, 3)
    await client.act(gid, 1, {"unit_id": 1, "dx": 0, "dy": 1})  # player 1's turn
    stream.cancel()
    events = await wait_for_event(stack, gid, "PlayerRemoved")
    assert [e.type for e in events[4:]] == ["ActionApplied", "PlayerRemoved"]
    assert json.loads(events[-1].payload) == {"player_id": 3, "reason": "disconnected"}
    view = await client.view(gid, 1)
    assert view["turn"] == 1 and units_of(view, 3) == []
    assert units_of(await board(stack, gid), 1) == [(0, 1), (1, 0)]  # nothing rolled back
    folded = await fold_from_scratch(stack.engine_target, events)
    assert folded.state_hash == events[-1].state_hash


async def test_reconnect_within_the_timeout_removes_nothing(stack, client):
    gid = await started_game(client, timeout_s=1.0)
    first = await open_stream(client, gid, 2)
    watcher = await open_stream(client, gid, 1)
    first.cancel()
    lost = json.loads((await watcher.read()).view)  # presence changed: a new view
    assert lost["players"][1]["connected"] is False
    again = await open_stream(client, gid, 2)
    back = json.loads((await watcher.read()).view)
    assert back["players"][1]["connected"] is True
    await asyncio.sleep(1.5)  # past the timeout
    assert [e.type for e in await full_log(stack, gid)][-1] == "PlayerJoined"
    view = await client.view(gid, 2)
    assert view["players"][1]["connected"] is True and view["players"][1]["out"] is False
    # a player who never opened a stream is not tracked: player 3 stays connected
    assert view["players"][2]["connected"] is True
    again.cancel()
    events = await wait_for_event(stack, gid, "PlayerRemoved")
    assert json.loads(events[-1].payload)["player_id"] == 2
    watcher.cancel()


async def test_leave_in_own_turn_rolls_back_like_a_disconnect(stack, client):
    gid = await started_game(client)
    await play_p1_turn(client, gid)
    await client.act(gid, 2, {"unit_id": 5, "dx": 1, "dy": 0})
    reply = await client.stub.Leave(
        session_pb2.LeaveRequest(game_id=gid, player_id=2, command_id="leave-2")
    )
    events = await full_log(stack, gid)
    assert [e.type for e in events[7:]] == ["ActionApplied", "RolledBack", "PlayerRemoved"]
    assert events[-1].seq == 10
    assert reply.seq == versions(events)[2]  # player 2's own version after its leave
    assert events[8].state_hash == events[6].state_hash
    assert json.loads(events[9].payload) == {"player_id": 2, "reason": "left"}
    assert events[9].actor == 2
    again = await client.stub.Leave(
        session_pb2.LeaveRequest(game_id=gid, player_id=2, command_id="leave-2")
    )
    assert again.seq == reply.seq and len(await full_log(stack, gid)) == 10  # applied once
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await client.act(gid, 2, {"unit_id": 2, "dx": 0, "dy": 0})
    assert error_from_rpc(err.value)[0] == "NOT_YOUR_TURN"
    folded = await fold_from_scratch(stack.engine_target, events)
    assert folded.state_hash == events[-1].state_hash


async def test_rest_leave_and_websocket_close_through_the_gateway(stack, client):
    settings = Settings(session_addr=stack.session_target, secret="test-secret")
    gid = await client.create(config(), kind="cellwar")
    async with serve(create_app(settings)) as url, AsyncCellWarClient(url) as api:
        seats = [await api.join(gid, f"p{i}") for i in (1, 2, 3)]
        # player 3 watches over the WebSocket, then closes it outside its turn
        stream = api.stream(gid, seats[2].token)
        first = await anext(stream)
        assert first["view"]["you"] == 3
        await stream.aclose()
        events = await wait_for_event(stack, gid, "PlayerRemoved")
        assert json.loads(events[-1].payload) == {"player_id": 3, "reason": "disconnected"}
        # player 1 leaves by REST during its own turn after moving: back to the start of
        # its turn (seq 4, the last join), player 3's removal is applied again (a rollback
        # never undoes a removal), then player 1 goes and player 2 wins
        await api.move(gid, seats[0].token, 1, 0, 1)
        left = await api.leave(gid, seats[0].token)
        events = await full_log(stack, gid)
        assert [(e.seq, e.type) for e in events[4:]] == [
            (5, "PlayerRemoved"),
            (6, "ActionApplied"),
            (7, "RolledBack"),
            (8, "PlayerRemoved"),
            (9, "PlayerRemoved"),
            (10, "GameFinished"),
        ]
        assert json.loads(events[6].payload)["to_seq"] == 4
        assert events[6].state_hash == events[3].state_hash
        assert [json.loads(events[i].payload) for i in (7, 8)] == [
            {"player_id": 3, "reason": "disconnected"},
            {"player_id": 1, "reason": "left"},
        ]
        assert left["view"]["phase"] == "finished" and left["view"]["winner"] == 2
        log = await api.events(gid)  # finished: the whole log, even without a token
        assert [e["state_hash"] for e in log] == [e.state_hash for e in events]
    folded = await fold_from_scratch(stack.engine_target, events)
    assert folded.state_hash == events[-1].state_hash


async def test_a_player_who_left_is_not_removed_again_when_its_stream_closes(stack, client):
    gid = await started_game(client)
    leaver = await open_stream(client, gid, 3)
    other = await open_stream(client, gid, 2)
    await client.stub.Leave(session_pb2.LeaveRequest(game_id=gid, player_id=3))
    leaver.cancel()
    other.cancel()
    events = await wait_for_event(stack, gid, "GameCreated")
    deadline = time.monotonic() + 15
    while not any(json.loads(e.payload).get("player_id") == 2 for e in events[4:]):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
        events = await full_log(stack, gid)
    await asyncio.sleep(0.5)  # player 3's timer ran out as well
    removed = [json.loads(e.payload) for e in await full_log(stack, gid) if e.type == "PlayerRemoved"]
    assert removed == [
        {"player_id": 3, "reason": "left"},
        {"player_id": 2, "reason": "disconnected"},
    ]


async def test_a_spectator_cannot_watch_a_running_game_under_fog(client):
    gid = await started_game(client)
    with pytest.raises(grpc.aio.AioRpcError) as view:
        await client.view(gid)
    assert error_from_rpc(view.value)[0] == "FORBIDDEN"
    call = client.stub.Watch(session_pb2.WatchRequest(game_id=gid, player_id=0))
    with pytest.raises(grpc.aio.AioRpcError) as watch:
        await call.read()
    assert watch.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert error_from_rpc(watch.value)[0] == "FORBIDDEN"
    own = await client.view(gid, 1)  # a player still sees its own fogged view
    assert {u["owner"] for u in own["units"]} == {1}


async def test_every_view_of_a_finished_game_shows_the_same_players(client):
    """Both players' streams open when a move ends the game: the move's answer, the
    ``finished`` frames and the views read after the end are one view per player (the
    streams closing at the end do not show their players away; a finished game's views
    carry no presence), with ``connected`` true for both (nobody was removed)."""
    gid = await client.create(
        {
            "width": 4,
            "height": 4,
            "players": 2,
            "units": [
                {"owner": 1, "type": "infantry", "x": 0, "y": 0},
                {"owner": 2, "type": "infantry", "x": 1, "y": 1},
            ],
            "disconnect_timeout_s": 5.0,
        },
        kind="cellwar",
    )
    for name in ("p1", "p2"):
        await client.join(gid, name)
    streams = {pid: await open_stream(client, gid, pid) for pid in (1, 2)}
    reply = await client.act(gid, 1, {"unit_id": 1, "dx": 1, "dy": 1})  # takes p2's last unit
    finals = {}
    for pid, stream in streams.items():
        while (update := await stream.read()).type != "finished":
            pass
        finals[pid] = (update.seq, json.loads(update.view))
    answered = json.loads(reply.view)
    assert answered["phase"] == "finished" and answered["winner"] == 1
    assert finals[1] == (reply.seq, answered)
    await asyncio.sleep(0.3)  # the streams have ended: their players' presence is gone
    for pid in (1, 2):
        view = await client.view(gid, pid)
        assert view == finals[pid][1]
        assert [p["connected"] for p in view["players"]] == [True, True]
