"""A Life game through the Session gRPC API against a real NATS and engine service."""

from __future__ import annotations

import asyncio
import json
import uuid

import grpc
import pytest

from cellwar.v1 import session_pb2
from services.common.errors import error_from_rpc
from services.session.adapters.engine_client import ENGINE_UNREACHABLE
from tests.support.client import SessionClient, fold_from_scratch
from tests.support.versions import versions

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

#: A 2-player 40x40 board; player 1 (left half) and 2 (right half).
CONFIG = {"width": 40, "height": 40, "players": 2, "budget": 100}
R_PENTOMINO = [[11, 10], [12, 10], [10, 11], [11, 11], [11, 12]]
GLIDER_RIGHT = [[31, 20], [32, 21], [30, 22], [31, 22], [32, 22]]


@pytest.fixture
async def client(stack):
    c = SessionClient.open(stack.session_target)
    yield c
    await c.close()


async def new_running_game(client: SessionClient, config=CONFIG) -> str:
    gid = await client.create(config)
    assert json.loads((await client.join(gid, "alice")).view)["you"] == 1
    assert (await client.join(gid, "bob")).player_id == 2
    await client.act(gid, 1, {"type": "place", "cells": R_PENTOMINO})
    await client.end_turn(gid, 1)
    await client.act(gid, 2, {"type": "place", "cells": GLIDER_RIGHT})
    await client.end_turn(gid, 2)
    return gid


async def test_two_player_game_runs_to_the_end_and_its_log_folds_to_the_final_state(stack, client):
    gid = await new_running_game(client)
    final = await client.wait_finished(gid, [1, 2])
    assert final["result"] in ("win", "draw")
    events = await client.events(gid)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert events[0].type == "GameCreated" and events[-1].type == "GameFinished"
    assert any(e.type == "GenerationsTicked" for e in events)
    state = await fold_from_scratch(stack.engine_target, events)
    assert state.state_hash == events[-1].state_hash
    # the spectator's view version: every event but the two blind placements
    assert final["seq"] == versions(events)[0] == events[-1].seq - 2
    assert final["game_id"] == gid


async def test_replay_at_the_last_seq_equals_the_final_view(client):
    gid = await new_running_game(client)
    await client.wait_finished(gid, [1, 2])
    last = (await client.events(gid))[-1].seq  # finished: the log is public, game seqs
    replayed, live = await client.replay(gid, last, 1), await client.view(gid, 1)
    assert replayed["seq"] == last and live["seq"] == last - 1  # 2's placement: unseen
    assert {**replayed, "seq": 0} == {**live, "seq": 0}
    # and an earlier seq, through a snapshot + fold
    placed = await client.replay(gid, 4, 1)
    assert placed["phase"] == "placement" and placed["seq"] == 4


async def test_retried_request_is_applied_once(stack, client):
    gid = await client.create(CONFIG, command_id="create-" + uuid.uuid4().hex)
    first = await client.join(gid, "alice", command_id="join-a")
    again = await client.join(gid, "alice", command_id="join-a")
    assert (again.seq, again.player_id) == (first.seq, first.player_id) == (2, 1)
    await client.join(gid, "bob")
    await client.act(gid, 1, {"type": "place", "cells": [[1, 1]]}, command_id="place-1")
    await client.act(gid, 1, {"type": "place", "cells": [[1, 1]]}, command_id="place-1")
    assert len(await client.events(gid, player_id=1)) == 4  # placement: the log is private
    await stack.restart_session()
    later = SessionClient.open(stack.session_target)
    try:
        again = await later.join(gid, "alice", command_id="join-a")
        assert (again.seq, again.player_id) == (2, 1)
        await later.act(gid, 1, {"type": "place", "cells": [[1, 1]]}, command_id="place-1")
        assert [e.type for e in await later.events(gid, player_id=1)] == [
            "GameCreated",
            "PlayerJoined",
            "PlayerJoined",
            "ActionApplied",
        ]
    finally:
        await later.close()


async def test_retried_create_returns_the_same_game(client):
    cid = "create-" + uuid.uuid4().hex
    assert await client.create(CONFIG, command_id=cid) == await client.create(
        CONFIG, command_id=cid
    )


async def test_unknown_game_is_not_found(client):
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await client.view("nosuchgame00")
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert error_from_rpc(err.value)[0] == "GAME_NOT_FOUND"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await client.join("../bad.id*", "x")
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


