"""Several session instances on one NATS (docs/architecture/scale-out.md: any session
instance serves any game): every instance follows the log, exactly one ticks a running game
and another takes over when it goes, presence and disconnect clocks outlive the instance
that saw them, the engine client spreads over replicas, the lobby pages, waiting games
expire, replays create no NATS consumer. Real NATS, real gRPC servers on loopback."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest
import websockets

from cellwar.v1 import session_pb2
from cellwar.v1.codes import EventType
from gateway.app import create_app
from services.common.errors import error_from_rpc
from services.common.settings import Settings
from services.engine.server import create_server as create_engine_server
from services.session.adapters import kv
from services.session.adapters.engine_client import EngineClient
from services.session.adapters.event_store import STREAM
from services.session.server import SessionApp
from tests.api.conftest import TEST_SECRET, serve
from tests.support.client import SessionClient, fold_from_scratch
from tests.support.nats import NatsProcess, free_port
from tests.support.stack import SessionProcess, start_session

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

#: A torus: two gliders flying side by side never meet and never settle (no redraw).
LIFE = {"width": 40, "height": 40, "players": 2, "budget": 200, "torus": True, "max_generations": 20_000}
GLIDER_1 = [[6, 5], [7, 6], [5, 7], [6, 7], [7, 7]]
GLIDER_2 = [[26, 5], [27, 6], [25, 7], [26, 7], [27, 7]]
#: ids are drawn per owner (engine/cellwar/ids.py): with 3 players p1 units 1, 4; p2 2, 5;
#: p3 3, 6.
UNITS = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 1, "type": "infantry", "x": 1, "y": 0},
    {"owner": 2, "type": "infantry", "x": 5, "y": 5},
    {"owner": 2, "type": "infantry", "x": 6, "y": 5},
    {"owner": 3, "type": "infantry", "x": 9, "y": 9},
    {"owner": 3, "type": "infantry", "x": 8, "y": 9},
]


def cellwar(timeout_s: float, players: int = 3) -> dict:
    units = [u for u in UNITS if u["owner"] <= players]
    return {"width": 10, "height": 10, "players": players, "units": units, "disconnect_timeout_s": timeout_s}


async def eventually(check: Callable[[], Awaitable[Any]], timeout: float = 20.0, what: str = ""):
    """Poll ``check()`` until it returns a truthy value (returned); generous deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.05)


@pytest.fixture
async def engine_target() -> AsyncIterator[str]:
    server, port = await create_engine_server("127.0.0.1:0")
    yield f"127.0.0.1:{port}"
    await server.stop(0.2)


@pytest.fixture
async def pair(nats_url, engine_target) -> AsyncIterator[tuple[SessionApp, str, SessionApp, str]]:
    """Two session instances on one NATS and one engine: ``(a, a_target, b, b_target)``."""
    a, a_target = await start_session(nats_url, engine_target, instance_id=f"a-{uuid.uuid4().hex[:6]}")
    b, b_target = await start_session(nats_url, engine_target, instance_id=f"b-{uuid.uuid4().hex[:6]}")
    try:
        yield a, a_target, b, b_target
    finally:
        await a.stop(grace=0.2)
        await b.stop(grace=0.2)


async def running_life_game(client: SessionClient) -> str:
    gid = await client.create(LIFE)
    await client.join(gid, "alice")
    await client.join(gid, "bob")
    await client.act(gid, 1, {"type": "place", "cells": GLIDER_1})
    await client.end_turn(gid, 1)
    await client.act(gid, 2, {"type": "place", "cells": GLIDER_2})
    await client.end_turn(gid, 2)
    return gid


