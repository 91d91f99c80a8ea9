"""Fixtures of the API tests: the real gateway app served by uvicorn on 127.0.0.1:0 in the
test's event loop (so WebSockets work), in front of the real engine + session gRPC
servers of the ``stack`` fixture (tests/conftest.py) and a real NATS."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI

from client.sdk import AsyncCellWarClient
from gateway.app import create_app
from services.common.settings import Settings

#: The signing key of the test gateway's player tokens.
TEST_SECRET = "test-secret-for-player-tokens"


@contextlib.asynccontextmanager
async def serve(app: FastAPI, **uvicorn_options: Any) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1:<free port>; yields the base URL.
    ``uvicorn_options`` override the ``uvicorn.Config`` arguments (e.g. ``access_log``)."""
    options: dict[str, Any] = {
        "log_config": None,
        "access_log": False,
        # The app reads forwarded headers itself (CELLWAR_TRUSTED_PROXIES), as
        # `python -m gateway` runs it.
        "proxy_headers": False,
        "lifespan": "on",
        "ws": "websockets-sansio",
        **uvicorn_options,
    }
    config = uvicorn.Config(app, host="127.0.0.1", port=0, **options)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()  # raises why uvicorn could not start
                raise RuntimeError("uvicorn stopped while starting")
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=10)


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
