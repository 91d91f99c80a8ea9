"""One upstream ``Session.Watch`` per (game, player) shared by every WebSocket of this
gateway process (docs/architecture/gateway.md; its speed: docs/benchmarks.md). With the
gateway's streaming stub every upstream is a watch of the channel's one
``Session.Watches`` stream (gateway/watch_stream.py), read as the RPC's call.

:meth:`FanoutHub.subscribe` gives a socket a :class:`Subscription`, an async iterator
of ready-made JSON text frames (``{"type", "seq", "view"}``, the wire format of
gateway/routes/stream.py):

- The first subscriber of a key opens the upstream Watch; later ones share it and start
  with the newest view already received (and ``finished`` when it came), which is what a
  Watch of their own would have sent first. The last one leaving cancels the upstream at
  once. For a player key this keeps the session's presence semantics
  (services/session/entrypoints/presence.py): the player is present while at least one of its
  sockets is open here; when the last closes the Watch closes and the timer starts.
- Each upstream message is turned into JSON once, and the same ``str`` is queued for
  every subscriber.
- Every subscriber has its own bounded queue (:data:`QUEUE_FRAMES`); the upstream never
  waits for a socket. When a socket's queue is full, its backlog of ``view`` frames is
  dropped and only the newest is kept: views are full states, so skipping intermediate
  ones is safe, and the slow socket jumps back to live. ``finished`` (always the last
  frame) is never dropped. "Every frame delivered" therefore holds for sockets that keep
  up (fewer than :data:`QUEUE_FRAMES` frames behind).
- When the upstream ends, every subscriber first gets the frames still queued for it,
  then the end: a clean end stops the iteration; an error (``FORBIDDEN``,
  ``GAME_NOT_FOUND``, ``UNAVAILABLE``, ...) raises the same :class:`ApiError` in every
  subscriber, which the route sends as its error frame and close code. The key is
  forgotten at that moment, so a socket that comes later opens a fresh Watch.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import TYPE_CHECKING

import grpc
import structlog

from cellwar.v1 import session_pb2
from gateway.errors import ApiError, from_rpc_error
from gateway.wire import seq_view_json

if TYPE_CHECKING:
    from cellwar.v1 import session_pb2_grpc
    from gateway.observability import Metrics

log = structlog.get_logger("gateway.fanout")

#: Frames a socket may fall behind before its backlog is replaced by the newest view
#: (4 s of a Life game at 8 generations/s).
QUEUE_FRAMES = 32

Key = tuple[str, int]


class Subscription:
    """One socket's share of an upstream Watch: an async iterator of JSON text frames.

    Iteration ends after ``finished`` / a clean end of the upstream, or raises the
    upstream's :class:`ApiError`. :meth:`close` (idempotent) leaves the upstream.

    Attributes:
        dropped: frames skipped for this socket because its queue was full.
    """

    def __init__(self, upstream: _Upstream, max_frames: int) -> None:
        self._upstream = upstream
        self._max = max(1, max_frames)
        self._frames: deque[str] = deque()
        self._wake = asyncio.Event()
        self._ended = False
        self._error: ApiError | None = None
        self._closed = False
        self.dropped = 0

    # ------------------------------------------------------------- hub side

    def _push(self, frame: str) -> int:
        """Queue ``frame``; on a full queue drop the backlog first. Returns frames dropped."""
        dropped = 0
        if len(self._frames) >= self._max:
            dropped = len(self._frames)
            self._frames.clear()
            self.dropped += dropped
        self._frames.append(frame)
        self._wake.set()
        return dropped

    def _end(self, error: ApiError | None) -> None:
        """The upstream ended (``error`` None: cleanly)."""
        self._ended = True
        self._error = error
        self._wake.set()

    # ---------------------------------------------------------- socket side

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> str:
        """The next frame; raises StopAsyncIteration at a clean end, ApiError on error."""
        while True:
            if self._frames:
                return self._frames.popleft()
            if self._ended or self._closed:
                if self._error is not None and not self._closed:
                    raise self._error
                raise StopAsyncIteration
            self._wake.clear()
            await self._wake.wait()

    def close(self) -> None:
        """Leave the upstream (the last subscriber leaving closes it). Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._frames.clear()
        self._wake.set()
        self._upstream.leave(self)


