"""Every CellWar game ends (docs/game-end.md; the seed "Потеря связи: ждём таймаут, затем
как отключение", "Ничья невозможна"): a timed game whose two players stop acting ends by
itself at its third timeout — the first player to let two own turns in a row run out is
removed as disconnected and the other wins — through the real gateway, session and
engine on a real NATS. No assertion on speed: the wait for ``GameFinished`` is bounded
generously; what is asserted is the log (three timeouts, then the removal and the
winner, all recorded by the clock alone) and that it folds to its recorded hashes."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

import pytest

import engine
from client.sdk import AsyncCellWarClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

TURN_TIME_S = 1
UNITS = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 2, "type": "infantry", "x": 7, "y": 7},
]


def at(event: dict) -> float:
    return datetime.fromisoformat(event["time"].replace("Z", "+00:00")).timestamp()


async def finished(api: AsyncCellWarClient, game_id: str, token: str, bound_s: float) -> dict:
    """The view once the game is finished (polled; AssertionError after ``bound_s``)."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        view = await api.state(game_id, token)
        if view["phase"] == "finished":
            return view
        await asyncio.sleep(0.1)
    raise AssertionError(f"the game did not finish within {bound_s} s")


def assert_ends_by_the_clock(log: list[dict], stopped_at_seq: int) -> None:
    """After seq ``stopped_at_seq`` only the clock acted: three timeouts, the idle seat
    removed by the system, a winner; every event of version 4, every hash the fold's."""
    after = [(e["type"], e["actor"], e["payload"]) for e in log if e["seq"] > stopped_at_seq]
    assert after == [
        ("TurnTimedOut", 1, {"players": [1]}),
        ("TurnTimedOut", 2, {"players": [2]}),
        ("TurnTimedOut", 1, {"players": [1]}),
        ("PlayerRemoved", 0, {"player_id": 1, "reason": "disconnected"}),
        ("GameFinished", 0, {"winner": 2, "result": "win"}),
    ]
    assert {e["engine_version"] for e in log} == {engine.ENGINE_VERSION} == {"4"}
    state = None
    for e in log:
        state = engine.apply_event(state, e["type"], e["actor"], e["payload"], engine_version=e["engine_version"])
        assert engine.state_hash(state) == e["state_hash"], e["seq"]
    # the removal and the end are recorded with the third timeout, not later
    third, removed, done = log[-3:]
    assert at(removed) == at(third) == at(done)


async def test_a_timed_game_whose_players_stop_ends_with_a_winner(api: AsyncCellWarClient):
    game_id = await api.create_game(
        "cellwar", {"width": 8, "height": 8, "units": UNITS, "turn_time_s": TURN_TIME_S}
    )
    one = await api.join(game_id, "ann")
    two = await api.join(game_id, "bob")
    # each plays one turn, then both walk away
    mine = (await api.state(game_id, one.token))["units"][0]["id"]
    await api.move(game_id, one.token, mine, 1, 1)
    await api.end_turn(game_id, one.token)
    theirs = (await api.state(game_id, two.token))["units"]
    await api.move(game_id, two.token, next(u["id"] for u in theirs if u["owner"] == 2), -1, -1)
    await api.end_turn(game_id, two.token)
    assert (await api.events(game_id, two.token))[-1]["type"] == "TurnEnded"

    view = await finished(api, game_id, two.token, bound_s=3 * TURN_TIME_S + 60)
    assert view["winner"] == 2 and view["result"] == "win" and view["turn_deadline"] is None
    assert [(p["id"], p["connected"]) for p in view["players"]] == [(1, False), (2, True)]
    log = await api.events(game_id)  # finished: the whole log, with hashes, for anyone
    stopped = [e for e in log if e["type"] == "TurnEnded"][-1]  # player 2's, the last act
    assert (stopped["actor"], stopped["seq"]) == (2, 7)
    assert_ends_by_the_clock(log, stopped["seq"])
    # the three turns the players left unplayed each lasted their turn time
    timed = [e for e in log if e["type"] == "TurnTimedOut"]
    begins = [stopped, *timed[:2]]
    assert all(at(t) >= at(b) + TURN_TIME_S - 0.01 for b, t in zip(begins, timed, strict=True))
