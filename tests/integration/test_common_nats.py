"""services/common/nats on a real NATS server: the ``msg_ttl`` put into a bucket made
with expiry markers, the bucket name, a mirror of the bucket, and the batched direct get
(pages, the pending count, another subject left out, the end of a subject), and the
live keys of a bucket while it is written."""

from __future__ import annotations

import asyncio
import uuid

import nats
import pytest
from nats.js import api

from services.common.nats.direct import direct_get_batch
from services.common.nats.kv import (
    LIVE_KEYS_WINDOW,
    KvMirror,
    bucket_name,
    ensure_bucket,
    live_keys,
    put_with_ttl,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]


async def test_put_with_ttl_writes_the_key_with_a_per_message_ttl(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        name = f"T_{uuid.uuid4().hex[:8]}"
        kv = await ensure_bucket(js, name, expiry_markers=True)
        assert bucket_name(kv) == name
        again = await ensure_bucket(js, name, expiry_markers=True)  # opens, creates nothing
        assert bucket_name(again) == name
        seen: dict[str, bytes | None] = {}
        both = asyncio.Event()

        def on_change(key: str, value: bytes | None, _revision: int) -> None:
            seen[key] = value
            if len(seen) == 2:
                both.set()

        mirror = KvMirror(kv, on_change)
        await mirror.start()
        try:
            assert await mirror.wait_ready(10.0)
            revision = await put_with_ttl(kv, "g1.2.inst-a", b"1", 30.0)
            entry = await kv.get("g1.2.inst-a")
            assert (entry.value, entry.revision) == (b"1", revision)
            raw = await js.get_msg(f"KV_{name}", revision)
            assert raw.subject == f"$KV.{name}.g1.2.inst-a"
            assert (raw.headers or {}).get("Nats-TTL") == "30"
            await kv.put("other", b"x")
            await asyncio.wait_for(both.wait(), 10.0)
            assert seen == {"g1.2.inst-a": b"1", "other": b"x"}
        finally:
            await mirror.stop()
            await js.delete_key_value(name)
    finally:
        await nc.close()


async def test_live_keys_lists_every_key_holding_a_value_while_the_bucket_is_written(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        name = f"T_{uuid.uuid4().hex[:8]}"
        kv = await ensure_bucket(js, name)
        assert await live_keys(kv) == []
        count = LIVE_KEYS_WINDOW * 2 + 7  # more than one window of reads
        for i in range(count):
            await kv.put(f"r.q.{i}", b"{}")
        await kv.put("r.q.0", b"{}")  # a key written twice is listed once
        await kv.delete("r.q.1")
        await kv.purge("r.q.2")
        before = {f"r.q.{i}" for i in range(3, count)} | {"r.q.0"}
        stop = asyncio.Event()

        async def writer() -> int:
            n = 0
            while not stop.is_set():
                await kv.put(f"w.{n % 50}", b"{}")
                await kv.put(f"r.q.{3 + n % (count - 3)}", b"{}")
                n += 1
            return n

        task = asyncio.create_task(writer())
        try:
            for _ in range(5):
                listed = await live_keys(kv)
                assert len(listed) == len(set(listed))
                assert {k for k in listed if k.startswith("r.")} == before
        finally:
            stop.set()
            written = await task
        assert written > 0
        await js.delete_key_value(name)
    finally:
        await nc.close()


async def test_direct_get_batch_pages_through_one_subject(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    stream = f"S_{uuid.uuid4().hex[:8]}"
    try:
        js = nc.jetstream()
        await js.add_stream(
            api.StreamConfig(name=stream, subjects=[f"{stream}.>"], allow_direct=True)
        )
        seqs = []
        for i in range(5):
            seqs.append((await js.publish(f"{stream}.a", f"a{i}".encode())).seq)
            await js.publish(f"{stream}.b", f"b{i}".encode())
        page, pending = await direct_get_batch(
            js, stream, f"{stream}.a", 1, batch=2, max_bytes=1 << 20, timeout=5.0
        )
        assert page == [(seqs[0], b"a0"), (seqs[1], b"a1")]
        assert pending == 3
        page, pending = await direct_get_batch(
            js, stream, f"{stream}.a", seqs[1] + 1, batch=10, max_bytes=1 << 20, timeout=5.0
        )
        assert page == [(seqs[2], b"a2"), (seqs[3], b"a3"), (seqs[4], b"a4")]
        assert pending == 0
        assert await direct_get_batch(
            js, stream, f"{stream}.a", seqs[4] + 1, batch=10, max_bytes=1 << 20, timeout=5.0
        ) == ([], 0)
        assert await direct_get_batch(
            js, stream, f"{stream}.none", 1, batch=10, max_bytes=1 << 20, timeout=5.0
        ) == ([], 0)
    finally:
        await js.delete_stream(stream)
        await nc.close()
