"""Shared fixtures: a real NATS with JetStream (session scope) and an in-process
engine + session stack (function scope). See tests/support/."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support.nats import nats_server
from tests.support.stack import Stack, start_stack


@pytest.fixture(scope="session")
def nats_url() -> Iterator[str]:
    """URL of a NATS server with JetStream: ``CELLWAR_TEST_NATS_URL``, a testcontainers
    container when Docker answers, else a ``nats-server`` subprocess in a temp dir."""
    with nats_server() as url:
        yield url


@pytest.fixture
async def stack(nats_url: str) -> AsyncIterator[Stack]:
    """Engine + session gRPC servers in this process (``generations_per_second=400``);
    ``stack.session_target`` / ``stack.engine_target`` are ``"127.0.0.1:port"``."""
    s = await start_stack(nats_url)
    try:
        yield s
    finally:
        await s.stop()


def pytest_terminal_summary(terminalreporter) -> None:
    """Say which NATS the suite used (container, subprocess or CELLWAR_TEST_NATS_URL)."""
    from tests.support.nats import USED

    for line in USED:
        terminalreporter.write_line(line)
