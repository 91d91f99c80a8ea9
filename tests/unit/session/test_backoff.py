"""One backoff for the session's background retries (services/common/backoff.py): the
lease tries (services/session/adapters/leases.py) and the loads of a game whose lease was
taken (services/session/entrypoints/keeper.py). Pauses double from the first up to the
longest, a success forgets the key, and a game no longer wanted leaves no entry behind."""

from __future__ import annotations

import nats.errors

from cellwar.v1.codes import ErrorCode
from services.common.backoff import Backoff
from services.common.errors import ServiceError
from services.common.settings import Settings
from services.session.adapters.leases import Leases
from services.session.entrypoints.keeper import LOAD_RETRY_S, Keeper
from tests.support.fakes import Clock, LeaseKv, Lobby, NoPresence


def test_pauses_double_from_the_first_up_to_the_longest_and_a_success_forgets():
    clock = Clock(100.0)
    backoff = Backoff(0.5, 3.0, clock)
    assert [backoff.failed("g") for _ in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert backoff.failures("g") == 5 and backoff.waiting("g")
    clock.now += 2.9
    assert backoff.waiting("g")
    clock.now += 0.2
    assert not backoff.waiting("g") and "g" in backoff  # due, still counted
    backoff.forget("g")
    assert backoff.failures("g") == 0 and "g" not in backoff
    assert backoff.failed("g") == 0.5  # a new run of failures starts over


def test_keys_no_longer_wanted_are_forgotten():
    backoff = Backoff(1.0, 1.0, Clock(100.0))
    for key in ("a", "b", "c"):
        backoff.failed(key)
    assert sorted(backoff.keep_only({"b", "z"})) == ["a", "c"]
    assert len(backoff) == 1 and "b" in backoff


class DeadKv:
    """A GAME_LEASES bucket that never answers."""

    def __init__(self) -> None:
        self.creates = 0

    async def create(self, key, value):
        self.creates += 1
        raise nats.errors.TimeoutError


async def test_a_failed_lease_try_waits_a_third_of_the_ttl_and_is_forgotten_when_not_wanted():
    kv = DeadKv()
    leases = Leases(kv, "s1", ttl_s=9.0)
    assert await leases.acquire(["g1", "g2"]) == set()
    assert await leases.acquire(["g1", "g2"]) == set()
    assert kv.creates == 2  # the second pass waited (3 s)
    assert leases._retry.failures("g1") == 1
    leases.keep_retries({"g2"})
    assert "g1" not in leases._retry and "g2" in leases._retry


class UnloadableGames:
    """A game cache whose log reads fail (NATS not answering)."""

    def __init__(self) -> None:
        self.games: dict = {}

    def loaded(self) -> list:
        return []

    async def get(self, game_id):
        raise ServiceError(ErrorCode.UNAVAILABLE, "event store: timeout")


async def test_a_game_that_would_not_load_is_retried_after_the_backoff_and_forgotten_once_gone():
    kv = LeaseKv()
    leases = Leases(kv, "s1", ttl_s=9.0)
    lobby = Lobby({"g1": {"lease": True}})
    keeper = Keeper(UnloadableGames(), None, leases, NoPresence(), lobby, Settings(lease_ttl_s=9.0))
    await keeper.lease_pass()
    assert kv.creates == ["g1"] and kv.deleted == ["g1"]  # taken, not loaded, released at once
    assert keeper._load_failures.failures("g1") == 1 and keeper._load_failures.waiting("g1")
    await keeper.lease_pass()
    assert kv.creates == ["g1"]  # the pause (LOAD_RETRY_S) runs: not taken again
    assert keeper._load_failures.first_s == LOAD_RETRY_S and keeper._load_failures.max_s == 9.0
    # The game ended elsewhere: nothing wants it, its entries go.
    lobby.entries.clear()
    await keeper.lease_pass()
    assert "g1" not in keeper._load_failures and len(leases._retry) == 0
