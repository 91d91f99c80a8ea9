"""The campaign through the public API (real gateway, session, engine and NATS):
profiles, the level list, locked levels, enemy cells, a won and a lost level, and
progress that survives a restart of the session service and of NATS."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest

from client.sdk import ApiError, AsyncCellWarClient
from engine.campaign.levels import SOLUTIONS
from gateway.app import create_app
from services.common.settings import Settings
from services.session.adapters import kv
from services.session.adapters.profiles import Profiles
from tests.api.conftest import TEST_SECRET, serve
from tests.support.nats import NatsProcess
from tests.support.stack import start_stack

pytestmark = pytest.mark.integration

#: Upper bound of waiting for a level to end (seconds); levels here end in a few
#: generations at the test rate of 400 generations/s.
FINISH_WAIT_S = 30.0
#: Level 1's enemy: a block (level 1 "Warm-up", engine/campaign/levels.py).
LEVEL1_ENEMY = {(9, 9), (10, 9), (9, 10), (10, 10)}
#: Ten lone cells three apart, far from the block: each dies in the first generation.
LONE_CELLS = [(x, 0) for x in range(0, 19, 3)] + [(0, 18), (3, 18), (6, 18)]


def cells_of(view: dict[str, Any], colour: str) -> set[tuple[int, int]]:
    """Cells of one RLE state letter (``"A"`` red, ``"B"`` green) in a view's board."""
    out: set[tuple[int, int]] = set()
    x = y = 0
    count = ""
    for ch in view["board"]:
        if ch.isdigit():
            count += ch
            continue
        n = int(count or 1)
        count = ""
        if ch == "$":
            y, x = y + n, 0
        elif ch == "!":
            break
        else:
            if ch == colour:
                out.update((x + i, y) for i in range(n))
            x += n
    return out


async def wait_finished(api: AsyncCellWarClient, game_id: str, token: str) -> dict[str, Any]:
    """Poll the player's view until the level is finished; returns that view."""
    async with asyncio.timeout(FINISH_WAIT_S):
        while True:
            view = await api.state(game_id, token)
            if view["phase"] == "finished":
                return view
            await asyncio.sleep(0.05)


async def win_level_1(api: AsyncCellWarClient, profile_token: str | None) -> tuple[str, str, dict[str, Any]]:
    """Play level 1 with its documented solution; returns (game id, player token, final view)."""
    game_id = await api.create_campaign(1, profile_token)
    seat = await api.join(game_id, "red")
    solution = SOLUTIONS[1]
    await api.place(game_id, seat.token, solution["cells"])
    ready = await api.end_turn(game_id, seat.token)
    assert ready["view"]["phase"] in ("running", "finished")
    return game_id, seat.token, await wait_finished(api, game_id, seat.token)