async def test_an_action_through_one_instance_is_seen_at_once_by_the_other(pair):
    a_app, a_target, b_app, b_target = pair
    a, b = SessionClient.open(a_target), SessionClient.open(b_target)
    try:
        gid = await a.create(LIFE)
        await a.join(gid, "alice")
        await a.join(gid, "bob")
        assert (await b.view(gid, 1))["seq"] == 3  # b loads the game from NATS
        stream = b.stub.Watch(session_pb2.WatchRequest(game_id=gid, player_id=1))
        first = await stream.read()
        assert first.seq == 3
        reply = await a.act(gid, 1, {"type": "place", "cells": [[1, 1]]})
        assert reply.seq == 4
        frame = await asyncio.wait_for(stream.read(), 10)  # followed, not polled
        assert frame.seq == 4 and json.loads(frame.view)["players"][0]["budget_left"] == 199
        assert await b.view(gid, 1) == await a.view(gid, 1)
        stream.cancel()
        # and the other way round, a command through b lands after a's (the fence)
        await b.end_turn(gid, 1)
        assert (await eventually(lambda: a.view(gid, 2), what="a sees b's end_turn"))["turn"] == 2
        await eventually(lambda: _async(a_app.games.games[gid].seq == 5), what="a at seq 5")
        assert [e.seq for e in await a.events(gid, player_id=1)] == [1, 2, 3, 4, 5]
        assert (await a.view(gid, 2)) == (await b.view(gid, 2))
    finally:
        await a.close()
        await b.close()


async def test_a_websocket_on_one_instance_sees_generations_ticked_by_another(pair):
    a_app, a_target, b_app, b_target = pair
    a = SessionClient.open(a_target)
    try:
        gid = await running_life_game(a)  # a ran the command that started it: a ticks
        await eventually(
            lambda: _holder(a_app, b_app, gid), what="a lease holder"
        )
        ticker, watcher = (a_app, b_app) if a_app.leases.holds(gid) else (b_app, a_app)
        watcher_target = b_target if watcher is b_app else a_target
        settings = Settings(session_addr=watcher_target, secret=TEST_SECRET)
        async with serve(create_app(settings)) as url:
            ws_url = url.replace("http", "ws")
            generations = []
            async with websockets.connect(f"{ws_url}/game/{gid}/stream", max_size=None) as ws:
                while len(set(generations)) < 4:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                    generations.append(message["view"]["generation"])
            assert generations == sorted(generations) and len(set(generations)) >= 4
            assert generations[0] < generations[-1]
            # the watcher's instance follows; the other one ticks
            assert not watcher.leases.holds(gid) and ticker.leases.holds(gid)
            assert all(g.game_id != gid or not g.due for g in watcher.games.loaded())
    finally:
        await a.act(gid, 1, {"type": "resign"})
        await a.close()


async def _holder(a_app: SessionApp, b_app: SessionApp, gid: str) -> bool:
    return a_app.leases.holds(gid) != b_app.leases.holds(gid)


async def test_the_lease_moves_to_another_instance_when_its_holder_stops(pair):
    a_app, a_target, b_app, b_target = pair
    a = SessionClient.open(a_target)
    b = SessionClient.open(b_target)
    try:
        gid = await running_life_game(a)
        await eventually(lambda: _holder(a_app, b_app, gid), what="a lease holder")
        holder, other = (a_app, b_app) if a_app.leases.holds(gid) else (b_app, a_app)
        other_client = b if other is b_app else a
        before = (await other_client.view(gid))["generation"]
        await holder.stop(grace=0.2)  # its lease stays in KV until the TTL runs out
        await eventually(
            lambda: _async(other.leases.holds(gid)), timeout=30, what="the other takes the lease"
        )
        later = await eventually(
            lambda: _generation_above(other_client, gid, before + 50), what="ticking goes on"
        )
        assert later["phase"] in ("running", "redraw", "finished")
        await other_client.act(gid, 1, {"type": "resign"})
        events = await other_client.events(gid)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert events[-1].type == "GameFinished"
        state = await fold_from_scratch(other.settings.engine_addr, events)
        assert state.state_hash == events[-1].state_hash
    finally:
        await a.close()
        await b.close()


async def _async(value):
    return value


async def _generation_above(client: SessionClient, gid: str, generation: int):
    view = await client.view(gid)
    return view if view["generation"] > generation else None


