"""Quick match and the leaderboard (DESIGN §11).

The screens appear only where the gateway serves the matchmaker's endpoints (its
OpenAPI document lists /matchmaking/queues). Where it does, two browsers press Quick
match and land in the same game. Where it does not (the matchmaker is being built in
parallel), the buttons stay hidden, and the screens are checked against the contract
with the endpoints answered in the browser (``page.route``): the ticket, the waiting
screen with the queue's statistics, Cancel, a match that opens a real game of the stack
by itself (Life and CellWar), and the leaderboard's rows."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from tests.browser.lifekit import wait_snapshot, watch

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]


def has_matchmaking(live_url: str) -> bool:
    paths = httpx.get(f"{live_url}/openapi.json", timeout=10).json().get("paths", {})
    return "/matchmaking/queues" in paths


def test_quick_match_two_browsers_same_game(browser, live_url, problems) -> None:
    from playwright.sync_api import expect

    if not has_matchmaking(live_url):
        # Without a matchmaker the start screen offers neither screen.
        ctx = browser.new_context()
        try:
            page = ctx.new_page()
            watch(page, problems)
            page.goto(live_url + "/")
            assert page.evaluate("window.cellwarModes.matchmaking()") is False
            expect(page.get_by_test_id("mode-quickmatch")).to_be_hidden()
            expect(page.get_by_test_id("mode-leaderboard")).to_be_hidden()
        finally:
            ctx.close()
        assert problems.all() == []
        return
    pages, contexts = [], []
    try:
        for _ in range(2):
            ctx = browser.new_context()
            contexts.append(ctx)
            p = ctx.new_page()
            watch(p, problems)
            p.goto(live_url + "/")
            p.get_by_test_id("mode-quickmatch").click()
            p.get_by_test_id("qm-kind").select_option("life")
            p.get_by_test_id("qm-players").select_option("2")
            p.get_by_test_id("qm-start").click()
            expect(p.get_by_test_id("qm-wait")).to_be_visible()
            pages.append(p)
        for p in pages:
            wait_snapshot(p, "s.online && s.gameId", timeout=30_000)
        ids = {p.evaluate("window.cellwar.snapshot().gameId") for p in pages}
        assert len(ids) == 1, ids
        assert {p.evaluate("window.cellwar.snapshot().me") for p in pages} == {1, 2}
    finally:
        for ctx in contexts:
            ctx.close()
    assert problems.all() == []


def _seat_game(base: str, kind: str) -> tuple[str, dict]:
    """A real 2-player game with seat 1 taken by somebody else; seat 2's join answer."""
    config = {"width": 30, "height": 30} if kind == "life" else {"width": 8, "height": 8, "disconnect_timeout_s": 86400}
    with httpx.Client(base_url=base, timeout=10) as c:
        key = {"Idempotency-Key": str(uuid.uuid4())}
        gid = c.post("/game/create", json={"kind": kind, "config": config}, headers=key).json()["game_id"]
        c.post(f"/game/{gid}/join", json={"name": "Stranger"}, headers={"Idempotency-Key": str(uuid.uuid4())})
        seat = c.post(f"/game/{gid}/join", json={"name": "Me"}, headers={"Idempotency-Key": str(uuid.uuid4())}).json()
    return gid, seat


