"""WebSocket fan-out (gateway/fanout.py, docs/architecture/gateway.md): the sockets of one
(game, player) share ONE upstream ``Session.Watch``; every socket that keeps up gets every
frame; a slow one skips to the newest view without delaying the others; the last socket
leaving closes the upstream; upstream errors reach every socket."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
import websockets
from fastapi import FastAPI

from cellwar.v1 import session_pb2
from client.sdk import AsyncCellWarClient
from gateway.app import create_app
from gateway.errors import ApiError
from gateway.fanout import FanoutHub
from gateway.observability import Metrics
from services.common.settings import Settings
from services.session.entrypoints.grpc_service import SessionServicer
from tests.api.conftest import serve

pytestmark = pytest.mark.integration

#: A 40x40 soup runs a few hundred generations (a handful of frames at the test stack's
#: 400 generations/s) before it settles; then player 1 resigns to finish the game.
GAME = {"width": 40, "height": 40, "players": 2, "budget": 2000, "max_generations": 100_000}
SPECTATORS = 20


class WatchCount:
    """Counts the session's Watch loops per (game, player): open now and ever opened."""

    def __init__(self) -> None:
        self.open: dict[tuple[str, int], int] = {}
        self.total: dict[tuple[str, int], int] = {}


@pytest.fixture
def watches(monkeypatch: pytest.MonkeyPatch) -> WatchCount:
    """White-box count of ``SessionServicer._watch`` (the loop behind every Watch RPC)."""
    count = WatchCount()
    original = SessionServicer._watch

    async def counted(self, game, player_id, context):
        key = (game.game_id, player_id)
        count.open[key] = count.open.get(key, 0) + 1
        count.total[key] = count.total.get(key, 0) + 1
        try:
            return await original(self, game, player_id, context)
        finally:
            count.open[key] -= 1

    monkeypatch.setattr(SessionServicer, "_watch", counted)
    return count


@pytest.fixture
async def served(gateway_settings: Settings) -> AsyncIterator[tuple[FastAPI, str]]:
    """The gateway app (for ``app.state.fanout``) and its base URL."""
    app = create_app(gateway_settings)
    async with serve(app) as url:
        yield app, url


def soup(zone: list[int], seed: int) -> list[list[int]]:
    """A 30 % random soup of ``zone`` ``[x0, y0, x1, y1)``."""
    rng = random.Random(seed)
    x0, y0, x1, y1 = zone
    return [[x, y] for y in range(y0, y1) for x in range(x0, x1) if rng.random() < 0.3]


async def start_running(api: AsyncCellWarClient, game_id: str) -> str:
    """Join two players; each in turn places a soup and ends its turn: the game ticks.
    Returns player 1's token."""
    seats = [await api.join(game_id, name) for name in ("p1", "p2")]
    for i, seat in enumerate(seats):
        zone = (await api.state(game_id, seat.token))["zone"]
        await api.place(game_id, seat.token, soup(zone, 7 + i))
        await api.end_turn(game_id, seat.token)
    return seats[0].token


async def until(check, timeout: float = 10.0) -> None:
    """Wait until ``check()`` is true (polling)."""
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.01)


