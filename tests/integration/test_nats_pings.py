"""NATS connections of the services ping every few seconds and leave a hung server
(services/common/natsconn.py, docs/faults.md): the settings reach the connection that
the session opens, and a SIGSTOPped server is dropped for the next one of the list
within ``interval × (pings + 1)`` seconds, not nats-py's 120 s × 2. Real nats-server
processes."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from services.common import natsconn
from services.common.settings import Settings
from tests.support.nats import NatsProcess
from tests.support.stack import start_stack

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def test_the_defaults_ping_every_few_seconds_and_shuffle_the_servers():
    options = natsconn.settings_options(Settings())
    assert options == {"ping_interval_s": 2.0, "max_outstanding_pings": 3, "randomize": True}
    # a hung server is left within ~10 s
    assert options["ping_interval_s"] * (options["max_outstanding_pings"] + 1) <= 10
    assert natsconn.settings_options(
        Settings(nats_ping_interval_s=1.5, nats_max_outstanding_pings=2, nats_randomize=False)
    ) == {"ping_interval_s": 1.5, "max_outstanding_pings": 2, "randomize": False}


async def test_the_session_connection_carries_the_ping_settings(nats_url):
    stack = await start_stack(
        nats_url, instance_id="s-pings", nats_ping_interval_s=1.5, nats_max_outstanding_pings=2
    )
    try:
        options = stack.session.nc.options
        assert (options["ping_interval"], options["max_outstanding_pings"]) == (1.5, 2)
        assert options["dont_randomize"] is False
    finally:
        await stack.stop()


@pytest.fixture
def two_servers(tmp_path):
    servers = [NatsProcess(tmp_path / name).start() for name in ("a", "b")]
    yield servers
    for server in servers:
        if server.proc is not None:
            os.kill(server.proc.pid, signal.SIGCONT)
        server.stop(kill=True)


async def test_a_paused_server_is_dropped_for_the_next_one(two_servers):
    a, b = two_servers
    reconnected = asyncio.Event()

    async def on_reconnect() -> None:
        reconnected.set()

    nc = await natsconn.connect(
        f"{a.url},{b.url}",
        name="test-pings",
        deadline_s=10.0,
        on_reconnect=on_reconnect,
        ping_interval_s=1.0,
        max_outstanding_pings=2,
        randomize=False,  # a first, so the pause hits the connection
    )
    try:
        assert nc.connected_url.port == a.port
        os.kill(a.proc.pid, signal.SIGSTOP)
        await asyncio.wait_for(reconnected.wait(), 30)  # nats-py's defaults: 240 s or never
        assert nc.connected_url.port == b.port and nc.is_connected
        await nc.publish("t.ping", b"x")
        await nc.flush(timeout=5)
    finally:
        await nc.close()
