"""Keep tokens out of every log line (docs/hosting.md "Security and limits").

uvicorn writes a WebSocket's request line with its query string (``"WebSocket
/game/g/stream?token=..." [accepted]``) on the ``uvicorn.error`` logger, its access log
writes HTTP request lines with theirs, and the ``websockets`` library logs handshake
headers at debug level. :class:`RedactingFilter` rewrites such records before any
handler sees them: a ``token=``-like query parameter keeps its name and loses its value,
a bearer credential (``Bearer <token>`` or the ``bearer.<token>`` WebSocket subprotocol)
loses its token. :func:`install_log_redaction` puts the filter on the loggers that write
request lines and on the root logger's handlers (where every propagated record passes).

The gateway's own access log (gateway/observability.py) logs the path without its query
string and never a header, so it needs no rewriting.
"""

from __future__ import annotations

import logging
import re
from typing import Any

#: What replaces a secret in a log line.
REDACTED = "[redacted]"

#: Query parameters whose value is a credential.
_QUERY = re.compile(
    r"(?i)(?P<name>\b(?:token|player_token|profile_token|ticket_token|access_token)=)"
    r"(?P<value>[^&\s\"'#;,]+)"
)
#: ``Bearer <token>`` (an Authorization header) and ``bearer.<token>`` (the subprotocol).
_BEARER = re.compile(r"(?i)(?P<name>\bbearer(?:\s+|\.))(?P<value>[A-Za-z0-9._~+/=-]+)")

#: Loggers that write request lines or handshake headers (a logger's filters see only the
#: records logged on it, so each is named).
REQUEST_LOGGERS = (
    "uvicorn",
    "uvicorn.error",
    "uvicorn.access",
    "uvicorn.asgi",
    "websockets",
    "websockets.server",
    "websockets.client",
    "httpx",
    "httpcore",
)


def redact(text: str) -> str:
    """``text`` with every credential replaced by :data:`REDACTED`, e.g.
    ``"/game/g/stream?token=abc.def"`` → ``"/game/g/stream?token=[redacted]"``."""
    if "=" in text:
        text = _QUERY.sub(lambda m: m["name"] + REDACTED, text)
    if "earer" in text or "EARER" in text:
        text = _BEARER.sub(lambda m: m["name"] + REDACTED, text)
    return text


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, bytes):
        return redact(value.decode("latin-1"))
    if isinstance(value, dict):
        return {k: _redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_redact_value(v) for v in value)
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that rewrites a record's message and arguments through
    :func:`redact`; it never drops a record. A structlog record (its ``msg`` an event
    dict) has its string values rewritten."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite ``record`` in place; always True."""
        if isinstance(record.msg, dict):
            record.msg = _redact_value(record.msg)
            return True
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken format string: leave it to the handler
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg = cleaned
            record.args = None
        return True


_FILTER = RedactingFilter()


def install_log_redaction() -> None:
    """Put the redacting filter on :data:`REQUEST_LOGGERS` and on every handler of the
    root logger (idempotent; call again after the handlers change)."""
    for name in REQUEST_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    for handler in logging.getLogger().handlers:
        if _FILTER not in handler.filters:
            handler.addFilter(_FILTER)