def _stub_matchmaker(page, live_url: str, match: dict) -> dict:
    """Answer the matchmaker's endpoints in the page as DESIGN §11 describes them; the
    ticket is matched to `match` on its third poll. Returns what the page asked."""
    asked: dict = {"tickets": [], "deletes": 0, "polls": 0}
    doc = httpx.get(f"{live_url}/openapi.json", timeout=10).json()
    doc["paths"]["/matchmaking/queues"] = {}
    page.route("**/openapi.json", lambda route: route.fulfill(json=doc))
    queues = [{"kind": "life", "players": 2, "waiting": 3, "in_games": 8, "matches_last_minute": 2,
               "median_wait_s": 4.2, "p90_wait_s": 11.0},
              {"kind": "cellwar", "players": 2, "waiting": 1, "in_games": 2, "matches_last_minute": 0,
               "median_wait_s": 9, "p90_wait_s": 30}]
    page.route("**/matchmaking/queues", lambda route: route.fulfill(json={"queues": queues}))

    def tickets(route) -> None:
        asked["tickets"].append({"body": json.loads(route.request.post_data or "{}"),
                                 "profile": route.request.headers.get("x-profile-token")})
        route.fulfill(status=201, json={"ticket_id": f"t{len(asked['tickets'])}", "ticket_token": "tok"})

    def ticket(route) -> None:
        if route.request.method == "DELETE":
            asked["deletes"] += 1
            route.fulfill(status=204, body="")
            return
        assert route.request.headers.get("authorization") == "Bearer tok"
        asked["polls"] += 1
        tid = route.request.url.rsplit("/", 1)[1]
        if tid == "t1":  # the first ticket is cancelled by the test
            route.fulfill(json={"status": "searching", "wait_s": 2, "queue": "life:2"})
        elif asked["polls"] >= 3:
            route.fulfill(json={"status": "matched", "wait_s": 5, "queue": "x", "match": match})
        else:
            route.fulfill(json={"status": "searching", "wait_s": 3, "queue": "x"})

    page.route("**/matchmaking/tickets", tickets)
    page.route("**/matchmaking/tickets/*", ticket)
    rows = [{"profile_id": "a", "name": "alice", "rating": 31.25, "games": 14},
            {"profile_id": "b", "name": "bob", "rating": 25.0, "games": 3}]
    page.route("**/leaderboard?*", lambda route: route.fulfill(json=rows))
    return asked


@pytest.mark.parametrize("kind", ["life", "cellwar"])
def test_quick_match_screens_against_the_contract(page, live_url, problems, kind) -> None:
    from playwright.sync_api import expect

    if has_matchmaking(live_url):
        pytest.skip("the gateway has the matchmaker: the two-browser test covers it")
    gid, seat = _seat_game(live_url, kind)
    asked = _stub_matchmaker(
        page, live_url, {"game_id": gid, "player_id": seat["player_id"], "player_token": seat["player_token"]}
    )
    page.goto(live_url + "/")
    expect(page.get_by_test_id("mode-quickmatch")).to_be_visible()

    # A ticket, its waiting screen with the queue's statistics, then Cancel.
    page.get_by_test_id("mode-quickmatch").click()
    page.get_by_test_id("qm-kind").select_option("life")
    page.get_by_test_id("qm-name").fill("Me")
    page.get_by_test_id("qm-start").click()
    expect(page.get_by_test_id("qm-wait")).to_be_visible()
    expect(page.get_by_test_id("qm-status")).to_have_text("Searching for players…")
    expect(page.locator("#qm-queue dd[data-key='qm.waiting']")).to_have_text("3")
    expect(page.locator("#qm-queue dd[data-key='qm.median']")).to_have_text("4 s")
    expect(page.get_by_test_id("qm-elapsed")).not_to_have_text("0:00")
    assert asked["tickets"][0]["body"] == {"kind": "life", "players": 2, "name": "Me"}
    page.get_by_test_id("qm-cancel").click()
    expect(page.get_by_test_id("qm-form")).to_be_visible()
    page.wait_for_function("() => !localStorage.getItem('cellwar.mm.v1')")
    assert asked["deletes"] == 1

    # The second ticket is matched: the game opens by itself.
    page.get_by_test_id("qm-kind").select_option(kind)
    page.get_by_test_id("qm-start").click()
    if kind == "life":
        wait_snapshot(page, f"s.gameId === '{gid}' && s.online && s.me === {seat['player_id']}")
        expect(page.get_by_test_id("screen-game")).to_be_visible()
        expect(page.get_by_test_id("online-status")).to_contain_text("Waiting for")
    else:
        page.wait_for_function(
            f"() => {{ const s = window.cellwarModes.cellwar(); return s && s.gameId === '{gid}'; }}"
        )
        expect(page.get_by_test_id("screen-cw")).to_be_visible()
        expect(page.get_by_test_id("cw-turn")).to_contain_text("Stranger")
    assert asked["tickets"][1]["body"]["kind"] == kind

    # The leaderboard.
    if kind == "life":
        page.get_by_test_id("btn-menu").click()
        page.get_by_test_id("mode-leaderboard").click()
        expect(page.locator("#lb-rows tr")).to_have_count(2)
        expect(page.locator("#lb-rows tr").first).to_contain_text("alice")
        expect(page.locator("#lb-rows tr").first).to_contain_text("31.3")
    assert problems.all() == []
