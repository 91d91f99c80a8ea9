"""Replay tools through the real stack (docs/replays.md): the event log as JSON
Lines, import (re-decided by the engine, refused at the first bad seq, all or nothing),
fork (a fork at seq n starts in the hash recorded at n and plays to the end), and
delayed spectators (never the present of a running CellWar game)."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import time
from typing import Any

import httpx
import pytest

import engine
from client.logfile import LogFormatError, check_event
from client.sdk import ApiError, AsyncCellWarClient, Seat

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

#: 16×16 Life, two players: player 1 draws in x < 8, player 2 in x >= 8.
SMALL = {"width": 16, "height": 16, "players": 2}
BLOCK_1 = [(2, 2), (3, 2), (2, 3), (3, 3)]
BLOCK_2 = [(11, 2), (12, 2), (11, 3), (12, 3)]


def duel(p2_x: int = 1) -> dict[str, Any]:
    """CellWar 8×8, one infantry each on row 0: player 1 at x=0, player 2 at ``p2_x``."""
    units = [
        {"owner": 1, "type": "infantry", "x": 0, "y": 0},
        {"owner": 2, "type": "infantry", "x": p2_x, "y": 0},
    ]
    return {"width": 8, "height": 8, "players": 2, "units": units, "disconnect_timeout_s": 30}


def fold_hash(events: list[dict[str, Any]]) -> str:
    """The hash of the state the log folds to (engine library, each event's version)."""
    state = engine.fold(
        None, [(e["type"], e["actor"], e["payload"], e.get("engine_version")) for e in events]
    )
    return engine.state_hash(state)


def import_game_id(key: str) -> str:
    """The game id the session derives from an import's Idempotency-Key."""
    return hashlib.sha256(b"cellwar-create:import:" + key.encode()).hexdigest()[:12]


async def seated(api: AsyncCellWarClient, kind: str, config: dict, n: int) -> tuple[str, list[Seat]]:
    game_id = await api.create_game(kind, config)
    return game_id, [await api.join(game_id, f"p{i}") for i in range(1, n + 1)]


async def wait_finished(api: AsyncCellWarClient, game_id: str, token: str) -> dict:
    for _ in range(2000):
        view = await api.state(game_id, token)
        if view["phase"] == "finished":
            return view
        if view["phase"] == "redraw" and view.get("stable"):
            break
        await asyncio.sleep(0.01)
    raise AssertionError(f"game {game_id} did not finish: phase {view['phase']}")


async def finished_life_game(api: AsyncCellWarClient) -> tuple[str, list[dict]]:
    """A Life game played to its end: player 2 places nothing and dies out at the first
    generation. Returns its id and whole log."""
    game_id, seats = await seated(api, "life", SMALL, 2)
    await api.place(game_id, seats[0].token, BLOCK_1)
    await api.end_turn(game_id, seats[0].token)
    await api.end_turn(game_id, seats[1].token)
    for _ in range(2000):
        if (await api.state(game_id, seats[0].token))["phase"] == "finished":
            break
        await asyncio.sleep(0.01)
    events = await api.events(game_id)
    assert events[-1]["type"] == "GameFinished"
    return game_id, events


async def finished_cellwar_game(api: AsyncCellWarClient) -> tuple[str, list[dict], list[Seat]]:
    """A CellWar duel won at once: player 1's infantry takes player 2's."""
    game_id, seats = await seated(api, "cellwar", duel(), 2)
    own = (await api.state(game_id, seats[0].token))["units"]
    unit = next(u["id"] for u in own if u["owner"] == 1)
    await api.move(game_id, seats[0].token, unit, 1, 0)
    events = await api.events(game_id)
    assert events[-1]["type"] == "GameFinished" and events[-1]["payload"]["winner"] == 1
    return game_id, events, seats


# --------------------------------------------------------------------------- JSON Lines


async def test_jsonl_log_streams_the_same_objects_as_the_json_document(api: AsyncCellWarClient, gateway: str):
    game_id, events = await finished_life_game(api)
    async with httpx.AsyncClient(base_url=gateway) as http:
        r = await http.get(f"/game/{game_id}/events", params={"format": "jsonl"})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/x-ndjson")
    lines = r.text.splitlines()
    assert [json.loads(line) for line in lines] == events
    assert [e async for e in api.events_jsonl(game_id, from_seq=3)] == events[2:]


async def test_jsonl_follows_the_log_visibility_rule(api: AsyncCellWarClient, gateway: str):
    game_id, seats = await seated(api, "cellwar", duel(p2_x=7), 2)
    async with httpx.AsyncClient(base_url=gateway) as http:
        r = await http.get(f"/game/{game_id}/events", params={"format": "jsonl"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "FORBIDDEN"
    mine = [e async for e in api.events_jsonl(game_id, seats[0].token)]
    assert mine == await api.events(game_id, seats[0].token)
    assert mine and all("state_hash" not in e for e in mine)  # fog: no hash leaks


# --------------------------------------------------------------------------- import


async def test_import_of_an_exported_log_folds_to_the_same_final_hash(api: AsyncCellWarClient):
    for source, events in [await finished_life_game(api), (await finished_cellwar_game(api))[:2]]:
        text = "".join(json.dumps(e) + "\n" for e in events)
        done = await api.import_log(text, origin_game_id=source, origin_file=f"{source}.jsonl")
        assert done["finished"] and done["events"] == len(events)
        copy_ = await api.events(done["game_id"])
        assert fold_hash(copy_) == fold_hash(events) == events[-1]["state_hash"]
        assert [(e["type"], e["state_hash"]) for e in copy_] == [(e["type"], e["state_hash"]) for e in events]
        assert copy_[0]["payload"]["origin"] == {"game_id": source, "file": f"{source}.jsonl"}
        assert done["game_id"] != source


async def test_a_tampered_log_is_refused_at_its_seq_and_nothing_is_written(api: AsyncCellWarClient, gateway: str):
    _, events = await finished_life_game(api)
    seq = next(e["seq"] for e in events if e["type"] == "ActionApplied")
    tampered = copy.deepcopy(events)
    cells = tampered[seq - 1]["payload"]["action"]["cells"]
    cells[0] = [cells[0][0] + 1, cells[0][1]]  # one cell moved one column
    key = f"tampered-{time.time_ns()}"
    with pytest.raises(ApiError) as info:
        await api.import_log(tampered, idempotency_key=key)
    err = info.value
    # 409: the body fits the schema and the rules refuse it (gateway/errors.py)
    assert (err.status, err.code, err.seq) == (409, "LOG_MISMATCH", seq)
    assert f"seq {seq}" in err.message
    with pytest.raises(ApiError) as missing:
        await api.events(import_game_id(key))
    assert missing.value.status == 404  # nothing was written
    # the same log untouched imports, under the same key
    done = await api.import_log(events, idempotency_key=key)
    assert done["game_id"] == import_game_id(key)


async def test_a_retried_import_is_applied_once(api: AsyncCellWarClient):
    _, events = await finished_life_game(api)
    key = f"import-{time.time_ns()}"
    first = await api.import_log(events, idempotency_key=key)
    again = await api.import_log(events, idempotency_key=key)
    assert again["game_id"] == first["game_id"]
    assert len(await api.events(first["game_id"])) == len(events)


async def test_an_import_key_reused_with_another_log_is_refused(api: AsyncCellWarClient):
    _, events = await finished_life_game(api)
    _, other, _ = await finished_cellwar_game(api)
    key = f"import-reused-{time.time_ns()}"
    first = await api.import_log(events, idempotency_key=key)
    with pytest.raises(ApiError) as reused:
        await api.import_log(other, idempotency_key=key)
    assert (reused.value.status, reused.value.code) == (422, "IDEMPOTENCY_KEY_REUSED")
    assert len(await api.events(first["game_id"])) == len(events)  # nothing added


async def test_a_retried_fork_is_the_same_game_and_a_reused_key_is_refused(api: AsyncCellWarClient):
    game_id, events = await finished_life_game(api)
    key = f"fork-{time.time_ns()}"
    fork_id = await api.fork(game_id, 3, idempotency_key=key)
    assert await api.fork(game_id, 3, idempotency_key=key) == fork_id
    for other_game, seq in ((game_id, 4), ((await finished_life_game(api))[0], 3)):
        with pytest.raises(ApiError) as reused:
            await api.fork(other_game, seq, idempotency_key=key)
        assert (reused.value.status, reused.value.code) == (422, "IDEMPOTENCY_KEY_REUSED")
    seat = await api.join(fork_id, "a")  # the fork is one game, with its seats free
    assert seat.player_id == 1


async def test_import_refuses_bodies_that_are_not_logs(api: AsyncCellWarClient, gateway: str):
    async with httpx.AsyncClient(base_url=gateway) as http:
        r = await http.post("/games/import", content=b'{"seq": 1}\nnot json\n')
        assert r.status_code == 422 and "line 2" in r.json()["error"]["message"]
        r = await http.post("/games/import", content=b"")
        assert r.status_code == 422 and r.json()["error"]["code"] == "MALFORMED"
        r = await http.post("/games/import", json={"events": []})
        assert r.status_code == 422 and r.json()["error"]["code"] == "MALFORMED"
        r = await http.post("/games/import", json={"events": [{"seq": 1}], "zzz": 1})
        assert r.status_code == 422 and "unknown fields" in r.json()["error"]["message"], r.text
        # a number too long for Python's int (a plain ValueError, not a decode error)
        big = '{"seq": ' + "9" * 5000 + ', "type": "GameCreated", "actor": 0, "payload": {}}\n'
        r = await http.post("/games/import", content=(big + big).encode())
        assert (r.status_code, r.json()["error"]["code"]) == (422, "MALFORMED"), r.text
        assert "line 1 is not JSON: a number of more than 4,300 digits" in r.json()["error"]["message"]
        # nested too deep for Python's parser, or deeper than an event ever is: 422, not 500
        deep = "[" * 5000 + "]" * 5000
        for body in (deep, '{"events": ' + deep + "}", '{"seq": 1, "payload": {"a": ' + "[" * 40 + "]" * 40 + "}}"):
            r = await http.post("/games/import", content=body.encode())
            assert (r.status_code, r.json()["error"]["code"]) == (422, "MALFORMED"), r.text
            assert "nested deeper than 32 levels" in r.json()["error"]["message"]
    finished, events = await finished_life_game(api)
    async with httpx.AsyncClient(base_url=gateway) as http:
        for seq in ("5", 5.5, True):  # a fork's seq is an integer, not a string of one
            r = await http.post(f"/game/{finished}/fork", json={"seq": seq})
            assert (r.status_code, r.json()["error"]["code"]) == (422, "MALFORMED"), r.text
        for bad in ("\x07bell.jsonl", "\x1b[31mred\n.jsonl"):  # shown to people later
            r = await http.post("/games/import", json={"events": events}, params={"origin_file": bad})
            assert (r.status_code, r.json()["error"]["code"]) == (422, "MALFORMED"), r.text
        # the fields the log tools check are checked alike here (client/logfile.check_event)
        for field, value, words in (
            ("state_hash", "zz", "event #2: state_hash must be 64 hex characters, got 'zz'"),
            ("state_hash", "A" * 64, "state_hash must be 64 hex characters"),
            ("time", [], "event #2: time must be a string, got []"),
        ):
            bad = [events[0], {**events[1], field: value}, *events[2:]]
            r = await http.post("/games/import", json={"events": bad})
            assert (r.status_code, r.json()["error"]["code"]) == (422, "MALFORMED"), r.text
            assert words in r.json()["error"]["message"]
            with pytest.raises(LogFormatError, match=f"{field} must be"):
                check_event(bad[1])
        document = {"events": events, "origin": {"file": "\x07bell.jsonl"}}  # in the body too
        r = await http.post("/games/import", json=document)
        assert r.status_code == 422 and "control or format" in r.json()["error"]["message"], r.text
    filtered = [{k: v for k, v in e.items() if k != "state_hash"} for e in events]
    with pytest.raises(ApiError) as info:
        await api.import_log(filtered)
    assert (info.value.code, info.value.seq) == ("MALFORMED", 1)


async def test_an_unfinished_log_imports_as_a_fork_of_its_last_state(api: AsyncCellWarClient):
    _, events = await finished_life_game(api)
    placed = next(e["seq"] for e in events if e["type"] == "TurnEnded")  # player 1 drew
    done = await api.import_log(events[:placed])
    assert not done["finished"] and done["events"] == 1
    a = await api.join(done["game_id"], "a")
    view = await api.state(done["game_id"], a.token)
    assert view["phase"] == "waiting" and view["open_seats"] == [2]
    mine = await api.events(done["game_id"], a.token)  # blind placement: filtered
    assert [e["type"] for e in mine] == ["GameForked", "PlayerJoined"]
    assert "state" not in mine[0]["payload"]
    b = await api.join(done["game_id"], "b")
    assert (await api.state(done["game_id"], b.token))["phase"] == "placement"
    await api.end_turn(done["game_id"], b.token)  # player 2 draws nothing: extinct
    assert (await wait_finished(api, done["game_id"], a.token))["winner"] == 1
    log = await api.events(done["game_id"])
    assert log[0]["type"] == "GameForked"
    assert log[0]["state_hash"] == events[placed - 1]["state_hash"]
    assert log[0]["payload"]["from_seq"] == placed


# --------------------------------------------------------------------------- fork


async def test_a_cellwar_fork_starts_in_the_recorded_state_and_plays_to_the_end(api: AsyncCellWarClient):
    game_id, events, _ = await finished_cellwar_game(api)
    for n in range(1, len(events) + 1):
        fork_id = await api.fork(game_id, n)
        first = (await api.events(fork_id))[0] if n == len(events) else None
        if first is not None:  # a fork of the end is finished, so its log is public
            assert first["type"] == "GameForked" and first["state_hash"] == events[n - 1]["state_hash"]
    fork_id = await api.fork(game_id, 3)  # both joined, player 1 to move
    a = await api.join(fork_id, "carol")
    waiting = await api.state(fork_id, a.token)
    assert waiting["phase"] == "waiting" and waiting["open_seats"] == [2]
    mine = await api.events(fork_id, a.token)  # running CellWar: the filtered log
    assert mine[0]["type"] == "GameForked"
    assert "state" not in mine[0]["payload"] and "state_hash" not in mine[0]["payload"]
    unit = next(u["id"] for u in waiting["units"] if u["owner"] == 1)
    with pytest.raises(ApiError) as early:
        await api.move(fork_id, a.token, unit, 1, 0)
    assert (early.value.status, early.value.code) == (409, "WRONG_PHASE")
    b = await api.join(fork_id, "dave")
    playing = await api.state(fork_id, a.token)
    assert playing["phase"] == "playing" and "open_seats" not in playing
    assert [p["name"] for p in playing["players"]] == ["carol", "dave"]
    await api.move(fork_id, a.token, unit, 1, 0)
    log = await api.events(fork_id)  # finished: public, with hashes
    assert log[0]["type"] == "GameForked"
    assert log[0]["payload"]["state_hash"] == log[0]["state_hash"] == events[2]["state_hash"]
    assert (log[0]["payload"]["from_game"], log[0]["payload"]["from_seq"]) == (game_id, 3)
    assert fold_hash(log) == log[-1]["state_hash"]
    assert log[-1]["type"] == "GameFinished" and log[-1]["payload"]["winner"] == 1
    assert (await api.state(fork_id, b.token))["winner"] == 1


async def test_a_life_fork_runs_again_once_its_seats_are_taken(api: AsyncCellWarClient):
    game_id, events = await finished_life_game(api)
    placed = [e["seq"] for e in events if e["type"] == "TurnEnded"][-1]  # running, gen 0
    fork_id = await api.fork(game_id, placed)
    a = await api.join(fork_id, "a")
    await asyncio.sleep(0.3)  # the ticker runs every 1/8 s: a fork with free seats is not ticked
    assert (await api.state(fork_id, a.token))["generation"] == 0
    await api.join(fork_id, "b")
    assert (await wait_finished(api, fork_id, a.token))["winner"] == 1
    log = await api.events(fork_id)  # a Life log is public once the game is finished
    assert log[0]["type"] == "GameForked"
    assert log[0]["state_hash"] == events[placed - 1]["state_hash"]


async def test_who_may_fork(api: AsyncCellWarClient):
    game_id, seats = await seated(api, "cellwar", duel(p2_x=7), 2)
    for token in (None, seats[0].token):  # fog: not even a player of it, while it runs
        with pytest.raises(ApiError) as info:
            await api.fork(game_id, 2, token)
        assert (info.value.status, info.value.code) == (403, "FORBIDDEN")
    life, lseats = await seated(api, "life", SMALL, 2)
    await api.place(life, lseats[0].token, BLOCK_1)
    await api.end_turn(life, lseats[0].token)
    with pytest.raises(ApiError) as blind:  # blind placement: private
        await api.fork(life, 3, lseats[1].token)
    assert blind.value.code == "FORBIDDEN"
    await api.place(life, lseats[1].token, BLOCK_2)
    await api.end_turn(life, lseats[1].token)  # placement over, but the log stays private
    with pytest.raises(ApiError) as running:  # until the end (it tells how each drew blind)
        await api.fork(life, 3, lseats[1].token)
    assert running.value.code == "FORBIDDEN"
    life, _ = await finished_life_game(api)  # finished: anyone may fork
    fork_id = await api.fork(life, 3)
    a = await api.join(fork_id, "a")
    assert (await api.state(fork_id, a.token))["generation"] == 0
    with pytest.raises(ApiError) as spectator:  # a Life fork's log is private until its end
        await api.events(fork_id)
    assert spectator.value.code == "FORBIDDEN"
    with pytest.raises(ApiError) as far:
        await api.fork(life, 10_000)
    assert (far.value.status, far.value.code) == (409, "SEQ_OUT_OF_RANGE")


# --------------------------------------------------------------------------- spectators


async def test_cellwar_spectators_are_delayed_by_at_least_ten_seconds(api: AsyncCellWarClient):
    game_id, _ = await seated(api, "cellwar", {**duel(p2_x=7), "spectators": "live"}, 2)
    with pytest.raises(ApiError) as short:
        await api.spectator_state(game_id, delay_s=5)
    assert (short.value.status, short.value.code) == (409, "MALFORMED")
    with pytest.raises(ApiError) as early:  # the game is younger than 10 s
        await api.spectator_state(game_id)
    assert (early.value.status, early.value.code) == (409, "NOT_YET_VISIBLE")
    with pytest.raises(ApiError) as live:  # the live spectator view stays refused
        await api.state(game_id, "")
    assert live.value.status == 401


async def test_life_spectators_see_blind_placement_hidden(api: AsyncCellWarClient):
    game_id, seats = await seated(api, "life", SMALL, 2)
    await api.place(game_id, seats[0].token, BLOCK_1)
    seen = await api.spectator_state(game_id, delay_s=0)
    view = seen["view"]
    assert view["phase"] == "placement" and view["delay_s"] == 0
    assert "A" not in view["board"]  # player 1's cells are hidden until placement ends
    await api.end_turn(game_id, seats[0].token)
    await api.place(game_id, seats[1].token, BLOCK_2)
    await api.end_turn(game_id, seats[1].token)
    after = await api.spectator_state(game_id, delay_s=0)
    assert "A" in after["view"]["board"] and "B" in after["view"]["board"]
    assert after["seq"] > seen["seq"]


@pytest.mark.timeout(90)
async def test_a_cellwar_spectator_with_delay_10_never_sees_a_frame_newer_than_10_s(api: AsyncCellWarClient):
    """The two infantry walk toward each other, one command a second, and
    player 1 takes player 2's unit; each spectator frame arrives at least 10 s after the
    event it shows (event times from the finished game's public log)."""
    delay = 10.0
    game_id, seats = await seated(api, "cellwar", {**duel(p2_x=7), "spectators": "live"}, 2)
    frames: list[tuple[float, dict]] = []

    async def spectate() -> None:
        async for message in api.spectate(game_id, delay_s=delay):
            frames.append((time.time(), message))

    watcher = asyncio.create_task(spectate())
    units = {}
    for seat in seats:
        view = await api.state(game_id, seat.token)
        units[seat.player_id] = next(u["id"] for u in view["units"] if u["owner"] == seat.player_id)
    steps = [(1, 1), (2, -1), (1, 1), (2, -1), (1, 1), (2, -1)]  # to (3,0) and (4,0)
    for pid, dx in steps:
        seat = seats[pid - 1]
        await api.move(game_id, seat.token, units[pid], dx, 0)
        await api.end_turn(game_id, seat.token)
        await asyncio.sleep(1.0)
    await api.move(game_id, seats[0].token, units[1], 1, 0)  # the attack ends it
    await asyncio.wait_for(watcher, timeout=60)
    log = await api.events(game_id)
    times = {e["seq"]: _epoch(e["time"]) for e in log}
    assert frames[-1][1]["type"] == "finished"
    views = [(t, m) for t, m in frames if m["type"] == "view"]
    assert len(views) >= len(steps)  # every move was shown, later
    for received, message in frames:
        shown = times[message["seq"]]
        assert received - shown >= delay - 0.01, (message["seq"], received - shown)
    assert views[-1][1]["view"]["winner"] == 1
    seqs = [m["seq"] for _, m in views]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def _epoch(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso).timestamp()
