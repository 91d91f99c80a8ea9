"""One long-lived bidirectional gRPC stream carrying correlated frames: the client half
shared by the gateway's ``Session.Commands`` stream (gateway/command_stream.py) and the
session's ``Engine.Decides`` stream (services/session/adapters/engine_client.py);
docs/architecture/batching.md.

A :class:`CorrelatedStream` is opened on first use and again after it broke. Frames
queued by :meth:`CorrelatedStream._queue` leave from one writer task in queue order; one
reader task hands each message read to :meth:`CorrelatedStream._dispatch`. When the
stream ends (the far end ended it, a read failed, it was closed) the frames it carried
are handed to :meth:`CorrelatedStream._fail` with the reason, and the next frame opens a
new stream. A far end without the method ends the stream ``UNIMPLEMENTED``: the stream
sets :attr:`CorrelatedStream.unary_only`, and the subclass sends by unary calls from then
on.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc
import structlog

log = structlog.get_logger("cellwar.streams")

#: Seconds a reader waits for the call's own status after a read ended ``INTERNAL``.
STATUS_WAIT_S = 1.0


#: A stream's writer that wrote less than :data:`BUSY_S` seconds ago and has fewer than
#: :data:`FEW` frames to send waits :data:`LINGER_S` before its next message
#: (:class:`Linger`; docs/architecture/batching.md "Latency at an offered load").
LINGER_S = 0.003
BUSY_S = 0.001
FEW = 8


class Linger:
    """When a stream's writer writes its next message. First one turn of the loop (the
    frames queued by the callbacks of the turn that woke the writer leave with the first).
    Then, while the stream is busy (its last message was written less than ``busy_s``
    ago) and fewer than ``few`` frames wait, ``linger_s`` more, so that the frames queued
    meanwhile leave in the same message: under a steady load of frames that come one at
    a time, one write (a gRPC message, a poller wake-up at each end) carries several, for
    at most ``linger_s`` of latency per hop. After an idle spell, or with a message's
    worth of frames already waiting (a burst), nothing more waits. The idea of Nagle's
    algorithm (RFC 896) and of Kafka's producer ``linger.ms``, bounded both ways."""

    __slots__ = ("linger_s", "busy_s", "few", "_last")

    def __init__(self, linger_s: float = LINGER_S, busy_s: float = BUSY_S, few: int = FEW) -> None:
        self.linger_s = linger_s
        self.busy_s = busy_s
        self.few = few
        self._last = -1e9

    async def pause(self, waiting: Callable[[], int]) -> None:
        """Wait before taking the frames of the next message; ``waiting()`` is how many
        frames wait now."""
        await asyncio.sleep(0)
        if self.linger_s > 0 and waiting() < self.few and time.monotonic() - self._last < self.busy_s:
            await asyncio.sleep(self.linger_s)

    def wrote(self) -> None:
        """A message was written (call after each write)."""
        self._last = time.monotonic()


def take_batch(items: list, size: Callable[[Any], int], max_bytes: int) -> list:
    """Remove and return the first ``items`` whose ``size`` adds up to ``max_bytes`` at
    most (always at least one): the frames or answers one message of a stream carries."""
    total = 0
    for n, item in enumerate(items):
        total += size(item)
        if total > max_bytes and n > 0:
            break
    else:
        n = len(items)
    taken = items[:n]
    del items[:n]
    return taken


def call_error(
    code: grpc.StatusCode, details: str, trailing: Sequence[tuple[str, str]] = ()
) -> grpc.aio.AioRpcError:
    """The :class:`grpc.aio.AioRpcError` of a unary call that ended with ``code``,
    ``details`` and the ``trailing`` metadata (no initial metadata)."""
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailing), details)


