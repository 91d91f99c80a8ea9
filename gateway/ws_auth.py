"""Tokens of WebSockets without a URL: the ``bearer.<token>`` subprotocol.

A client offers ``Sec-WebSocket-Protocol: cellwar.v1, bearer.<token>`` (JavaScript:
``new WebSocket(url, ["cellwar.v1", "bearer." + token])``); the server selects
``cellwar.v1`` and reads the token from the other offer. The token is then in no URL,
so no proxy or server request line (and no log of one) carries it. ``?token=`` stays
accepted for old clients (redacted from the gateway's logs, gateway/redact.py).
"""

from __future__ import annotations

from starlette.types import Scope

#: The subprotocol a client offers and the server selects.
STREAM_SUBPROTOCOL = "cellwar.v1"
#: Prefix of the offered subprotocol that carries the token.
BEARER_SUBPROTOCOL_PREFIX = "bearer."


def offered_token(scope: Scope) -> str | None:
    """The token of a ``bearer.<token>`` subprotocol the client offered, else None."""
    for protocol in scope.get("subprotocols") or ():
        if protocol.startswith(BEARER_SUBPROTOCOL_PREFIX) and len(protocol) > len(BEARER_SUBPROTOCOL_PREFIX):
            return protocol[len(BEARER_SUBPROTOCOL_PREFIX):]
    return None


def selected_subprotocol(scope: Scope) -> str | None:
    """``cellwar.v1`` when the client offered it (then the server must select it)."""
    return STREAM_SUBPROTOCOL if STREAM_SUBPROTOCOL in (scope.get("subprotocols") or ()) else None
