"""The ``actions`` bench's load generator (:func:`bench.actions.measure_ws`) against a
WebSocket server on loopback that answers each command frame after a fixed delay: a
paced seat counts its latency from the command's scheduled time, so an offered load
above what the server answers shows as growing latencies (no coordinated omission),
and the closed loop runs at the server's pace."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
import websockets

from bench.actions import measure_ws
from tests.support.nats import free_port

SERVICE_S = 0.03  # the server's answer delay per command


async def _serve(ws: Any) -> None:
    """Answer every action frame with a result after :data:`SERVICE_S` (one at a time,
    as the platform answers one game's commands), and record the frames' ``id``."""
    async for message in ws:
        frame = orjson.loads(message)
        await asyncio.sleep(SERVICE_S)
        await ws.send(orjson.dumps({"type": "result", "id": frame["id"], "seq": 1, "view": {}}).decode())


async def _measure(**kwargs: Any) -> dict[str, Any]:
    port = free_port()
    async with websockets.serve(_serve, "127.0.0.1", port, subprotocols=["cellwar.v1"]):
        return await measure_ws(
            f"http://127.0.0.1:{port}", [("g1", "token")], 0.0, 1.5, {}, **kwargs
        )


@pytest.mark.timeout(30)
async def test_paced_below_the_servers_rate_sees_its_service_time() -> None:
    sent: dict[str, int] = {}
    r = await _measure(rate_per_seat=10.0, sent=sent)
    assert r["errors"] == 0
    assert 9.0 <= r["actions_per_s"] <= 11.0  # the offered 10/s, all answered
    assert all(SERVICE_S * 1000 <= x < SERVICE_S * 1000 + 300 for x in r["latencies"])
    assert sent["g1"] >= 30  # the warm-up's commands and the window's, counted on


@pytest.mark.timeout(30)
async def test_paced_above_the_servers_rate_counts_the_wait() -> None:
    # offered 100/s against ~33/s answered: each command starts later than scheduled,
    # and that wait is part of its latency
    r = await _measure(rate_per_seat=100.0)
    lat = r["latencies"]
    assert r["actions_per_s"] < 40.0
    assert lat == sorted(lat)  # the backlog only grows
    assert lat[-1] > lat[0] + 500.0  # ~1.5 s x (100 - 33)/s behind by the end


@pytest.mark.timeout(30)
async def test_closed_loop_runs_at_the_servers_pace() -> None:
    r = await _measure()
    assert 25.0 <= r["actions_per_s"] <= 1 / SERVICE_S + 1
    assert all(SERVICE_S * 1000 <= x < SERVICE_S * 1000 + 300 for x in r["latencies"])