async def test_rule_error_is_failed_precondition_and_leaves_the_log_unchanged(client):
    gid = await client.create(CONFIG)
    await client.join(gid, "alice")
    await client.join(gid, "bob")
    before = await client.events(gid, player_id=1)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await client.act(gid, 1, {"type": "place", "cells": [[35, 5]]})  # player 2's half
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error_from_rpc(err.value)[0] == "OUT_OF_ZONE"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await client.end_turn(gid, 2)
    assert error_from_rpc(err.value)[0] == "NOT_YOUR_TURN"
    assert await client.events(gid, player_id=1) == before


async def test_bad_json_is_invalid_argument(client):
    gid = await client.create(CONFIG)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await client.stub.Act(session_pb2.ActRequest(game_id=gid, player_id=1, action=b"{nope"))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_from_rpc(err.value)[0] == "MALFORMED"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await client.stub.CreateGame(session_pb2.CreateGameRequest(kind="life", config=b"[1]"))
    assert error_from_rpc(err.value)[0] == "MALFORMED"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await client.create({"width": 3})
    assert error_from_rpc(err.value)[0] == "INVALID_CONFIG"
    assert len(await client.events(gid, player_id=1)) == 1


async def test_watch_streams_views_then_finished(client):
    gid = await client.create(CONFIG)
    updates = []

    async def watch():
        async for update in client.stub.Watch(session_pb2.WatchRequest(game_id=gid, player_id=1)):
            updates.append(update)

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0.1)
    await client.join(gid, "alice")
    await client.join(gid, "bob")
    await client.act(gid, 1, {"type": "place", "cells": R_PENTOMINO})
    await client.end_turn(gid, 1)
    await client.act(gid, 2, {"type": "place", "cells": GLIDER_RIGHT})
    await client.end_turn(gid, 2)
    await client.wait_finished(gid, [1, 2])
    await asyncio.wait_for(watcher, 10)
    assert updates[0].type == "view" and updates[0].seq == 1
    assert updates[-1].type == "finished"
    # a frame per change of the player's version, and per tick while the game runs:
    # between two recorded events the version stays and the generation advances
    frames = [(u.seq, json.loads(u.view)["generation"]) for u in updates if u.type == "view"]
    assert frames == sorted(set(frames))
    assert [s for s, _ in frames] == sorted(s for s, _ in frames)
    assert json.loads(updates[-1].view)["phase"] == "finished"
    assert json.loads(updates[1].view)["game_id"] == gid


async def test_lobby_lists_open_games(client):
    gid = await client.create(CONFIG)
    reply = await client.stub.ListGames(session_pb2.ListGamesRequest())
    entry = next(g for g in reply.games if g.game_id == gid)
    assert (entry.kind, entry.phase, entry.players_joined, entry.max_players) == (
        "life",
        "waiting",
        0,
        2,
    )
    assert json.loads(entry.config)["width"] == 40


async def test_leave_removes_the_player(client):
    gid = await client.create(CONFIG)
    await client.join(gid, "alice")
    reply = await client.stub.Leave(session_pb2.LeaveRequest(game_id=gid, player_id=1))
    assert reply.seq == 3
    assert (await client.events(gid, player_id=1))[-1].type in ("PlayerRemoved", "GameFinished")


async def test_engine_down_is_unavailable_and_changes_nothing(stack, client):
    gid = await client.create(CONFIG)
    await stack.engine_server.stop(0)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await client.join(gid, "alice")
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    # gRPC's text (the engine's address, the socket error) stays in the session's log
    assert error_from_rpc(err.value) == ("UNAVAILABLE", ENGINE_UNREACHABLE)
    assert len(await stack.session.games.store.read(gid)) == 1  # as stored in NATS


async def test_a_second_instance_writing_the_same_game_is_caught_up(stack, nats_url):
    from tests.support.stack import start_stack

    other = await start_stack(nats_url, instance_id="session-b")
    a, b = SessionClient.open(stack.session_target), SessionClient.open(other.session_target)
    try:
        gid = await a.create(CONFIG)
        await a.join(gid, "alice")
        await b.join(gid, "bob")  # b loads the game from NATS
        reply = await a.act(
            gid, 1, {"type": "place", "cells": [[1, 1]]}
        )  # a is behind: reload, retry
        assert reply.seq == 4
        assert [e.seq for e in await b.events(gid, player_id=1)] == [1, 2, 3, 4]
    finally:
        await a.close()
        await b.close()
        await other.stop()
