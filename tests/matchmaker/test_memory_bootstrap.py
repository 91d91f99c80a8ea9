"""A whole matchmaker built by ``bootstrap(memory_ports(), settings)``: no NATS, no
session server. Tickets are matched, the game is created and joined through the
in-memory session, the game is recorded in ``MATCH_GAMES``, the finished game is rated
by the ratings projection, and the ratings are read back (leaderboard, a profile's
ratings, the rating a new ticket starts with). Also the in-memory bucket's revision and
compare-and-set semantics the service layer relies on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from services.common.errors import ServiceError
from services.common.settings import Settings
from services.matchmaker import service as service_module
from services.matchmaker.bootstrap import MatchmakerCore, bootstrap, memory_ports
from services.matchmaker.domain import MatchErrorCode
from services.matchmaker.memory import MemoryBucket, MemoryEventLog, MemorySession, key_matches
from services.matchmaker.store import Conflict, MatchEvent, Mirror, decision_key, ticket_key
from tests.matchmaker.conftest import eventually

SETTINGS = Settings(matchmaker_interval_s=0.02, match_claim_timeout_s=3.0)


@pytest.fixture
async def core() -> AsyncIterator[MatchmakerCore]:
    built = bootstrap(memory_ports(), SETTINGS)
    await built.start()
    try:
        yield built
    finally:
        await built.stop()
        await built.ports.close()


async def _matched(core: MatchmakerCore, ticket_id: str) -> dict | None:
    t = await core.matchmaker.get_ticket(ticket_id)
    return t if t["status"] == "matched" else None


async def test_tickets_are_matched_into_a_game_that_is_rated_and_read_back(core: MatchmakerCore):
    mm, session = core.matchmaker, core.ports.session
    assert isinstance(session, MemorySession)
    a = await mm.create_ticket("life", 2, {"budget": 11}, "ann", profile_id="pa")
    b = await mm.create_ticket("life", 2, {}, "bob", profile_id="pb")
    assert a["rating"] == b["rating"] == 1500.0 and a["status"] == "searching"

    ta = await eventually(lambda: _matched(core, a["ticket_id"]), timeout=10, what="ann matched")
    tb = await eventually(lambda: _matched(core, b["ticket_id"]), timeout=10, what="bob matched")
    game_id = ta["match"]["game_id"]
    assert tb["match"]["game_id"] == game_id and ta["match"]["match_id"] == tb["match"]["match_id"]
    # The game the session made: the queue's players, the ticket's field, the timer default.
    game = session.games[game_id]
    assert game["kind"] == "life"
    assert game["config"] == {"budget": 11, "players": 2, "turn_time_s": 90}
    assert sorted(game["seats"]) == ["ann", "bob"]
    seat_of = {name: pid for pid, name in enumerate(game["seats"], start=1)}
    assert {ta["match"]["player_id"], tb["match"]["player_id"]} == {1, 2}
    assert ta["match"]["player_id"] == seat_of["ann"]
    # Recorded in MATCH_GAMES (what makes it rated), in the mirror the statistics read.
    record, _ = await core.ports.games.get(game_id)
    assert record["queue"] == "life-2" and record["rated"] is True and record["finished_at"] is None
    assert {s["profile_id"] for s in record["seats"]} == {"pa", "pb"}
    assert game_id in mm.games_mirror.entries
    life2 = {q["queue"]: q for q in mm.stats.compute(mm.clock())}["life-2"]
    assert life2["in_games"] == 2 and life2["waiting"] == 0 and life2["matches_last_minute"] == 1
    assert mm.matches_formed == 1

    # The game ends (ann wins); the projection rates it as its consumer would.
    session.finish(game_id, winner=seat_of["ann"], cells={seat_of["ann"]: 12, seat_of["bob"]: 3})
    changes = await core.projection.rate(game_id)
    assert {c.profile_id for c in changes} == {"pa", "pb"}
    assert await core.projection.rate(game_id) == changes  # exactly once: same changes, applied once

    async def rated():
        return len(mm.leaderboard("life", 2)) == 2
    await eventually(rated, timeout=10, what="both rated in the leaderboard")
    top = mm.leaderboard("life", 2)
    assert [r["profile_id"] for r in top] == ["pa", "pb"]
    assert top[0]["rating"] > 1500.0 > top[1]["rating"] and top[0]["games"] == top[1]["games"] == 1
    mine = mm.profile_ratings("pa")
    assert [(r["kind"], r["players"], r["games"]) for r in mine] == [("life", 2, 1)]
    assert mine[0]["rating"] == top[0]["rating"]
    assert (await core.ports.games.get(game_id))[0]["finished_at"] is not None
    # A new ticket of ann starts at her rating now.
    again = await mm.create_ticket("life", 2, {"budget": 77}, "ann", profile_id="pa")
    assert again["rating"] == pytest.approx(mm.current_rating("pa", "life-2"))
    assert again["rating"] > 1500.0
    await mm.cancel_ticket(again["ticket_id"])

    events = core.ports.events
    assert isinstance(events, MemoryEventLog)
    assert len(events.of_type(MatchEvent.TICKET_CREATED)) == 3
    assert [e["game_id"] for e in events.of_type(MatchEvent.MATCH_STARTED)] == [game_id]
    assert [e["game_id"] for e in events.of_type(MatchEvent.GAME_RATED)] == [game_id]
    assert len(events.of_type(MatchEvent.TICKET_CANCELLED)) == 1


async def test_a_profile_queues_once_and_a_cancel_aborts_an_undecided_match(core: MatchmakerCore):
    mm = core.matchmaker
    t = await mm.create_ticket("cellwar", 3, {}, "solo", profile_id="px")
    with pytest.raises(ServiceError) as err:
        await mm.create_ticket("cellwar", 3, {}, "solo", profile_id="px")
    assert err.value.code == MatchErrorCode.ALREADY_QUEUED
    # Claim it as a forming instance would, then cancel before any decision.
    key = ticket_key(t["ticket_id"])
    record, revision = await core.ports.tickets.get(key)
    claim = {"match_id": "m-1", "by": "elsewhere", "at": mm.clock()}
    await core.ports.tickets.update(key, {**record, "claim": claim}, revision)
    cancelled = await mm.cancel_ticket(t["ticket_id"])
    assert cancelled["status"] == "cancelled" and cancelled["claim"] is None
    assert (await core.ports.tickets.get(decision_key("m-1")))[0]["state"] == "aborted"
    # The same idempotency key gives the same ticket.
    first = await mm.create_ticket("life", 4, {}, "kim", command_id="k-1")
    assert await mm.create_ticket("life", 4, {}, "kim", command_id="k-1") == first
    await mm.cancel_ticket(first["ticket_id"])


async def test_a_decided_match_whose_session_was_down_is_rolled_forward_in_memory(monkeypatch):
    monkeypatch.setattr(service_module, "COMPLETE_RETRY_S", 0.2)
    session = MemorySession()
    session.fail = ServiceError("UNAVAILABLE", "session down")
    settings = Settings(matchmaker_interval_s=0.02, match_claim_timeout_s=0.5)
    built = bootstrap(memory_ports(session), settings)
    await built.start()
    mm = built.matchmaker
    try:
        a = await mm.create_ticket("cellwar", 2, {"width": 9}, "a")
        b = await mm.create_ticket("cellwar", 2, {"width": 9}, "b")

        async def stuck():  # decided, the completion gave up, a recovery has begun
            return mm.rolled_forward >= 1 and (await mm.get_ticket(a["ticket_id"]))["claim"]

        await eventually(stuck, timeout=10, what="a decided match left to recovery")
        match_id = (await mm.get_ticket(a["ticket_id"]))["claim"]["match_id"]
        assert (await built.ports.tickets.get(decision_key(match_id)))[0]["state"] == "committed"
        assert session.games == {}
        session.fail = None  # back: the stale claims are rolled forward to one game
        ta = await eventually(lambda: _matched(built, a["ticket_id"]), timeout=10, what="a matched")
        tb = await eventually(lambda: _matched(built, b["ticket_id"]), timeout=10, what="b matched")
        assert ta["match"]["match_id"] == tb["match"]["match_id"] == match_id
        assert list(session.games) == [ta["match"]["game_id"]] == [tb["match"]["game_id"]]
        assert session.games[ta["match"]["game_id"]]["seats"] == ["a", "b"]
    finally:
        await built.stop()


async def test_the_memory_bucket_has_kv_revisions_and_fences():
    now = [1000.0]
    bucket = MemoryBucket("B", ttl_s=10.0, clock=lambda: now[0])
    r1 = await bucket.create("t.a", {"n": 1})
    with pytest.raises(Conflict):
        await bucket.create("t.a", {"n": 2})
    r2 = await bucket.put("t.b", {"n": 1})
    assert r2 == r1 + 1  # one counter per bucket
    with pytest.raises(Conflict):
        await bucket.update("t.a", {"n": 3}, r2)
    r3 = await bucket.update("t.a", {"n": 3}, r1)
    assert await bucket.get("t.a") == ({"n": 3}, r3)
    got, _ = await bucket.get("t.a")
    got["n"] = 99  # a reader's copy
    assert (await bucket.get("t.a"))[0] == {"n": 3}
    await bucket.delete("t.a")
    assert await bucket.get("t.a") is None and await bucket.keys() == ["t.b"]
    r5 = await bucket.create("t.a", {"n": 4})  # a deleted key can be created again
    assert r5 == r3 + 2
    now[0] += 10.0  # past the max age: gone
    assert await bucket.get("t.b") is None and await bucket.keys() == []
    assert await bucket.create("t.b", {"n": 5}) == r5 + 1

    seen: list[tuple[str, dict | None, int]] = []
    mirror = Mirror(bucket, "t.", on_change=lambda k, v, r: seen.append((k, v, r)))
    await mirror.start()
    assert mirror.entries == {"t.b": ({"n": 5}, r5 + 1)}
    await bucket.put("x.c", {"n": 6})
    rev = await bucket.put("t.c", {"n": 7})
    await bucket.delete("t.b")
    await asyncio.sleep(0)  # a watch delivers after the write returns
    assert mirror.entries == {"t.c": ({"n": 7}, rev)}
    assert [k for k, _, _ in seen] == ["t.b", "t.c", "t.b"]
    await mirror.stop()
    assert key_matches("t.>", "t.a.b") and not key_matches("t.>", "t") and key_matches(">", "x")
    assert key_matches("r.*.p", "r.life-2.p") and not key_matches("r.*", "r.a.b")
