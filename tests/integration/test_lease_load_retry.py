"""A session that takes a game's lease but cannot load the game (NATS not answering its
reads: ``lease_game_not_loaded code=UNAVAILABLE``) releases the lease at once and loads
the game again after a backoff (services/session/entrypoints/keeper.py, docs/faults.md); it never
keeps renewing a lease on a game it does not tick. Real NATS, a real session instance;
the failing reads go through a closed NATS connection."""

from __future__ import annotations

import asyncio

import nats
import nats.js.errors
import pytest

from services.session.entrypoints import keeper as keeper_module
from tests.support.stack import start_stack

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

LIFE = {"width": 16, "height": 16, "players": 2, "budget": 10}


async def test_a_lease_whose_game_cannot_be_loaded_is_released_and_the_load_retried(nats_url, monkeypatch):
    monkeypatch.setattr(keeper_module, "LOAD_RETRY_S", 2.0)
    stack = await start_stack(nats_url, instance_id="s-load-retry", lease_ttl_s=10.0)
    app = stack.session
    dead = await nats.connect(nats_url)
    broken = dead.jetstream()
    await dead.close()
    try:
        game = await app.loop.create("life", LIFE)
        gid = game.game_id
        entry = dict(app.directory.entries.get(gid) or {})
        assert entry and not entry.get("lease")
        # This instance forgets the game and its reads of the log fail from now on.
        real = app.store.js
        app.games.games.pop(gid, None)
        app.store.forget(gid)
        app.store.js = broken
        # The game now asks for a holder (its directory entry says it is ticked).
        await app.directory.put(gid, {**entry, "lease": True})
        async with asyncio.timeout(20):
            while not app.keeper._load_failures.failures(gid):
                app.keeper.poke()
                await asyncio.sleep(0.05)
        # Released at once, in the bucket too: nobody renews a lease on it.
        assert not app.leases.holds(gid)
        assert gid not in app.games.games
        with pytest.raises(nats.js.errors.KeyNotFoundError):
            await app.leases.kv.get(gid)

        # NATS answers again: the deferred adoption loads the game and, as it needs no
        # holder after all, rewrites its entry and gives the lease up.
        app.store.js = real
        async with asyncio.timeout(30):
            while (app.directory.entries.get(gid) or {}).get("lease") is not False:
                await asyncio.sleep(0.1)
        assert gid in app.games.games and gid not in app.keeper._load_failures
        assert not app.leases.holds(gid)
        assert app.games.games[gid].seq == game.seq
    finally:
        await stack.stop()