async def test_spectators_share_one_watch_and_get_the_same_frames(
    served: tuple[FastAPI, str], watches: WatchCount
):
    app, url = served
    hub: FanoutHub = app.state.fanout
    ws_url = url.replace("http", "ws")
    async with AsyncCellWarClient(url, timeout=30) as api:
        game_id = await api.create_game("life", GAME)
        sockets = [
            await websockets.connect(f"{ws_url}/game/{game_id}/stream", max_size=None)
            for _ in range(SPECTATORS)
        ]
        try:
            firsts = [json.loads(await asyncio.wait_for(ws.recv(), 10)) for ws in sockets]
            assert {(m["type"], m["seq"]) for m in firsts} == {("view", firsts[0]["seq"])}
            # One upstream Watch for the 20 spectators, in the hub and in the session.
            assert (hub.opened, hub.upstreams, hub.subscribers(game_id, 0)) == (1, 1, SPECTATORS)
            assert watches.total[(game_id, 0)] == 1 and watches.open[(game_id, 0)] == 1

            fast, slow = sockets[:-1], sockets[-1]
            got: list[list[tuple[str, int, float]]] = [[] for _ in fast]
            generations: dict[int, int] = {}

            async def read(ws, out: list[tuple[str, int, float]]) -> None:
                async for raw in ws:
                    message = json.loads(raw)
                    out.append((message["type"], message["seq"], asyncio.get_running_loop().time()))
                    generations[id(out)] = message["view"].get("generation", 0)
                    if message["type"] == "finished":
                        return

            readers = [
                asyncio.create_task(read(ws, out)) for ws, out in zip(fast, got, strict=True)
            ]
            token = await start_running(api, game_id)
            # ticks (a spectator's frames follow its own view version: the blind
            # placements send it none, so count generations rather than frames)
            await until(lambda: all(generations.get(id(out), 0) > 0 for out in got))
            await api.simple(game_id, token, "resign")
            # The slow socket reads nothing while the game runs; the others finish anyway.
            await asyncio.wait_for(asyncio.gather(*readers), timeout=30)
            slow_got: list[tuple[str, int, float]] = []
            await asyncio.wait_for(read(slow, slow_got), timeout=30)
        finally:
            for ws in sockets:
                await ws.close()

    sequences = [[(kind, seq) for kind, seq, _ in out] for out in got]
    assert all(s == sequences[0] for s in sequences), "the sockets that keep up differ"
    kinds = [kind for kind, _ in sequences[0]]
    # joins 2, turn ends 2, at least one tick, then the resign's final view as `finished`
    assert kinds[-1] == "finished" and set(kinds[:-1]) == {"view"} and len(kinds) >= 6
    # the final view comes once: no `view` frame of the finished frame's seq before it
    assert sequences[0][-2][1] < sequences[0][-1][1]
    seqs = [seq for _, seq in sequences[0]]
    # never back; a running game's frames between two recorded events keep the version
    # (a frame per tick on the packed path: docs/architecture/ticking.md)
    assert seqs == sorted(seqs)
    assert len(set(seqs)) >= 5  # joins 2, turn ends 2, the resign: each a new version
    # Every frame reached every fast socket within a short spread: nobody waited for the
    # slow one (which had not read a single frame meanwhile).
    for i in range(len(seqs)):
        times = [out[i][2] for out in got]
        assert max(times) - min(times) < 2.0
    # The slow socket ends like the others, with the same final view, in order (it may
    # have skipped intermediate views).
    slow_seqs = [(kind, seq) for kind, seq, _ in slow_got]
    assert slow_seqs[-1] == sequences[0][-1] and slow_seqs[-2] == sequences[0][-2]
    assert set(slow_seqs) <= set(sequences[0])
    assert [seq for _, seq in slow_seqs] == sorted(seq for _, seq in slow_seqs)
    # The game finished: the upstream is closed, in the gateway and in the session.
    await until(lambda: hub.upstreams == 0 and watches.open[(game_id, 0)] == 0)
    assert hub.opened == 1 and watches.total[(game_id, 0)] == 1


async def test_the_last_socket_of_a_key_closes_its_upstream(
    served: tuple[FastAPI, str], watches: WatchCount
):
    app, url = served
    hub: FanoutHub = app.state.fanout
    ws_url = url.replace("http", "ws")
    async with AsyncCellWarClient(url, timeout=30) as api:
        game_id = await api.create_game("life", GAME)
        seat = await api.join(game_id, "p1")
        player_url = f"{ws_url}/game/{game_id}/stream?token={seat.token}"
        tabs = [await websockets.connect(player_url) for _ in range(3)]
        spectator = await websockets.connect(f"{ws_url}/game/{game_id}/stream")
        for ws in [*tabs, spectator]:
            assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "view"
        # One upstream per key: player 1 (three tabs) and the spectator.
        assert hub.upstreams == 2 and hub.subscribers(game_id, 1) == 3
        assert watches.open == {(game_id, 1): 1, (game_id, 0): 1}

        # The player stays watched (present) while one of its sockets is open.
        for ws in tabs[:-1]:
            await ws.close()
        await until(lambda: hub.subscribers(game_id, 1) == 1)
        assert watches.open[(game_id, 1)] == 1 and hub.upstreams == 2
        # A change still reaches the remaining tab (and the spectator).
        await api.join(game_id, "p2")
        for ws in (tabs[-1], spectator):
            message = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert len(message["view"]["players"]) == 2

        # The last socket of the key leaving closes its upstream at once.
        await tabs[-1].close()
        await until(lambda: watches.open[(game_id, 1)] == 0)
        assert hub.upstreams == 1 and watches.open[(game_id, 0)] == 1
        await spectator.close()
        await until(lambda: hub.upstreams == 0 and watches.open[(game_id, 0)] == 0)

        # A socket that comes later opens a fresh upstream.
        async with websockets.connect(f"{ws_url}/game/{game_id}/stream") as ws:
            assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "view"
            assert hub.upstreams == 1 and watches.total[(game_id, 0)] == 2


