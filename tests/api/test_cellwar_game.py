"""A whole CellWar game through the public API (the seed's CellWar rules;
docs/api/index.md): three bots play it to the end over REST and WebSocket; the fog-filtered
log of a running game, the whole log once finished, the stored log and a fold all agree; REST
errors of the rules."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

import engine
from client.cellwar_bot import CellWarBot, visible_cells
from client.sdk import ApiError, AsyncCellWarClient
from engine.cellwar.fog import is_visible, vision_mask
from tests.api.test_life_game import stored_log

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

#: 8x8, 3 players close together so the bots meet at once: p1 units 1, 4; p2 2, 5; p3 3, 6
#: (ids drawn per owner: player p's n-th unit is n * 3 + p, engine/cellwar/ids.py).
UNITS = [
    {"owner": 1, "type": "infantry", "x": 1, "y": 1},
    {"owner": 1, "type": "infantry", "x": 2, "y": 1},
    {"owner": 2, "type": "infantry", "x": 6, "y": 1},
    {"owner": 2, "type": "infantry", "x": 5, "y": 1},
    {"owner": 3, "type": "infantry", "x": 3, "y": 6},
    {"owner": 3, "type": "infantry", "x": 4, "y": 6},
]
GAME = {"width": 8, "height": 8, "players": 3, "units": UNITS, "disconnect_timeout_s": 30}


def fold_states(stored) -> list[Any]:
    """states[i] = the engine state after event seq i (states[0] = None)."""
    states: list[Any] = [None]
    for e in stored:
        states.append(
            engine.apply_event(
                states[-1], e.type, e.actor, json.loads(e.payload), engine_version=e.engine_version
            )
        )
    return states


async def test_three_bots_play_to_the_end_and_the_log_obeys_the_fog(api: AsyncCellWarClient, stack):
    game_id = await api.create_game("cellwar", GAME)
    lobby = next(g for g in await api.games() if g["game_id"] == game_id)
    assert "units" not in lobby["config"] and lobby["config"]["disconnect_timeout_s"] == 30
    mid_game: dict[str, Any] = {}

    async def peek(bot: CellWarBot, view: dict[str, Any]) -> None:
        """Once, in round 2: player 1's log and views of a running game."""
        if mid_game or view.get("phase") != "playing" or view.get("round", 0) < 2:
            return
        mid_game["events"] = await api.events(game_id, bot.seat.token)
        mid_game["view"] = await api.state(game_id, bot.seat.token)
        with pytest.raises(ApiError) as spectator:
            await api.events(game_id)
        mid_game["spectator"] = (spectator.value.status, spectator.value.code)

    bots = [CellWarBot(api, game_id, f"bot-{i}", seed=40 + i, on_view=peek if i == 1 else None) for i in (1, 2, 3)]
    for bot in bots:
        await bot.join()
    await asyncio.gather(*(bot.play() for bot in bots))
    final = await api.state(game_id, bots[1].seat.token)
    assert final["phase"] == "finished" and final["result"] == "win"
    assert final["winner"] in (1, 2, 3)
    winner_units = [u for u in final["units"] if u["owner"] == final["winner"]]
    assert winner_units and all(u["owner"] == final["winner"] for u in final["units"])

    # Once finished: everyone gets the whole log, with hashes, the same as the store holds.
    events = await api.events(game_id, bots[2].seat.token)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["type"] == "GameFinished" and events[-1]["payload"]["winner"] == final["winner"]
    assert await api.events(game_id) == events
    stored = await stored_log(stack, game_id)
    assert [(e.seq, e.type, e.state_hash) for e in stored] == [
        (e["seq"], e["type"], e["state_hash"]) for e in events
    ]
    states = fold_states(stored)
    assert engine.state_hash(states[-1]) == events[-1]["state_hash"]
    replayed = await api.replay(game_id, 5, bots[0].seat.token)  # finished: the whole board
    assert len(replayed["view"]["units"]) == len(UNITS) and replayed["view"]["you"] == 1

    # In round 2, player 1's log held only what its fog showed it, numbered in its own
    # sequence (1..k); the engine's player_log maps each item to its real seq.
    assert mid_game["spectator"] == (403, "FORBIDDEN")
    seen = mid_game["events"]
    assert [e["seq"] for e in seen] == list(range(1, len(seen) + 1))
    as_dicts = [
        {"seq": e.seq, "type": e.type, "actor": e.actor, "payload": json.loads(e.payload),
         "engine_version": e.engine_version}
        for e in stored
    ]
    real = [e["log_seq"] for e in engine.player_log(as_dicts, 1)][: len(seen)]
    last = real[-1]
    assert last >= mid_game["view"]["seq"] - 1 >= 5
    assert all("state_hash" not in e for e in seen)
    told = {r: e for r, e in zip(real, seen, strict=True)}
    outcomes = {"hidden": 0, "told": 0}
    for event in stored[:last]:
        if event.type == "GameCreated":  # player 1 is told only its own start units
            own = {**GAME, "units": [u for u in UNITS if u["owner"] == 1]}
            assert told[event.seq]["payload"] == {"kind": "cellwar", "config": own}
            continue
        if event.type != "ActionApplied":
            assert told[event.seq]["payload"] == (
                {"to_seq": sum(r <= json.loads(event.payload)["to_seq"] for r in real)}
                if event.type == "RolledBack"
                else json.loads(event.payload)
            )
            continue
        action = json.loads(event.payload)["action"]
        if event.actor == 1:
            assert told[event.seq]["payload"] == {"action": action}
            continue
        before, after = states[event.seq - 1], states[event.seq]
        unit = before.unit(action["unit_id"])
        cells = [(unit.x, unit.y), (unit.x + action["dx"], unit.y + action["dy"])]
        mask = vision_mask(before, 1) | vision_mask(after, 1)
        visible = [c for c in cells if 0 <= c[0] < 8 and 0 <= c[1] < 8 and is_visible(mask, 8, *c)]
        if not visible:
            assert event.seq not in told  # hidden: left out entirely
        if event.seq not in told:  # ... and so is an action that changed nothing it saw
            assert engine.get_visible_state(before, 1) == engine.get_visible_state(after, 1)
            outcomes["hidden"] += 1
            continue
        payload = told[event.seq]["payload"]
        assert payload["action"] == {"dx": action["dx"], "dy": action["dy"]}
        told_cells = [tuple(payload[k]) for k in ("from", "to") if k in payload]
        assert set(told_cells) == set(visible)
        # ... and every cell told was visible in player 1's own views then
        views = [await api.replay(game_id, s, bots[0].seat.token) for s in (event.seq - 1, event.seq)]
        shown = visible_cells(views[0]["view"]) | visible_cells(views[1]["view"])
        assert set(told_cells) <= shown
        outcomes["told"] += 1
    assert outcomes["hidden"] >= 1 and outcomes["told"] >= 1, outcomes


