"""Who may read a game's past through the public API (Life's blind placement; CellWar's fog
of war, seed "Туман войны"; ``GET /game/{id}/events`` and replay,
docs/architecture/session.md "Who may read a game's log"): a Life game's log is private
(each player its own filtered part) until the game is finished, also after placement, when
the board is visible but the log would tell how each player drew blind
(services/session/service_layer/visibility.py, engine/policy.py, engine/life/log.py), then public with
every placement shown in replays; a CellWar player's log and the lobby tell no enemy start
unit (engine/cellwar/log.py). Real gateway, session, engine and NATS
(tests/api/conftest.py)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from client.sdk import ApiError, AsyncCellWarClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

#: 30x30, 2 players: player 1 draws in x 0..14, player 2 in x 15..29.
LIFE = {"width": 30, "height": 30, "players": 2, "budget": 20}
P1_CELLS = [[2, 2], [3, 2], [2, 3], [3, 3]]  # a block
P2_CELLS = [[20, 20], [21, 20], [20, 21], [21, 21]]


async def refused(coro: Any) -> tuple[int, str]:
    with pytest.raises(ApiError) as err:
        await coro
    return err.value.status, err.value.code


async def test_a_life_log_is_private_during_placement_and_public_after(api: AsyncCellWarClient):
    game_id = await api.create_game("life", LIFE)
    assert await refused(api.events(game_id)) == (403, "FORBIDDEN")  # waiting
    red = await api.join(game_id, "red")
    green = await api.join(game_id, "green")
    await api.place(game_id, red.token, P1_CELLS)  # seq 4
    await api.stamp(game_id, red.token, 8, 10, "glider")  # seq 5
    # a stamp with no cell in red's zone is refused and records nothing
    assert await refused(api.stamp(game_id, red.token, 25, 3, "glider")) == (409, "OUT_OF_ZONE")
    await api.end_turn(game_id, red.token)  # seq 6

    # spectators: no log, no replay (the live view stays the engine's blind one)
    assert await refused(api.events(game_id)) == (403, "FORBIDDEN")
    assert await refused(api.replay(game_id, 4)) == (403, "FORBIDDEN")
    async with contextlib.aclosing(api.stream(game_id, None)) as stream:
        message = await anext(stream)
        assert message["view"]["phase"] == "placement" and message["view"]["board"] == "!"

    # green: public events only, red's drawing left out (numbered in green's own
    # sequence, so nothing tells how many were left out), no hash anywhere
    seen = await api.events(game_id, green.token)
    assert [(e["seq"], e["type"]) for e in seen] == [
        (1, "GameCreated"),
        (2, "PlayerJoined"),
        (3, "PlayerJoined"),
        (4, "TurnEnded"),
    ]
    assert all("state_hash" not in e and e["engine_version"] for e in seen)
    assert seen[0]["payload"]["config"]["width"] == 30
    # red: its own drawing in full, still no hash
    own = await api.events(game_id, red.token)
    assert [e["seq"] for e in own] == [1, 2, 3, 4, 5, 6]
    assert own[3]["payload"] == {"action": {"type": "place", "cells": P1_CELLS}}
    assert all("state_hash" not in e for e in own)
    assert [e["seq"] for e in await api.events(game_id, red.token, from_seq=5)] == [5, 6]
    # green's replays count in green's own numbering: its 4th event (red's turn ended,
    # after red drew) shows green's blind view, red's cells hidden; there is no 5th
    replayed = (await api.replay(game_id, 4, green.token))["view"]
    assert replayed["board"] == "!" and replayed["players"][0]["cells"] is None
    assert replayed["turn"] == 2 and replayed["seq"] == 4
    assert await refused(api.replay(game_id, 5, green.token)) == (409, "SEQ_OUT_OF_RANGE")

    await api.place(game_id, green.token, P2_CELLS)  # seq 7
    await api.end_turn(game_id, green.token)  # seq 8: running, the board is visible to all
    # still private until the end: the whole log would tell how each drew
    # blind, and its seqs are not a player's own numbering
    assert await refused(api.events(game_id)) == (403, "FORBIDDEN")
    assert await refused(api.replay(game_id, 8)) == (403, "FORBIDDEN")
    seen = await api.events(game_id, green.token)
    assert [(e["seq"], e["type"]) for e in seen[:6]] == [
        (1, "GameCreated"),
        (2, "PlayerJoined"),
        (3, "PlayerJoined"),
        (4, "TurnEnded"),
        (5, "ActionApplied"),
        (6, "TurnEnded"),
    ]
    assert seen[4]["payload"] == {"action": {"type": "place", "cells": P2_CELLS}}
    own = await api.events(game_id, red.token)
    assert [e["type"] for e in own[:7]] == [
        "GameCreated", "PlayerJoined", "PlayerJoined", "ActionApplied", "ActionApplied", "TurnEnded", "TurnEnded",
    ]
    assert all("state_hash" not in e for e in seen + own)
    with contextlib.suppress(ApiError):  # 409 if the simulation already ended it
        await api.simple(game_id, red.token, "resign")
    assert (await api.state(game_id, red.token))["phase"] == "finished"

    whole = await api.events(game_id)  # finished: the whole log, public
    assert [e["type"] for e in whole[:8]] == [
        "GameCreated",
        "PlayerJoined",
        "PlayerJoined",
        "ActionApplied",
        "ActionApplied",
        "TurnEnded",
        "ActionApplied",
        "TurnEnded",
    ]
    assert whole[3]["payload"] == {"action": {"type": "place", "cells": P1_CELLS}}
    assert all(len(e["state_hash"]) == 64 for e in whole)
    for token in (red.token, green.token):
        log = await api.events(game_id, token, from_seq=1)
        assert [(e["seq"], e["state_hash"]) for e in log] == [(e["seq"], e["state_hash"]) for e in whole]
    # once finished, replays show everything, the blind placements included
    for token in (None, green.token):
        at_stamp = (await api.replay(game_id, 5, token))["view"]
        assert at_stamp["phase"] == "placement" and at_stamp["players"][0]["cells"] == 9  # block + glider
        assert at_stamp["board"] != "!" and at_stamp["seq"] == 5
    assert (await api.replay(game_id, 8))["view"]["players"][0]["cells"] == 9


async def test_a_four_player_life_placement_hides_every_other_drawing(api: AsyncCellWarClient):
    game_id = await api.create_game("life", {"width": 20, "height": 20, "players": 4, "budget": 10})
    seats = [await api.join(game_id, f"p{i}") for i in range(1, 5)]
    await api.place(game_id, seats[0].token, [[1, 1]])  # seq 6
    await api.end_turn(game_id, seats[0].token)  # seq 7
    await api.place(game_id, seats[1].token, [[12, 1]])  # seq 8
    await api.end_turn(game_id, seats[1].token)  # seq 9
    assert await refused(api.events(game_id)) == (403, "FORBIDDEN")
    third = await api.events(game_id, seats[2].token)  # seqs 6 and 8 left out, no gap shown
    assert [(e["seq"], e["type"]) for e in third] == [
        (1, "GameCreated"), *[(n, "PlayerJoined") for n in (2, 3, 4, 5)], (6, "TurnEnded"), (7, "TurnEnded"),
    ]
    second = await api.events(game_id, seats[1].token)  # seq 6 left out
    assert [e["seq"] for e in second] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert second[6]["payload"] == {"action": {"type": "place", "cells": [[12, 1]]}}
    assert all("state_hash" not in e for e in second)


#: 8x8, 3 players: p1 units 1, 2; p2 3, 4; p3 5, 6 (fog: p1 sees none of the others).
UNITS = [
    {"owner": 1, "type": "infantry", "x": 0, "y": 0},
    {"owner": 1, "type": "infantry", "x": 1, "y": 0},
    {"owner": 2, "type": "infantry", "x": 7, "y": 7},
    {"owner": 2, "type": "infantry", "x": 6, "y": 7},
    {"owner": 3, "type": "infantry", "x": 7, "y": 0},
    {"owner": 3, "type": "infantry", "x": 6, "y": 0},
]
CELLWAR = {"width": 8, "height": 8, "players": 3, "units": UNITS, "disconnect_timeout_s": 30}


async def test_cellwar_start_units_are_told_only_to_their_owner(api: AsyncCellWarClient):
    game_id = await api.create_game("cellwar", CELLWAR)
    lobby = next(g for g in await api.games() if g["game_id"] == game_id)
    assert lobby["config"] == {"width": 8, "height": 8, "players": 3, "disconnect_timeout_s": 30}
    seats = [await api.join(game_id, f"p{i}") for i in range(1, 4)]
    lobby = next(g for g in await api.games() if g["game_id"] == game_id)
    assert "units" not in lobby["config"] and lobby["phase"] == "playing"
    for seat in seats:
        created = (await api.events(game_id, seat.token))[0]
        assert created["type"] == "GameCreated" and "state_hash" not in created
        assert created["payload"] == {
            "kind": "cellwar",
            "config": {
                **{k: v for k, v in CELLWAR.items() if k != "units"},
                "units": [u for u in UNITS if u["owner"] == seat.player_id],
            },
        }
    assert await refused(api.events(game_id)) == (403, "FORBIDDEN")
    # once finished the whole log is public: the GameCreated with every start unit
    await api.leave(game_id, seats[1].token)
    await api.leave(game_id, seats[2].token)
    for _ in range(50):
        if (await api.state(game_id, seats[0].token))["phase"] == "finished":
            break
        await asyncio.sleep(0.1)
    whole = await api.events(game_id)
    assert whole[0]["payload"]["config"]["units"] == UNITS and len(whole[0]["state_hash"]) == 64
    assert whole[-1]["type"] == "GameFinished" and whole[-1]["payload"]["winner"] == 1