class _Upstream:
    """One ``Session.Watch`` call and its subscribers."""

    def __init__(self, hub: FanoutHub, key: Key) -> None:
        self.hub = hub
        self.key = key
        self.subscribers: set[Subscription] = set()
        self.last_view: str | None = None
        self.finished: str | None = None
        self.done = False
        game_id, player_id = key
        self.call = hub.session.Watch(
            session_pb2.WatchRequest(game_id=game_id, player_id=player_id)
        )
        self.task = asyncio.create_task(self._run(), name=f"fanout-watch-{game_id}-{player_id}")

    def join(self) -> Subscription:
        """A new subscriber, primed with the newest view seen so far, or ``finished``
        (the final view) once the game ended."""
        sub = Subscription(self, self.hub.queue_frames)
        frame = self.finished or self.last_view
        if frame is not None:
            sub._push(frame)
        self.subscribers.add(sub)
        return sub

    def leave(self, sub: Subscription) -> None:
        """Forget ``sub``; without subscribers left, cancel the upstream at once."""
        self.subscribers.discard(sub)
        if not self.subscribers and not self.done:
            self._finish(None, cancel=True)

    def _finish(self, error: ApiError | None, *, cancel: bool = False) -> None:
        """Forget this upstream in the hub and end every subscriber."""
        self.done = True
        self.hub._forget(self)
        if cancel:
            self.call.cancel()
            self.task.cancel()
        for sub in tuple(self.subscribers):
            sub._end(error)
        self.subscribers.clear()

    async def _run(self) -> None:
        """Read the Watch stream; serialise each update once and queue it for everyone."""
        error: ApiError | None = None
        try:
            async for update in self.call:
                kind = update.type or "view"
                frame = seq_view_json(update.seq, update.view, kind).decode()
                if kind == "finished":
                    self.finished = frame
                else:
                    self.last_view = frame
                dropped = 0
                for sub in self.subscribers:
                    dropped += sub._push(frame)
                if dropped:
                    self.hub.metrics.ws_dropped.inc(dropped)
        except asyncio.CancelledError:
            if self.done:  # cancelled by the last subscriber leaving (or the hub closing)
                return
            raise
        except grpc.RpcError as exc:
            error = from_rpc_error(exc)
        except Exception as exc:  # noqa: BLE001 - reported to every subscriber
            log.warning("fanout_watch_failed", key=self.key, error=repr(exc))
            error = ApiError(500, "INTERNAL", "stream failed")
        if not self.done:
            self._finish(error)


class FanoutHub:
    """The shared upstream Watch streams of one gateway process.

    Args:
        session: the ``Session`` stub (grpc.aio).
        metrics: the gateway's metrics (dropped frames, open upstreams).
        queue_frames: per-socket queue bound (see :data:`QUEUE_FRAMES`).

    Attributes:
        opened: upstream Watch calls opened since start (a white-box counter for tests).
    """

    def __init__(
        self,
        session: session_pb2_grpc.SessionStub,
        metrics: Metrics,
        queue_frames: int = QUEUE_FRAMES,
    ) -> None:
        self.session = session
        self.metrics = metrics
        self.queue_frames = queue_frames
        self.opened = 0
        self._upstreams: dict[Key, _Upstream] = {}

    @property
    def upstreams(self) -> int:
        """Upstream Watch calls open now."""
        return len(self._upstreams)

    def subscribers(self, game_id: str, player_id: int) -> int:
        """Sockets sharing the upstream of (``game_id``, ``player_id``) now."""
        upstream = self._upstreams.get((game_id, player_id))
        return len(upstream.subscribers) if upstream is not None else 0

    def subscribe(self, game_id: str, player_id: int) -> Subscription:
        """A subscription to the Watch of (``game_id``, ``player_id``; 0 = spectator),
        opening the upstream when it is the first. :meth:`Subscription.close` it."""
        key = (game_id, player_id)
        upstream = self._upstreams.get(key)
        if upstream is None:
            upstream = _Upstream(self, key)
            self._upstreams[key] = upstream
            self.opened += 1
            self.metrics.ws_upstreams.set(len(self._upstreams))
            log.info("fanout_upstream_opened", game_id=game_id, player_id=player_id)
        return upstream.join()

    def _forget(self, upstream: _Upstream) -> None:
        if self._upstreams.get(upstream.key) is upstream:
            del self._upstreams[upstream.key]
            self.metrics.ws_upstreams.set(len(self._upstreams))
            log.info("fanout_upstream_closed", game_id=upstream.key[0], player_id=upstream.key[1])

    async def aclose(self) -> None:
        """Cancel every upstream (gateway shutdown); their subscribers end cleanly."""
        upstreams = list(self._upstreams.values())
        for upstream in upstreams:
            upstream._finish(None, cancel=True)
        for upstream in upstreams:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await upstream.task
