"""``python -m services.engine``: run the Engine gRPC service on ``CELLWAR_ENGINE_ADDR``."""

from __future__ import annotations

import asyncio
import signal

import structlog

from engine.life import slots
from services.common import heap, loop
from services.common.logging import configure_logging
from services.common.settings import get_settings, settings_or_exit
from services.engine.server import create_server


async def serve() -> None:
    """Serve until SIGINT/SIGTERM, then stop gracefully (``settings.shutdown_grace_s``)."""
    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level, service="engine")
    log = structlog.get_logger("cellwar.engine")
    kernel = slots.use_kernel(settings.engine_kernel)
    if kernel != settings.engine_kernel:
        log.warning(
            "engine_kernel_not_built",
            wanted=settings.engine_kernel,
            kernel=kernel,
            hint="install a C compiler (gcc or clang), then .venv/bin/pip install -e . "
            "(docs/hosting.md, Several session and engine instances)",
        )
    server, port = await create_server(settings.engine_addr)
    stop = asyncio.Event()
    running = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        running.add_signal_handler(sig, stop.set)
    heap.settle()
    log.info("engine_listening", address=settings.engine_addr, port=port, kernel=kernel)
    await stop.wait()
    log.info("engine_stopping")
    await server.stop(settings.shutdown_grace_s)


def main() -> None:
    """Entry point (on the loop of ``CELLWAR_EVENT_LOOP``, services/common/loop.py)."""
    settings = settings_or_exit("python -m services.engine")
    loop.run(serve(), settings.event_loop)


if __name__ == "__main__":
    main()
