"""Shared fixtures: a real NATS with JetStream (session scope), an in-process engine +
session stack (function scope: ``stack`` on in-memory ports, ``nats_stack`` on the real
NATS), and the markers that sort the suite by what it needs. See tests/support/.

Markers given here at collection (``make test-fast`` leaves them out):

- ``nats``: the test uses a fixture whose name says ``nats`` — ``nats_url`` directly or
  through another fixture (``nats_stack``, the root ``stack`` outside tests/api), a NATS
  of its own (``own_nats``) — or is marked by hand;
- ``nats`` too: everything under tests/cluster (each test runs a NATS cluster);
- ``docker``: everything under tests/containers;
- ``browser``: everything under tests/browser.

With ``CELLWAR_TEST_FAST=1`` (``make test-fast``) ``CELLWAR_TEST_NATS_URL`` is ignored and
a test that leaves a ``nats-server`` process running under pytest fails: it needs the
``nats`` marker.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.support.nats import ENV_URL, nats_server
from tests.support.processes import nats_servers
from tests.support.stack import Stack, start_stack

_TESTS = Path(__file__).resolve().parent
#: Directories whose tests get a marker by where they live.
_BY_PLACE = {"containers": "docker", "browser": "browser", "cluster": "nats"}
#: Set by ``make test-fast``: the tests run without any NATS (module docstring).
FAST = os.environ.get("CELLWAR_TEST_FAST") == "1"


def pytest_configure(config) -> None:
    """In the fast loop no NATS is reached, not even one named by ``CELLWAR_TEST_NATS_URL``."""
    if FAST:
        os.environ.pop(ENV_URL, None)


@pytest.fixture(autouse=FAST)
def _fast_loop_guard() -> Iterator[None]:
    """(``make test-fast`` only) Fail a test after which a ``nats-server`` runs under
    pytest: it started one without the ``nats`` marker."""
    yield
    running = nats_servers()
    if running:
        pytest.fail(f"nats-server running under the tests (pids {running}): mark the test nats")


@pytest.fixture(scope="session")
def nats_url() -> Iterator[str]:
    """URL of a NATS server with JetStream: ``CELLWAR_TEST_NATS_URL``, a testcontainers
    container when Docker answers, else a ``nats-server`` subprocess in a temp dir."""
    with nats_server() as url:
        yield url


@pytest.fixture
async def nats_stack(nats_url: str) -> AsyncIterator[Stack]:
    """Engine + session gRPC servers in this process on the test NATS
    (``generations_per_second=400``); ``stack.session_target`` /
    ``stack.engine_target`` are ``"127.0.0.1:port"``."""
    s = await start_stack(nats_url)
    try:
        yield s
    finally:
        await s.stop()


@pytest.fixture
async def stack(nats_url: str) -> AsyncIterator[Stack]:
    """:func:`nats_stack` (tests/api/conftest.py gives its tests a ``stack`` in memory)."""
    s = await start_stack(nats_url)
    try:
        yield s
    finally:
        await s.stop()


@pytest.fixture
async def memory_stack() -> AsyncIterator[Stack]:
    """Engine + session gRPC servers in this process, the session on in-memory ports
    (services/session/bootstrap.py ``memory_ports``): no NATS is started or reached."""
    s = await start_stack()
    try:
        yield s
    finally:
        await s.stop()


def pytest_collection_modifyitems(config, items) -> None:
    """Mark the tests that need NATS, Docker or a browser (module docstring)."""
    for item in items:
        if any("nats" in name for name in getattr(item, "fixturenames", ()) if name[0] != "_"):
            item.add_marker(pytest.mark.nats)
        try:
            parts = Path(str(item.path)).resolve().relative_to(_TESTS).parts
        except ValueError:
            continue
        marker = _BY_PLACE.get(parts[0]) if parts else None
        if marker is not None:
            item.add_marker(getattr(pytest.mark, marker))


def pytest_terminal_summary(terminalreporter) -> None:
    """Say which NATS the suite used (container, subprocess or CELLWAR_TEST_NATS_URL)."""
    from tests.support.nats import USED

    for line in USED:
        terminalreporter.write_line(line)
