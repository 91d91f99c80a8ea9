"""Fixtures of the matchmaker tests: the real engine + session (``stack``), one or more
real matchmaker instances (in this process, port 0, or as subprocesses for kill -9),
and a real gateway (uvicorn, port 0) in front of them; all on the shared real NATS.

Tests share NATS (and so the ticket bucket) with earlier tests. Each test keeps its
tickets apart from any other test's by a config field nobody else sets to the same
value (:func:`private_config`): tickets with different values are never matched.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from client.sdk import AsyncCellWarClient
from gateway.app import create_app
from services.common.settings import Settings
from services.matchmaker.server import MatchmakerApp
from services.matchmaker.server import create_server as create_matchmaker_server
from tests.api.conftest import TEST_SECRET, serve
from tests.support.stack import TEST_SETTINGS, Stack, _ServiceProcess, make_settings

#: Matchmaker settings of the tests: a fast loop, claims recovered after 3 s.
MM_SETTINGS: dict[str, Any] = {"matchmaker_interval_s": 0.05, "match_claim_timeout_s": 3.0}


def private_config(kind: str = "life") -> dict[str, Any]:
    """A partial config no other test asks for (a random value of a field that changes
    nothing the test looks at): only this test's tickets can be matched together."""
    if kind == "cellwar":
        return {"disconnect_timeout_s": 3600 + random.randrange(1, 10**6) / 1000}
    return {"max_generations": random.randrange(10**6, 10**9)}


async def start_matchmaker(stack: Stack, **overrides: Any) -> MatchmakerApp:
    """A matchmaker instance in this process on 127.0.0.1:0 for ``stack``'s session."""
    settings = make_settings(
        stack.settings.nats_url, session_addr=stack.session_target, **{**MM_SETTINGS, **overrides}
    )
    _, _, app = await create_matchmaker_server(
        "127.0.0.1:0", nats_url=settings.nats_url, session_target=stack.session_target, settings=settings
    )
    return app


@pytest.fixture
async def matchmaker(stack: Stack) -> AsyncIterator[MatchmakerApp]:
    """One in-process matchmaker instance."""
    app = await start_matchmaker(stack)
    try:
        yield app
    finally:
        await app.stop(grace=0.2)


@pytest.fixture
async def mm_url(stack: Stack, matchmaker: MatchmakerApp) -> AsyncIterator[str]:
    """Base URL of a real gateway in front of the stack's session and the matchmaker."""
    settings = Settings(
        session_addr=stack.session_target,
        matchmaker_addr=f"127.0.0.1:{matchmaker.port}",
        secret=TEST_SECRET,
        rate_limit_per_s=0,
    )
    async with serve(create_app(settings)) as url:
        yield url


@pytest.fixture
async def mm_api(mm_url: str) -> AsyncIterator[AsyncCellWarClient]:
    """An SDK client of that gateway."""
    async with AsyncCellWarClient(mm_url, timeout=30) as client:
        yield client


async def eventually(
    check: Callable[[], Awaitable[Any]], *, timeout: float = 60.0, every: float = 0.05, what: str = ""
) -> Any:
    """Call ``check`` until it returns a truthy value (returned) or ``timeout`` seconds
    pass (AssertionError). For a loaded 2-core machine: generous deadlines, no sleeps."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = await check()
        if last:
            return last
        await asyncio.sleep(every)
    raise AssertionError(f"not true after {timeout} s: {what} (last: {last!r})")


class MatchmakerProcess(_ServiceProcess):
    """``python -m services.matchmaker`` as a subprocess (for kill -9 tests)."""

    module = "services.matchmaker"

    def __init__(self, nats_url: str, session_target: str, *, log_path: str | None = None, **settings: Any):
        super().__init__({}, 0, log_path)
        values = {**TEST_SETTINGS, **MM_SETTINGS, **settings}
        self.env = {f"CELLWAR_{k.upper()}": str(v) for k, v in values.items()}
        self.env.update(
            {
                "CELLWAR_NATS_URL": nats_url,
                "CELLWAR_SESSION_ADDR": session_target,
                "CELLWAR_MATCHMAKER_ADDR": self.target,
                "CELLWAR_LOG_FORMAT": "json",
            }
        )
