"""The create window of the whole deployment (gateway/shared_limits.py, docs/security.md):
two real gateways in front of one stack keep one window per client address in NATS KV,
so 40 creates sent through both meet the one limit of 30; without NATS each gateway
still counts alone."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from gateway.app import create_app
from gateway.shared_limits import SharedWindows, kv_key
from services.common.settings import Settings
from tests.api.conftest import TEST_SECRET
from tests.support.serve import serve

pytestmark = pytest.mark.integration

CREATE_BODY = {"kind": "life", "config": {"width": 20, "height": 20}}


def _client() -> str:
    """An address of its own for this test (the KV windows outlive a test by 60 s)."""
    return f"100.64.{random.randrange(256)}.{random.randrange(1, 255)}"


@contextlib.asynccontextmanager
async def _gateways(stack, n: int, ready: bool = True, **settings: Any) -> AsyncIterator[list[str]]:
    async with contextlib.AsyncExitStack() as stack_of:
        urls = []
        apps = []
        for _ in range(n):
            app = create_app(
                Settings(
                    session_addr=stack.session_target,
                    secret=TEST_SECRET,
                    trusted_proxies="127.0.0.1",
                    shared_limits=True,
                    **settings,
                )
            )
            apps.append(app)
            urls.append(await stack_of.enter_async_context(serve(app)))
        if ready:
            async with asyncio.timeout(30):
                while not all(a.state.shared_windows.ready for a in apps):
                    await asyncio.sleep(0.05)
        yield urls


async def _creates(urls: list[str], n: int, client: str) -> list[httpx.Response]:
    """``n`` creates at once from ``client`` (behind the trusted proxy), spread over ``urls``."""
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
    async with contextlib.AsyncExitStack() as exits:
        https = [
            await exits.enter_async_context(httpx.AsyncClient(base_url=u, timeout=120, limits=limits))
            for u in urls
        ]
        headers = {"X-Forwarded-For": client}
        return list(
            await asyncio.gather(
                *(https[i % len(https)].post("/game/create", json=CREATE_BODY, headers=headers) for i in range(n))
            )
        )


async def test_40_creates_through_two_gateways_meet_the_one_window(stack, nats_url):
    async with _gateways(stack, 2, nats_url=nats_url) as urls:
        answers = await _creates(urls, 40, _client())
    created = [a for a in answers if a.status_code == 201]
    refused = [a for a in answers if a.status_code != 201]
    assert len(created) == 30, [a.status_code for a in answers]
    assert {a.status_code for a in refused} == {429}
    for answer in refused:
        assert answer.json()["error"]["code"] == "RATE_LIMITED"
        assert 1 <= int(answer.headers["retry-after"]) <= 60
    # Both gateways answered creates: the window is not one gateway's.
    ports = {str(a.request.url.port) for a in created}
    assert len(ports) == 2


async def test_each_client_address_has_its_own_shared_window(stack, nats_url):
    async with _gateways(stack, 2, nats_url=nats_url, create_limit_per_min=2) as urls:
        one, other = _client(), _client()
        first = await _creates(urls, 4, one)
        second = await _creates(urls, 4, other)
    assert sorted(a.status_code for a in first) == [201, 201, 429, 429]
    assert sorted(a.status_code for a in second) == [201, 201, 429, 429]


async def test_without_nats_each_gateway_counts_alone(stack):
    # No NATS at this address: the shared window is out of reach, the gateway's own holds.
    async with _gateways(stack, 1, ready=False, nats_url="nats://127.0.0.1:9", create_limit_per_min=3) as urls:
        answers = await _creates(urls, 6, _client())
    assert sorted(a.status_code for a in answers) == [201, 201, 201, 429, 429, 429]


def test_window_keys_are_valid_kv_keys():
    key = kv_key("create:/game/create:ip:2001:db8::/64")
    assert set(key) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=")


async def test_a_full_window_says_when_its_oldest_hit_leaves(nats_url):
    now = [1000.0]
    windows = SharedWindows(Settings(nats_url=nats_url), window_s=60.0, clock=lambda: now[0])
    windows.start()
    try:
        async with asyncio.timeout(30):
            while not windows.ready:
                await asyncio.sleep(0.05)
        key = f"create:/game/create:ip:{_client()}:{random.random()}"
        assert await windows.hit(key, 2) == 0.0
        now[0] += 10
        assert await windows.hit(key, 2) == 0.0
        now[0] += 5
        assert await windows.hit(key, 2) == pytest.approx(45.0)
        now[0] += 46  # the first hit left the window
        assert await windows.hit(key, 2) == 0.0
    finally:
        await windows.close()
