"""structlog set-up, done once at each entry point.

JSON lines by default (``CELLWAR_LOG_FORMAT=json``), a readable console format for
people (``console``). Stdlib loggers (grpc, uvicorn, nats) go through the same
processors. Bind ``game_id``, ``player_id`` and ``seq`` with
``structlog.contextvars.bind_contextvars`` or ``log.bind``.
"""

from __future__ import annotations

import logging
import os
import sys

import structlog


def _colours() -> bool:
    """ANSI colours only on a terminal and without ``NO_COLOR`` (no-color.org): a log file
    written by the runner or a redirect reads as plain text."""
    return sys.stderr.isatty() and not os.environ.get("NO_COLOR")


#: Libraries whose per-request info lines are shown only at ``debug``.
QUIET_LOGGERS = ("httpx", "httpcore")


def configure_logging(fmt: str = "json", level: str = "info", service: str | None = None) -> None:
    """Configure structlog and the stdlib root logger.

    Args:
        fmt: ``"json"`` or ``"console"``.
        level: a stdlib level name (the loggers of :data:`QUIET_LOGGERS` say their
            info lines only at ``debug``).
        service: bound as ``service`` on every line when given.
    """
    lvl = getattr(logging, level.upper(), logging.INFO)
    shared = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer = (
        structlog.dev.ConsoleRenderer(colors=_colours())
        if fmt == "console"
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(lvl)
    # the HTTP clients' own line per request (httpx: "HTTP Request: GET ... 200") only
    # at debug: at info it drowns the service's events (a bot polls many times a minute)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(lvl if lvl <= logging.DEBUG else logging.WARNING)
    if service:
        structlog.contextvars.bind_contextvars(service=service)
