"""The gateway's Act / EndTurn over one long-lived ``Session.Commands`` stream per
session channel (docs/architecture/batching.md "Gateway to session").

Every player command (REST ``POST /game/{id}/action`` and ``/end_turn``, a WebSocket
``action`` / ``end_turn`` frame: gateway/commands.py) of every game and socket of this
gateway that goes to one session channel is a :class:`~cellwar.v1.session_pb2.CommandFrame`
of that channel's :class:`CommandStream`: a correlation id (this stream's counter), the
unary request, the caller's timeout. The frames ready together leave in one
``CommandFrames`` message; the session runs each in its own task and writes the results
that are ready together in one ``CommandResults``; each result resolves the future of its
id. A result is the unary RPC's answer exactly: the ``CommandReply``, or an error
rebuilt as the :class:`grpc.aio.AioRpcError` the unary call raises (status, details,
``cellwar-error-code`` and ``cellwar-error-seq`` in its trailing metadata), so
gateway/errors.py answers it with the same HTTP status and body.

- Deadline: a command not answered ``timeout`` seconds after it was called (waiting for a
  slot included) fails with ``DEADLINE_EXCEEDED`` ("Deadline Exceeded"), as a unary call
  past its deadline (503 ``UNAVAILABLE``); the session gets the timeout too and cancels it.
- Backpressure: at most ``max_in_flight`` commands sent and not answered per stream (a
  command past it waits, in call order, for a slot); the session reads no further
  frames of a stream with ``STREAM_IN_FLIGHT`` running (gRPC flow control).
- A broken stream (the session stopped or restarted, the connection dropped, the session
  ended the stream because it is stopping): the commands it carried fail with
  ``UNAVAILABLE`` without a service code, as a unary call to an unreachable instance
  does (503 ``UNAVAILABLE``, retryable); :class:`~services.common.grpcutil.FailoverStub`
  sends them to the next instance with the same command id (applied once: commands are
  idempotent by command id). The next command opens a new stream.
- Cancelled (the caller went, or FailoverStub moved it off a silent instance): the command
  is forgotten and its slot given back; a late result is dropped.
- A session without ``Commands`` (an older one: the stream ends ``UNIMPLEMENTED``): the
  commands the stream carried and every later one go as unary calls on that channel.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import grpc
import structlog

from cellwar.v1 import session_pb2, session_pb2_grpc
from services.common.errors import ERROR_CODE_KEY, ERROR_SEQ_KEY
from services.common.grpcutil import UnaryOverStream
from services.common.streams import CorrelatedStream, call_error, expire, take_batch

log = structlog.get_logger("gateway.command_stream")

#: Commands sent on one stream and not answered yet; past it a command waits for a slot.
MAX_IN_FLIGHT = 256
#: A ``CommandFrames`` message stops taking frames past this many bytes of actions (an
#: action body may be up to 4 MiB; the message limit is ``MAX_MESSAGE_BYTES``).
FRAMES_MAX_BYTES = 4 * 1024 * 1024
#: gRPC status of each wire number (``CommandError.status``).
_STATUS_BY_NUMBER: dict[int, grpc.StatusCode] = {s.value[0]: s for s in grpc.StatusCode}


def rpc_error(error: session_pb2.CommandError) -> grpc.aio.AioRpcError:
    """The :class:`grpc.aio.AioRpcError` the unary call ends with for ``error``."""
    trailing: list[tuple[str, str]] = []
    if error.code:
        trailing.append((ERROR_CODE_KEY, error.code))
    if error.HasField("seq"):
        trailing.append((ERROR_SEQ_KEY, str(error.seq)))
    return call_error(_STATUS_BY_NUMBER.get(error.status, grpc.StatusCode.UNKNOWN), error.details, trailing)


def unavailable(details: str) -> grpc.aio.AioRpcError:
    """``UNAVAILABLE`` without a service code: the channel's own failure (a retry on
    another instance is safe)."""
    return call_error(grpc.StatusCode.UNAVAILABLE, details)


class CommandStream(CorrelatedStream):
    """The ``Session.Commands`` stream of one channel, opened on first use and again
    after it broke (:class:`services.common.streams.CorrelatedStream`).

    Args:
        stub: the channel's ``SessionStub``.
        max_in_flight: commands sent and not answered at most (:data:`MAX_IN_FLIGHT`).
        name: the session instance, for the log.
    """

    kind = "command_stream"
    ended_reason = "the session ended the command stream"
    closed_reason = "the gateway's command stream was closed"

    def __init__(
        self,
        stub: session_pb2_grpc.SessionStub,
        *,
        max_in_flight: int = MAX_IN_FLIGHT,
        name: str = "",
    ) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        super().__init__(stub.Commands, name, log_key="instance")
        self._unary = {"act": stub.Act, "end_turn": stub.EndTurn}
        self.max_in_flight = max_in_flight
        #: id → (future, frame) of the commands sent on the current stream (or about to be).
        self._pending: dict[int, tuple[asyncio.Future, session_pb2.CommandFrame]] = {}
        #: Commands past ``max_in_flight``, in call order: (id, frame, future, deadline).
        self._waiting: collections.deque[
            tuple[int, session_pb2.CommandFrame, asyncio.Future, float | None]
        ] = collections.deque()

    @property
    def in_flight(self) -> int:
        """Commands sent (or queued to send) and not answered."""
        return len(self._pending)

    def submit(
        self, kind: str, request: Any, timeout: float | None = None
    ) -> asyncio.Future:
        """Send one command; the future gives its ``CommandReply`` or raises the
        :class:`grpc.aio.AioRpcError` of the unary call.

        Args:
            kind: ``"act"`` (an ``ActRequest``) or ``"end_turn"`` (an ``EndTurnRequest``).
            timeout: seconds until it fails ``DEADLINE_EXCEEDED`` (None: never).
        """
        if self.unary_only:
            return asyncio.ensure_future(self._unary[kind](request, timeout=timeout))
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        if self._closed:
            future.set_exception(unavailable("the gateway's command stream is closed"))
            return future
        command_id = next(self._ids)
        frame = session_pb2.CommandFrame(id=command_id, timeout_s=timeout or 0.0, **{kind: request})
        timer = deadline = None
        if timeout is not None:
            timer = loop.call_later(max(timeout, 0.0), expire, future)
            deadline = loop.time() + timeout
        future.add_done_callback(lambda f: self._forget(command_id, f, timer))
        if len(self._pending) < self.max_in_flight and not self._waiting:
            self._send(command_id, frame, future, deadline)
        else:
            self._waiting.append((command_id, frame, future, deadline))
        return future

    def _send(
        self,
        command_id: int,
        frame: session_pb2.CommandFrame,
        future: asyncio.Future,
        deadline: float | None,
    ) -> None:
        """Queue ``frame`` on the stream; its ``timeout_s`` is what is left of the caller's
        deadline (``deadline``, loop time; a wait for a slot spent some of it)."""
        if self._closed:  # a slot freed while aclose() runs: no new stream
            if not future.done():
                future.set_exception(unavailable("the gateway's command stream is closed"))
            return
        if deadline is not None:
            frame.timeout_s = max(deadline - asyncio.get_running_loop().time(), 0.001)
        self._pending[command_id] = (future, frame)
        self._queue(frame)

    def _forget(self, command_id: int, future: asyncio.Future, timer: asyncio.TimerHandle | None) -> None:
        """A command is done (answered, failed, expired or cancelled): free its slot and
        send the next waiting one."""
        if timer is not None:
            timer.cancel()
        entry = self._pending.get(command_id)
        if entry is not None and entry[0] is future:
            del self._pending[command_id]
        while self._waiting and len(self._pending) < self.max_in_flight:
            waiting_id, frame, waiting, deadline = self._waiting.popleft()
            if not waiting.done():
                self._send(waiting_id, frame, waiting, deadline)

    def _messages(self, outbox: list[session_pb2.CommandFrame]) -> list[session_pb2.CommandFrames]:
        # a command that expired or was cancelled before it left is not sent
        frames = [f for f in _take(outbox) if self._live(f.id)]
        return [session_pb2.CommandFrames(frames=frames)] if frames else []

    def _live(self, command_id: int) -> bool:
        """Whether command ``command_id`` still waits for its answer."""
        entry = self._pending.get(command_id)
        return entry is not None and not entry[0].done()

    def _dispatch(self, message: session_pb2.CommandResults) -> None:
        pending = self._pending
        for result in message.results:
            entry = pending.get(result.id)
            if entry is None or entry[0].done():
                continue  # expired, cancelled or moved: dropped
            future = entry[0]
            if result.HasField("reply"):
                future.set_result(result.reply)
            else:
                future.set_exception(rpc_error(result.error))

    def _fail(
        self, pending: dict[int, tuple[asyncio.Future, session_pb2.CommandFrame]], reason: str
    ) -> None:
        if self.unary_only:
            log.warning("command_stream_unimplemented", instance=self.name, reason=reason)
            for future, frame in pending.values():
                self._by_unary(future, frame)
            waiting = list(self._waiting)
            self._waiting.clear()
            for _, frame, future, _ in waiting:
                self._by_unary(future, frame)
            return
        if pending:
            log.warning(
                "command_stream_broken", instance=self.name, commands=len(pending), reason=reason
            )
        for future, _ in pending.values():
            if not future.done():
                future.set_exception(unavailable(f"the command stream broke: {reason}"))

    def _by_unary(self, future: asyncio.Future, frame: session_pb2.CommandFrame) -> None:
        """Answer ``future`` by the unary call of ``frame``'s command (its deadline stays
        the future's own timer)."""
        if future.done():
            return
        kind = frame.WhichOneof("command")
        task = asyncio.ensure_future(
            self._unary[kind](getattr(frame, kind), timeout=frame.timeout_s or None)
        )

        def answered(task: asyncio.Future) -> None:
            if future.done():
                return
            if task.cancelled():
                future.set_exception(unavailable("the unary command was cancelled"))
            elif task.exception() is not None:
                future.set_exception(task.exception())
            else:
                future.set_result(task.result())

        task.add_done_callback(answered)
        future.add_done_callback(lambda _: task.cancel())

    async def aclose(self) -> None:
        """End the stream: commands still waiting fail ``UNAVAILABLE``."""
        await super().aclose()
        for _, _, future, _ in list(self._waiting):
            if not future.done():
                future.set_exception(unavailable("the gateway's command stream is closed"))
        self._waiting.clear()


def _take(frames: list[session_pb2.CommandFrame]) -> list[session_pb2.CommandFrame]:
    """Remove and return the first frames of ``frames`` up to :data:`FRAMES_MAX_BYTES` of
    actions (at least one)."""
    return take_batch(frames, lambda frame: len(frame.act.action), FRAMES_MAX_BYTES)


class StreamedCommand(UnaryOverStream):
    """``Act`` or ``EndTurn`` of a :class:`StreamingSessionStub`: called as the unary
    method, ``await stub.Act(request, timeout=s)``."""

    def __init__(self, stream: CommandStream, kind: str) -> None:
        self.stream = stream
        self.kind = kind

    def __call__(self, request: Any, *, timeout: float | None = None) -> asyncio.Future:
        return self.stream.submit(self.kind, request, timeout)
