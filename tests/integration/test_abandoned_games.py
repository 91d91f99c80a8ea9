"""Abandoned games (docs/abandoned-games.md) on a real NATS and the real session: the
directory entry carries the time of the last event; ``cellwar games --abandoned`` lists a
started game nobody touched for N minutes, ``--clean`` takes it out of the lobby without
touching its log, and its next event lists it again. "Nobody touched for N minutes" is
measured from a ``now`` an hour ahead, so no test waits."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from datetime import datetime

import pytest

from cellwar.v1 import session_pb2
from client.cli.games import list_games
from tests.support.client import SessionClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

#: A CellWar duel without a turn timer, as the browser's hot-seat setup makes it.
CONFIG = {
    "width": 8, "height": 8, "players": 2,
    "units": [{"owner": 1, "type": "infantry", "x": 0, "y": 0}, {"owner": 2, "type": "infantry", "x": 7, "y": 7}],
}
HOUR = 3600.0


@pytest.fixture
async def client(stack):
    c = SessionClient.open(stack.session_target)
    yield c
    await c.close()


async def playing_duel(client: SessionClient) -> str:
    gid = await client.create(CONFIG, kind="cellwar")
    await client.join(gid, "red")
    await client.join(gid, "green")
    return gid


async def listed(client: SessionClient) -> set[str]:
    reply = await client.stub.ListGames(session_pb2.ListGamesRequest())
    return {g.game_id for g in reply.games}


async def until(predicate, what: str) -> None:
    for _ in range(200):
        if await predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never: {what}")


async def test_the_entry_has_the_last_event_time_to_the_minute(stack, client):
    gid = await playing_duel(client)
    entry = stack.session.directory.entries[gid]
    last = (await client.events(gid, player_id=1))[-1]
    recorded = last.time.seconds
    assert datetime.fromisoformat(entry["last_event_at"]).timestamp() == recorded - recorded % 60
    assert entry["phase"] == "playing" and not entry["expirable"]


async def test_cli_lists_and_cleans_an_abandoned_game_and_its_next_event_lists_it_again(
    stack, client, nats_url
):
    gid = await playing_duel(client)
    waiting = await client.create(CONFIG, kind="cellwar")  # seats open: has its own expiry
    assert {gid, waiting} <= await listed(client)
    events_before = await client.events(gid, player_id=1)

    fresh = await list_games(nats_url, idle_min=15, abandoned_only=True, clean=False)
    assert gid not in {r.game_id for r in fresh}  # it just had its events
    later = time.time() + HOUR
    rows = await list_games(nats_url, idle_min=30, abandoned_only=True, clean=False, now=later)
    row = next(r for r in rows if r.game_id == gid)
    assert (row.kind, row.phase, row.players, row.abandoned, row.kept) == ("cellwar", "playing", "2/2", True, "")
    assert row.idle_min >= 60
    assert datetime.fromisoformat(row.last_event_at).timestamp() == events_before[-1].time.seconds
    assert waiting not in {r.game_id for r in rows}

    cleaned = await list_games(nats_url, idle_min=30, abandoned_only=True, clean=True, now=later)
    assert next(r for r in cleaned if r.game_id == gid).removed
    await until(lambda: _absent(client, gid), "the lobby no longer lists the cleaned game")
    assert waiting in await listed(client)
    assert await client.events(gid, player_id=1) == events_before  # the log stays whole

    # its players can still play; the next event lists it again
    view = await client.view(gid, 1)
    unit = next(u["id"] for u in view["units"] if u["owner"] == 1)
    await client.act(gid, 1, {"unit_id": unit, "dx": 1, "dy": 0})
    await until(lambda: _present(client, gid), "the game's next event lists it again")
    assert len(await client.events(gid, player_id=1)) > len(events_before)

    # the command line (its own process): JSON, a table, and --clean without --abandoned
    # is a usage error
    code, out, _ = await cli("games", "--nats", nats_url, "--json")
    assert code == 0 and gid in {g["game_id"] for g in json.loads(out)["games"]}
    code, out, _ = await cli("games", "--nats", nats_url, "--abandoned", "--idle-min", "30")
    assert code == 0 and gid not in out and out.splitlines()[0].startswith("GAME ")
    code, _, err = await cli("games", "--nats", nats_url, "--clean")
    assert code == 2 and "--clean needs --abandoned" in err


async def test_a_fork_waiting_for_players_is_never_abandoned(stack, client, nats_url):
    """A fork or an import that waits for players does not expire (docs/replays.md), so
    ``--clean`` must leave it in the lobby however old it is."""
    import nats

    nc = await nats.connect(nats_url)
    try:
        kv = await nc.jetstream().key_value("GAME_DIRECTORY")
        entry = {"kind": "cellwar", "config": {}, "phase": "waiting", "players_joined": 0,
                 "max_players": 2, "created_at": "2020-01-01T00:00:00Z", "lease": False,
                 "expirable": False, "origin": {"file": "old.jsonl"}}
        await kv.put("forkwaiting01", json.dumps(entry).encode())
        rows = await list_games(nats_url, idle_min=30, abandoned_only=True, clean=True)
        assert "forkwaiting01" not in {r.game_id for r in rows}
        assert json.loads((await kv.get("forkwaiting01")).value)["phase"] == "waiting"
        await kv.delete("forkwaiting01")
    finally:
        await nc.close()


async def test_cli_says_when_nats_is_not_there():
    code, _, err = await cli("games", "--nats", "nats://127.0.0.1:1")
    assert code == 1 and "cannot reach NATS" in err


async def cli(*args: str) -> tuple[int, str, str]:
    """Run ``python -m client.cli ARGS``: (exit code, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client.cli", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    return proc.returncode, out.decode(), err.decode()


async def _absent(client: SessionClient, gid: str) -> bool:
    return gid not in await listed(client)


async def _present(client: SessionClient, gid: str) -> bool:
    return gid in await listed(client)
