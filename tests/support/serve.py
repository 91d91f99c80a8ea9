"""The gateway app under uvicorn on 127.0.0.1, port 0, in the caller's event loop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from fastapi import FastAPI

from gateway.ws_protocol import deflating_protocol


@contextlib.asynccontextmanager
async def serve(app: FastAPI, port: int = 0, **uvicorn_options: Any) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1:``port`` (0: a free port); yields the base
    URL. ``uvicorn_options`` override the ``uvicorn.Config`` arguments (e.g. ``access_log``)."""
    options: dict[str, Any] = {
        "log_config": None,
        "access_log": False,
        # The app reads forwarded headers itself (CELLWAR_TRUSTED_PROXIES), as
        # `python -m gateway` runs it.
        "proxy_headers": False,
        "lifespan": "on",
        # as `python -m gateway` runs it with the default CELLWAR_WS_DEFLATE_LEVEL
        "ws": deflating_protocol(1),
        **uvicorn_options,
    }
    config = uvicorn.Config(app, host="127.0.0.1", port=port, **options)
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
