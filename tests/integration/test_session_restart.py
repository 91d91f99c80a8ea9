"""A session instance killed with SIGKILL in the middle of a running game: a new one (same
instance id) rebuilds the game from NATS and finishes it, with a log that has no gap, no
duplicate and folds to the recorded final hash. Running games record their generations at
checkpoints (docs/architecture/ticking.md): the game resumes from its last recorded
generation, losing at most one checkpoint interval of running time."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import grpc
import nats
import pytest

from services.engine.server import create_server as create_engine_server
from services.session.adapters.event_store import EventStore
from tests.support.client import SessionClient, fold_from_scratch
from tests.support.stack import SessionProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

CONFIG = {"width": 80, "height": 60, "players": 2, "budget": 100, "max_generations": 1200}
#: Two gliders on a torus: they never meet, the game runs to max_generations.
TORUS = {"width": 40, "height": 40, "players": 2, "budget": 100, "torus": True, "max_generations": 1200}


@pytest.fixture
async def engine_target():
    server, port = await create_engine_server("127.0.0.1:0")
    yield f"127.0.0.1:{port}"
    await server.stop(0.2)


async def wait_generation(client: SessionClient, gid: str, generation: int, timeout: float = 20.0):
    async with asyncio.timeout(timeout):
        while (view := await client.view(gid))["generation"] < generation:
            await asyncio.sleep(0.05)
    return view


async def recorded_generation(nats_url: str, gid: str) -> int:
    """The generation a game's log records (the sum of its GenerationsTicked), read
    straight from JetStream."""
    nc = await nats.connect(nats_url)
    try:
        events = await EventStore(nc.jetstream()).read(gid)
    finally:
        await nc.close()
    return sum(int(json.loads(e.payload)["count"]) for e in events if e.type == "GenerationsTicked")


async def start_game(client: SessionClient, config: dict, cells_1: dict, cells_2: dict) -> str:
    gid = await client.create(config)
    await client.join(gid, "alice")
    await client.join(gid, "bob")
    await client.act(gid, 1, cells_1)
    await client.end_turn(gid, 1)
    await client.act(gid, 2, cells_2)
    await client.end_turn(gid, 2)
    return gid


async def test_killed_session_resumes_the_running_games(nats_url, engine_target, tmp_path):
    log_path = str(tmp_path / "session.log")
    session = SessionProcess(
        nats_url,
        engine_target,
        instance_id="kill-test",
        generations_per_second=200,
        checkpoint_s=0.5,  # a checkpoint every 100 generations
        log_path=log_path,
    )
    await session.start()
    client = SessionClient.open(session.target)
    try:
        gun = await start_game(
            client,
            CONFIG,
            {"type": "stamp", "pattern": "gosper_glider_gun", "x": 1, "y": 1},
            {"type": "place", "cells": [[70, 50], [71, 50], [70, 51], [71, 51]]},
        )
        gliders = await start_game(
            client,
            TORUS,
            {"type": "place", "cells": [[6, 5], [7, 6], [5, 7], [6, 7], [7, 7]]},
            {"type": "place", "cells": [[26, 5], [27, 6], [25, 7], [26, 7], [27, 7]]},
        )
        games = {gun: CONFIG, gliders: TORUS}
        before = {gid: await wait_generation(client, gid, 250) for gid in games}
        assert all(v["phase"] == "running" for v in before.values())

        session.kill()
        with pytest.raises(grpc.aio.AioRpcError):
            await client.view(gun)
        recorded = {gid: await recorded_generation(nats_url, gid) for gid in games}
        for gid in games:
            # a checkpoint landed; at most a checkpoint interval (100 generations), its
            # tick of 25 overshooting it and the one in flight at the kill are lost
            assert 100 <= recorded[gid] <= before[gid]["generation"] + 200
            assert before[gid]["generation"] - recorded[gid] <= 100 + 2 * 25 + 25
        before_restart = Path(log_path).stat().st_size
        await session.start()  # same port, same instance id: resumes its leases at once

        for gid in games:  # each goes on from its last recorded generation
            after = await client.view(gid)
            assert after["generation"] >= recorded[gid]
        for gid, config in games.items():
            final = await client.wait_finished(gid, [1, 2], timeout=40)
            assert final["generation"] == config["max_generations"]

            events = await client.events(gid)
            assert [e.seq for e in events] == list(range(1, len(events) + 1))
            assert Counter(e.type for e in events)["GameFinished"] == 1
            assert events[-1].type == "GameFinished"
            ticked = sum(
                int(json.loads(e.payload)["count"]) for e in events if e.type == "GenerationsTicked"
            )
            assert ticked == final["generation"]  # no tick lost or recorded twice
            state = await fold_from_scratch(engine_target, events)
            assert state.state_hash == events[-1].state_hash
        # The restarted instance took its own leases back at once ("lease_resumed"), not
        # by creating them anew once they expired a TTL later ("lease_acquired").
        with open(log_path, "rb") as f:
            f.seek(before_restart)
            lines = [json.loads(line) for line in f.read().splitlines() if line.startswith(b"{")]
        taken = {(e["event"], e.get("game_id")) for e in lines if e.get("event", "").startswith("lease_")}
        assert {("lease_resumed", gid) for gid in games} <= taken
        assert not {("lease_acquired", gid) for gid in games} & taken
    finally:
        await client.close()
        session.stop()
