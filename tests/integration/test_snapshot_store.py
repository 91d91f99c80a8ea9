"""The snapshot store on real NATS (services/session/adapters/snapshots.py): a latest-only
snapshot (the one after a turn) is one key, replaced by the next; a history snapshot is
its own key and in its bucket's index as well, and stays findable by seq."""

from __future__ import annotations

import nats.js.errors
import pytest

from services.session.adapters.snapshots import Snapshot
from tests.support.client import SessionClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


async def keys_present(kv, keys: list[str]) -> list[str]:
    present = []
    for key in keys:
        try:
            await kv.get(key)
            present.append(key)
        except nats.js.errors.KeyNotFoundError:
            pass
    return present


async def test_latest_only_snapshots_are_one_key_and_history_ones_are_indexed(stack) -> None:
    client = SessionClient.open(stack.session_target)
    try:
        gid = await client.create({"width": 8, "height": 8, "players": 2}, kind="cellwar")
        state = (await stack.session.games.get(gid)).state
    finally:
        await client.close()
    store = stack.session.games.snapshots
    other = "snapshot-store-test"  # a game id of its own: nothing else writes it
    keys = [other, f"{other}.5", f"{other}.12", f"{other}.i0"]

    assert await store.put(other, Snapshot(5, 0, state), history=False)
    assert await keys_present(store.kv, keys) == [other]
    assert (await store.at_or_before(other, 5)).seq == 5
    assert await store.at_or_before(other, 4) is None

    assert await store.put(other, Snapshot(12, 0, state))  # history and latest
    assert await keys_present(store.kv, keys) == [other, f"{other}.12", f"{other}.i0"]
    assert (await store.latest(other)).seq == 12
    assert await store.at_or_before(other, 11) is None  # the latest-only one was replaced

    assert await store.put(other, Snapshot(15, 0, state), history=False)
    latest = await store.latest(other)
    assert (latest.seq, latest.state.state_hash) == (15, state.state_hash)
    assert (await store.at_or_before(other, 14)).seq == 12  # from the index
    assert (await store.at_or_before(other, 30)).seq == 15
