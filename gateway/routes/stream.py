"""WS /game/{id}/stream: the session's Watch stream bridged to a WebSocket (DESIGN §7).

Messages (JSON text frames): ``{"type": "view", "seq", "view"}`` after every change and
every generation batch, then ``{"type": "finished", "seq", "view"}``, after which the
server closes with 1000. The player token is optional (without one the viewer is a
spectator) and travels, preferably, as a WebSocket subprotocol: offer
``Sec-WebSocket-Protocol: cellwar.v1, bearer.<token>`` (JavaScript: ``new WebSocket(url,
["cellwar.v1", "bearer." + token])``); the server selects ``cellwar.v1``. A URL never
carries it then, so no proxy or server log can. ``?token=<token>`` still works for old
clients (the gateway redacts it from its logs, gateway/redact.py; a proxy in front logs
its own request lines). With both, the subprotocol's token counts.

Errors are sent as one ``{"type": "error", "error": {"code", "message"}}`` frame, then
the socket closes with 4000 + the HTTP status: 4401 bad token, 4403 token of another
game, 4404 unknown game, 4503 session unavailable.

All the sockets of one (game, player) in this gateway share ONE upstream Watch
(gateway/fanout.py): a socket that joins starts with the newest view; a socket that
falls more than ``QUEUE_FRAMES`` frames behind skips to the newest view (every frame
is delivered to sockets that keep up; ``finished`` always is). When the last socket
of a key goes away, its Watch is cancelled at once (for a player: presence lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import structlog
from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from starlette.websockets import WebSocketState

from gateway.errors import ApiError
from gateway.fanout import Subscription
from gateway.observability import Metrics
from gateway.ws_auth import offered_token, selected_subprotocol

router = APIRouter(tags=["stream"])
log = structlog.get_logger("gateway.stream")


async def _close_with_error(websocket: WebSocket, err: ApiError) -> None:
    """Send the error frame and close with 4000 + HTTP status."""
    with contextlib.suppress(Exception):
        await websocket.send_text(json.dumps({"type": "error", **err.body()}))
        await websocket.close(code=err.ws_close_code, reason=err.code[:120])


async def _pump(websocket: WebSocket, frames: Subscription, metrics: Metrics) -> None:
    """Send every frame of the shared Watch as a JSON text frame until it ends; raises
    the upstream's :class:`ApiError`."""
    async for frame in frames:
        await websocket.send_text(frame)
        metrics.ws_messages.labels(_kind(frame)).inc()


def _kind(frame: str) -> str:
    """``type`` of a ``{"type":"...",...}`` frame (built by gateway/wire.py)."""
    return frame[9 : frame.index('"', 9)]


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
    await websocket.accept(subprotocol=selected_subprotocol(websocket.scope))
    structlog.contextvars.bind_contextvars(game_id=game_id)
    token = offered_token(websocket.scope) or token
    try:
        player_id = app.state.signer.verify(token, game_id).player_id if token else 0
    except ApiError as err:
        await _close_with_error(websocket, err)
        return
    structlog.contextvars.bind_contextvars(player_id=player_id)
    frames = app.state.fanout.subscribe(game_id, player_id)
    pump = asyncio.create_task(_pump(websocket, frames, app.state.metrics))
    drain = asyncio.create_task(_drain(websocket))
    log.info("ws_open")
    try:
        done, _ = await asyncio.wait({pump, drain}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (pump, drain):
            task.cancel()
        frames.close()
        for task in (pump, drain):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    if pump in done and not pump.cancelled():
        exc = pump.exception()
        if exc is None:
            # The game finished (or the session ended the stream): a clean close.
            with contextlib.suppress(Exception):
                await websocket.close(code=1000)
        elif isinstance(exc, ApiError):
            await _close_with_error(websocket, exc)
        elif not isinstance(exc, WebSocketDisconnect | RuntimeError):
            log.warning("ws_pump_failed", error=repr(exc))
            await _close_with_error(websocket, ApiError(500, "INTERNAL", "stream failed"))
    elif websocket.client_state == WebSocketState.CONNECTED:
        with contextlib.suppress(Exception):
            await websocket.close(code=1000)
    log.info("ws_closed")
