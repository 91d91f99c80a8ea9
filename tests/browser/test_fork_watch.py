"""The replay viewer's "Fork from here" and the lobby's "Watch" against the real stack
(docs/replays.md).

Fork: a finished game is opened in the replay viewer, an event is chosen, and "Fork from
here" makes a new game in that state (its ``GameForked`` carries the hash recorded at
that event), takes every seat and opens it hot-seat — Life on the game screen, CellWar on
its own. Watch: the lobby lists a running CellWar game; "Watch" with a 10 s delay shows
nothing until an event is 10 s old, then the board as it was then (every unit: a
spectator sees everything), never newer.
"""

from __future__ import annotations

import time
from datetime import datetime

import httpx
import pytest

from tests.browser.restkit import post
from tests.browser.test_replay import finished_life_game

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


def duel(base: str, p2_x: int, **extra) -> tuple[str, dict[int, str]]:
    """A CellWar 8×8 game, one infantry each on row 0 (player 2 at ``p2_x``), both joined;
    ``extra`` config fields (e.g. ``spectators="live"``)."""
    units = [
        {"owner": 1, "type": "infantry", "x": 0, "y": 0},
        {"owner": 2, "type": "infantry", "x": p2_x, "y": 0},
    ]
    config = {"width": 8, "height": 8, "players": 2, "units": units, **extra}
    with httpx.Client(base_url=base, timeout=10) as c:
        gid = post(c, "/game/create", body={"kind": "cellwar", "config": config})["game_id"]
        tok = {i: post(c, f"/game/{gid}/join", body={"name": f"p{i}"})["player_token"] for i in (1, 2)}
    return gid, tok


def events_of(base: str, gid: str) -> list[dict]:
    r = httpx.get(f"{base}/game/{gid}/events", timeout=10)
    assert r.status_code == 200, r.text
    return r.json()["events"]


