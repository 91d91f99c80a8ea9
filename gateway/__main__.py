"""``python -m gateway``: serve the gateway with uvicorn on ``CELLWAR_HTTP_HOST:CELLWAR_HTTP_PORT``.

Logs go through structlog (JSON by default, ``CELLWAR_LOG_FORMAT=console`` for people);
uvicorn's own loggers are routed through the same processors and its access log is
replaced by the gateway's structlog access log (gateway/observability.py). Tokens are
redacted from every log line (gateway/redact.py). A known default ``CELLWAR_SECRET``
stops the start with exit code 2 and a log line saying why.
"""

from __future__ import annotations

import sys

import structlog
import uvicorn

from gateway.app import create_app
from gateway.ws_protocol import deflating_protocol
from services.common import heap
from services.common.logging import configure_logging
from services.common.settings import settings_or_exit
from services.common.signing_key import SecretError


def main() -> int:
    """Run the gateway until SIGINT/SIGTERM. Returns the exit code."""
    settings = settings_or_exit("python -m gateway")
    configure_logging(settings.log_format, settings.log_level, service="gateway")
    try:
        app = create_app(settings)
    except SecretError as exc:
        structlog.get_logger("gateway").error("gateway_refused_secret", error=str(exc))
        return 2
    heap.settle()  # after the start, before serving (services/common/heap.py)
    uvicorn.run(
        app,
        host=settings.http_host,
        port=settings.http_port,
        log_config=None,
        access_log=False,
        # Forwarded headers are the app's business (CELLWAR_TRUSTED_PROXIES); uvicorn's
        # default would trust X-Forwarded-For from 127.0.0.1.
        proxy_headers=False,
        # websockets' sans-I/O protocol, views deflated at CELLWAR_WS_DEFLATE_LEVEL
        # (gateway/ws_protocol.py)
        ws=deflating_protocol(settings.ws_deflate_level),
        # A message above the gateway's own limit is refused by the app with an error
        # frame (gateway/limits.py); uvicorn's bound, above it, caps what is buffered.
        ws_max_size=max(64 * 1024, 4 * settings.ws_max_message_bytes or 4 * 1024 * 1024),
        # Longer than nginx's upstream keepalive_timeout (deploy/nginx.conf): nginx never
        # reuses a connection the gateway is closing (a 502).
        timeout_keep_alive=settings.http_keep_alive_s,
        timeout_graceful_shutdown=5,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
