"""``python -m services.session``: run a session instance (``CELLWAR_SESSION_ADDR``,
``CELLWAR_NATS_URL``, ``CELLWAR_ENGINE_ADDR``) until SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import signal

import structlog

from services.common import heap, loop, natsconn
from services.common.logging import configure_logging
from services.common.settings import get_settings, settings_or_exit
from services.session.server import create_server


async def serve() -> None:
    """Serve until a signal, then stop gracefully (``settings.shutdown_grace_s`` seconds)."""
    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level, service="session")
    log = structlog.get_logger("cellwar.session")
    _, port, app = await natsconn.or_exit(
        create_server(
            settings.session_addr,
            nats_url=settings.nats_url,
            engine_target=settings.engine_addr,
            settings=settings,
        ),
        log,
    )
    stop = asyncio.Event()
    running = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        running.add_signal_handler(sig, stop.set)
    heap.settle()
    log.info("session_listening", address=settings.session_addr, port=port)
    await stop.wait()
    log.info("session_stopping")
    await app.stop()


def main() -> None:
    """Entry point (on the loop of ``CELLWAR_EVENT_LOOP``, services/common/loop.py)."""
    settings = settings_or_exit("python -m services.session")
    loop.run(serve(), settings.event_loop)


if __name__ == "__main__":
    main()
