"""``cellwar verify --nats URL --all`` (docs/replays.md): every game of the stream
``GAME_EVENTS`` verified from the stored ``cellwar.v1.Event`` protobufs, after playing games
through the real stack. The stack runs on a NATS server of its own (a fresh ``nats-server``
in a temporary folder), so the stream holds exactly this test's games."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import nats
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from cellwar.v1 import events_pb2
from client.sdk import AsyncCellWarClient
from gateway.app import create_app
from services.common.settings import Settings
from tests.api.conftest import TEST_SECRET, serve
from tests.cli.test_export import CELLWAR, GREEN_CELLS, LIFE, RED_CELLS, cellwar_cli, wait_finished
from tests.support.nats import NatsProcess
from tests.support.stack import start_stack

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


@pytest.fixture
async def own_nats(tmp_path: Path) -> AsyncIterator[str]:
    """A NATS server with JetStream for this test only."""
    proc = NatsProcess(tmp_path / "nats")
    await asyncio.to_thread(proc.start)
    try:
        yield proc.url
    finally:
        await asyncio.to_thread(proc.stop)


@pytest.fixture
async def own_api(own_nats: str) -> AsyncIterator[AsyncCellWarClient]:
    """An SDK client of a gateway + session + engine on :func:`own_nats`."""
    stack = await start_stack(own_nats)
    try:
        async with (
            serve(create_app(Settings(session_addr=stack.session_target, secret=TEST_SECRET))) as url,
            AsyncCellWarClient(url, timeout=30) as api,
        ):
            yield api
    finally:
        await stack.stop()


async def play(api: AsyncCellWarClient) -> dict[str, int]:
    """A running CellWar game, a finished Life game and a finished CellWar game, in this
    order (the stream ends with a finish notice, not an event): their ids → their
    numbers of events."""
    running = await api.create_game("cellwar", CELLWAR)
    first = await api.join(running, "a")
    await api.join(running, "b")
    await api.move(running, first.token, 3, 0, 1)  # red's second unit steps down; game goes on

    life = await api.create_game("life", LIFE)
    red, green = await api.join(life, "red"), await api.join(life, "green")
    await api.place(life, red.token, RED_CELLS)
    await api.end_turn(life, red.token)
    await api.place(life, green.token, GREEN_CELLS)
    await api.end_turn(life, green.token)
    await api.simple(life, red.token, "resign")

    war = await api.create_game("cellwar", CELLWAR)
    north = await api.join(war, "north")
    await api.join(war, "south")
    await api.move(war, north.token, 1, 1, 0)
    return {
        life: len(await wait_finished(api, life)),
        war: len(await wait_finished(api, war)),
        running: 4,  # GameCreated, PlayerJoined × 2, ActionApplied
    }


def ok_line(out: str, game_id: str) -> int:
    m = re.search(rf"^games\.{game_id}\.events: OK \((\d+) events, all hashes checked\)$", out, re.M)
    assert m, out
    return int(m.group(1))


async def test_verify_every_game_of_the_stream(own_api: AsyncCellWarClient, own_nats: str):
    games = await play(own_api)
    nc = await nats.connect(own_nats)
    try:  # the logs are not the stream's last messages: the reads stop at the last event
        info = await nc.jetstream().stream_info("GAME_EVENTS")
        last = await nc.jetstream().get_last_msg("GAME_EVENTS", "games.*.finished")
        assert last.seq == info.state.last_seq
    finally:
        await nc.close()
    for args in (("--all",), ("--all", "--workers", "2")):
        run = await cellwar_cli("verify", "--nats", own_nats, *args)
        assert run.code == 0, run.out + run.err
        for game_id, n in games.items():
            assert ok_line(run.out, game_id) == n
        assert re.search(r"^total: 3 logs, [\d,]+ events, [\d,]+ hashes checked .* 3 OK, 0 FAIL, 0 ERROR$", run.out, re.M)

    one = next(iter(games))
    run = await cellwar_cli("verify", "--nats", own_nats, "--game", one)
    assert run.code == 0 and ok_line(run.out, one) == games[one]
    assert "total: 1 log," in run.out
    run = await cellwar_cli("verify", "--nats", own_nats, "--game", "nobody")
    assert run.code == 2 and "games.nobody.events: ERROR no event of this game" in run.out

    # A forged event (a wrong hash) and a message that is not an Event, published beside them
    nc = await nats.connect(own_nats)
    try:
        js = nc.jetstream()
        now = Timestamp()
        now.GetCurrentTime()
        forged = events_pb2.Event(
            game_id="forged", seq=1, type="GameCreated", actor=0, engine_version="2", time=now,
            payload=b'{"kind": "life", "config": {"width": 10, "height": 10}}', state_hash="0" * 64,
        )
        await js.publish("games.forged.events", forged.SerializeToString())
        await js.publish("games.garbage.events", b"\xff\xff not a protobuf")
    finally:
        await nc.close()
    run = await cellwar_cli("verify", "--nats", own_nats, "--all")
    assert run.code == 1
    assert re.search(r"^games\.forged\.events: FAIL seq 1: hash [0-9a-f]{64} != recorded 0{64}$", run.out, re.M)
    assert "games.garbage.events: ERROR stream message" in run.out
    assert "3 OK, 1 FAIL, 1 ERROR" in run.out


async def test_verify_nats_without_a_server_exits_2():
    from tests.support.nats import free_port

    run = await cellwar_cli("verify", "--nats", f"nats://127.0.0.1:{free_port()}", "--all")
    assert run.code == 2 and "cannot connect to NATS" in run.err
