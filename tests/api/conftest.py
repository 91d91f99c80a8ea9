"""Fixtures of the API tests: the real gateway app served by uvicorn on 127.0.0.1:0 in the
test's event loop (so WebSockets work), in front of the real engine + session gRPC
servers of the ``stack`` fixture. Here ``stack`` is the session on in-memory ports (no
NATS: the REST contract and the rules do not depend on where the log is kept); tests of
NATS itself (shared limits in KV, restarts of NATS) take ``nats_stack`` or ``nats_url``
(tests/conftest.py) and are marked ``nats``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from client.sdk import AsyncCellWarClient
from gateway.app import create_app
from services.common.settings import Settings
from tests.support.serve import serve
from tests.support.stack import Stack, start_stack

#: The signing key of the test gateway's player tokens.
TEST_SECRET = "test-secret-for-player-tokens"


@pytest.fixture
async def stack() -> AsyncIterator[Stack]:
    """Engine + session gRPC servers in this process, the session on in-memory ports
    (``stack.memory``; ``generations_per_second=400``)."""
    s = await start_stack()
    try:
        yield s
    finally:
        await s.stop()


@pytest.fixture
def gateway_settings(stack) -> Settings:
    """Gateway settings pointing at the test stack's session service."""
    return Settings(session_addr=stack.session_target, secret=TEST_SECRET)


@pytest.fixture
async def gateway(gateway_settings: Settings) -> AsyncIterator[str]:
    """Base URL of a real gateway (uvicorn, port 0) in front of the test stack."""
    async with serve(create_app(gateway_settings)) as url:
        yield url


@pytest.fixture
async def api(gateway: str) -> AsyncIterator[AsyncCellWarClient]:
    """An SDK client of the test gateway."""
    async with AsyncCellWarClient(gateway, timeout=30) as client:
        yield client
