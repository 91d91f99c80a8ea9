"""The gateway's WebSocket protocol for uvicorn: uvicorn's implementation over
websockets' sans-I/O protocol (``ws="websockets-sansio"``), with the permessage-deflate
compressor (RFC 7692) at the zlib level ``CELLWAR_WS_DEFLATE_LEVEL`` instead of zlib's
default 6, or with no compression at level 0.

Why: a watched running game sends each of its sockets a view every tick, and deflating
views at level 6 was the gateway's largest single cost (py-spy: ~22 % of its CPU with 100
watched 60×60 games). Level 1 (``Z_BEST_SPEED``) deflates a stream of a running game's
views ~2.7× faster for 60×60 boards (21 against 57 µs per view) and ~4.2× for 300×300
(390 against 1,640 µs), for frames ~20–27 % larger; docs/hosting.md "WebSocket
compression". Window bits and memory level stay uvicorn's (12 and 5), which set the
client's share of the negotiation.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory
from websockets.server import ServerProtocol

__all__ = ["deflating_protocol"]

#: uvicorn's permessage-deflate parameters (kept: the level is what changes).
WINDOW_BITS = 12
MEM_LEVEL = 5


def deflate_factory(level: int) -> ServerPerMessageDeflateFactory:
    """The server's permessage-deflate offer with zlib ``level`` (1..9)."""
    return ServerPerMessageDeflateFactory(
        server_max_window_bits=WINDOW_BITS,
        client_max_window_bits=WINDOW_BITS,
        compress_settings={"memLevel": MEM_LEVEL, "level": level},
    )


def deflating_protocol(level: int) -> type[WebSocketsSansIOProtocol]:
    """uvicorn's ``ws`` protocol class compressing at zlib ``level`` (0: no compression
    is offered; 1..9 as zlib). Raises ValueError outside 0..9."""
    if not 0 <= level <= 9:
        raise ValueError(f"a zlib level is 0..9, not {level}")

    class DeflatingProtocol(WebSocketsSansIOProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # uvicorn builds its own offer (zlib's default level) in __init__; nothing
            # has been negotiated yet, so the connection is made again with this one
            self.conn = ServerProtocol(
                extensions=[deflate_factory(level)] if level else [],
                max_size=self.config.ws_max_size,
                logger=self.conn.logger,
            )

    DeflatingProtocol.__qualname__ = f"DeflatingProtocol[level={level}]"
    return DeflatingProtocol