async def test_rule_errors_over_rest(api: AsyncCellWarClient, gateway: str):
    game_id = await api.create_game("cellwar", GAME)
    p1, p2, _ = [await api.join(game_id, name) for name in ("a", "b", "c")]
    view = await api.state(game_id, p1.token)
    assert (view["phase"], view["turn"], view["round"]) == ("playing", 1, 1)
    assert sorted((u["id"], u["x"], u["y"]) for u in view["units"]) == [(1, 1, 1), (4, 2, 1)]

    moves = await api.valid_actions(game_id, p1.token, 1)
    assert {(a["dx"], a["dy"]): a["kind"] for a in moves}[(0, 0)] == "fortify"
    assert (1, 0) not in {(a["dx"], a["dy"]) for a in moves}  # its own unit 4 is there
    assert await api.valid_actions(game_id, p2.token, 2) == []  # not its turn

    async def refused(call) -> tuple[int, str]:
        with pytest.raises(ApiError) as err:
            await call
        return err.value.status, err.value.code

    assert await refused(api.move(game_id, p1.token, 1, 1, 0)) == (409, "INVALID_ACTION")
    assert await refused(api.move(game_id, p2.token, 2, -1, 0)) == (409, "NOT_YOUR_TURN")
    done = await api.move(game_id, p1.token, 1, 0, 1)
    assert done["seq"] == 5
    assert await refused(api.move(game_id, p1.token, 1, 0, 1)) == (409, "UNIT_ALREADY_ACTED")
    assert await refused(api.end_turn(game_id, p1.token)) == (409, "UNITS_NOT_DONE")
    async with httpx.AsyncClient(base_url=gateway) as http:
        bad = await http.post(
            f"/game/{game_id}/action",
            json={"unit_id": 4, "dx": 2, "dy": 0},
            headers={"Authorization": f"Bearer {p1.token}"},
        )
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "MALFORMED"
        spectator = await http.get(f"/game/{game_id}/replay", params={"seq": 5})
        assert spectator.status_code == 403 and spectator.json()["error"]["code"] == "FORBIDDEN"
    log = await api.events(game_id, p1.token)
    assert [e["type"] for e in log] == ["GameCreated"] + ["PlayerJoined"] * 3 + ["ActionApplied"]
    assert log[-1]["payload"] == {"action": {"unit_id": 1, "dx": 0, "dy": 1}}
    assert [e["seq"] for e in await api.events(game_id, p2.token, from_seq=2)] == [2, 3, 4]  # fog
    # p2's replays count in its own numbering: the hidden move is no seq of its log
    replay = await api.replay(game_id, 4, p2.token)
    assert {u["owner"] for u in replay["view"]["units"]} == {2}  # p2 sees only its own
    assert replay["seq"] == 4 and replay["view"]["seq"] == 4
    with pytest.raises(ApiError) as beyond:
        await api.replay(game_id, 5, p2.token)
    assert (beyond.value.status, beyond.value.code) == (409, "SEQ_OUT_OF_RANGE")
