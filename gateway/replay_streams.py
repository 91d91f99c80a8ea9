"""The replay tools' streams, used by the games and stream routes (docs/replays.md):
the event log as JSON Lines, and delayed spectators' views and frames.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import structlog
from fastapi import WebSocket
from fastapi.responses import Response, StreamingResponse

from cellwar.v1 import events_pb2, session_pb2
from gateway.deps import RPC_TIMEOUT_S
from gateway.errors import from_rpc_error
from gateway.wire import seq_view_json, seq_view_response
from services.common.jsonwire import event_json

log = structlog.get_logger("gateway.replay")

#: Deadline of one streamed event log (seconds).
STREAM_TIMEOUT_S = 600.0
#: Media type of a JSON Lines log (``application/jsonl`` is accepted on import too).
JSONL = "application/x-ndjson"
#: A spectator's ``delay_s`` when none is given: the least the game allows (the session
#: reads a negative delay so).
DEFAULT_DELAY = -1.0


# --------------------------------------------------------------------------- JSON Lines


def _line(event: events_pb2.Event) -> bytes:
    return json.dumps(event_json(event), separators=(",", ":")).encode() + b"\n"


async def events_jsonl(session: Any, request: session_pb2.ListEventsRequest) -> Response:
    """``GET /game/{id}/events?format=jsonl``: the log's event objects one per line,
    streamed from ``Session.StreamEvents`` page by page (a long log is never built whole
    in the gateway). The first event is read before answering, so a refusal (403, 404)
    is an HTTP error; a failure after that ends the body early (logged).

    Raises:
        grpc.RpcError: the session refused (the app maps it to HTTP).
    """
    call = session.StreamEvents(request, timeout=STREAM_TIMEOUT_S)
    stream = call.__aiter__()
    try:
        first: events_pb2.Event | None = await stream.__anext__()
    except StopAsyncIteration:
        first = None

    async def body() -> AsyncIterator[bytes]:
        if first is None:
            return
        yield _line(first)
        try:
            async for event in stream:
                yield _line(event)
        except grpc.RpcError as exc:
            log.warning("events_stream_cut", game_id=request.game_id, error=str(exc))

    return StreamingResponse(body(), media_type=JSONL)


# --------------------------------------------------------------------------- spectators


async def spectator_state(session: Any, game_id: str, delay_s: float | None) -> Response:
    """``GET /game/{id}/state?spectate=1&delay_s=N``: ``{"seq", "view"}`` of the game as it
    was ``delay_s`` seconds ago (default: the least the game allows).

    Raises:
        grpc.RpcError: ``MALFORMED`` (a delay below the game's minimum), 409
            ``NOT_YET_VISIBLE``, 409 ``SPECTATORS_AFTER_END`` (a running CellWar game
            without ``"spectators": "live"``: docs/spectators.md), 404, 503.
    """
    reply = await session.SpectatorView(
        session_pb2.SpectateRequest(
            game_id=game_id, delay_s=DEFAULT_DELAY if delay_s is None else delay_s
        ),
        timeout=RPC_TIMEOUT_S,
    )
    return seq_view_response(reply.seq, reply.view)


async def pump_spectator(websocket: WebSocket, game_id: str, delay_s: float | None) -> None:
    """Send every frame of ``Session.Spectate`` (``{"type": "view"|"finished", "seq",
    "view"}``) to ``websocket`` until the stream ends, each as it comes (one per event
    of a game whose spectator sees everything: none is dropped or merged here).

    Raises:
        ApiError: the session refused or failed (``SPECTATORS_AFTER_END`` and others;
            the route sends the error frame).
    """
    call = websocket.app.state.session.Spectate(
        session_pb2.SpectateRequest(
            game_id=game_id, delay_s=DEFAULT_DELAY if delay_s is None else delay_s
        )
    )
    try:
        async for update in call:
            frame = seq_view_json(update.seq, update.view, update.type or "view")
            await websocket.send_text(frame.decode())
    except grpc.RpcError as exc:
        raise from_rpc_error(exc) from exc
    finally:
        call.cancel()
