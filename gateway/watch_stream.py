"""The gateway's Watches over one long-lived ``Session.Watches`` stream per session
channel (the session's half: services/session/entrypoints/watches.py;
docs/architecture/batching.md "Views to the gateway").

:meth:`WatchStream.watch` stands for the ``Watch`` RPC: it returns a
:class:`StreamedWatch`, which the fanout (gateway/fanout.py) reads and cancels as it
would the RPC's call — an async iterator of ``WatchUpdate`` that ends cleanly or raises
the :class:`grpc.aio.AioRpcError` the RPC would end with (status, details,
``cellwar-error-code``), and :meth:`StreamedWatch.cancel`. Every watch of this gateway
that goes to one session channel is an op of that channel's stream: the ops queued
together leave in one ``WatchOps`` message, and the session writes the frames of all the
watches that are ready together in one ``WatchFrames`` (one message per tick for every
running game, where the RPC costs one per game and player).

- A broken stream (the session stopped or restarted, the connection dropped, the session
  ended it because it is stopping): every watch it carried fails ``UNAVAILABLE`` without
  a service code, as a Watch RPC to an unreachable instance does; the next watch opens a
  new stream.
- A session without ``Watches`` (an older one: the stream ends ``UNIMPLEMENTED``): the
  watches the stream carried go on as Watch RPCs on that channel, and so does every later
  one.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import grpc
import structlog

from cellwar.v1 import session_pb2, session_pb2_grpc
from gateway.command_stream import rpc_error, unavailable
from services.common.streams import CorrelatedStream

log = structlog.get_logger("gateway.watch_stream")


class StreamedWatch:
    """One watch of a :class:`WatchStream`, read as a ``Watch`` RPC's call is.

    Attributes:
        id: its id on the stream; request: the ``WatchRequest``.
    """

    def __init__(self, stream: WatchStream, watch_id: int, request: session_pb2.WatchRequest) -> None:
        self.id = watch_id
        self.request = request
        self._stream = stream
        self._updates: collections.deque[session_pb2.WatchUpdate] = collections.deque()
        self._wake = asyncio.Event()
        self._ended = False
        self._error: grpc.aio.AioRpcError | None = None
        self._unary: Any = None  # the Watch RPC it went on as (a session without Watches)

    # ---------------------------------------------------------------- stream side

    def _push(self, update: session_pb2.WatchUpdate) -> None:
        self._updates.append(update)
        self._wake.set()

    def _finish(self, error: grpc.aio.AioRpcError | None) -> None:
        if not self._ended:
            self._ended, self._error = True, error
            self._wake.set()

    def _go_on_as(self, call: Any) -> None:
        """Read the rest from the Watch RPC ``call`` (it starts again with the view now)."""
        self._unary = call
        self._wake.set()

    # ---------------------------------------------------------------- reader side

    def __aiter__(self) -> StreamedWatch:
        return self

    async def __anext__(self) -> session_pb2.WatchUpdate:
        """The next update; StopAsyncIteration at a clean end, else the RPC's error."""
        update = await self.read()
        if update is grpc.aio.EOF:
            raise StopAsyncIteration
        return update

    async def read(self) -> Any:
        """The next update, or ``grpc.aio.EOF`` at a clean end (as the RPC's call reads);
        raises the RPC's error."""
        while True:
            if self._updates:
                return self._updates.popleft()
            if self._unary is not None:
                return await self._unary.read()
            if self._ended:
                if self._error is not None:
                    raise self._error
                return grpc.aio.EOF
            self._wake.clear()
            await self._wake.wait()

    def cancel(self) -> bool:
        """End the watch (the session ends it too: the player's presence ends with it).
        Returns False when it had already ended."""
        if self._unary is not None:
            return self._unary.cancel()
        if self._ended:
            return False
        self._finish(None)
        self._stream._cancel(self.id)
        return True


class WatchStream(CorrelatedStream):
    """The ``Session.Watches`` stream of one channel, opened on first use and again
    after it broke (:class:`services.common.streams.CorrelatedStream`).

    Args:
        stub: the channel's ``SessionStub``.
        name: the session instance, for the log.
    """

    kind = "watch_stream"
    status_first = True  # an older session is told apart by its UNIMPLEMENTED status
    ended_reason = "the session ended the watch stream"
    closed_reason = "the gateway's watch stream was closed"

    def __init__(self, stub: session_pb2_grpc.SessionStub, *, name: str = "") -> None:
        super().__init__(stub.Watches, name, log_key="instance")
        self._unary = stub.Watch
        #: id → the watch open on the current stream.
        self._pending: dict[int, StreamedWatch] = {}

    @property
    def open(self) -> int:
        """Watches open on the stream now."""
        return len(self._pending)

    def watch(self, request: session_pb2.WatchRequest, **kwargs: Any) -> Any:
        """The ``Watch`` of ``request``: a :class:`StreamedWatch`, or the Watch RPC's own
        call where the session has no ``Watches`` or this stream was closed."""
        if self.unary_only or self._closed:
            return self._unary(request, **kwargs)
        watch = StreamedWatch(self, next(self._ids), request)
        self._pending[watch.id] = watch
        self._queue(session_pb2.WatchOp(id=watch.id, open=request))
        return watch

    def _cancel(self, watch_id: int) -> None:
        """Tell the session to end watch ``watch_id`` (when the stream still carries it)."""
        if self._pending.pop(watch_id, None) is not None and self._call is not None:
            self._queue(session_pb2.WatchOp(id=watch_id))

    def _messages(self, outbox: list[session_pb2.WatchOp]) -> list[session_pb2.WatchOps]:
        ops = list(outbox)
        outbox.clear()
        return [session_pb2.WatchOps(ops=ops)] if ops else []

    def _dispatch(self, message: session_pb2.WatchFrames) -> None:
        pending = self._pending
        for frame in message.frames:
            watch = pending.get(frame.id)
            if watch is None:
                continue  # cancelled here: its last frames crossed the cancel
            if frame.end:
                del pending[frame.id]
                watch._finish(rpc_error(frame.error) if frame.HasField("error") else None)
            else:
                watch._push(frame.update)

    def _fail(self, pending: dict[int, StreamedWatch], reason: str) -> None:
        if self.unary_only:
            log.warning("watch_stream_unimplemented", instance=self.name, reason=reason)
            for watch in pending.values():
                watch._go_on_as(self._unary(watch.request))
            return
        if pending:
            log.warning("watch_stream_broken", instance=self.name, watches=len(pending), reason=reason)
        for watch in pending.values():
            watch._finish(unavailable(f"the watch stream broke: {reason}"))

    async def aclose(self) -> None:
        """End the stream: the watches it carried end ``UNAVAILABLE``."""
        pending, self._pending = self._pending, {}
        await super().aclose()
        for watch in pending.values():
            watch._finish(unavailable("the gateway's watch stream is closed"))
