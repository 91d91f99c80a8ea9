"""The service layer's failure paths with an in-memory session behind the SessionPort
Protocol (real NATS buckets): a session that is down while a decided match is completed
(the claims go stale and the match is rolled forward), a session that refuses a config,
a claimed ticket cancelled before its match is decided, an undecided stale claim."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterator
from typing import Any

import nats
import pytest

from services.common.errors import ServiceError
from services.matchmaker import service as service_module
from services.matchmaker import store
from services.matchmaker.domain import Match
from services.matchmaker.service import Matchmaker, MatchmakerOptions
from tests.matchmaker.conftest import eventually
from tests.support.nats import NatsProcess

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def nats_url(tmp_path_factory) -> Iterator[str]:
    """A NATS of this module's own (its games are fakes: nobody else may match them)."""
    with NatsProcess(tmp_path_factory.mktemp("nats-forming")) as proc:
        yield proc.url


class FakeSession:
    """In-memory session: games are lists of seat names; ``fail`` makes calls raise."""

    def __init__(self) -> None:
        self.games: dict[str, list[str]] = {}
        self.by_command: dict[str, Any] = {}
        self.fail: ServiceError | None = None
        self.calls = 0
        self._ids = itertools.count(1)

    async def create_game(self, kind: str, config: dict[str, Any], command_id: str) -> str:
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        if command_id not in self.by_command:
            game_id = f"g{next(self._ids)}"
            self.games[game_id] = []
            self.by_command[command_id] = game_id
        return self.by_command[command_id]

    async def join(self, game_id: str, name: str, command_id: str) -> int:
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        if command_id not in self.by_command:
            self.games[game_id].append(name)
            self.by_command[command_id] = len(self.games[game_id])
        return self.by_command[command_id]

    async def final_view(self, game_id: str) -> dict[str, Any]:
        raise AssertionError("not used here")


@pytest.fixture
async def parts(nats_url: str) -> AsyncIterator[tuple[Any, store.Bucket, store.Bucket, store.Bucket]]:
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    buckets = [
        store.Bucket(await store.ensure_bucket(js, name)) for name in (store.TICKETS, store.GAMES, store.RATINGS)
    ]
    await store.ensure_events_stream(js)
    try:
        yield (js, *buckets)
    finally:
        await nc.drain()


async def _instance(parts, session: FakeSession, **options: Any) -> Matchmaker:
    js, tickets, games, ratings = parts
    mm = Matchmaker(js, tickets, games, ratings, session, MatchmakerOptions(**{"interval_s": 0.05, **options}))
    await mm.start()
    return mm


async def _status(mm: Matchmaker, ticket_id: str, status: str) -> dict | None:
    t = await mm.get_ticket(ticket_id)
    return t if t["status"] == status else None


async def test_a_decided_match_whose_session_was_down_is_rolled_forward(parts, monkeypatch):
    monkeypatch.setattr(service_module, "COMPLETE_RETRY_S", 0.3)
    session = FakeSession()
    session.fail = ServiceError("UNAVAILABLE", "session down")
    mm = await _instance(parts, session, claim_timeout_s=1.0)
    try:
        a = await mm.create_ticket("life", 2, {"budget": 11}, "a")
        b = await mm.create_ticket("life", 2, {"budget": 11}, "b")

        async def stuck():  # decided; the forming task gave up and a recovery has begun
            # (the moments with no task in flight are too short to poll for on a loaded
            # machine; a roll-forward attempt proves the claims were left behind)
            claims = [(await mm.tickets.get(store.ticket_key(t["ticket_id"])))[0]["claim"] for t in (a, b)]
            return all(claims) and session.calls >= 2 and mm.rolled_forward >= 1

        await eventually(stuck, what="a decided match whose completion failed")
        match_id = (await mm.get_ticket(a["ticket_id"]))["claim"]["match_id"]
        decision = (await mm.tickets.get(store.decision_key(match_id)))[0]
        assert decision["state"] == "committed"
        session.fail = None  # the session is back; the stale claim is rolled forward
        ta = await eventually(lambda: _status(mm, a["ticket_id"], "matched"), what="a matched")
        tb = await eventually(lambda: _status(mm, b["ticket_id"], "matched"), what="b matched")
        assert ta["match"]["match_id"] == tb["match"]["match_id"] == match_id
        assert ta["match"]["game_id"] == tb["match"]["game_id"]
        assert session.games[ta["match"]["game_id"]] == ["a", "b"]
        assert len(session.games) == 1
        assert mm.rolled_forward >= 1
    finally:
        await mm.stop()