async def test_a_player_who_dropped_on_a_killed_instance_is_rolled_back_exactly_once(
    nats_url, engine_target, tmp_path
):
    a = SessionProcess(
        nats_url,
        engine_target,
        instance_id=f"killed-{uuid.uuid4().hex[:6]}",
        log_path=str(tmp_path / "a.log"),
    )
    await a.start()
    b_app, b_target = await start_session(nats_url, engine_target, instance_id=f"b-{uuid.uuid4().hex[:6]}")
    on_a, on_b = SessionClient.open(a.target), SessionClient.open(b_target)
    try:
        gid = await on_b.create(cellwar(timeout_s=1.0), kind="cellwar")
        for name in ("p1", "p2", "p3"):
            await on_b.join(gid, name)
        # player 2's WebSocket is bridged by instance a
        stream = on_a.stub.Watch(session_pb2.WatchRequest(game_id=gid, player_id=2))
        assert (await stream.read()).type == "view"
        await on_b.act(gid, 1, {"unit_id": 1, "dx": 0, "dy": 1})
        await on_b.act(gid, 1, {"unit_id": 4, "dx": 0, "dy": 1})
        await on_b.end_turn(gid, 1)
        await on_b.act(gid, 2, {"unit_id": 2, "dx": -1, "dy": -1})  # mid-turn
        stream.cancel()  # player 2 drops ...
        await asyncio.sleep(0.2)
        a.kill()  # ... and the instance that tracked the connection dies
        events = await eventually(
            lambda: _log_with(b_app, gid, EventType.PLAYER_REMOVED), timeout=40, what="removal"
        )
        await asyncio.sleep(1.5)  # a second removal would come within a clock pass or two
        events = await b_app.store.read(gid)
        types = [e.type for e in events]
        assert types[7:] == ["ActionApplied", "RolledBack", "PlayerRemoved"]
        assert types.count("RolledBack") == 1 and types.count("PlayerRemoved") == 1
        assert json.loads(events[-1].payload) == {"player_id": 2, "reason": "disconnected"}
        assert json.loads(events[8].payload)["to_seq"] == 7
        assert events[8].state_hash == events[6].state_hash
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        state = await fold_from_scratch(engine_target, events)
        assert state.state_hash == events[-1].state_hash
    finally:
        await on_a.close()
        await on_b.close()
        a.kill()
        await b_app.stop(grace=0.2)


async def _log_with(app: SessionApp, gid: str, etype: str):
    events = await app.store.read(gid)
    return events if any(e.type == etype for e in events) else None


async def test_when_every_player_drops_at_once_nobody_is_removed(stack):
    client = SessionClient.open(stack.session_target)
    try:
        gid = await client.create(cellwar(timeout_s=1.0, players=2), kind="cellwar")
        await client.join(gid, "p1")
        await client.join(gid, "p2")
        streams = []
        for pid in (1, 2):
            stream = client.stub.Watch(session_pb2.WatchRequest(game_id=gid, player_id=pid))
            assert (await stream.read()).type == "view"
            streams.append(stream)
        for stream in streams:  # the gateway tier restarts: every connection goes at once
            stream.cancel()
        view = await eventually(
            lambda: _all_away(client, gid), what="both shown away"
        )
        assert [p["connected"] for p in view["players"]] == [False, False]
        await asyncio.sleep(3.0)  # three times the timeout: the clocks wait
        assert [e.type for e in await stack.session.store.read(gid)][-1] == "PlayerJoined"
        # player 1 comes back; player 2 stays away alone: its clock runs, it is removed
        back = client.stub.Watch(session_pb2.WatchRequest(game_id=gid, player_id=1))
        assert (await back.read()).type == "view"
        # the removal and the GameFinished it brings are two messages of one append:
        # wait for the last, a read between them sees only the first
        events = await eventually(
            lambda: _log_with(stack.session, gid, EventType.GAME_FINISHED), what="removal of 2"
        )
        removed = [json.loads(e.payload) for e in events if e.type == "PlayerRemoved"]
        assert removed == [{"player_id": 2, "reason": "disconnected"}]
        assert events[-1].type == "GameFinished"
        back.cancel()
    finally:
        await client.close()


async def _all_away(client: SessionClient, gid: str):
    view = await client.view(gid, 1)
    return view if all(p["connected"] is False for p in view["players"]) else None


