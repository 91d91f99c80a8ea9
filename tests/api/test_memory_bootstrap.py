"""A session built by ``bootstrap(memory_ports(), settings)`` (services/session/bootstrap.py)
is a whole session without NATS: behind the real engine gRPC server and the real gateway
on loopback, the SDK plays a whole Life game and a whole CellWar game to ``GameFinished``.

Nothing here asks for the ``nats_url`` fixture: no NATS is handed out while the games are
played (tests/support/nats.py records every NATS it hands out in ``USED``), no new
``nats-server`` process starts under this one, and the session holds no NATS connection.
(In a run of the whole suite, other tests may have started a NATS before this one.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from cellwar.v1.codes import EventType
from client.bots import LifeBot
from client.cellwar_bot import CellWarBot
from client.sdk import AsyncCellWarClient
from gateway.app import create_app
from services.common.settings import Settings
from services.engine.server import create_server as create_engine_server
from services.session.adapters.memory import MemoryServer
from services.session.bootstrap import SessionApp, bootstrap, memory_ports
from tests.api.conftest import TEST_SECRET
from tests.api.test_cellwar_game import GAME as CELLWAR_GAME
from tests.api.test_life_game import GAME as LIFE_GAME
from tests.support import nats as test_nats
from tests.support.processes import nats_servers
from tests.support.serve import serve
from tests.support.stack import make_settings

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


@pytest.fixture
async def memory_session() -> AsyncIterator[tuple[SessionApp, MemoryServer]]:
    """The real engine gRPC server, then ``bootstrap(memory_ports(server), settings)``."""
    engine_server, engine_port = await create_engine_server("127.0.0.1:0")
    settings = make_settings(
        "nats://no-nats.invalid:1", engine_addr=f"127.0.0.1:{engine_port}", instance_id="memory-1"
    )
    server = MemoryServer()
    app = await bootstrap(memory_ports(server, settings=settings), settings)
    try:
        yield app, server
    finally:
        await app.stop(grace=0.2)
        await engine_server.stop(0.2)
        server.close()


@pytest.fixture
async def sdk(memory_session) -> AsyncIterator[AsyncCellWarClient]:
    """An SDK client of a real gateway in front of the memory session."""
    app, _ = memory_session
    settings = Settings(session_addr=f"127.0.0.1:{app.port}", secret=TEST_SECRET)
    async with serve(create_app(settings)) as url, AsyncCellWarClient(url, timeout=30) as client:
        yield client


async def test_a_memory_session_plays_life_and_cellwar_to_the_end(memory_session, sdk):
    app, server = memory_session
    nats_before, servers_before = list(test_nats.USED), nats_servers()
    assert app.nc is None and app.ports is not None and app.ports.memory is server

    life_id = await sdk.create_game("life", LIFE_GAME)
    red = LifeBot(sdk, life_id, "red", seed=11, speed=8)
    green = LifeBot(sdk, life_id, "green", seed=12, speed=8)
    await red.join()
    await green.join()
    finals = await asyncio.wait_for(asyncio.gather(red.play(), green.play()), timeout=120)
    assert [view["phase"] for view in finals] == ["finished", "finished"]
    life_events = await sdk.events(life_id, red.seat.token)
    assert life_events[0]["type"] == "GameCreated" and life_events[-1]["type"] == "GameFinished"
    assert any(e["type"] == "GenerationsTicked" for e in life_events)

    cellwar_id = await sdk.create_game("cellwar", CELLWAR_GAME)
    bots = [CellWarBot(sdk, cellwar_id, f"bot-{i}", seed=40 + i) for i in (1, 2, 3)]
    for bot in bots:
        await bot.join()
    await asyncio.wait_for(asyncio.gather(*(bot.play() for bot in bots)), timeout=120)
    final = await sdk.state(cellwar_id, bots[0].seat.token)
    assert final["phase"] == "finished" and final["result"] == "win"
    cellwar_events = await sdk.events(cellwar_id)  # a finished game's log is public
    assert cellwar_events[-1]["type"] == "GameFinished"
    assert cellwar_events[-1]["payload"]["winner"] == final["winner"]

    # The log the API showed is the one the in-memory server holds, seq for seq.
    for game_id, shown in ((life_id, life_events), (cellwar_id, cellwar_events)):
        held = [(e.seq, e.type, e.state_hash) for _, e in server.events.logs[game_id]]
        assert held == [(e["seq"], e["type"], e["state_hash"]) for e in shown]
        assert held[-1][1] == EventType.GAME_FINISHED
    # The lobby entries went through the directory adapter onto the in-memory bucket.
    entry = await app.directory.fetch(cellwar_id)
    assert entry is not None and entry["phase"] == "finished"

    assert test_nats.USED == nats_before
    assert nats_servers() == servers_before
