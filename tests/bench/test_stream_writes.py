"""``bench.cluster_bots.stream_writes`` reads each JetStream stream's message count from a
real nats-server's monitoring port (``/jsz?streams=true``), KV buckets' streams included,
and an unanswered port gives nothing."""

from __future__ import annotations

from types import SimpleNamespace

import nats
import pytest

from bench.cluster_bots import stream_writes
from tests.support.nats import NatsProcess, free_port, nats_server_binary

pytestmark = pytest.mark.timeout(60)


def runner_on(monitor_port: int) -> SimpleNamespace:
    """What ``stream_writes`` reads of a ``RunnerProcess``: node 1's monitoring port."""
    return SimpleNamespace(bases=SimpleNamespace(nats_monitor_port=lambda k: monitor_port))


async def test_the_messages_of_every_stream_are_counted(tmp_path) -> None:
    try:
        nats_server_binary()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    monitor = free_port()
    with NatsProcess(tmp_path, monitor_port=monitor) as server:
        nc = await nats.connect(server.url)
        try:
            js = nc.jetstream()
            await js.add_stream(name="EVENTS", subjects=["ev.>"])
            for i in range(3):
                await js.publish(f"ev.{i}", b"x")
            kv = await js.create_key_value(bucket="SNAPS")
            await kv.put("a", b"1")
            await kv.put("a", b"2")
            assert stream_writes(runner_on(monitor)) == {"EVENTS": 3, "KV_SNAPS": 2}
        finally:
            await nc.close()
    assert stream_writes(runner_on(monitor)) == {}  # nothing answers now
