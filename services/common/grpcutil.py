"""Wiring shared by every gRPC server and client: message limits, health checking,
reflection, and :class:`FailoverStub` (a client over several instances of a service)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

log = structlog.get_logger("cellwar.grpc")

#: Large enough for a 10,000-event fold or a 1024x1024 board (bytes).
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

#: Channel and server options: message size limits, and how soon a channel tries a
#: restarted peer again (milliseconds). gRPC's default reconnect backoff grows to 120 s
#: (1 s, x1.6, jittered): after a session instance restarts, its gateway kept answering
#: 503 for ~5 s more; capped at 1 s, a restarted peer is found within about a second.
#: (Channel-only keys; a server ignores them.)
GRPC_OPTIONS: list[tuple[str, int]] = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


def new_server() -> grpc.aio.Server:
    """A grpc.aio server with the CellWar message limits."""
    return grpc.aio.server(options=GRPC_OPTIONS)


def add_health_and_reflection(
    server: grpc.aio.Server, service_names: Iterable[str]
) -> health.aio.HealthServicer:
    """Register health checking (SERVING for ``""`` and each service) and reflection.

    Returns the health servicer so the caller can set NOT_SERVING when it stops.
    """
    names = list(service_names)
    servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    reflection.enable_server_reflection(
        [*names, health.SERVICE_NAME, reflection.SERVICE_NAME], server
    )
    return servicer


async def set_serving(
    servicer: health.aio.HealthServicer, service_names: Iterable[str], serving: bool
) -> None:
    """Set the health status of ``""`` and every named service."""
    status = (
        health_pb2.HealthCheckResponse.SERVING
        if serving
        else health_pb2.HealthCheckResponse.NOT_SERVING
    )
    for name in ["", *service_names]:
        await servicer.set(name, status)


def bind(server: grpc.aio.Server, address: str) -> int:
    """Bind an insecure port; ``host:0`` picks a free port. Returns the port.

    Raises:
        RuntimeError: the address cannot be bound.
    """
    port = server.add_insecure_port(address)
    if not port:
        raise RuntimeError(f"cannot bind gRPC server to {address}")
    return port


# -- calls spread over several instances of one service


#: Deadline of the health check that tells a slow instance from a hung one (seconds).
PROBE_TIMEOUT_S = 0.5
#: How long an instance that did not answer is asked only after the others (seconds).
SUSPECT_S = 5.0


class UnaryOverStream:
    """A unary method carried by a long-lived stream (the gateway's ``Act`` / ``EndTurn``
    over ``Session.Commands``, gateway/command_stream.py): called as a unary
    multi-callable, ``method(request, timeout=s)``, it returns an awaitable with
    ``cancel()`` (an :class:`asyncio.Future`) that gives the reply or raises
    :class:`grpc.aio.AioRpcError` as the unary call would. :class:`FailoverStub` moves
    it off a silent instance as it moves a unary call."""

    def __call__(self, request: Any, *, timeout: float | None = None) -> asyncio.Future:
        raise NotImplementedError


class _Moved(Exception):
    """The instance asked did not answer in time nor its health check: ask the next."""


def _transport_unavailable(exc: grpc.aio.AioRpcError) -> bool:
    """UNAVAILABLE from the channel itself (nothing listens, the connection broke), not
    an answer of the service (which carries its ``cellwar-error-code``)."""
    if exc.code() != grpc.StatusCode.UNAVAILABLE:
        return False
    return not any(key == "cellwar-error-code" for key, _ in exc.trailing_metadata() or ())


class FailoverStub:
    """A gRPC stub over several instances of one service (docs/faults.md).

    A unary call goes to the first instance of ``channels`` that is not suspect. When
    it has not answered after ``failover_s`` seconds, the instance's health check is
    asked (:data:`PROBE_TIMEOUT_S`): an instance that answers SERVING is only slow and
    the call waits on; one that does not (a paused process: its port accepts, nothing
    answers) gets the call cancelled, is suspect for :data:`SUSPECT_S` seconds, and the
    same request goes to the next instance within what is left of the caller's
    deadline. An instance the channel cannot reach at all (UNAVAILABLE without a service
    error code) is skipped the same way. Only requests that are safe to send twice may
    go through it: every session write carries its command id (a retried command is
    applied once, services/session/service_layer/loop.py), reads change nothing. Streaming calls
    go to the first instance that is not suspect. A :class:`UnaryOverStream` method (a
    command on the instance's command stream) is moved as a unary call: a stream that
    breaks fails its commands UNAVAILABLE without a service code, so they go to the
    next instance with the same command id.

    Args:
        channels: one channel per instance, the preferred first.
        stub_class: the generated stub (``SessionStub``).
        failover_s: seconds before a silent instance is probed (0: never move).
        names: the instances' addresses, for the log.
    """

    def __init__(
        self,
        channels: Sequence[grpc.aio.Channel],
        stub_class: Callable[[grpc.aio.Channel], Any],
        *,
        failover_s: float = 1.0,
        names: Sequence[str] = (),
    ) -> None:
        if not channels:
            raise ValueError("no channel given")
        self.channels = list(channels)
        self.stubs = [stub_class(c) for c in self.channels]
        self.health = [health_pb2_grpc.HealthStub(c) for c in self.channels]
        self.failover_s = failover_s
        self.names = list(names) or [str(i + 1) for i in range(len(self.channels))]
        self.suspect_until = [0.0] * len(self.channels)
        self.moves = 0

    def order(self) -> list[int]:
        """Indexes of the instances to ask, in turn: the healthy in preference order,
        then the suspect."""
        now = time.monotonic()
        indexes = range(len(self.channels))
        return [i for i in indexes if self.suspect_until[i] <= now] + [
            i for i in indexes if self.suspect_until[i] > now
        ]

    def suspect(self, index: int) -> None:
        """Ask instance ``index`` after the others for :data:`SUSPECT_S` seconds."""
        self.suspect_until[index] = time.monotonic() + SUSPECT_S

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        first = getattr(self.stubs[0], name)
        if isinstance(first, (grpc.aio.UnaryUnaryMultiCallable, UnaryOverStream)):
            return functools.partial(self._unary, name)
        return functools.partial(self._stream, name)

    def _stream(self, name: str, request: Any, **kwargs: Any) -> Any:
        return getattr(self.stubs[self.order()[0]], name)(request, **kwargs)

    async def _alive(self, index: int) -> bool:
        try:
            reply = await self.health[index].Check(
                health_pb2.HealthCheckRequest(service=""), timeout=PROBE_TIMEOUT_S
            )
        except grpc.RpcError:
            return False
        return reply.status == health_pb2.HealthCheckResponse.SERVING

    async def _unary(
        self, name: str, request: Any, *, timeout: float | None = None, **kwargs: Any
    ) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        order = self.order()
        for pos, index in enumerate(order):
            left = None if deadline is None else max(deadline - time.monotonic(), 0.001)
            call = getattr(self.stubs[index], name)(request, timeout=left, **kwargs)
            if pos == len(order) - 1 or self.failover_s <= 0:
                return await call
            try:
                return await self._answer(call, index)
            except _Moved:
                pass
            except grpc.aio.AioRpcError as exc:
                if not _transport_unavailable(exc):
                    raise
                self.suspect(index)
            self.moves += 1
            log.warning("session_instance_skipped", method=name, instance=self.names[index])
        raise AssertionError("unreachable: the last instance's answer is returned")

    async def _answer(self, call: Any, index: int) -> Any:
        """The answer of ``call`` to instance ``index``; :class:`_Moved` when the
        instance neither answered within ``failover_s`` nor answers its health check."""
        future = asyncio.ensure_future(call)
        done, _ = await asyncio.wait({future}, timeout=self.failover_s)
        if not done and not await self._alive(index) and not future.done():
            call.cancel()
            future.cancel()
            with contextlib.suppress(BaseException):
                await future
            self.suspect(index)
            raise _Moved
        return await future
