"""``python -m tests.support.memory_session``: one session instance on in-memory ports
(services/session/bootstrap.py ``memory_ports``: no NATS) serving ``CELLWAR_SESSION_ADDR``
against ``CELLWAR_ENGINE_ADDR`` until SIGINT/SIGTERM, for tests that want the session in
a process of its own without a NATS (tests/support/stack.py ``MemorySessionProcess``).
Its games live as long as the process."""

from __future__ import annotations

import asyncio
import signal

import structlog

from services.common import loop
from services.common.logging import configure_logging
from services.common.settings import get_settings
from services.session.bootstrap import bootstrap, memory_ports


async def serve() -> None:
    """Serve until a signal, then stop."""
    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level, service="session")
    log = structlog.get_logger("cellwar.session")
    app = await bootstrap(memory_ports(settings=settings), settings, settings.session_addr)
    stop = asyncio.Event()
    running = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        running.add_signal_handler(sig, stop.set)
    log.info("session_listening", address=settings.session_addr, port=app.port, ports="memory")
    await stop.wait()
    await app.stop()


if __name__ == "__main__":
    loop.run(serve(), get_settings().event_loop)
