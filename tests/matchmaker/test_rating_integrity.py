"""Ratings are a projection of games played here, by their seats' owners
(docs/ratings.md): an imported copy of a rated game, a log forged offline naming other
profiles and a second seat of one profile change no rating and no leaderboard entry; the
players removed from a 3-player rated game rank by leaving order, with the mu values of
openskill's Plackett–Luce update for those ranks; a rebuild over the log heals ratings
an older projection took from forged imports. Real engine, session, matchmaker, gateway
and NATS."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from typing import Any

import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from openskill.models import PlackettLuce

import engine
from cellwar.v1 import events_pb2
from client.sdk import ApiError, AsyncCellWarClient
from engine.api import decide
from services.common.errors import ServiceError
from services.common.jsonwire import dumps
from services.matchmaker.projection import (
    DURABLE,
    GAME_EVENTS,
    PROJECTION_VERSION,
    VERSION_KEY,
    GameLog,
    NotRated,
    created_here,
    rated_plan,
)
from services.matchmaker.ratings import ranks_after_removals, ranks_of_game
from services.matchmaker.server import MatchmakerApp
from services.matchmaker.store import game_marker_key, rating_key
from services.session.adapters.event_store import EventStore
from tests.matchmaker.conftest import eventually, start_matchmaker
from tests.support.stack import Stack

#: A small Life board for rated link games (two or three players).
LIFE = {"width": 16, "height": 16}

# --------------------------------------------------------------------------- rules


def test_the_removed_rank_below_the_survivors_in_reverse_order_of_removal():
    view = {"winner": 4, "players": [{"id": i, "cells": c} for i, c in [(1, 0), (2, 0), (3, 9), (4, 20)]]}
    # 1 left first (seq 5), then 2 (seq 9): 2 ranks above 1; the survivor 3 above both
    assert ranks_of_game(view, [(5, 1), (9, 2)]) == {4: 1, 3: 2, 2: 3, 1: 4}
    # removals recorded in the same event tie, and only those
    assert ranks_after_removals({1: 2, 2: 2, 3: 1}, 3, [(7, 1), (7, 2)]) == {3: 1, 1: 2, 2: 2}
    # a player named again by a later event (a rollback) keeps its first removal
    assert ranks_of_game(view, [(5, 1), (9, 2), (12, 1)]) == {4: 1, 3: 2, 2: 3, 1: 4}
    # no removal: the view's order as before
    assert ranks_of_game(view, []) == {4: 1, 3: 2, 1: 3, 2: 3}


def _event(etype: str, payload: dict[str, Any], seconds: int, command_id: str = "") -> events_pb2.Event:
    e = events_pb2.Event(type=etype, payload=dumps(payload), command_id=command_id)
    e.time.CopyFrom(Timestamp(seconds=seconds))
    return e


def test_only_a_game_created_here_can_be_rated():
    created = _event("GameCreated", {"kind": "life", "config": {"rated": True}}, 10, "c1")
    joined = _event("PlayerJoined", {"player_id": 1, "name": "a"}, 11, "j1")
    assert created_here([created, joined])
    # an import: the engine gave its GameCreated an origin (also {})
    imported = _event("GameCreated", {"kind": "life", "config": {"rated": True}, "origin": {}}, 10)
    assert not created_here([imported, joined])
    # an import recorded before that rule: its whole log appended in one write
    same_write = _event("PlayerJoined", {"player_id": 1, "name": "a"}, 10, "c1")
    assert not created_here([created, same_write])
    assert not created_here([_event("GameForked", {"kind": "life", "config": {"rated": True}}, 10)])

    def log(**kw: Any) -> GameLog:
        seats = [{"player_id": 1, "name": "a", "profile_id": "pa"}, {"player_id": 2, "name": "b", "profile_id": "pb"}]
        base: dict[str, Any] = {"kind": "life", "config": {"players": 2, "rated": True}, "created_here": True,
                                "seats": seats}
        return GameLog("g", **{**base, **kw})

    plan, _ = rated_plan(log(), None)
    assert plan is not None and plan["queue"] == "life-2" and [s["profile_id"] for s in plan["seats"]] == ["pa", "pb"]
    assert rated_plan(log(created_here=False), None) == (None, NotRated.NOT_CREATED_HERE)
    assert rated_plan(log(created_here=False), {"queue": "life-2", "seats": []}) == (None, NotRated.NOT_CREATED_HERE)
    assert rated_plan(log(config={"players": 2}), None) == (None, NotRated.NOT_RATED)
    twice = [{"player_id": 1, "profile_id": "pa"}, {"player_id": 2, "profile_id": "pa"}]
    assert rated_plan(log(seats=twice), None) == (None, NotRated.PROFILE_SEATED_TWICE)
    assert rated_plan(None, None) == (None, NotRated.NO_LOG)


# --------------------------------------------------------------------------- helpers


async def drained(mm: MatchmakerApp) -> None:
    """Until the ratings projection has handled every event of the log so far."""
    js = mm.nc.jetstream()

    async def done() -> bool:
        info = await js.consumer_info(GAME_EVENTS, DURABLE)
        return info.num_pending == 0 and info.num_ack_pending == 0

    await eventually(done, what="ratings projection drained")


async def record(mm: MatchmakerApp, queue: str, profile_id: str) -> dict[str, Any] | None:
    got = await mm.matchmaker.ratings.get(rating_key(queue, profile_id))
    return got[0] if got else None


async def board_ids(api: AsyncCellWarClient, kind: str = "life", players: int = 2) -> set[str]:
    return {e["profile_id"] for e in await api.leaderboard(kind, players)}


async def rated_life_game(api: AsyncCellWarClient, mm: MatchmakerApp, n: int = 2) -> tuple[str, list[dict]]:
    """A rated Life game made by link, played by ``n`` fresh profiles; player 1 wins (the
    others leave, the last seat first). Returns its id and profiles, once rated."""
    profiles = [await api.create_profile(f"hon-{i}") for i in range(1, n + 1)]
    game_id = await api.create_game("life", {**LIFE, "players": n, "rated": True})
    seats = [await api.join(game_id, f"hon-{i}", profile_token=p["profile_token"])
             for i, p in enumerate(profiles, start=1)]
    for seat in reversed(seats[1:]):
        await api.leave(game_id, seat.token)
    await eventually(lambda: record(mm, f"life-{n}", profiles[-1]["profile_id"]), what="rated")
    return game_id, profiles


def forged_log(profiles: list[tuple[str, str]], winner: int) -> list[dict[str, Any]]:
    """A finished rated Life log built offline with the engine library (real hashes):
    ``profiles`` = ``[(name, profile_id)]`` join in order, everyone but ``winner`` leaves."""
    events: list[dict[str, Any]] = []
    state = None

    def run(cmd: str, actor: int, payload: dict[str, Any]) -> None:
        nonlocal state
        drafts, state = decide(state, cmd, actor, payload)
        for d in drafts:
            events.append({"seq": len(events) + 1, "type": d.type, "actor": d.actor, "payload": d.payload,
                           "state_hash": d.state_hash, "engine_version": engine.ENGINE_VERSION})

    run("create", 0, {"kind": "life", "config": {**LIFE, "players": len(profiles), "rated": True}})
    for name, pid in profiles:
        run("join", 0, {"name": name, "profile_id": pid})
    for seat in range(1, len(profiles) + 1):
        if seat != winner:
            run("remove_player", seat, {"player_id": seat, "reason": "left"})
    assert events[-1]["type"] == "GameFinished"
    return events


# --------------------------------------------------------------------------- attacks


@pytest.mark.integration
@pytest.mark.timeout(180)
async def test_an_imported_copy_of_a_rated_game_rates_nobody_again(mm_api: AsyncCellWarClient,
                                                                    matchmaker: MatchmakerApp):
    game_id, (a, b) = await rated_life_game(mm_api, matchmaker)
    await drained(matchmaker)
    before = [await record(matchmaker, "life-2", p["profile_id"]) for p in (a, b)]
    board_before = await mm_api.leaderboard("life", 2)
    assert before[0]["games"] == 1 and before[0]["mu"] > 25 > before[1]["mu"]
    log = await mm_api.events(game_id)
    assert log[0]["payload"]["config"]["rated"] is True
    # three imports, with and without an origin, and one whose GameCreated names an origin
    # of null (the engine's origin replaces it)
    crafted = [dict(e) for e in log]
    crafted[0] = {**crafted[0], "payload": {**crafted[0]["payload"], "origin": None}}
    copies = [
        await mm_api.import_log(log),
        await mm_api.import_log(log, origin_game_id=game_id),
        await mm_api.import_log(crafted),
    ]
    assert all(c["finished"] for c in copies)
    for c in copies:
        assert await matchmaker.projection.rate(c["game_id"]) == []
        assert (await matchmaker.projection.plan(c["game_id"]))[2] == NotRated.NOT_CREATED_HERE
    await drained(matchmaker)
    assert [await record(matchmaker, "life-2", p["profile_id"]) for p in (a, b)] == before
    board = await mm_api.leaderboard("life", 2)
    mine = {a["profile_id"], b["profile_id"]}
    assert [e for e in board if e["profile_id"] in mine] == [e for e in board_before if e["profile_id"] in mine]
    for c in copies:
        assert await matchmaker.matchmaker.ratings.get(game_marker_key(c["game_id"])) is None


@pytest.mark.integration
@pytest.mark.timeout(180)
async def test_a_forged_log_naming_other_profiles_rates_nobody(mm_api: AsyncCellWarClient,
                                                               matchmaker: MatchmakerApp):
    victim = await mm_api.create_profile("victim")
    thief = await mm_api.create_profile("thief")
    events = forged_log([("victim", victim["profile_id"]), ("thief", thief["profile_id"])], winner=2)
    done = await mm_api.import_log(events)
    assert done["finished"] is True
    imported = await mm_api.events(done["game_id"])
    assert [e["payload"].get("profile_id") for e in imported if e["type"] == "PlayerJoined"] == [
        victim["profile_id"], thief["profile_id"]]  # the log names them, the ratings do not
    assert await matchmaker.projection.rate(done["game_id"]) == []
    await drained(matchmaker)
    for p in (victim, thief):
        assert await record(matchmaker, "life-2", p["profile_id"]) is None
        assert (await mm_api.profile(p["profile_token"]))["ratings"] in (None, [])
    assert not {victim["profile_id"], thief["profile_id"]} & await board_ids(mm_api)


@pytest.mark.integration
@pytest.mark.timeout(180)
async def test_a_profile_holds_one_seat_of_a_rated_game(mm_api: AsyncCellWarClient, matchmaker: MatchmakerApp):
    a = await mm_api.create_profile("twice")
    game_id = await mm_api.create_game("life", {**LIFE, "players": 2, "rated": True})
    seat = await mm_api.join(game_id, "twice", profile_token=a["profile_token"])
    log = await mm_api.events(game_id, seat.token)
    with pytest.raises(ApiError) as refused:
        await mm_api.join(game_id, "twice-again", profile_token=a["profile_token"])
    assert (refused.value.status, refused.value.code) == (409, "ALREADY_SEATED")
    assert await mm_api.events(game_id, seat.token) == log  # nothing recorded
    # two concurrent joins of one profile: one seat
    other = await mm_api.create_profile("racer")
    race_id = await mm_api.create_game("life", {**LIFE, "players": 4, "rated": True})
    results = await asyncio.gather(
        *(mm_api.join(race_id, f"r{i}", profile_token=other["profile_token"]) for i in range(3)),
        return_exceptions=True,
    )
    seated = [r for r in results if not isinstance(r, BaseException)]
    assert len(seated) == 1, results
    assert all(isinstance(r, ApiError) and r.code == "ALREADY_SEATED" for r in results if r not in seated)
    # an unrated game is not concerned: the profile is not recorded there
    plain = await mm_api.create_game("life", {**LIFE, "players": 2})
    await mm_api.join(plain, "p", profile_token=a["profile_token"])
    await mm_api.join(plain, "p", profile_token=a["profile_token"])
    await drained(matchmaker)
    assert await record(matchmaker, "life-2", a["profile_id"]) is None
    assert a["profile_id"] not in await board_ids(mm_api)


# --------------------------------------------------------------------------- leaving order


@pytest.mark.integration
@pytest.mark.timeout(180)
async def test_a_three_player_rated_game_ranks_its_leavers_by_leaving_order(mm_api: AsyncCellWarClient,
                                                                             matchmaker: MatchmakerApp):
    profiles = [await mm_api.create_profile(f"three-{i}") for i in (1, 2, 3)]
    game_id = await mm_api.create_game("cellwar", {"width": 16, "height": 16, "players": 3, "rated": True})
    seats = [await mm_api.join(game_id, f"three-{i}", profile_token=p["profile_token"])
             for i, p in zip((1, 2, 3), profiles, strict=True)]
    await mm_api.leave(game_id, seats[0].token)  # player 1 leaves first
    await mm_api.leave(game_id, seats[1].token)  # then player 2: player 3 wins
    final = await mm_api.state(game_id, seats[2].token)
    assert final["phase"] == "finished" and final["winner"] == 3
    got = [await eventually(lambda p=p: record(matchmaker, "cellwar-3", p["profile_id"]), what="rated")
           for p in profiles]
    marker = (await matchmaker.matchmaker.ratings.get(game_marker_key(game_id)))[0]
    assert marker["ranks"] == {"3": 1, "2": 2, "1": 3}
    model = PlackettLuce()
    teams = [[model.rating()] for _ in profiles]
    expected = model.rate(teams, ranks=[3, 2, 1])
    assert [r["mu"] for r in got] == pytest.approx([t[0].mu for t in expected], abs=1e-9)
    assert [r["sigma"] for r in got] == pytest.approx([t[0].sigma for t in expected], abs=1e-9)
    assert got[1]["mu"] == pytest.approx(25.717, abs=1e-3) and got[0]["mu"] == pytest.approx(21.414, abs=1e-3)
    board = [e["profile_id"] for e in await mm_api.leaderboard("cellwar", 3)]
    ids = [p["profile_id"] for p in profiles]
    assert board.index(ids[2]) < board.index(ids[1]) < board.index(ids[0])


# --------------------------------------------------------------------------- healing


@pytest.mark.integration
@pytest.mark.timeout(240)
async def test_a_rebuild_heals_ratings_taken_from_forged_imports(mm_api: AsyncCellWarClient,
                                                                 matchmaker: MatchmakerApp):
    """What an older projection left: a forged log imported before imports had an origin
    (its whole log in one write) and a game where one profile held two seats, each rated
    (records and markers as it wrote them). The rebuild deletes them and keeps the honest
    game's ratings as they were."""
    honest_id, (a, b) = await rated_life_game(mm_api, matchmaker)
    await drained(matchmaker)
    honest = [await record(matchmaker, "life-2", p["profile_id"]) for p in (a, b)]
    victim = await mm_api.create_profile("healed-victim")
    thief = await mm_api.create_profile("healed-thief")
    store = EventStore(matchmaker.nc.jetstream())

    def pb(events: list[dict[str, Any]]) -> list[events_pb2.Event]:
        return [events_pb2.Event(type=e["type"], actor=e["actor"], payload=dumps(e["payload"]),
                                 state_hash=e["state_hash"], engine_version=e["engine_version"]) for e in events]

    # a legacy import: no origin, one append
    legacy_import = uuid.uuid4().hex[:12]
    forged = forged_log([("victim", victim["profile_id"]), ("thief", thief["profile_id"])], winner=2)
    await store.append(legacy_import, pb(forged), 0, "import-key")
    # a legacy game created here where the thief held both seats (one append per command)
    two_seats = uuid.uuid4().hex[:12]
    doubled = forged_log([("thief", thief["profile_id"]), ("thief2", thief["profile_id"])], winner=1)
    assert [e["type"] for e in doubled] == ["GameCreated", "PlayerJoined", "PlayerJoined", "PlayerRemoved",
                                            "GameFinished"]
    seq = 0
    for i, batch in enumerate([[0], [1], [2], [3, 4]]):
        await store.append(two_seats, [pb(doubled)[j] for j in batch], seq, f"cmd-{i}")
        seq += len(batch)
    for game_id in (legacy_import, two_seats):
        assert await matchmaker.projection.rate(game_id) == []
    await drained(matchmaker)
    # ... but an older projection had rated them: what it wrote
    ratings = matchmaker.matchmaker.ratings
    forged_record = {"mu": 31.0, "sigma": 7.0, "rating": 1740.0, "games": 2, "name": "x",
                     "applied": [legacy_import, two_seats]}
    await ratings.put(rating_key("life-2", victim["profile_id"]), {**forged_record, "mu": 19.0})
    await ratings.put(rating_key("life-2", thief["profile_id"]), forged_record)
    boosted = {**honest[0], "mu": honest[0]["mu"] + 4, "games": 3, "applied": [*honest[0]["applied"], legacy_import]}
    await ratings.put(rating_key("life-2", a["profile_id"]), boosted)
    for game_id in (legacy_import, two_seats):
        await ratings.put(game_marker_key(game_id), {"state": "applied", "game_id": game_id, "queue": "life-2",
                                                     "ranks": {"1": 2, "2": 1}, "changes": [], "at": 1.0})
    await eventually(lambda: _on_board(mm_api, thief["profile_id"]), what="forged entry shown")

    report = await matchmaker.projection.rebuild()
    assert report["records_deleted"] >= 2 and report["markers_deleted"] >= 2
    for p in (victim, thief):
        assert await record(matchmaker, "life-2", p["profile_id"]) is None
    for game_id in (legacy_import, two_seats):
        assert await ratings.get(game_marker_key(game_id)) is None
    healed = [await record(matchmaker, "life-2", p["profile_id"]) for p in (a, b)]
    for h, o in zip(healed, honest, strict=True):
        assert (h["games"], h["applied"]) == (o["games"], o["applied"])
        assert h["mu"] == pytest.approx(o["mu"], abs=1e-9) and h["sigma"] == pytest.approx(o["sigma"], abs=1e-9)
    await eventually(lambda: _off_board(mm_api, {victim["profile_id"], thief["profile_id"]}), what="healed board")
    # a second rebuild changes nothing
    again = await matchmaker.projection.rebuild()
    assert (again["records_deleted"], again["markers_deleted"]) == (0, 0)


