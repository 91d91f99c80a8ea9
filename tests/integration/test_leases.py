"""services/session/adapters/leases.py on a real NATS server: a lease whose key expired
(the server's marker in its place) is taken again at once, not a TTL later."""

from __future__ import annotations

import asyncio
import time
import uuid

import nats
import pytest

from services.common.nats.kv import ensure_bucket
from services.session.adapters.leases import Leases

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


async def test_a_lease_whose_key_expired_is_taken_again_at_once(nats_url: str) -> None:
    """Released (deleted), then expired by the bucket's TTL: the server leaves a marker
    with no ``KV-Operation``, on which ``KeyValue.create`` fails; before the fix the
    game was tried again every TTL/3 until the marker expired too (a resumed game stood
    still for up to ~11 s)."""
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    name = f"T_LEASES_{uuid.uuid4().hex[:8]}"
    kv = await ensure_bucket(js, name, ttl_s=2.0, expiry_markers=True)
    leases = Leases(kv, "s1", ttl_s=2.0)
    await leases.start()
    try:
        assert await leases.acquire(["g1"]) == {"g1"}
        await leases.release("g1")
        # wait for the server's marker: the key's last message, with no value
        deadline = time.monotonic() + 20
        while True:
            try:
                entry = await kv.get("g1")
                raw = await js.get_msg(f"KV_{name}", entry.revision)
                if not entry.value and (raw.headers or {}).get("Nats-Marker-Reason") == "MaxAge":
                    break
            except nats.js.errors.KeyNotFoundError:
                pass
            assert time.monotonic() < deadline, "no expiry marker within 20 s"
            await asyncio.sleep(0.2)
        with pytest.raises(nats.js.errors.KeyWrongLastSequenceError):
            await kv.create("g1", b"other")  # what made the first try fail
        assert await leases.acquire(["g1"]) == {"g1"}
        assert leases.holds("g1") and leases.holder("g1") == "s1"
        assert (await kv.get("g1")).value == b"s1"
    finally:
        await leases.stop()
        await js.delete_key_value(name)
        await nc.close()
