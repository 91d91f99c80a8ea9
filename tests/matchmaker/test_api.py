"""Matchmaking through the public API (docs/architecture/matchmaking.md): a real gateway, a real matchmaker, the
real session and engine, a real NATS."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest
import websockets

from client.sdk import ApiError, AsyncCellWarClient, ticket_stream_url
from tests.matchmaker.conftest import eventually, private_config, start_matchmaker

pytestmark = pytest.mark.integration


async def _matched(api: AsyncCellWarClient, ticket: dict) -> dict | None:
    t = await api.ticket(ticket["ticket_id"], ticket["ticket_token"])
    return t if t["status"] == "matched" else None


async def test_two_compatible_tickets_get_the_same_game(mm_api: AsyncCellWarClient):
    config = private_config()
    alice = await mm_api.create_ticket("life", 2, "alice", config)
    bob = await mm_api.create_ticket("life", 2, "bob", {**config, "torus": True})
    a = await eventually(lambda: _matched(mm_api, alice), what="alice matched")
    b = await eventually(lambda: _matched(mm_api, bob), what="bob matched")
    assert a["match"]["game_id"] == b["match"]["game_id"]
    assert {a["match"]["player_id"], b["match"]["player_id"]} == {1, 2}
    assert a["match"]["player_id"] == 1  # the older ticket takes the first seat
    assert a["queue"] == "life-2" and a["wait_s"] >= 0
    # The player token the gateway signed is a seat of that game.
    view = await mm_api.state(a["match"]["game_id"], a["match"]["player_token"])
    assert view["you"] == 1
    assert [p["name"] for p in view["players"]] == ["alice", "bob"]
    assert view["torus"] is True  # a field set by one ticket is taken
    assert view["phase"] == "placement"  # every seat joined: the game started
    assert view["turn_deadline"] is not None  # matchmade games have turn timers (90 s)
    created = (await mm_api.events(a["match"]["game_id"], a["match"]["player_token"]))[0]
    assert created["payload"]["config"]["turn_time_s"] == 90


async def test_a_ticket_may_ask_for_another_turn_time_within_bounds(mm_api: AsyncCellWarClient):
    config = {**private_config("cellwar"), "turn_time_s": 30}
    seats = await asyncio.gather(
        *(mm_api.find_match("cellwar", 2, f"c{i}", config, timeout=120) for i in range(2))
    )
    assert seats[0].game_id == seats[1].game_id
    view = await mm_api.state(seats[0].game_id, seats[0].token)
    created = (await mm_api.events(seats[0].game_id, seats[0].token))[0]
    assert created["payload"]["config"]["turn_time_s"] == 30
    assert view["phase"] == "playing" and view["turn_deadline"] is not None


async def test_four_clients_for_a_four_player_life_queue(mm_api: AsyncCellWarClient):
    config = private_config()
    seats = await asyncio.gather(
        *(mm_api.find_match("life", 4, f"p{i}", config, timeout=120) for i in range(4))
    )
    assert len({s.game_id for s in seats}) == 1
    assert sorted(s.player_id for s in seats) == [1, 2, 3, 4]
    view = await mm_api.state(seats[0].game_id, seats[0].token)
    assert len(view["players"]) == 4


async def test_tickets_whose_configs_disagree_are_never_matched(mm_api: AsyncCellWarClient):
    config = private_config()
    small = await mm_api.create_ticket("life", 2, "small", {**config, "width": 40})
    large = await mm_api.create_ticket("life", 2, "large", {**config, "width": 80})
    other = await mm_api.create_ticket("life", 2, "other", {**config, "width": 40})
    s = await eventually(lambda: _matched(mm_api, small), what="small matched")
    o = await eventually(lambda: _matched(mm_api, other), what="other matched")
    assert s["match"]["game_id"] == o["match"]["game_id"]
    # Many matching steps later the disagreeing ticket is still alone.
    await asyncio.sleep(1.0)
    still = await mm_api.ticket(large["ticket_id"], large["ticket_token"])
    assert still["status"] == "searching" and still["match"] is None
    view = await mm_api.state(s["match"]["game_id"], s["match"]["player_token"])
    assert view["width"] == 40
    await mm_api.cancel_ticket(large["ticket_id"], large["ticket_token"])


async def test_a_cancelled_ticket_is_never_matched(mm_api: AsyncCellWarClient):
    config = private_config()
    gone = await mm_api.create_ticket("life", 2, "gone", config)
    cancelled = await mm_api.cancel_ticket(gone["ticket_id"], gone["ticket_token"])
    assert cancelled["status"] == "cancelled" and cancelled["reason"] == "cancelled"
    one = await mm_api.create_ticket("life", 2, "one", config)
    two = await mm_api.create_ticket("life", 2, "two", config)
    await eventually(lambda: _matched(mm_api, one), what="one matched")
    t2 = await eventually(lambda: _matched(mm_api, two), what="two matched")
    assert t2["match"]["player_id"] == 2
    after = await mm_api.ticket(gone["ticket_id"], gone["ticket_token"])
    assert after["status"] == "cancelled" and after["match"] is None
    # Cancelling again answers the same; a matched ticket cannot be cancelled.
    assert (await mm_api.cancel_ticket(gone["ticket_id"], gone["ticket_token"]))["status"] == "cancelled"
    with pytest.raises(ApiError) as err:
        await mm_api.cancel_ticket(two["ticket_id"], two["ticket_token"])
    assert (err.value.status, err.value.code) == (409, "ALREADY_MATCHED")


async def test_one_searching_ticket_per_profile_and_queue(mm_api: AsyncCellWarClient):
    profile = await mm_api.create_profile("carol")
    token = profile["profile_token"]
    config = private_config()
    first = await mm_api.create_ticket("life", 2, "carol", config, profile_token=token)
    with pytest.raises(ApiError) as err:
        await mm_api.create_ticket("life", 2, "carol", config, profile_token=token)
    assert (err.value.status, err.value.code) == (409, "ALREADY_QUEUED")
    # Another queue is another place in line.
    other = await mm_api.create_ticket("cellwar", 3, "carol", private_config("cellwar"), profile_token=token)
    await mm_api.cancel_ticket(first["ticket_id"], first["ticket_token"])
    again = await mm_api.create_ticket("life", 2, "carol", config, profile_token=token)
    assert again["ticket_id"] != first["ticket_id"]
    for t in (other, again):
        await mm_api.cancel_ticket(t["ticket_id"], t["ticket_token"])


async def test_an_idempotency_key_gives_the_same_ticket(mm_api: AsyncCellWarClient):
    config = private_config()
    key = f"mm-key-{uuid.uuid4()}"
    a = await mm_api.create_ticket("life", 2, "dave", config, idempotency_key=key)
    b = await mm_api.create_ticket("life", 2, "dave", config, idempotency_key=key)
    assert a["ticket_id"] == b["ticket_id"]
    for players, name in ((4, "dave"), (2, "someone else")):  # the key with another ticket
        with pytest.raises(ApiError) as reused:
            await mm_api.create_ticket("life", players, name, config, idempotency_key=key)
        assert (reused.value.status, reused.value.code) == (422, "IDEMPOTENCY_KEY_REUSED")
    assert (await mm_api.ticket(a["ticket_id"], a["ticket_token"]))["players"] == 2
    await mm_api.cancel_ticket(a["ticket_id"], a["ticket_token"])


async def test_errors_have_codes_and_change_nothing(mm_api: AsyncCellWarClient, mm_url: str):
    t = await mm_api.create_ticket("life", 2, "erin", private_config())
    other = await mm_api.create_ticket("life", 2, "erin2", private_config())
    async with httpx.AsyncClient(base_url=mm_url) as http:
        cases = [
            (await http.get(f"/matchmaking/tickets/{t['ticket_id']}"), 401, "UNAUTHORIZED"),
            (await http.get(f"/matchmaking/tickets/{t['ticket_id']}",
                            headers={"Authorization": "Bearer forged"}), 401, "UNAUTHORIZED"),
            (await http.delete(f"/matchmaking/tickets/{t['ticket_id']}",
                               headers={"Authorization": f"Bearer {other['ticket_token']}"}), 403, "FORBIDDEN"),
            (await http.post("/matchmaking/tickets", json={"kind": "life", "players": 3, "name": "x"}),
             422, "MALFORMED"),
            (await http.post("/matchmaking/tickets", json={"kind": "campaign", "players": 1, "name": "x"}),
             422, "MALFORMED"),
            (await http.post("/matchmaking/tickets",
                             json={"kind": "life", "players": 2, "name": "x", "config": {"players": 2}}),
             422, "MALFORMED"),
            (await http.post("/matchmaking/tickets",
                             json={"kind": "life", "players": 2, "name": "x", "config": {"width": 3}}),
             422, "MALFORMED"),
            # Fits the schema; the rules refuse it (no default start for 6 on 5 columns): 409.
            (await http.post("/matchmaking/tickets",
                             json={"kind": "cellwar", "players": 6, "name": "x", "config": {"width": 5}}),
             409, "INVALID_CONFIG"),
            (await http.post("/matchmaking/tickets", json={"kind": "life", "players": 2, "name": ""}),
             422, "MALFORMED"),
            (await http.post("/matchmaking/tickets",
                             json={"kind": "life", "players": 2, "name": "x", "config": {"rated": True}}),
             422, "MALFORMED"),
            (await http.post("/matchmaking/tickets",
                             json={"kind": "cellwar", "players": 2, "name": "x", "config": {"turn_time_s": 5}}),
             422, "MALFORMED"),
            (await http.post("/matchmaking/tickets",
                             json={"kind": "life", "players": 2, "name": "x", "config": {"turn_time_s": 0}}),
             422, "MALFORMED"),
            (await http.post("/matchmaking/tickets", json={"kind": "life", "players": 2, "name": "x"},
                             headers={"X-Profile-Token": "forged"}), 401, "UNAUTHORIZED"),
            (await http.get("/leaderboard", params={"kind": "chess"}), 422, "MALFORMED"),
        ]
        for response, status, code in cases:
            assert (response.status_code, response.json()["error"]["code"]) == (status, code), response.text
    # Nothing changed: the ticket is still searching, and its holder may still cancel it.
    assert (await mm_api.ticket(t["ticket_id"], t["ticket_token"]))["status"] == "searching"
    for x in (t, other):
        await mm_api.cancel_ticket(x["ticket_id"], x["ticket_token"])


async def test_unknown_ticket_is_404(mm_api: AsyncCellWarClient, mm_url: str):
    from gateway.ticket_tokens import TicketSigner
    from tests.api.conftest import TEST_SECRET

    token = TicketSigner(TEST_SECRET).issue("f" * 32)
    with pytest.raises(ApiError) as err:
        await mm_api.ticket("f" * 32, token)
    assert (err.value.status, err.value.code) == (404, "TICKET_NOT_FOUND")


async def test_ticket_stream_pushes_each_status_change(mm_api: AsyncCellWarClient, mm_url: str):
    config = private_config("cellwar")
    first = await mm_api.create_ticket("cellwar", 2, "fay", config)
    url = ticket_stream_url(mm_url, first["ticket_id"], first["ticket_token"])
    messages = []
    async with websockets.connect(url) as ws:
        messages.append(json.loads(await ws.recv()))
        second = await mm_api.create_ticket("cellwar", 2, "gus", config)
        async for raw in ws:
            messages.append(json.loads(raw))
        assert ws.close_code == 1000
    assert [m["status"] for m in messages] == ["searching", "matched"]
    assert all(m["type"] == "ticket" for m in messages)
    seat = messages[-1]["match"]
    view = await mm_api.state(seat["game_id"], seat["player_token"])
    assert view["kind"] == "cellwar" and view["you"] == seat["player_id"]
    t2 = await eventually(lambda: _matched(mm_api, second), what="gus matched")
    assert t2["match"]["game_id"] == seat["game_id"]
    # A bad token: one error frame, then close 4401.
    bad = ticket_stream_url(mm_url, first["ticket_id"], "forged")
    async with websockets.connect(bad) as ws:
        frame = json.loads(await ws.recv())
        with pytest.raises(websockets.ConnectionClosed):
            await ws.recv()
        assert frame["error"]["code"] == "UNAUTHORIZED" and ws.close_code == 4401


async def test_queue_statistics(mm_api: AsyncCellWarClient, matchmaker):
    before = {q["queue"]: q for q in await mm_api.queues()}
    assert set(before) == {"life-2", "life-4", *(f"cellwar-{n}" for n in range(2, 9))}
    config = private_config("cellwar")
    waiting = await mm_api.create_ticket("cellwar", 7, "solo", config)

    def searching(queue):  # the truth, from the matchmaker's own copy of the bucket
        return {
            r["ticket_id"]
            for r, _ in matchmaker.matchmaker.ticket_mirror.entries.values()
            if r["queue"] == queue and r["status"] == "searching"
        }

    async def stats(queue, check):
        q = {q["queue"]: q for q in await mm_api.queues()}[queue]
        return q if check(q) else None

    # Statistics are recomputed every half second: wait for them (other tests' tickets
    # may still search in the same queue, so compare with the bucket).
    assert waiting["ticket_id"] in searching("cellwar-7")
    await eventually(lambda: stats("cellwar-7", lambda q: q["waiting"] == len(searching("cellwar-7"))),
                     what="waiting counts the searching tickets")
    seats = await asyncio.gather(*(mm_api.find_match("cellwar", 5, f"c{i}", config, timeout=120) for i in range(5)))
    assert len({s.game_id for s in seats}) == 1
    played = await eventually(
        lambda: stats(
            "cellwar-5",
            lambda q: q["matches_last_minute"] >= before["cellwar-5"]["matches_last_minute"] + 1
            and q["in_games"] >= before["cellwar-5"]["in_games"] + 5,
        ),
        what="a match in the last minute, five players in games",
    )
    assert played["median_wait_s"] is not None and played["p90_wait_s"] >= played["median_wait_s"] >= 0
    await mm_api.cancel_ticket(waiting["ticket_id"], waiting["ticket_token"])
    assert waiting["ticket_id"] not in searching("cellwar-7")
    await eventually(lambda: stats("cellwar-7", lambda q: q["waiting"] == len(searching("cellwar-7"))),
                     what="a cancelled ticket no longer waits")


async def test_a_ticket_expires_after_its_ttl(stack):
    app = await start_matchmaker(stack, ticket_ttl_s=1.0)
    try:
        mm = app.matchmaker
        ticket = await mm.create_ticket("cellwar", 8, private_config("cellwar"), "late")

        async def expired():
            t = await mm.get_ticket(ticket["ticket_id"])
            return t if t["status"] == "expired" else None

        t = await eventually(expired, what="ticket expired")
        assert t["reason"] == "ttl" and t["match"] is None
    finally:
        await app.stop(grace=0.2)


async def test_without_a_matchmaker_tickets_are_503_and_the_profile_still_answers(stack):
    from gateway.app import create_app
    from services.common.settings import Settings
    from tests.api.conftest import TEST_SECRET, serve
    from tests.support.nats import free_port

    settings = Settings(
        session_addr=stack.session_target, matchmaker_addr=f"127.0.0.1:{free_port()}", secret=TEST_SECRET
    )
    async with serve(create_app(settings)) as url, AsyncCellWarClient(url) as api:
        with pytest.raises(ApiError) as err:
            await api.create_ticket("life", 2, "nobody")
        assert (err.value.status, err.value.code) == (503, "UNAVAILABLE")
        assert "matchmaker" in err.value.message
        profile = await api.create_profile("still-here")
        got = await api.profile(profile["profile_token"])
        assert got["name"] == "still-here" and got["ratings"] is None
