"""A matchmade CellWar game whose two players never act ends by itself within
3 × ``turn_time_s`` with a winner (docs/game-end.md; the seed "Потеря связи: ждём
таймаут, затем как отключение", "Ничья невозможна"): a real gateway, matchmaker,
session and engine on a real NATS. A matchmade game always has a turn timer; the
shortest a ticket may ask for is 10 s. The wait for ``GameFinished`` is bounded
generously (no assertion on speed); the log shows the three timeouts, the removal of the
first seat that let two own turns in a row run out, and the winner."""

from __future__ import annotations

import asyncio

import pytest

from client.sdk import AsyncCellWarClient
from services.matchmaker.domain import TICKET_TURN_TIME_S
from tests.api.test_game_end import assert_ends_by_the_clock, at, finished
from tests.matchmaker.conftest import private_config

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

TURN_TIME_S = TICKET_TURN_TIME_S[0]


async def test_a_matchmade_game_whose_players_never_act_ends_with_a_winner(mm_api: AsyncCellWarClient):
    config = {**private_config("cellwar"), "turn_time_s": TURN_TIME_S}
    seats = await asyncio.gather(
        *(mm_api.find_match("cellwar", 2, f"idle{i}", config, timeout=120) for i in range(2))
    )
    assert seats[0].game_id == seats[1].game_id
    game_id = seats[0].game_id
    second = next(s for s in seats if s.player_id == 2)
    view = await mm_api.state(game_id, second.token)
    assert view["phase"] == "playing" and view["turn"] == 1 and view["turn_deadline"] is not None

    view = await finished(mm_api, game_id, second.token, bound_s=3 * TURN_TIME_S + 60)
    assert view["winner"] == 2 and view["result"] == "win"
    log = await mm_api.events(game_id)
    began = [e for e in log if e["type"] == "PlayerJoined"][-1]  # the last seat: turn 1 began
    assert began["seq"] == 3
    assert_ends_by_the_clock(log, began["seq"])
    created = log[0]["payload"]["config"]
    assert created["turn_time_s"] == TURN_TIME_S
    timed = [e for e in log if e["type"] == "TurnTimedOut"]
    begins = [began, *timed[:2]]
    assert all(at(t) >= at(b) + TURN_TIME_S - 0.01 for b, t in zip(begins, timed, strict=True))