async def test_a_config_the_session_refuses_cancels_the_tickets_that_asked_for_it(parts):
    session = FakeSession()
    session.fail = ServiceError("INVALID_CONFIG", "budget too large")
    mm = await _instance(parts, session)
    try:
        plain = await mm.create_ticket("life", 2, {}, "plain")
        asking = await mm.create_ticket("life", 2, {"budget": 123456}, "asking")
        t = await eventually(lambda: _status(mm, asking["ticket_id"], "cancelled"), what="cancelled")
        assert t["reason"] == "INVALID_CONFIG: budget too large" and t["match"] is None
        p = await mm.get_ticket(plain["ticket_id"])
        assert p["status"] == "searching" and p["claim"] is None  # released, searching on
        assert session.games == {}
        await mm.cancel_ticket(plain["ticket_id"])
    finally:
        await mm.stop()


async def test_cancelling_a_claimed_ticket_aborts_its_undecided_match(parts):
    session = FakeSession()
    mm = await _instance(parts, session, interval_s=3600.0)  # no loop steps of its own
    try:
        a = await mm.create_ticket("cellwar", 2, {"width": 9}, "a")
        b = await mm.create_ticket("cellwar", 2, {"width": 9}, "b")
        # Claim `a` as a forming match would, then cancel it before any decision.
        record, revision = await mm.tickets.get(store.ticket_key(a["ticket_id"]))
        claim = {"match_id": "m-cancel", "by": "elsewhere", "at": mm.clock()}
        await mm.tickets.update(store.ticket_key(a["ticket_id"]), {**record, "claim": claim}, revision)
        cancelled = await mm.cancel_ticket(a["ticket_id"])
        assert cancelled["status"] == "cancelled"
        assert (await mm.tickets.get(store.decision_key("m-cancel")))[0]["state"] == "aborted"
        # The instance that claimed it can no longer commit: forming finds the decision.
        await asyncio.sleep(0.2)  # the mirror has both tickets
        match = Match((a["ticket_id"], b["ticket_id"]), {"width": 9}, 0.0, 100.0)
        assert await mm.form("m-cancel", "cellwar", 2, match) is False
        assert session.games == {}
        assert (await mm.get_ticket(b["ticket_id"]))["claim"] is None
        await mm.cancel_ticket(b["ticket_id"])
    finally:
        await mm.stop()


async def test_an_undecided_stale_claim_is_rolled_back(parts):
    session = FakeSession()
    mm = await _instance(parts, session, claim_timeout_s=0.5)
    try:
        t = await mm.create_ticket("cellwar", 6, {"width": 13}, "lonely")
        record, revision = await mm.tickets.get(store.ticket_key(t["ticket_id"]))
        claim = {"match_id": "m-dead", "by": "a-dead-instance", "at": mm.clock()}
        key = store.ticket_key(t["ticket_id"])
        claimed = {**record, "claim": claim}
        # into the mirror at once too: get_ticket reads the mirror, which would otherwise
        # show the unclaimed ticket until the KV watch delivers the claim
        await mm.ticket_mirror.apply(key, claimed, await mm.tickets.update(key, claimed, revision))

        async def released():
            r = await mm.get_ticket(t["ticket_id"])
            return r if r["claim"] is None else None

        r = await eventually(released, what="claim released")
        assert r["status"] == "searching"
        assert (await mm.tickets.get(store.decision_key("m-dead")))[0]["state"] == "aborted"
        assert mm.rolled_back >= 1
        await mm.cancel_ticket(t["ticket_id"])
    finally:
        await mm.stop()
