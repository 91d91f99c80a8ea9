"""WS /game/{id}/stream: the session's Watch stream bridged to a WebSocket (DESIGN §7).

Messages (JSON text frames): ``{"type": "view", "seq", "view"}`` after every change and
every generation batch, then ``{"type": "finished", "seq", "view"}``, after which the
server closes with 1000. ``?token=`` is optional: without it the viewer is a spectator.

Errors are sent as one ``{"type": "error", "error": {"code", "message"}}`` frame, then
the socket closes with 4000 + the HTTP status: 4401 bad token, 4403 token of another
game, 4404 unknown game, 4503 session unavailable. When the client goes away the Watch
call is cancelled at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import grpc
import structlog
from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from starlette.websockets import WebSocketState

from cellwar.v1 import session_pb2
from gateway.errors import ApiError, from_rpc_error
from gateway.observability import Metrics
from gateway.wire import seq_view_json

router = APIRouter(tags=["stream"])
log = structlog.get_logger("gateway.stream")


async def _close_with_error(websocket: WebSocket, err: ApiError) -> None:
    """Send the error frame and close with 4000 + HTTP status."""
    with contextlib.suppress(Exception):
        await websocket.send_text(json.dumps({"type": "error", **err.body()}))
        await websocket.close(code=err.ws_close_code, reason=err.code[:120])


async def _pump(websocket: WebSocket, call: grpc.aio.UnaryStreamCall, metrics: Metrics) -> None:
    """Forward every WatchUpdate as a JSON text frame until the stream ends."""
    async for update in call:
        kind = update.type or "view"
        await websocket.send_text(seq_view_json(update.seq, update.view, kind).decode())
        metrics.ws_messages.labels(kind).inc()


async def _drain(websocket: WebSocket) -> None:
    """Read (and ignore) client frames until the client disconnects."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return


@router.websocket("/game/{game_id}/stream", name="stream")
async def stream(websocket: WebSocket, game_id: str, token: str | None = None) -> None:
    """Bridge ``Session.Watch(game_id, player_id)`` to this WebSocket until the game ends
    or the client goes."""
    app = websocket.app
    await websocket.accept()
    structlog.contextvars.bind_contextvars(game_id=game_id)
    try:
        player_id = app.state.signer.verify(token, game_id).player_id if token else 0
    except ApiError as err:
        await _close_with_error(websocket, err)
        return
    structlog.contextvars.bind_contextvars(player_id=player_id)
    call = app.state.session.Watch(session_pb2.WatchRequest(game_id=game_id, player_id=player_id))
    pump = asyncio.create_task(_pump(websocket, call, app.state.metrics))
    drain = asyncio.create_task(_drain(websocket))
    log.info("ws_open")
    try:
        done, _ = await asyncio.wait({pump, drain}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (pump, drain):
            task.cancel()
        call.cancel()
        for task in (pump, drain):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    if pump in done and not pump.cancelled():
        exc = pump.exception()
        if exc is None:
            # The game finished (or the session ended the stream): a clean close.
            with contextlib.suppress(Exception):
                await websocket.close(code=1000)
        elif isinstance(exc, grpc.RpcError):
            err = from_rpc_error(exc)
            await _close_with_error(websocket, err)
        elif not isinstance(exc, WebSocketDisconnect | RuntimeError):
            log.warning("ws_pump_failed", error=repr(exc))
            await _close_with_error(websocket, ApiError(500, "INTERNAL", "stream failed"))
    elif websocket.client_state == WebSocketState.CONNECTED:
        with contextlib.suppress(Exception):
            await websocket.close(code=1000)
    log.info("ws_closed")