def expire(future: asyncio.Future) -> None:
    """Fail ``future`` as a unary call past its deadline (``DEADLINE_EXCEEDED``)."""
    if not future.done():
        future.set_exception(call_error(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"))


class CorrelatedStream:
    """The client half of one correlated bidirectional stream (module docstring).

    Subclasses give :meth:`_messages` (the messages to write for the queued frames),
    :meth:`_dispatch` (what one message read answers) and :meth:`_fail` (the frames a
    broken stream carried), and keep in :attr:`_pending` what waits for an answer (by
    frame id: they choose the values).

    Args:
        open_call: the stub's stream method (called with no argument to open a stream).
        name: the far end, for the log.
        log_key: the log field naming it (``instance``, ``target``).
    """

    #: The log events' prefix (``<kind>_write_failed``) and the tasks' names.
    kind = "stream"
    #: The far end's own status tells an ``UNIMPLEMENTED`` apart: wait for its headers
    #: before the first write, leave the call alone when a write fails (the reader reads
    #: its status), and ask the call for its status when a read ends ``INTERNAL`` (a read
    #: pending while a write failed). Else a failed write cancels the call.
    status_first = False
    #: Reasons given to :meth:`_fail`.
    ended_reason = "the far end ended the stream"
    closed_reason = "the stream was closed"

    def __init__(self, open_call: Callable[[], Any], name: str = "", log_key: str = "target") -> None:
        self._open = open_call
        self.name = name
        self._log = {log_key: name}
        #: The far end answered the stream UNIMPLEMENTED: send by unary calls.
        self.unary_only = False
        self._ids = itertools.count(1)
        #: id → what waits for the answer of that frame (the subclass's values).
        self._pending: dict[int, Any] = {}
        self._outbox: list[Any] = []
        self._wake = asyncio.Event()
        self._linger = Linger()
        self._call: Any = None
        self._tasks: list[asyncio.Task] = []
        self._closed = False
        #: Streams opened so far (a reopen after a break counts).
        self.opened = 0

    # ------------------------------------------------------------------ subclass hooks

    def _messages(self, outbox: list[Any]) -> list[Any]:
        """Take frames from ``outbox`` (remove them) and return the messages to write."""
        raise NotImplementedError

    def _dispatch(self, message: Any) -> None:
        """Resolve what one message read answers."""
        raise NotImplementedError

    def _fail(self, pending: dict[int, Any], reason: str) -> None:
        """The stream ended with ``pending`` unanswered (:attr:`unary_only` says whether
        the far end has no such method)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the stream

    def _queue(self, frame: Any) -> None:
        """Send ``frame`` (opening the stream when none is open)."""
        self._outbox.append(frame)
        if self._call is None:
            self._start()
        self._wake.set()

    def _start(self) -> None:
        self._call = call = self._open()
        self.opened += 1
        # a context of their own: the stream serves every caller, so its log lines must
        # not carry the log context (game_id, player_id, ...) of the one that opened it
        self._tasks = [
            asyncio.create_task(self._write(call), name=f"{self.kind}-write", context=contextvars.Context()),
            asyncio.create_task(self._read(call), name=f"{self.kind}-read", context=contextvars.Context()),
        ]

    async def _write(self, call: Any) -> None:
        try:
            if self.status_first:
                # a frame written while the far end's UNIMPLEMENTED status is on its way
                # fails the call INTERNAL and hides it
                await call.initial_metadata()
                if call.done():
                    return
            while True:
                if not self._outbox:
                    self._wake.clear()
                    await self._wake.wait()
                    # frames queued meanwhile (other sockets' commands read with the
                    # first) leave in the same message, not one message each
                    await self._linger.pause(lambda: len(self._outbox))
                    continue
                for message in self._messages(self._outbox):
                    await call.write(message)
                    self._linger.wrote()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the stream broke: the reader fails the frames
            log.info(f"{self.kind}_write_failed", **self._log, error=repr(exc))
            if not self.status_first:
                call.cancel()

    async def _read(self, call: Any) -> None:
        reason = self.ended_reason
        try:
            while True:
                message = await call.read()
                if message is grpc.aio.EOF:
                    break
                self._dispatch(message)
        except asyncio.CancelledError:
            reason = self.closed_reason
            raise
        except grpc.aio.AioRpcError as exc:
            code, reason = exc.code(), exc.details() or str(exc.code())
            if self.status_first and code == grpc.StatusCode.INTERNAL:
                with contextlib.suppress(Exception):
                    code = await asyncio.wait_for(call.code(), STATUS_WAIT_S)
            if code == grpc.StatusCode.UNIMPLEMENTED:
                self.unary_only = True
        except Exception as exc:  # noqa: BLE001 - a broken stream, whatever broke it
            reason = f"{type(exc).__name__}: {exc}"
        finally:
            self._broken(call, reason)

    def _broken(self, call: Any, reason: str) -> None:
        """Hand every frame the stream ``call`` carried to :meth:`_fail`; the next frame
        opens a new stream."""
        if self._call is not call:
            return
        self._call = None
        for task in self._tasks:
            if task is not asyncio.current_task():
                task.cancel()
        self._tasks = []
        self._outbox = []
        pending, self._pending = self._pending, {}
        self._fail(pending, reason)
        call.cancel()

    async def aclose(self) -> None:
        """End the stream (and its tasks); no new one opens."""
        self._closed = True
        tasks = list(self._tasks)
        if self._call is not None:
            self._call.cancel()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