async def test_engine_calls_spread_over_replicas_and_survive_one_stopping(nats_url):
    servers = [await create_engine_server("127.0.0.1:0") for _ in range(2)]
    targets = [f"127.0.0.1:{port}" for _, port in servers]
    client = EngineClient(",".join(targets), timeout=10)
    counts = {t: 0 for t in targets}
    for replica in client.replicas:
        replica.stub = _Counting(replica.stub, counts, replica.target)
    app, target = await start_session(nats_url, ",".join(targets), instance_id=f"e-{uuid.uuid4().hex[:6]}")
    session = SessionClient.open(target)
    try:
        for _ in range(4):
            assert json.loads(await client.patterns())["patterns"]
        assert all(n == 2 for n in counts.values())  # in turn
        await servers[0][0].stop(0)
        for _ in range(4):
            assert json.loads(await client.levels())
        assert counts[targets[1]] >= 6  # every call answered by the live one
        gid = await session.create(LIFE)  # and the session keeps working through it
        await session.join(gid, "alice")
        assert (await session.join(gid, "bob")).seq == 3
        assert (await session.view(gid, 1))["phase"] == "placement"
    finally:
        await session.close()
        await client.close()
        await app.stop(grace=0.2)
        for server, _ in servers:
            await server.stop(0)


class _Counting:
    """A stub whose calls are counted per replica."""

    def __init__(self, stub, counts: dict[str, int], target: str) -> None:
        self._stub, self._counts, self._target = stub, counts, target

    def __getattr__(self, name: str):
        method = getattr(self._stub, name)

        def call(*args, **kwargs):
            self._counts[self._target] += 1
            return method(*args, **kwargs)

        return call


async def test_replays_create_no_nats_consumer(stack):
    client = SessionClient.open(stack.session_target)
    try:
        gid = await running_life_game(client)
        await client.act(gid, 1, {"type": "resign"})
        final = await client.view(gid)
        assert final["phase"] == "finished"
        js = stack.session.nc.jetstream()
        streams = [STREAM, f"KV_{kv.SNAPSHOTS}"]
        before = [(await js.stream_info(s)).state.consumer_count for s in streams]
        gate = asyncio.Semaphore(50)
        last = final["seq"]

        async def one(i: int) -> int:
            async with gate:
                return (await client.replay(gid, 1 + i % last, 1))["seq"]

        seqs = await asyncio.gather(*(one(i) for i in range(500)))
        assert seqs == [1 + i % last for i in range(500)]
        after = [(await js.stream_info(s)).state.consumer_count for s in streams]
        assert all(x <= y for x, y in zip(after, before, strict=True)), (before, after)
    finally:
        await client.close()


async def test_a_waiting_game_expires(nats_url, engine_target):
    app, target = await start_session(
        nats_url, engine_target, instance_id=f"x-{uuid.uuid4().hex[:6]}", waiting_game_ttl_s=1.0
    )
    client = SessionClient.open(target)
    try:
        gid = await client.create(LIFE)
        started = await client.create(LIFE)
        await client.join(started, "alice")
        await client.join(started, "bob")  # placement: it never expires
        events = await eventually(
            lambda: _log_with(app, gid, EventType.GAME_FINISHED), what="expiry"
        )
        assert [e.type for e in events] == ["GameCreated", "GameExpired", "GameFinished"]
        assert (await client.view(gid))["phase"] == "finished"
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await client.join(gid, "late")
        assert error_from_rpc(err.value)[0] == "GAME_FINISHED"
        lobby = await client.stub.ListGames(session_pb2.ListGamesRequest())
        ids = {g.game_id for g in lobby.games}
        assert gid not in ids and started in ids
        assert [e.type for e in await app.store.read(started)][-1] == "PlayerJoined"
    finally:
        await client.close()
        await app.stop(grace=0.2)


