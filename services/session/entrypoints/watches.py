"""The session's half of ``Session.Watches``: many Watches over one long-lived stream
(a gateway opens one per session channel; the gateway's half: gateway/watch_stream.py;
docs/architecture/batching.md "Views to the gateway").

One Watch RPC per watched (game, player) costs a gRPC message, a write and a poller
wake-up on both sides for every frame: with 100 watched running games (two player
sockets each, a frame per tick) that was ~60 % of the session's CPU (py-spy). Here a
watch is a task running the Watch RPC's own body (:meth:`SessionServicer.serve_watch`)
whose updates are queued as :class:`~cellwar.v1.session_pb2.WatchFrame`; the frames
queued together leave in one ``WatchFrames`` message, so a tick's frames of all the games
cost one write.

- An op with ``open`` starts a watch under its ``id`` (an ``id`` already open: that
  watch ends ``MALFORMED``, the first goes on); an op without it cancels watch ``id``
  (the player's presence ends as when a Watch RPC is cancelled). Nothing more is sent
  for a cancelled watch.
- A watch's frames are the Watch RPC's updates, in order; its last frame has ``end``,
  with the RPC's error (status, details, ``cellwar-error-code``) when it ended with one
  (``UNAVAILABLE`` when the server stops, as the RPC).
- Backpressure: a watch whose frame would pass :data:`FRAMES_MAX` frames or
  :data:`QUEUED_MAX_BYTES` of views not yet written waits for the writer, as a Watch
  RPC's write waits for gRPC's flow control.
- The stream ends when the gateway ends it (its watches are cancelled), or, once the
  server stops, when every watch has sent its end.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import structlog

from cellwar.v1 import session_pb2
from cellwar.v1.codes import ErrorCode
from services.common.errors import ServiceError, status_for
from services.common.streams import Linger, take_batch

log = structlog.get_logger("session.watches")

#: Frames, and bytes of views, queued and not yet written on one stream; a watch with
#: one more waits for the writer.
FRAMES_MAX = 4096
QUEUED_MAX_BYTES = 16 * 1024 * 1024
#: A ``WatchFrames`` message stops taking frames past this many bytes of views.
FRAMES_MAX_BYTES = 4 * 1024 * 1024

ServeWatch = Callable[[session_pb2.WatchRequest, Callable[[session_pb2.WatchUpdate], Awaitable[None]]], Awaitable[None]]


def _error(status: grpc.StatusCode, details: str, code: str = "") -> session_pb2.CommandError:
    return session_pb2.CommandError(status=status.value[0], details=details, code=str(code))


async def serve(
    request_iterator: AsyncIterator[session_pb2.WatchOps],
    context: Any,
    serve_watch: ServeWatch,
    closing: asyncio.Event,
) -> None:
    """Serve one ``Watches`` stream (module docstring) until it ends.

    Args:
        request_iterator / context: the stream's (grpc.aio).
        serve_watch: one watch's body (:meth:`SessionServicer.serve_watch`): sends the
            updates, raises ServiceError.
        closing: set when the server stops.
    """
    # headers first: the gateway tells a session without Watches by its UNIMPLEMENTED
    # status, and writes its first op once the headers came
    await context.send_initial_metadata(())
    frames: list[session_pb2.WatchFrame] = []
    queued = [0]  # bytes of views in `frames`
    ready = asyncio.Event()
    room = asyncio.Event()
    linger = Linger()
    room.set()
    running: dict[int, asyncio.Task] = {}

    def queue(frame: session_pb2.WatchFrame) -> None:
        frames.append(frame)
        queued[0] += len(frame.update.view)
        ready.set()

    async def run(watch_id: int, request: session_pb2.WatchRequest) -> None:
        async def send(update: session_pb2.WatchUpdate) -> None:
            while len(frames) >= FRAMES_MAX or queued[0] >= QUEUED_MAX_BYTES:
                room.clear()
                await room.wait()
            queue(session_pb2.WatchFrame(id=watch_id, update=update))

        end = session_pb2.WatchFrame(id=watch_id, end=True)
        with structlog.contextvars.bound_contextvars(
            rpc="Watch", game_id=request.game_id, player_id=request.player_id or None
        ):
            try:
                await serve_watch(request, send)
            except ServiceError as exc:
                end.error.CopyFrom(_error(status_for(exc.code), exc.message, exc.code))
            except Exception as exc:  # noqa: BLE001 - one watch's failure ends that watch
                log.exception("watch_failed")
                end.error.CopyFrom(
                    _error(grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}", ErrorCode.INTERNAL)
                )
        queue(end)

    def ended(watch_id: int, task: asyncio.Task) -> None:
        if running.get(watch_id) is task:
            del running[watch_id]
        ready.set()

    async def read() -> None:
        async for batch in request_iterator:
            for op in batch.ops:
                if not op.HasField("open"):
                    task = running.pop(op.id, None)
                    if task is not None:
                        task.cancel()
                    continue
                if op.id in running:
                    queue(
                        session_pb2.WatchFrame(
                            id=op.id,
                            end=True,
                            error=_error(
                                status_for(ErrorCode.MALFORMED),
                                f"watch {op.id} is already open on this stream",
                                ErrorCode.MALFORMED,
                            ),
                        )
                    )
                    continue
                task = asyncio.create_task(run(op.id, op.open), name=f"watch-{op.id}")
                running[op.id] = task
                task.add_done_callback(lambda t, i=op.id: ended(i, t))

    reader = asyncio.create_task(read(), name="watches-read")
    reader.add_done_callback(lambda _: ready.set())
    stopping = asyncio.create_task(closing.wait(), name="watches-closing")
    stopping.add_done_callback(lambda _: ready.set())
    try:
        while True:
            await ready.wait()
            await linger.pause(lambda: len(frames))
            ready.clear()
            while frames:
                batch = take_batch(frames, lambda f: len(f.update.view), FRAMES_MAX_BYTES)
                queued[0] -= sum(len(f.update.view) for f in batch)
                room.set()
                await context.write(session_pb2.WatchFrames(frames=batch))
                linger.wrote()
            if reader.done() and not running:
                break  # the gateway ended its side and every watch has ended
            if closing.is_set() and not running and not frames:
                break
        if reader.done() and not reader.cancelled() and reader.exception() is not None:
            exc = reader.exception()
            if not isinstance(exc, (asyncio.CancelledError, grpc.aio.AbortError)):
                log.warning("watch_stream_read_failed", error=repr(exc))
    finally:
        for task in (reader, stopping, *running.values()):
            task.cancel()
