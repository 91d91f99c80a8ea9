"""Spectators of fog games (docs/spectators.md): a running CellWar game shows no unit to a
client without a player token through any endpoint unless its creator asked for live
spectators (config ``"spectators": "live"``, refused in rated games); the default
(``"finished"``) lets spectators in once the game has ended. A live game's delayed
spectator gets one frame per event, in order, each with the turn deadline of its moment.
Real gateway, session, engine and NATS (tests/api/conftest.py)."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from client.sdk import AsyncCellWarClient, Seat, spectate_url, stream_url

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

#: Seconds per turn of the timed games here (long: no turn runs out during a test).
TURN_S = 300


def duel(p2_x: int = 7, **extra: Any) -> dict[str, Any]:
    """CellWar 8×8, one infantry each on row 0: player 1 at x=0, player 2 at ``p2_x``."""
    units = [
        {"owner": 1, "type": "infantry", "x": 0, "y": 0},
        {"owner": 2, "type": "infantry", "x": p2_x, "y": 0},
    ]
    return {"width": 8, "height": 8, "players": 2, "units": units, **extra}


async def seated(api: AsyncCellWarClient, config: dict[str, Any]) -> tuple[str, list[Seat]]:
    game_id = await api.create_game("cellwar", config)
    return game_id, [await api.join(game_id, f"p{i}") for i in (1, 2)]


def no_units(text: str) -> None:
    """Nothing in ``text`` names a unit or where one stands."""
    for key in ('"units"', '"owner"', '"x"', '"cells"'):
        assert key not in text, (key, text[:300])


async def ws_answer(url: str) -> tuple[list[dict[str, Any]], int | None]:
    """The frames a WebSocket sends until it closes, and its close code."""
    frames: list[dict[str, Any]] = []
    async with websockets.connect(url, open_timeout=10, subprotocols=["cellwar.v1"]) as ws:
        try:
            async for raw in ws:
                frames.append(json.loads(raw))
        except ConnectionClosed:
            pass
        return frames, ws.close_code


async def tokenless_sweep(gateway: str, game_id: str, last_seq: int) -> dict[str, tuple[int, str]]:
    """Every endpoint a client without a token can reach for a game: ``{name: (HTTP
    status or WebSocket close code, machine code)}``; asserts that no answer names a unit."""
    out: dict[str, tuple[int, str]] = {}

    def note(name: str, response: httpx.Response) -> None:
        no_units(response.text)
        body = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
        out[name] = (response.status_code, (body.get("error") or {}).get("code", ""))

    async with httpx.AsyncClient(base_url=gateway, timeout=30) as http:
        note("state", await http.get(f"/game/{game_id}/state"))
        for delay in (None, 0, 10, 3600):
            params: dict[str, Any] = {"spectate": 1} | ({} if delay is None else {"delay_s": delay})
            note(f"spectate {delay}", await http.get(f"/game/{game_id}/state", params=params))
        note("events", await http.get(f"/game/{game_id}/events"))
        note("events jsonl", await http.get(f"/game/{game_id}/events", params={"format": "jsonl"}))
        for seq in sorted({1, last_seq}):
            note(f"replay {seq}", await http.get(f"/game/{game_id}/replay", params={"seq": seq}))
            note(f"fork {seq}", await http.post(f"/game/{game_id}/fork", json={"seq": seq}))
        note("valid_actions", await http.get(f"/game/{game_id}/valid_actions"))
        lobby = await http.get("/games", params={"limit": 200})
        no_units(lobby.text)
        assert lobby.status_code == 200
        for path in ("/matchmaking/queues", "/leaderboard?queue=cellwar-2"):
            public = await http.get(path)
            no_units(public.text)
            assert game_id not in public.text
    for name, url in (
        ("ws", stream_url(gateway, game_id, None)),
        ("ws spectate", spectate_url(gateway, game_id)),
        ("ws spectate 10", spectate_url(gateway, game_id, 10)),
    ):
        frames, code = await ws_answer(url)
        no_units(json.dumps(frames))
        assert [f["type"] for f in frames] == ["error"], (name, frames)
        out[name] = (code or 0, frames[0]["error"]["code"])
    return out


#: What a tokenless client gets of a running CellWar game without live spectators.
REFUSED = {
    "state": (401, "UNAUTHORIZED"),
    "spectate None": (409, "SPECTATORS_AFTER_END"),
    "spectate 0": (409, "SPECTATORS_AFTER_END"),
    "spectate 10": (409, "SPECTATORS_AFTER_END"),
    "spectate 3600": (409, "SPECTATORS_AFTER_END"),
    "events": (403, "FORBIDDEN"),
    "events jsonl": (403, "FORBIDDEN"),
    "valid_actions": (401, "UNAUTHORIZED"),
    "ws": (4403, "FORBIDDEN"),
    "ws spectate": (4409, "SPECTATORS_AFTER_END"),
    "ws spectate 10": (4409, "SPECTATORS_AFTER_END"),
}


@pytest.mark.parametrize("extra", [{}, {"spectators": "finished"}, {"rated": True}])
async def test_a_running_fog_game_shows_no_unit_to_a_client_without_a_token(
    api: AsyncCellWarClient, gateway: str, extra: dict[str, Any]
) -> None:
    """The default, an explicit ``"finished"`` and a rated game: every endpoint refuses a
    tokenless client (or answers without a unit) while the game runs; once it has ended
    spectators are let in and see every unit."""
    game_id, seats = await seated(api, duel(turn_time_s=TURN_S, **extra))
    view = await api.state(game_id, seats[0].token)
    mine = next(u["id"] for u in view["units"] if u["owner"] == 1)
    await api.move(game_id, seats[0].token, mine, 1, 0)
    await api.end_turn(game_id, seats[0].token)
    last = len(await api.events(game_id, seats[0].token))
    answers = await tokenless_sweep(gateway, game_id, last)
    for seq in sorted({1, last}):
        assert answers.pop(f"replay {seq}") == (403, "FORBIDDEN")
        assert answers.pop(f"fork {seq}") == (403, "FORBIDDEN")
    assert answers == REFUSED
    # Ended (player 2 leaves): spectators are let in, and see everything.
    await api.leave(game_id, seats[1].token)
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as http:
        seen = await http.get(f"/game/{game_id}/state", params={"spectate": 1})
        assert seen.status_code == 200, seen.text
        assert seen.json()["view"]["phase"] == "finished"
        assert {u["owner"] for u in seen.json()["view"]["units"]} == {1}
        events = await http.get(f"/game/{game_id}/events")
        assert events.status_code == 200 and events.json()["events"][-1]["type"] == "GameFinished"
    frames, code = await ws_answer(spectate_url(gateway, game_id))
    # the final view once, as `finished`
    assert [f["type"] for f in frames] == ["finished"] and code == 1000


async def test_live_spectators_are_refused_in_rated_and_matchmade_games(gateway: str) -> None:
    """``"spectators": "live"`` with ``rated`` (in the config or the body), or in a
    matchmaking ticket (matchmade games are rated), is 422 ``LIVE_SPECTATORS_RATED``; an
    unknown value, or the field in a Life game, is 422 ``MALFORMED``."""
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as http:
        for body in (
            {"kind": "cellwar", "config": duel(spectators="live", rated=True)},
            {"kind": "cellwar", "config": duel(spectators="live"), "rated": True},
        ):
            r = await http.post("/game/create", json=body)
            assert r.status_code == 422 and r.json()["error"]["code"] == "LIVE_SPECTATORS_RATED", r.text
        for body in (
            {"kind": "cellwar", "config": duel(spectators="always")},
            {"kind": "life", "config": {"spectators": "live"}},
        ):
            r = await http.post("/game/create", json=body)
            assert r.status_code == 422 and r.json()["error"]["code"] == "MALFORMED", r.text
        ticket = {"kind": "cellwar", "players": 2, "config": {"spectators": "live"}}
        r = await http.post("/matchmaking/tickets", json=ticket)
        assert r.status_code == 422 and r.json()["error"]["code"] == "LIVE_SPECTATORS_RATED", r.text
        ticket["config"] = {"spectators": "finished"}  # not a ticket's to set either
        r = await http.post("/matchmaking/tickets", json=ticket)
        assert r.status_code == 422 and r.json()["error"]["code"] == "MALFORMED", r.text
        r = await http.post("/game/create", json={"kind": "cellwar", "config": duel(spectators="live")})
        assert r.status_code == 201
        lobby, cursor = [], None  # every page: the suite's earlier games come first
        while True:
            page = (await http.get("/games", params={"limit": 200, **({"cursor": cursor} if cursor else {})})).json()
            lobby += page["games"]
            cursor = page["next_cursor"]
            if not cursor:
                break
        entry = next(g for g in lobby if g["game_id"] == r.json()["game_id"])
        assert entry["config"]["spectators"] == "live" and "units" not in entry["config"]


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


@pytest.mark.timeout(120)
async def test_a_live_game_of_15_events_gives_its_delayed_spectator_15_frames(
    api: AsyncCellWarClient, gateway: str
) -> None:
    """A ``"spectators": "live"`` game of 15 events, driven as fast as the API answers, so
    events fall due for the 10 s spectator together: 15 frames, seqs 1..15 in order (the
    last, the end, is the ``finished`` frame), each with the turn deadline of its moment
    (the recorded time of the event that began the turn + ``turn_time_s``; null before
    the game starts and at its end). Meanwhile a default game's delayed spectator is refused though its
    events are older than the delay."""
    delay = 10.0
    hidden_id, _ = await seated(api, duel())
    game_id = await api.create_game("cellwar", duel(p2_x=6, spectators="live", turn_time_s=TURN_S))
    frames: list[dict[str, Any]] = []

    async def spectate() -> None:
        async for message in api.spectate(game_id, delay_s=delay):
            frames.append(message)

    watcher = asyncio.create_task(spectate())
    seats = [await api.join(game_id, f"p{i}") for i in (1, 2)]
    units = {}
    for seat in seats:
        view = await api.state(game_id, seat.token)
        units[seat.player_id] = next(u["id"] for u in view["units"] if u["owner"] == seat.player_id)
    for pid, dx in [(1, 1), (2, -1), (1, 1), (2, -1), (1, 1)]:  # to (3,0) and (4,0)
        await api.move(game_id, seats[pid - 1].token, units[pid], dx, 0)
        await api.end_turn(game_id, seats[pid - 1].token)
    await api.move(game_id, seats[1].token, units[2], -1, 0)  # the attack ends it
    await asyncio.wait_for(watcher, timeout=60)
    log = await api.events(game_id)
    assert len(log) == 15, [e["type"] for e in log]
    assert log[-1]["type"] == "GameFinished"
    assert frames[-1]["type"] == "finished" and frames[-1]["seq"] == 15
    assert [m["type"] for m in frames[:-1]] == ["view"] * 14
    views = frames
    assert [m["seq"] for m in views] == list(range(1, 16))
    # The turn deadline of each moment, from the public log: a turn (round, the player
    # to move) begins at the first event whose view shows it.
    began: dict[tuple[int, int], int] = {}
    for m in views:
        v = m["view"]
        if v["phase"] == "playing":
            began.setdefault((v["round"], v["turn"]), m["seq"])
    times = {e["seq"]: _epoch(e["time"]) for e in log}
    for m in views:
        v = m["view"]
        assert v["delay_s"] == delay
        if v["phase"] != "playing":
            assert v["turn_deadline"] is None, m
            continue
        expected = times[began[(v["round"], v["turn"])]] + TURN_S
        assert v["turn_deadline"] is not None, m
        assert _epoch(v["turn_deadline"]) == pytest.approx(expected, abs=0.002), m
    assert len(began) == 6  # 5 ended turns and the one the attack ended
    assert views[-1]["view"]["winner"] == 2
    # The default game's events are now older than the delay: still refused.
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as http:
        r = await http.get(f"/game/{hidden_id}/state", params={"spectate": 1, "delay_s": delay})
        assert r.status_code == 409 and r.json()["error"]["code"] == "SPECTATORS_AFTER_END"
        no_units(r.text)


async def test_live_spectators_see_the_board_late_and_nothing_else_early(
    api: AsyncCellWarClient, gateway: str
) -> None:
    """A running ``"spectators": "live"`` game: the delayed view is the only way in (here
    nothing is 10 s old yet: 409 ``NOT_YET_VISIBLE``; less than 10 s: ``MALFORMED``); its
    log, replays and forks stay private until the end, as in any fog game."""
    game_id, seats = await seated(api, duel(spectators="live"))
    view = await api.state(game_id, seats[0].token)
    mine = next(u["id"] for u in view["units"] if u["owner"] == 1)
    await api.move(game_id, seats[0].token, mine, 1, 0)
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as http:

        async def answer(method: str, path: str, **kw: Any) -> tuple[int, str]:
            r = await http.request(method, path, **kw)
            no_units(r.text)
            return r.status_code, r.json()["error"]["code"]

        state = f"/game/{game_id}/state"
        assert await answer("GET", state, params={"spectate": 1}) == (409, "NOT_YET_VISIBLE")
        assert await answer("GET", state, params={"spectate": 1, "delay_s": 5}) == (409, "MALFORMED")
        assert await answer("GET", state) == (401, "UNAUTHORIZED")
        assert await answer("GET", f"/game/{game_id}/events") == (403, "FORBIDDEN")
        jsonl = {"params": {"format": "jsonl"}}
        assert await answer("GET", f"/game/{game_id}/events", **jsonl) == (403, "FORBIDDEN")
        assert await answer("GET", f"/game/{game_id}/replay", params={"seq": 4}) == (403, "FORBIDDEN")
        assert await answer("POST", f"/game/{game_id}/fork", json={"seq": 4}) == (403, "FORBIDDEN")
        no_units((await http.get("/games", params={"limit": 200})).text)
