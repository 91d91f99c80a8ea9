"""A running CellWar game loaded from a snapshot an older engine wrote (its recorded
policy admitting delayed spectators, as every running CellWar game did before the
``spectators`` config field) is watched by the policy of this engine: a game created
without ``"spectators": "live"`` admits no spectator before its end, even when no event
follows the snapshot (docs/spectators.md). Real NATS, engine and session."""

from __future__ import annotations

import grpc
import pytest

from cellwar.v1 import session_pb2
from services.common.errors import error_from_rpc
from services.session.adapters.snapshots import Snapshot
from tests.support.client import SessionClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

CONFIG = {"width": 8, "height": 8, "players": 2}


async def test_an_old_snapshot_does_not_let_spectators_in(stack) -> None:
    client = SessionClient.open(stack.session_target)
    try:
        gid = await client.create(CONFIG, kind="cellwar")
        for name in ("p1", "p2"):
            await client.join(gid, name)
        game = await stack.session.games.get(gid)
        assert game.state.phase == "playing"
        old = type(game.state)()
        old.CopyFrom(game.state)
        old.policy.spectator_delay_min_s = 10.0  # what the older engine recorded
        position = stack.session.games.store.stream_seq_of(gid)
        assert await stack.session.games.snapshots.put(gid, Snapshot(game.seq, position, old))
    finally:
        await client.close()
    await stack.restart_session()
    client = SessionClient.open(stack.session_target)
    try:
        for delay in (10.0, 3600.0):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.stub.SpectatorView(session_pb2.SpectateRequest(game_id=gid, delay_s=delay))
            assert error_from_rpc(refused.value)[0] == "SPECTATORS_AFTER_END"
        loaded = await stack.session.games.get(gid)
        assert loaded.last_snapshot_seq == loaded.seq  # it did load from that snapshot
        assert loaded.policy.spectator_delay_min_s == float("inf")
    finally:
        await client.close()