# ----------------------------------------------------------------- the hub alone


class FakeCall:
    """A Watch call fed by the test: ``updates.put(update | exception | None)``."""

    def __init__(self) -> None:
        self.updates: asyncio.Queue[Any] = asyncio.Queue()
        self.cancelled = False

    def cancel(self) -> bool:
        self.cancelled = True
        return True

    def __aiter__(self) -> FakeCall:
        return self

    async def __anext__(self) -> session_pb2.WatchUpdate:
        item = await self.updates.get()
        if item is None:
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            raise item
        return item


class FakeSession:
    """A Session stub whose Watch calls are :class:`FakeCall`."""

    def __init__(self) -> None:
        self.calls: list[FakeCall] = []

    def Watch(self, request: session_pb2.WatchRequest) -> FakeCall:  # noqa: N802 - gRPC name
        call = FakeCall()
        self.calls.append(call)
        return call


def update(seq: int, kind: str = "view") -> session_pb2.WatchUpdate:
    return session_pb2.WatchUpdate(type=kind, seq=seq, view=json.dumps({"n": seq}).encode())


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def take(sub, n: int) -> list[tuple[str, int]]:
    out = []
    for _ in range(n):
        message = json.loads(await asyncio.wait_for(anext(sub), 5))
        out.append((message["type"], message["seq"]))
    return out


async def test_a_slow_subscriber_skips_to_the_newest_view_and_keeps_finished():
    session = FakeSession()
    hub = FanoutHub(session, Metrics(), queue_frames=4)
    fast, slow = hub.subscribe("g", 0), hub.subscribe("g", 0)
    assert len(session.calls) == 1 and hub.upstreams == 1
    call = session.calls[0]
    received: list[tuple[str, int]] = []
    for seq in range(1, 11):
        await call.updates.put(update(seq))
        await settle()
        received += await take(fast, 1)  # the fast one reads every frame as it comes
    await call.updates.put(update(10, "finished"))
    await call.updates.put(None)
    await settle()
    received += await take(fast, 1)
    assert received == [("view", s) for s in range(1, 11)] + [("finished", 10)]
    # The slow one: its backlog was dropped when full; the newest view and finished stay.
    rest = [(json.loads(f)["type"], json.loads(f)["seq"]) async for f in slow]
    assert rest[-2:] == [("view", 10), ("finished", 10)] and len(rest) <= 5
    assert slow.dropped == 10 - (len(rest) - 1) and fast.dropped == 0
    assert hub.upstreams == 0 and not call.cancelled
    with pytest.raises(StopAsyncIteration):
        await anext(fast)


async def test_a_late_subscriber_starts_with_the_newest_view():
    session = FakeSession()
    hub = FanoutHub(session, Metrics())
    first = hub.subscribe("g", 2)
    await session.calls[0].updates.put(update(5))
    await settle()
    late = hub.subscribe("g", 2)
    assert len(session.calls) == 1
    assert await take(first, 1) == [("view", 5)] and await take(late, 1) == [("view", 5)]
    await session.calls[0].updates.put(update(6))
    assert await take(late, 1) == [("view", 6)]


async def test_upstream_errors_reach_every_subscriber_and_the_last_leaving_cancels():
    session = FakeSession()
    hub = FanoutHub(session, Metrics())
    subs = [hub.subscribe("g", 0) for _ in range(3)]
    await session.calls[0].updates.put(update(1))
    error = grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), details="stopping"
    )
    await session.calls[0].updates.put(error)
    for sub in subs:
        assert await take(sub, 1) == [("view", 1)]  # frames before the error still come
        with pytest.raises(ApiError) as exc:
            await anext(sub)
        assert (exc.value.code, exc.value.ws_close_code) == ("UNAVAILABLE", 4503)
    assert hub.upstreams == 0

    a, b = hub.subscribe("h", 1), hub.subscribe("h", 1)
    call = session.calls[1]
    a.close()
    a.close()  # idempotent
    assert not call.cancelled and hub.upstreams == 1
    b.close()
    assert call.cancelled and hub.upstreams == 0
    await settle()