async def _on_board(api: AsyncCellWarClient, profile_id: str) -> bool:
    return profile_id in await board_ids(api)


async def _off_board(api: AsyncCellWarClient, ids: set[str]) -> bool:
    return not ids & await board_ids(api)


async def _run(*args: str, env: dict[str, str]) -> tuple[int, list[dict[str, Any]]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.matchmaker", *args, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    lines = [json.loads(line) for line in (out + err).splitlines() if line.startswith(b"{")]
    return int(proc.returncode or 0), lines


@pytest.mark.integration
@pytest.mark.timeout(180)
async def test_the_rebuild_command_rebuilds_once_and_says_what_it_did(stack: Stack, matchmaker: MatchmakerApp):
    env = {
        **os.environ,
        "CELLWAR_NATS_URL": stack.settings.nats_url,
        "CELLWAR_SESSION_ADDR": stack.session_target,
        "CELLWAR_LOG_FORMAT": "json",
    }
    await matchmaker.matchmaker.ratings.delete(VERSION_KEY)
    status, lines = await _run("rebuild-ratings", env=env)
    assert status == 0, lines
    done = [line for line in lines if line.get("event") == "ratings_rebuilt"]
    assert len(done) == 1 and done[0]["records_deleted"] == 0 and done[0]["games_scanned"] >= done[0]["games_rated"]
    version = await matchmaker.matchmaker.ratings.get(VERSION_KEY)
    assert version is not None and version[0]["version"] == PROJECTION_VERSION
    status, _ = await _run("rebuild-everything", env=env)
    assert status == 2


@pytest.mark.integration
@pytest.mark.timeout(180)
async def test_a_matchmaker_started_on_an_older_projection_heals_it(stack: Stack, matchmaker: MatchmakerApp):
    """The first start after an upgrade: RATINGS says nothing of the rule version (an older
    projection's bucket) and holds a record no game of the log gives; the new instance
    rebuilds before it consumes, and records the version."""
    ratings = matchmaker.matchmaker.ratings
    ghost = uuid.uuid4().hex[:16]
    await ratings.put(rating_key("life-2", ghost), {"mu": 40.0, "sigma": 3.0, "rating": 2100.0, "games": 5,
                                                    "name": "ghost", "applied": ["nowhere"]})
    await ratings.delete(VERSION_KEY)
    upgraded = await start_matchmaker(stack)
    try:
        async def healed() -> bool:
            version = await ratings.get(VERSION_KEY)
            return version is not None and await ratings.get(rating_key("life-2", ghost)) is None

        await eventually(healed, what="rebuilt at start")
        assert (await ratings.get(VERSION_KEY))[0]["version"] == PROJECTION_VERSION
        assert await ratings.get("v.rebuild") is None  # the lock is released
    finally:
        await upgraded.stop(grace=0.2)
    # while a rebuild holds the lock, a finish is not rated now but redelivered later
    await ratings.create("v.rebuild", {"at": 1e12})
    try:
        with pytest.raises(ServiceError) as held:
            await matchmaker.projection.rate(uuid.uuid4().hex[:12])
        assert held.value.code == "UNAVAILABLE"
    finally:
        await ratings.delete("v.rebuild")
