"""Python SDK of the CellWar REST + WebSocket API (docs/api/), on httpx and websockets.

Two clients with the same methods: :class:`AsyncCellWarClient` (asyncio; bots, RL
environments) and :class:`CellWarClient` (plain blocking calls; notebooks, scripts).
Every error answer of the server raises :class:`ApiError` with the HTTP status and the
machine code (``OUT_OF_ZONE``, ``NOT_YOUR_TURN``, ...).

Example::

    async with AsyncCellWarClient("http://localhost:8000") as api:
        game_id = await api.create_game("life", {"width": 60, "height": 60, "budget": 100})
        seat = await api.join(game_id, "alice")
        await api.place(game_id, seat.token, [(3, 4), (4, 4), (5, 4)])
        await api.end_turn(game_id, seat.token)
        async for message in api.stream(game_id, seat.token):
            print(message["type"], message["view"]["generation"])

Each operation is written once (:mod:`client.sdk.ops`, without I/O, on the shapes and
rules of :mod:`client.sdk.core`) and run by either client (:mod:`client.sdk.aio`,
:mod:`client.sdk.sync`), which only do the I/O. ``commands(game_id, token)`` sends a
seat's actions over its stream socket (docs/api/websocket.md "Commands").

The SDK never imports the engine: it speaks only the public API.
"""

from client.sdk.aio import AsyncCellWarClient, AsyncCommands
from client.sdk.core import (
    DEFAULT_TIMEOUT_S,
    FINAL_TICKET_STATUSES,
    LOBBY_PAGE,
    MESSAGES_KEPT,
    RETRY_FIRST_WAIT_S,
    RETRY_MAX_WAIT_S,
    STREAM_SUBPROTOCOL,
    ApiError,
    RetryHook,
    Seat,
    spectate_url,
    stream_subprotocols,
    stream_url,
    ticket_stream_url,
)
from client.sdk.sync import CellWarClient, Commands

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "FINAL_TICKET_STATUSES",
    "LOBBY_PAGE",
    "MESSAGES_KEPT",
    "RETRY_FIRST_WAIT_S",
    "RETRY_MAX_WAIT_S",
    "STREAM_SUBPROTOCOL",
    "ApiError",
    "AsyncCellWarClient",
    "AsyncCommands",
    "CellWarClient",
    "Commands",
    "RetryHook",
    "Seat",
    "spectate_url",
    "stream_subprotocols",
    "stream_url",
    "ticket_stream_url",
]
