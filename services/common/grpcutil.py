"""Wiring shared by every gRPC server: message limits, health checking, reflection."""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

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
