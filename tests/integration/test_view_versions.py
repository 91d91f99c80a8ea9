"""Per-player view versions through the session (the transport;
docs/architecture/scale-out.md "Per-player view versions"): a view's ``seq`` is the player's
own version from the engine's envelope; it moves only at events the player observes
(``engine.api.observers``), and a Watch sends a frame only then. The filtered log is
numbered in the player's own sequence when the engine numbers it so (``log_seq``), and a
replay counts in that numbering.

The engine's real per-kind observation rule is the engine's business; here a rule where
another player's CellWar action is hidden is patched into the in-process engine service,
so the transport is tested whatever the rule."""

from __future__ import annotations

import asyncio
import json

import pytest

import engine
from cellwar.v1 import session_pb2
from cellwar.v1.codes import EventType
from engine import envelope
from tests.support.client import SessionClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

#: ids are drawn per owner (engine/cellwar/ids.py): p1 units 1, 3; p2 units 2, 4.
UNITS = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 1, "type": "infantry", "x": 1, "y": 0},
    {"owner": 2, "type": "infantry", "x": 9, "y": 9},
    {"owner": 2, "type": "infantry", "x": 8, "y": 9},
]
CONFIG = {"width": 10, "height": 10, "players": 2, "units": UNITS}


@pytest.fixture
def hidden_actions(monkeypatch):
    """Another player's action is observed by its actor only (and spectators see none)."""
    real = envelope.observers

    def observers(before, etype, actor, payload, after):
        if etype == EventType.ACTION_APPLIED:
            return frozenset({actor})
        return real(before, etype, actor, payload, after)

    monkeypatch.setattr(envelope, "observers", observers)


@pytest.fixture
async def client(stack):
    c = SessionClient.open(stack.session_target)
    yield c
    await c.close()


async def test_a_hidden_event_moves_neither_the_version_nor_the_stream(client, hidden_actions):
    gid = await client.create(CONFIG, kind="cellwar")
    await client.join(gid, "p1")
    await client.join(gid, "p2")
    stream = client.stub.Watch(session_pb2.WatchRequest(game_id=gid, player_id=2))
    first = await stream.read()
    assert first.seq == 3 and json.loads(first.view)["seq"] == 3
    moved = await client.act(gid, 1, {"unit_id": 1, "dx": 0, "dy": 1})
    again = await client.act(gid, 1, {"unit_id": 3, "dx": 0, "dy": 1})
    assert (moved.seq, again.seq) == (4, 5)  # the actor observes its own actions
    assert (await client.view(gid, 2))["seq"] == 3  # player 2 observed nothing
    ended = await client.end_turn(gid, 1)  # a turn passing is public
    assert ended.seq == 6
    frame = await asyncio.wait_for(stream.read(), 10)
    assert frame.seq == 4 and json.loads(frame.view)["turn"] == 2  # no frame at the moves
    assert (await client.view(gid, 2))["seq"] == 4
    mine = await client.act(gid, 2, {"unit_id": 2, "dx": 0, "dy": -1})
    assert mine.seq == 5 and json.loads(mine.view)["seq"] == 5
    frame = await asyncio.wait_for(stream.read(), 10)
    assert frame.seq == 5
    stream.cancel()


async def test_a_retried_command_answers_the_version_it_gave(client, hidden_actions):
    gid = await client.create(CONFIG, kind="cellwar")
    await client.join(gid, "p1")
    await client.join(gid, "p2")
    first = await client.act(gid, 1, {"unit_id": 1, "dx": 0, "dy": 1}, command_id="move-1")
    await client.act(gid, 1, {"unit_id": 3, "dx": 0, "dy": 1})
    again = await client.act(gid, 1, {"unit_id": 1, "dx": 0, "dy": 1}, command_id="move-1")
    assert first.seq == again.seq == 4
    assert json.loads(again.view)["seq"] == 5  # with the view of now


@pytest.fixture
def own_numbering(monkeypatch):
    """An engine whose filtered logs leave out another player's actions and are numbered
    in the reader's own sequence (``seq`` 1..k, ``log_seq`` the game's)."""

    def player_log(events, player_id):
        out = []
        for event in events:
            if event["type"] == EventType.ACTION_APPLIED and event["actor"] != player_id:
                continue
            out.append(
                {
                    "seq": len(out) + 1,
                    "log_seq": event["seq"],
                    "type": event["type"],
                    "actor": event["actor"],
                    "payload": event["payload"],
                }
            )
        return out

    monkeypatch.setattr(engine, "player_log", player_log)


async def test_a_filtered_log_and_its_replays_count_in_the_players_own_sequence(
    stack, client, own_numbering
):
    gid = await client.create(CONFIG, kind="cellwar")
    await client.join(gid, "p1")
    await client.join(gid, "p2")
    await client.act(gid, 1, {"unit_id": 1, "dx": 0, "dy": 1})
    await client.act(gid, 1, {"unit_id": 3, "dx": 0, "dy": 1})
    await client.end_turn(gid, 1)
    log = await client.events(gid, player_id=2)
    whole = await stack.session.store.read(gid)
    assert [e.seq for e in log] == [1, 2, 3, 4]  # no gap tells of the hidden moves
    assert [e.type for e in log] == ["GameCreated", "PlayerJoined", "PlayerJoined", "TurnEnded"]
    assert log[3].time == whole[5].time and log[3].engine_version == whole[5].engine_version
    assert all(not e.state_hash for e in log)
    assert [e.seq for e in await client.events(gid, player_id=2, from_seq=3)] == [3, 4]
    at_turn_end = await client.replay(gid, 4, 2)  # the state after game seq 6
    assert at_turn_end["seq"] == 4 and at_turn_end["turn"] == 2
    joined = await client.replay(gid, 3, 2)
    assert joined["turn"] == 1 and joined["seq"] == 3
