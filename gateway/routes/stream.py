"""WS /game/{id}/stream: the session's Watch stream bridged to a WebSocket, and the
player's commands over it (docs/api/websocket.md).

Messages (JSON text frames): ``{"type": "view", "seq", "view"}`` after every change and
every generation batch (the change a command of this socket made comes as that
command's ``result``, which carries the same seq and view: its view frame is not sent
again), then ``{"type": "finished", "seq", "view"}``, after which the
server closes with 1000 (once the commands already read are answered). The client may
send commands, ``{"type": "action", "id", "action"}`` and ``{"type": "end_turn", "id"}``,
answered in order with ``{"type": "result", "id", "seq", "view"}`` or ``{"type":
"error", "id", "status", "error"}`` (gateway/ws_commands.py; REST's validation and
session call, gateway/commands.py). The player token is optional (without one the viewer is a
spectator) and travels, preferably, as a WebSocket subprotocol: offer
``Sec-WebSocket-Protocol: cellwar.v1, bearer.<token>`` (JavaScript: ``new WebSocket(url,
["cellwar.v1", "bearer." + token])``); the server selects ``cellwar.v1``. A URL never
carries it then, so no proxy or server log can. ``?token=<token>`` still works for old
clients (the gateway redacts it from its logs, gateway/redact.py; a proxy in front logs
its own request lines). With both, the subprotocol's token counts.

``?spectate=1&delay_s=N`` (no token): a delayed spectator (docs/spectators.md): the same
frames of the game as it was N seconds ago, one per event when the spectator sees everything
(services/session/service_layer/spectators.py; default and least: 10 s for a running CellWar game
created with ``"spectators": "live"``, 0 elsewhere). A running CellWar game without it
(the default) admits spectators once it has ended: the error frame
``SPECTATORS_AFTER_END`` and close 4409 (docs/spectators.md).

Errors are sent as one ``{"type": "error", "error": {"code", "message"}}`` frame, then
the socket closes with 4000 + the HTTP status: 4401 bad token, 4403 token of another
game (or a spectator's live view of a running CellWar game), 4404 unknown game, 4409 a
spectator of a game that admits spectators after its end only, 4503 session unavailable.

All the sockets of one (game, player) in this gateway share ONE upstream Watch
(gateway/fanout.py): a socket that joins starts with the newest view; a socket that
falls more than ``QUEUE_FRAMES`` frames behind skips to the newest view (every frame
is delivered to sockets that keep up; ``finished`` always is). When the last socket
of a key goes away, its Watch is cancelled at once (for a player: presence lost).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

import orjson
import structlog
from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from starlette.websockets import WebSocketState

from gateway.errors import ApiError
from gateway.fanout import Subscription
from gateway.replay_streams import pump_spectator
from gateway.ws_auth import offered_token, selected_subprotocol
from gateway.ws_commands import CommandChannel

router = APIRouter(tags=["stream"])
log = structlog.get_logger("gateway.stream")


async def _close_with_error(websocket: WebSocket, err: ApiError) -> None:
    """Send the error frame and close with 4000 + HTTP status."""
    with contextlib.suppress(Exception):
        await websocket.send_text(orjson.dumps({"type": "error", **err.body()}).decode())
        await websocket.close(code=err.ws_close_code, reason=err.code[:120])


async def _pump(frames: Subscription, channel: CommandChannel) -> None:
    """Send every frame of the shared Watch as a JSON text frame until it ends, through
    the socket's command channel (:meth:`CommandChannel.deliver`: a view frame a
    command's result on this socket already carried is left out); raises the upstream's
    :class:`ApiError`."""
    async for frame in frames:
        await channel.deliver(frame)


def _delay(value: str | None) -> float | None:
    """``delay_s`` of the query: seconds within 0..3600, or None when not given.

    Raises:
        ApiError: 422 ``MALFORMED``.
    """
    if value is None or value == "":
        return None
    try:
        delay = float(value)
    except ValueError:
        delay = -1.0
    if not 0 <= delay <= 3600:
        raise ApiError(422, "MALFORMED", f"delay_s must be a number of seconds within 0..3600 (got {value!r})")
    return delay


@router.websocket("/game/{game_id}/stream", name="stream")
async def stream(
    websocket: WebSocket,
    game_id: str,
    token: str | None = None,
    spectate: str | None = None,
    delay_s: str | None = None,
) -> None:
    """Bridge ``Session.Watch(game_id, player_id)`` to this WebSocket until the game ends
    or the client goes, and run the client's command frames (gateway/ws_commands.py).
    ``?spectate=1&delay_s=N``: a delayed spectator (``Session.Spectate``, one upstream per
    socket; no token needed)."""
    app = websocket.app
    await websocket.accept(subprotocol=selected_subprotocol(websocket.scope))
    structlog.contextvars.bind_contextvars(game_id=game_id)
    token = offered_token(websocket.scope) or token
    spectating = spectate not in (None, "", "0", "false")
    try:
        delay = _delay(delay_s)
        player_id = app.state.signer.verify(token, game_id).player_id if token and not spectating else 0
    except ApiError as err:
        await _close_with_error(websocket, err)
        return
    structlog.contextvars.bind_contextvars(player_id=player_id)
    channel = CommandChannel(
        websocket,
        game_id,
        token if player_id else None,
        player_id,
        app.state.session,
        app.state.signer,
        app.state.command_buckets,
        app.state.metrics,
    )
    if spectating:
        await _spectate(websocket, game_id, delay, channel)
        return
    frames = app.state.fanout.subscribe(game_id, player_id)
    log.info("ws_open")
    await _serve(websocket, _pump(frames, channel), frames.close, "ws_pump_failed", channel)
    log.info("ws_closed")


async def _spectate(
    websocket: WebSocket, game_id: str, delay_s: float | None, channel: CommandChannel
) -> None:
    """A delayed spectator's socket: frames of ``Session.Spectate`` until the delayed view
    reaches the end (close 1000) or the client goes; errors as the error frame + close."""
    log.info("ws_spectator_open", delay_s=delay_s)
    await _serve(websocket, pump_spectator(websocket, game_id, delay_s), None, "ws_spectator_failed", channel)
    log.info("ws_spectator_closed")


async def _serve(
    websocket: WebSocket,
    pumping: Coroutine[Any, Any, None],
    cleanup: Callable[[], None] | None,
    failed_event: str,
    channel: CommandChannel,
) -> None:
    """Run ``pumping`` (frames to the socket) beside the ``channel``'s reader and worker
    (what the client sends, answered in order), until the pump or the reader ends; then
    ``cleanup`` and the close: 1000 when the frames ended (the game finished: after the
    replies to the commands already read) or the client is still there, the error frame +
    its close code for an :class:`ApiError`, ``INTERNAL`` (logged as ``failed_event``) for
    anything else."""
    pump = asyncio.create_task(pumping)
    reader = asyncio.create_task(channel.read())
    worker = asyncio.create_task(channel.work())
    tasks = (pump, reader, worker)
    try:
        done, _ = await asyncio.wait({pump, reader, worker}, return_when=asyncio.FIRST_COMPLETED)
        if pump in done and not pump.cancelled() and pump.exception() is None and worker not in done:
            # The game finished: the commands already read still get their replies.
            reader.cancel()
            await channel.finish(worker=worker)
    finally:
        for task in tasks:
            task.cancel()
        channel.stop()
        if cleanup is not None:
            cleanup()
        for task in tasks:
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
            log.warning(failed_event, error=repr(exc))
            await _close_with_error(websocket, ApiError(500, "INTERNAL", "stream failed"))
    elif worker in done and not worker.cancelled() and worker.exception() is not None:
        exc = worker.exception()
        if not isinstance(exc, WebSocketDisconnect | RuntimeError):
            log.warning("ws_commands_failed", error=repr(exc))
            await _close_with_error(websocket, ApiError(500, "INTERNAL", "stream failed"))
    elif websocket.client_state == WebSocketState.CONNECTED:
        with contextlib.suppress(Exception):
            await websocket.close(code=1000)