async def test_the_lobby_pages_and_every_instance_sees_it(pair):
    a_app, a_target, b_app, b_target = pair
    a, b = SessionClient.open(a_target), SessionClient.open(b_target)
    try:
        made = [await a.create({**LIFE, "budget": 10 + i}) for i in range(5)]
        await eventually(lambda: _async(all(g in b_app.directory.entries for g in made)), what="b's mirror")
        seen: list[str] = []
        cursor = ""
        while True:
            page = await b.stub.ListGames(session_pb2.ListGamesRequest(page_size=2, cursor=cursor))
            assert len(page.games) <= 2
            seen += [g.game_id for g in page.games]
            cursor = page.next_cursor
            if not cursor:
                break
        assert [g for g in seen if g in made] == made  # oldest first, each once
        assert len(seen) == len(set(seen))
        whole = await b.stub.ListGames(session_pb2.ListGamesRequest())
        assert [g.game_id for g in whole.games if g.game_id in made] == made and not whole.next_cursor
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await b.stub.ListGames(session_pb2.ListGamesRequest(cursor="not-a-cursor"))
        assert error_from_rpc(err.value)[0] == "MALFORMED"
    finally:
        await a.close()
        await b.close()


async def test_a_new_instance_loads_no_game_until_one_is_used(stack, nats_url):
    client = SessionClient.open(stack.session_target)
    try:
        gids = [await client.create(LIFE) for _ in range(3)]
        app, target = await start_session(
            nats_url, stack.engine_target, instance_id=f"lazy-{uuid.uuid4().hex[:6]}"
        )
        other = SessionClient.open(target)
        try:
            # (it may adopt games of earlier tests whose instances are gone: their leases)
            assert not set(gids) & set(app.games.games)
            assert all(g in app.directory.entries for g in gids)
            assert (await other.view(gids[0]))["phase"] == "waiting"
            assert set(gids) & set(app.games.games) == {gids[0]}
        finally:
            await other.close()
            await app.stop(grace=0.2)
    finally:
        await client.close()


async def test_a_session_started_before_nats_waits_for_it(engine_target, tmp_path):
    port = free_port()
    url = f"nats://127.0.0.1:{port}"
    starting = asyncio.create_task(
        start_session(url, engine_target, instance_id="early", nats_connect_timeout_s=60)
    )
    await asyncio.sleep(1.5)  # NATS is not up yet (a cluster still forming)
    assert not starting.done()
    nats_proc = NatsProcess(tmp_path / "nats", port).start()
    try:
        app, target = await asyncio.wait_for(starting, 60)
        client = SessionClient.open(target)
        try:
            gid = await client.create(LIFE)
            assert (await client.join(gid, "alice")).seq == 2
        finally:
            await client.close()
            await app.stop(grace=0.2)
    finally:
        if not starting.done():
            starting.cancel()
        nats_proc.stop(kill=True)


async def test_a_killed_ticker_is_replaced_within_the_lease_ttl(nats_url, engine_target, tmp_path):
    holder = SessionProcess(
        nats_url,
        engine_target,
        instance_id=f"ticker-{uuid.uuid4().hex[:6]}",
        log_path=str(tmp_path / "holder.log"),
    )
    await holder.start()
    on_holder = SessionClient.open(holder.target)
    other_app = None
    try:
        gid = await running_life_game(on_holder)  # the holder started it: it ticks it
        await eventually(lambda: _generation_above(on_holder, gid, 10), what="ticking")
        other_app, other_target = await start_session(
            nats_url, engine_target, instance_id=f"heir-{uuid.uuid4().hex[:6]}"
        )
        await asyncio.sleep(0.5)
        assert other_app.leases.holder(gid) not in (None, other_app.settings.instance_id)
        other = SessionClient.open(other_target)
        try:
            holder.kill()  # SIGKILL: its lease is not given up, it expires (TTL 3 s here)
            before = (await other.view(gid))["generation"]
            await eventually(lambda: _async(other_app.leases.holds(gid)), timeout=30, what="heir")
            await eventually(lambda: _generation_above(other, gid, before + 20), what="ticks again")
            await other.act(gid, 1, {"type": "resign"})
            events = await other.events(gid)
            assert [e.seq for e in events] == list(range(1, len(events) + 1))
            state = await fold_from_scratch(engine_target, events)
            assert state.state_hash == events[-1].state_hash
        finally:
            await other.close()
    finally:
        await on_holder.close()
        holder.kill()
        if other_app is not None:
            await other_app.stop(grace=0.2)
