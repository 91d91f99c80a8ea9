"""``python -m gateway``: serve the gateway with uvicorn on ``CELLWAR_HTTP_HOST:CELLWAR_HTTP_PORT``.

Logs go through structlog (JSON by default, ``CELLWAR_LOG_FORMAT=console`` for people);
uvicorn's own loggers are routed through the same processors and its access log is
replaced by the gateway's structlog access log (gateway/observability.py).
"""

from __future__ import annotations

import sys

import uvicorn

from gateway.app import create_app
from services.common.logging import configure_logging
from services.common.settings import get_settings


def main() -> int:
    """Run the gateway until SIGINT/SIGTERM. Returns the exit code."""
    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level, service="gateway")
    app = create_app(settings)
    uvicorn.run(
        app,
        host=settings.http_host,
        port=settings.http_port,
        log_config=None,
        access_log=False,
        ws="websockets-sansio",
        timeout_graceful_shutdown=5,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
