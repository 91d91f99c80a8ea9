"""The keeper's lease pass (services/session/entrypoints/keeper.py) and a game that just
ended: its lease is released and not taken again while the lobby's mirror still holds the
entry written before the end (``"lease": true``)."""

from __future__ import annotations

from dataclasses import dataclass

from services.common.settings import Settings
from services.session.adapters.leases import Leases
from services.session.entrypoints import keeper as keeper_module
from services.session.entrypoints.keeper import Keeper
from tests.support.fakes import LeaseKv, Lobby, NoPresence


@dataclass
class LoadedGame:
    """The parts of a loaded game the lease pass reads."""

    game_id: str
    finished: bool
    running: bool = False
    broken: bool = False
    needs_finish: bool = False
    stale: bool = False


class Games:
    def __init__(self, *games: LoadedGame) -> None:
        self.games = {g.game_id: g for g in games}

    def loaded(self) -> list[LoadedGame]:
        return list(self.games.values())

    async def get(self, game_id):
        return self.games[game_id]


async def test_a_game_that_just_ended_is_released_and_not_taken_again_from_a_stale_entry(monkeypatch):
    # the entry a game writes at its end (services/session/service_layer/projections.py)
    monkeypatch.setattr(keeper_module, "directory_entry", lambda game: {"lease": False, "phase": "finished"})
    kv = LeaseKv()
    leases = Leases(kv, "s1", ttl_s=9.0)
    leases.held["g1"] = 7  # it ran here until its end
    lobby = Lobby({"g1": {"lease": True}})  # the entry before its end, not yet rewritten
    games = Games(LoadedGame("g1", finished=True), LoadedGame("g2", finished=False, running=True))
    keeper = Keeper(games, None, leases, NoPresence(), lobby, Settings(lease_ttl_s=9.0))
    await keeper.lease_pass()
    assert kv.deleted == ["g1"] and "g1" not in leases.held
    assert kv.creates == ["g2"] and leases.holds("g2")  # a running game loaded here is taken
    await keeper.lease_pass()
    assert kv.creates == ["g2"] and kv.deleted == ["g1"]  # g1 never taken again