def test_fork_a_life_replay_and_play_it_hot_seat(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    gid = finished_life_game(live_url)
    events = events_of(live_url, gid)
    running = [e["seq"] for e in events if e["type"] == "TurnEnded"][-1]  # placement over
    page.goto(f"{live_url}/#replay={gid}")
    page.wait_for_function(f"() => window.cellwarModes.replay().shownSeq === {events[-1]['seq']}")
    expect(page.get_by_test_id("replay-fork")).to_be_disabled()  # the end: nothing to play
    page.get_by_test_id(f"replay-event-{running}").click()
    page.wait_for_function(f"() => window.cellwarModes.replay().shownSeq === {running}")
    expect(page.get_by_test_id("replay-fork")).to_be_enabled()
    page.get_by_test_id("replay-fork").click()
    page.wait_for_function("() => window.cellwar.screen() === 'game'")
    page.wait_for_function(f"() => {{ const s = window.cellwar.snapshot(); return s && s.gameId && s.gameId !== '{gid}'; }}")
    fork = page.evaluate("window.cellwar.snapshot().gameId")
    # the blinker and the block settle again: the fork runs on to redraw, as the original did
    page.wait_for_function("() => ['redraw', 'finished'].includes(window.cellwar.snapshot().phase)", timeout=30_000)
    with httpx.Client(base_url=live_url, timeout=10) as c:
        tokens = page.evaluate("JSON.parse(localStorage.getItem('cellwar.v1')).game.tokens")
        view = c.get(f"/game/{fork}/state", headers={"Authorization": f"Bearer {tokens['1']}"}).json()
        assert [p["name"] for p in view["players"]] == ["p1", "p2"]
        for pid in ("1", "2"):
            post(c, f"/game/{fork}/action", tokens[pid], {"type": "propose_finish"})
    log = events_of(live_url, fork)
    assert log[0]["type"] == "GameForked"
    assert log[0]["state_hash"] == events[running - 1]["state_hash"]
    assert (log[0]["payload"]["from_game"], log[0]["payload"]["from_seq"]) == (gid, running)
    assert [e["type"] for e in log[1:3]] == ["PlayerJoined", "PlayerJoined"]
    assert problems.all() == []


def test_fork_a_cellwar_replay_opens_it_hot_seat(page, live_url, problems) -> None:
    gid, tok = duel(live_url, p2_x=1)
    with httpx.Client(base_url=live_url, timeout=10) as c:
        view = c.get(f"/game/{gid}/state", headers={"Authorization": f"Bearer {tok[1]}"}).json()
        unit = next(u["id"] for u in view["units"] if u["owner"] == 1)
        post(c, f"/game/{gid}/action", tok[1], {"unit_id": unit, "dx": 1, "dy": 0})  # wins at once
    events = events_of(live_url, gid)
    page.goto(f"{live_url}/#replay={gid}")
    page.wait_for_function(f"() => window.cellwarModes.replay().shownSeq === {events[-1]['seq']}")
    page.get_by_test_id("replay-event-3").click()  # both joined, player 1 to move
    page.wait_for_function("() => window.cellwarModes.replay().forkable")
    page.get_by_test_id("replay-fork").click()
    page.wait_for_function("() => window.cellwarModes.screen() === 'cw'")
    page.wait_for_function(
        f"() => {{ const s = window.cellwarModes.cellwar(); return s && s.gameId && s.gameId !== '{gid}' && s.phase === 'playing'; }}"
    )
    fork = page.evaluate("window.cellwarModes.cellwar().gameId")
    r = httpx.get(f"{live_url}/game/{fork}/events", timeout=10)
    assert r.status_code == 403  # a running CellWar fork keeps its fog from spectators
    seats = page.evaluate("Object.keys(JSON.parse(localStorage.getItem('cellwar.cw.v1')).tokens)")
    assert sorted(seats) == ["1", "2"]
    assert problems.all() == []


def test_lobby_watch_shows_a_cellwar_game_ten_seconds_late(page, live_url, problems) -> None:
    from playwright.sync_api import expect

    gid, tok = duel(live_url, p2_x=7, spectators="live")
    page.goto(live_url + "/")
    page.get_by_test_id("mode-lobby").click()
    expect(page.get_by_test_id(f"lobby-game-{gid}")).to_be_visible()
    page.get_by_test_id("lobby-delay").select_option("10")
    opened = time.time()
    page.get_by_test_id(f"lobby-watch-{gid}").click()
    expect(page.get_by_test_id("watch-message")).to_be_visible()  # nothing 10 s old yet
    assert page.evaluate("window.cellwarModes.watch().frames") == 0
    with httpx.Client(base_url=live_url, timeout=10) as c:  # player 1 moves meanwhile
        view = c.get(f"/game/{gid}/state", headers={"Authorization": f"Bearer {tok[1]}"}).json()
        unit = next(u["id"] for u in view["units"] if u["owner"] == 1)
        post(c, f"/game/{gid}/action", tok[1], {"unit_id": unit, "dx": 1, "dy": 0})
    page.wait_for_function("() => window.cellwarModes.watch().frames > 0", timeout=30_000)
    seen = page.evaluate("window.cellwarModes.watch()")
    shown_at = time.time()
    times = {e["seq"]: datetime.fromisoformat(e["time"]).timestamp() for e in _log_as_player(live_url, gid, tok)}
    assert shown_at - times[seen["seq"]] >= 10 - 0.5
    assert len(seen["view"]["units"]) == 2  # a spectator sees every unit
    expect(page.get_by_test_id("watch-board-cw")).to_be_visible()
    assert shown_at - opened < 30
    page.get_by_test_id("watch-menu").click()
    expect(page.get_by_test_id("screen-lobby")).to_be_visible()
    assert problems.all() == []


def _log_as_player(base: str, gid: str, tok: dict[int, str]) -> list[dict]:
    """The game's events with their times: a running CellWar log is readable by a player
    only (fog-filtered, numbered in the player's own sequence, which here is the game's:
    player 1 observed every event so far)."""
    r = httpx.get(f"{base}/game/{gid}/events", headers={"Authorization": f"Bearer {tok[1]}"}, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()["events"]