async def test_a_profile_create_retried_with_its_key_is_the_same_profile(gateway: str):
    key = {"Idempotency-Key": f"profile-{asyncio.get_running_loop().time()}"}
    async with httpx.AsyncClient(base_url=gateway) as http:
        first = await http.post("/profiles", json={"name": "same"}, headers=key)
        again = await http.post("/profiles", json={"name": "same"}, headers=key)
        assert (first.status_code, again.status_code) == (201, 201)
        assert again.json()["profile_id"] == first.json()["profile_id"]
        other = await http.post("/profiles", json={"name": "other"}, headers=key)
        assert other.status_code == 422 and other.json()["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"
        a = await http.post("/profiles", json={"name": "same"})
        b = await http.post("/profiles", json={"name": "same"})
        assert a.json()["profile_id"] != b.json()["profile_id"]  # no key: two profiles
        shown = await http.get(
            "/profile", headers={"Authorization": f"Bearer {first.json()['profile_token']}"}
        )
        assert shown.json()["name"] == "same" and "request_digest" not in shown.json()


async def test_profile_create_and_get(api: AsyncCellWarClient, gateway: str):
    created = await api.create_profile("alice")
    assert set(created) == {"profile_id", "profile_token"}
    profile = await api.profile(created["profile_token"])
    assert profile["profile_id"] == created["profile_id"]
    assert (profile["name"], profile["unlocked"], profile["best"]) == ("alice", 1, {})

    async with httpx.AsyncClient(base_url=gateway) as http:
        anonymous = await http.post("/profiles")  # no body: a nameless profile
        assert anonymous.status_code == 201
        missing = await http.get("/profile")
        forged = await http.get("/profile", headers={"Authorization": "Bearer nope"})
        too_long = await http.post("/profiles", json={"name": "x" * 41})
    assert anonymous.json()["profile_id"] != created["profile_id"]
    assert (missing.status_code, missing.json()["error"]["code"]) == (401, "UNAUTHORIZED")
    assert (forged.status_code, forged.json()["error"]["code"]) == (401, "UNAUTHORIZED")
    assert (too_long.status_code, too_long.json()["error"]["code"]) == (422, "MALFORMED")

    # A player token is not a profile token (another salt), even with the same secret.
    game_id = await api.create_game("campaign", {"level": 1})
    seat = await api.join(game_id, "red")
    with pytest.raises(ApiError) as err:
        await api.profile(seat.token)
    assert (err.value.status, err.value.code) == (401, "UNAUTHORIZED")


async def test_level_list_with_and_without_profile(api: AsyncCellWarClient):
    levels = await api.levels()
    assert [lv["number"] for lv in levels] == list(range(1, 104))
    first = levels[0]
    assert first["name"] == {"en": "Warm-up", "ru": "Разминка"}
    assert (first["width"], first["height"], first["budget"], first["zone"]) == (20, 20, 10, [0, 0, 20, 20])
    assert "(9, 8)" in first["hint"]["en"]
    assert all("enemy" not in lv and "unlocked" not in lv for lv in levels)
    assert any(lv["hopeless"] for lv in levels)

    profile = await api.create_profile("bob")
    mine = await api.levels(profile["profile_token"])
    assert [lv["unlocked"] for lv in mine[:3]] == [True, False, False]
    assert sum(lv["unlocked"] for lv in mine) == 1
    assert all(lv["best"] is None for lv in mine)


async def test_locked_level_is_refused(api: AsyncCellWarClient, gateway: str):
    profile = await api.create_profile()
    with pytest.raises(ApiError) as err:
        await api.create_campaign(2, profile["profile_token"])
    assert (err.value.status, err.value.code) == (409, "LEVEL_LOCKED")
    with pytest.raises(ApiError) as err:
        await api.create_campaign(103, profile["profile_token"])
    assert err.value.code == "LEVEL_LOCKED"
    # Without a profile any level can be played (nothing is recorded).
    game_id = await api.create_campaign(2)
    seat = await api.join(game_id, "red")
    assert (await api.state(game_id, seat.token))["level"] == 2
    # A forged profile header is refused, not ignored.
    async with httpx.AsyncClient(base_url=gateway) as http:
        response = await http.post(
            "/game/create",
            json={"kind": "campaign", "config": {"level": 1}},
            headers={"X-Profile-Token": "forged"},
        )
    assert (response.status_code, response.json()["error"]["code"]) == (401, "UNAUTHORIZED")


async def test_enemy_cells_cannot_be_painted_stamped_or_erased(api: AsyncCellWarClient):
    profile = await api.create_profile()
    game_id = await api.create_campaign(1, profile["profile_token"])
    seat = await api.join(game_id, "red")
    start = await api.state(game_id, seat.token)
    assert cells_of(start, "B") == LEVEL1_ENEMY and start["enemy_cells"] == 4
    assert start["players"][0]["budget_left"] == 10

    # A stamp, place or erase wholly on the enemy would change nothing: refused with
    # NO_CHANGE (no-ops are refused with one code, docs/architecture/contracts.md), nothing
    # recorded.
    for action in (
        {"type": "stamp", "pattern": "block", "x": 9, "y": 9, "rotation": 0},
        {"type": "place", "cells": [[9, 9], [10, 10]]},
        {"type": "erase", "cells": [[9, 9], [10, 9], [9, 10], [10, 10]]},
    ):
        with pytest.raises(ApiError) as err:
            await api.act(game_id, seat.token, action)
        assert (err.value.status, err.value.code) == (409, "NO_CHANGE"), action["type"]
        view = await api.state(game_id, seat.token)
        assert view["seq"] == start["seq"], action["type"]
        assert cells_of(view, "B") == LEVEL1_ENEMY, action["type"]
        assert cells_of(view, "A") == set(), action["type"]
        assert view["players"][0]["budget_left"] == 10, action["type"]

    # A stamp over the enemy's corner places only the free cells and charges only them.
    view = (await api.stamp(game_id, seat.token, 8, 8, "block"))["view"]
    assert cells_of(view, "A") == {(8, 8), (9, 8), (8, 9)}
    assert cells_of(view, "B") == LEVEL1_ENEMY
    assert view["players"][0]["budget_left"] == 7

    # Restart puts the level back as it was.
    view = (await api.simple(game_id, seat.token, "restart"))["view"]
    assert (view["phase"], view["players"][0]["budget_left"]) == ("placement", 10)
    assert cells_of(view, "A") == set() and cells_of(view, "B") == LEVEL1_ENEMY


async def test_level_1_won_unlocks_level_2_and_can_be_restarted(api: AsyncCellWarClient):
    profile = await api.create_profile("winner")
    token = profile["profile_token"]

    game_id, seat_token, final = await win_level_1(api, token)

    assert (final["result"], final["winner"], final["enemy_cells"]) == ("win", 1, 0)
    assert final["generation"] == SOLUTIONS[1]["generations"]
    events = await api.events(game_id, seat_token)
    assert events[-1]["type"] == "GameFinished" and events[-1]["payload"]["result"] == "win"

    progress = await api.profile(token)
    assert progress["unlocked"] == 2
    assert progress["best"] == {"1": {"result": "win", "generation": 4, "budget_left": 9}}
    levels = await api.levels(token)
    assert [lv["unlocked"] for lv in levels[:3]] == [True, True, False]
    assert levels[0]["best"] == {"result": "win", "generation": 4, "budget_left": 9}

    # Level 2 is open now; a finished level accepts restart.
    level2 = await api.create_campaign(2, token)
    assert level2
    view = (await api.simple(game_id, seat_token, "restart"))["view"]
    assert (view["phase"], view["result"], view["players"][0]["budget_left"]) == ("placement", None, 10)
    # Losing the restarted level afterwards keeps the better finish (the win).
    resigned = (await api.simple(game_id, seat_token, "resign"))["view"]
    assert (resigned["phase"], resigned["result"]) == ("finished", "loss")
    assert (await api.profile(token))["best"]["1"]["result"] == "win"
    assert (await api.profile(token))["unlocked"] == 2


async def test_level_lost_when_the_budget_is_spent_far_from_the_enemy(api: AsyncCellWarClient):
    profile = await api.create_profile("loser")
    token = profile["profile_token"]
    game_id = await api.create_campaign(1, token)
    seat = await api.join(game_id, "red")
    placed = await api.place(game_id, seat.token, LONE_CELLS)
    assert placed["view"]["players"][0]["budget_left"] == 0
    await api.end_turn(game_id, seat.token)

    final = await wait_finished(api, game_id, seat.token)

    assert (final["result"], final["winner"]) == ("loss", None)
    assert cells_of(final, "B") == LEVEL1_ENEMY and cells_of(final, "A") == set()
    progress = await api.profile(token)
    assert progress["unlocked"] == 1
    assert progress["best"]["1"]["result"] == "loss"
    assert progress["best"]["1"]["budget_left"] == 0
    with pytest.raises(ApiError) as err:
        await api.create_campaign(2, token)
    assert err.value.code == "LEVEL_LOCKED"


async def test_concurrent_finishes_all_count(nats_url: str):
    """Revision-checked updates: finishes recorded at once for one profile all land."""
    nc = await nats.connect(nats_url)
    try:
        profiles = Profiles(await kv.ensure_bucket(nc.jetstream(), kv.PROFILES))
        profile_id, _ = await profiles.create("racer")
        await asyncio.gather(
            *(profiles.record(profile_id, n, "win", 10 + n, 1, 103) for n in range(1, 9)),
            profiles.record(profile_id, 1, "win", 3, 5, 103),
        )
        stored = await profiles.get(profile_id)
        assert stored["unlocked"] == 9
        assert sorted(stored["best"], key=int) == [str(n) for n in range(1, 9)]
        assert stored["best"]["1"] == {"result": "win", "generation": 3, "budget_left": 5}
        # Recording the same finish again changes nothing (idempotent).
        again = await profiles.record(profile_id, 8, "win", 18, 1, 103)
        assert again == stored
        # The last level never unlocks a level 104.
        last = await profiles.record(profile_id, 103, "win", 50, 0, 103)
        assert last["unlocked"] == 103
    finally:
        await nc.close()


@pytest.fixture
async def own_nats(tmp_path: Path) -> AsyncIterator[NatsProcess]:
    """A NATS of this test alone, with its store in ``tmp_path`` (kept across restarts)."""
    proc = NatsProcess(tmp_path / "nats").start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.mark.nats  # a NATS of its own (own_nats), not the nats_url fixture
async def test_progress_survives_session_and_nats_restarts(own_nats: NatsProcess):
    stack = await start_stack(own_nats.url)
    try:
        async with serve(create_app(Settings(session_addr=stack.session_target, secret=TEST_SECRET))) as url:
            async with AsyncCellWarClient(url, timeout=30) as api:
                profile = await api.create_profile("carol")
                token = profile["profile_token"]
                game_id, seat_token, final = await win_level_1(api, token)
                assert final["result"] == "win"
                assert (await api.profile(token))["unlocked"] == 2
    finally:
        await stack.stop()

    own_nats.stop()
    own_nats.start()
    stack = await start_stack(own_nats.url)
    try:
        async with serve(create_app(Settings(session_addr=stack.session_target, secret=TEST_SECRET))) as url:
            async with AsyncCellWarClient(url, timeout=30) as api:
                progress = await api.profile(token)
                assert progress["unlocked"] == 2
                assert progress["best"]["1"] == {"result": "win", "generation": 4, "budget_left": 9}
                # Loading the finished game again re-applies its win: nothing changes.
                view = await api.state(game_id, seat_token)
                assert (view["phase"], view["result"]) == ("finished", "win")
                assert await api.profile(token) == progress
                # The unlocked level can be started after the restarts.
                assert await api.create_campaign(2, token)
                # A session restart alone (same NATS) keeps it too.
                await stack.restart_session()
        async with serve(create_app(Settings(session_addr=stack.session_target, secret=TEST_SECRET))) as url:
            async with AsyncCellWarClient(url, timeout=30) as api:
                assert (await api.profile(token))["unlocked"] == 2
    finally:
        await stack.stop()


def test_profile_json_shape_is_documented():
    """The stored profile keeps only the documented keys (a unit check of the merge)."""
    from services.session.adapters.profiles import merge_finish, new_profile

    fresh = new_profile("dora")
    won = merge_finish(fresh, 1, "win", 4, 9, 103)
    assert set(won) == {"name", "unlocked", "best", "created_at"}
    assert (won["name"], won["unlocked"], won["created_at"]) == ("dora", 2, fresh["created_at"])
    lost_later = merge_finish(won, 1, "loss", 2, 0, 103)
    assert lost_later == won
    faster = merge_finish(won, 1, "win", 3, 2, 103)
    assert faster["best"]["1"] == {"result": "win", "generation": 3, "budget_left": 2}
    assert json.loads(json.dumps(faster)) == faster
