"""Turn timers through the session (docs/architecture/rules.md "Turn timers"): a timed turn
nobody plays ends by itself with ``TurnTimedOut`` — CellWar, Life placement, Life redraw —
also across a session restart, exactly once; views show ``turn_deadline`` = the recorded
time of the event that began the turn + ``turn_time_s``. Real NATS, real gRPC servers on
loopback."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import pytest

from cellwar.v1.codes import EventType
from services.session.domain.game import event_time
from tests.support.client import SessionClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

UNITS = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 1, "type": "infantry", "x": 1, "y": 0},
    {"owner": 2, "type": "infantry", "x": 7, "y": 7},
    {"owner": 2, "type": "infantry", "x": 6, "y": 7},
]
BLOCK = [[1, 1], [2, 1], [1, 2], [2, 2]]


def cellwar(turn_time_s: int) -> dict:
    return {"width": 8, "height": 8, "units": UNITS, "turn_time_s": turn_time_s}


async def eventually(check: Callable[[], Awaitable[Any]], timeout: float = 30.0, what: str = ""):
    """Poll ``check()`` until it returns a truthy value (returned); generous deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.1)


def timeouts(events: list) -> list:
    return [e for e in events if e.type == EventType.TURN_TIMED_OUT]


def deadline_of(view: dict) -> float:
    return datetime.fromisoformat(view["turn_deadline"].replace("Z", "+00:00")).timestamp()


async def all_events(client: SessionClient, gid: str, player_id: int = 1) -> list:
    return await client.events(gid, player_id=player_id)


async def test_an_unplayed_cellwar_turn_times_out_by_itself(stack):
    client = SessionClient.open(stack.session_target)
    try:
        gid = await client.create(cellwar(2), kind="cellwar")
        await client.join(gid, "ann")
        await client.join(gid, "bob")
        view = await client.view(gid, 1)
        assert view["turn"] == 1
        # the turn began with the second PlayerJoined (seq 3): its time + 2 s
        joined = (await all_events(client, gid))[2]
        assert joined.type == EventType.PLAYER_JOINED
        assert deadline_of(view) == pytest.approx(event_time(joined) + 2, abs=0.002)
        assert view["turn_deadline"].endswith("Z")
        assert (await client.view(gid, 2))["turn_deadline"] == view["turn_deadline"]  # public

        async def timed_out_twice():
            found = timeouts(await all_events(client, gid))
            return found if len(found) >= 2 else None

        first, second = (await eventually(timed_out_twice, what="two turns timed out"))[:2]
        assert (first.actor, json.loads(first.payload)) == (1, {"players": [1]})
        assert (second.actor, json.loads(second.payload)) == (2, {"players": [2]})
        # the second turn's clock started at the first timeout, not earlier
        assert event_time(second) >= event_time(first) + 2 - 0.01
        recorded = timeouts(await stack.session.store.read(gid))  # command ids: white box
        assert recorded[0].command_id.startswith("p0:timeout:3#")
        view = await client.view(gid, 1)
        # units that never acted are where they started
        mine = sorted((u["x"], u["y"]) for u in view["units"] if u["owner"] == 1)
        assert mine == [(0, 0), (1, 0)]
        if view["phase"] == "playing":
            assert view["round"] >= 2
            await client.stub.Leave(_leave(gid, 1))
        else:  # a stalled machine read it after the third timeout: player 1's second idle
            # turn in a row removed it (engine version 4), so the game ended by itself
            assert [e.type for e in (await all_events(client, gid))][-2:] == [
                EventType.PLAYER_REMOVED, EventType.GAME_FINISHED]
        final = await client.view(gid, 0)
        assert final["phase"] == "finished" and final["turn_deadline"] is None
    finally:
        await client.close()


def _leave(gid: str, player_id: int):
    from cellwar.v1 import session_pb2

    return session_pb2.LeaveRequest(game_id=gid, player_id=player_id)


async def test_a_timed_turn_survives_a_session_restart_and_times_out_once(stack):
    client = SessionClient.open(stack.session_target)
    gid = await client.create(cellwar(6), kind="cellwar")
    await client.join(gid, "ann")
    await client.join(gid, "bob")
    deadline = deadline_of(await client.view(gid, 1))
    await client.close()
    old = stack.session
    await stack.restart_session()  # the holder stops; a new instance starts
    stopped_at = time.time()
    assert old.keeper.timers.recorded == 0 and stopped_at < deadline
    client = SessionClient.open(stack.session_target)
    try:
        first = await eventually(
            lambda: _first_timeout(client, gid), timeout=60, what="the timeout after the restart"
        )
        assert event_time(first) >= deadline
        assert stack.session.keeper.timers.recorded >= 1
        await asyncio.sleep(0.5)  # anything recorded twice would be there by now
        events = await stack.session.store.read(gid)  # command ids: white box
        turn_seqs = [e.command_id.split("#")[0] for e in timeouts(events)]
        assert turn_seqs[0] == "p0:timeout:3" and len(set(turn_seqs)) == len(turn_seqs)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        # the new instance shows the same deadline the old one did
        view = await client.view(gid, 1)
        assert view["turn_deadline"] is not None
        await client.stub.Leave(_leave(gid, 1))
    finally:
        await client.close()


async def _first_timeout(client: SessionClient, gid: str):
    found = timeouts(await all_events(client, gid))
    return found[0] if found else None


async def test_life_placement_and_redraw_turns_time_out(stack):
    client = SessionClient.open(stack.session_target)
    try:
        gid = await client.create({"width": 16, "height": 8, "budget": 12, "turn_time_s": 1})
        await client.join(gid, "ann")
        await client.join(gid, "bob")
        await client.act(gid, 1, {"type": "place", "cells": BLOCK})
        view = await client.view(gid, 1)
        assert view["phase"] == "placement" and view["turn_deadline"] is not None

        async def turn_of_two():
            v = await client.view(gid, 2)
            return v if v["turn"] == 2 else None

        await eventually(turn_of_two, what="player 1's placement timed out")
        mine = await client.view(gid, 1)
        assert mine["players"][0]["cells"] == 4  # what was placed stays
        await client.act(gid, 2, {"type": "place", "cells": [[10, 1], [11, 1], [10, 2], [11, 2]]})
        await client.end_turn(gid, 2)  # the simulation starts; blocks are a still life

        async def finished():
            v = await client.view(gid, 0)
            return v if v["phase"] == "finished" else None

        # redraw opens, nobody draws, the round times out empty: the game ends
        final = await eventually(finished, what="the empty redraw round timed out")
        assert final["result"] == "draw" and final["turn_deadline"] is None
        events = await client.events(gid)
        kinds = [(e.type, e.actor, json.loads(e.payload)) for e in timeouts(events)]
        assert kinds == [
            (EventType.TURN_TIMED_OUT, 1, {"players": [1]}),
            (EventType.TURN_TIMED_OUT, 0, {"players": [1, 2]}),
        ]
        assert events[-1].type == EventType.GAME_FINISHED
        redraw_began = [e for e in events if e.type == EventType.GENERATIONS_TICKED][-1]
        assert event_time(timeouts(events)[-1]) >= event_time(redraw_began) + 1 - 0.01
    finally:
        await client.close()
