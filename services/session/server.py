"""The production entry of the session service: :func:`create_server` builds an instance
on NATS (stream + KV buckets, services/session/bootstrap.py :func:`nats_ports`) and
starts it (:func:`~services.session.bootstrap.bootstrap`).

Several instances run side by side on one NATS (distinct ``CELLWAR_INSTANCE_ID``); any of
them serves any game (docs/architecture/scale-out.md).
"""

from __future__ import annotations

import grpc

from services.common.settings import Settings
from services.session.bootstrap import (
    SERVICE_NAME,
    STOP_STEP_S,
    SessionApp,
    SessionPorts,
    bootstrap,
    engine_client,
    memory_ports,
    nats_ports,
)

__all__ = [
    "SERVICE_NAME",
    "STOP_STEP_S",
    "SessionApp",
    "SessionPorts",
    "bootstrap",
    "create_server",
    "memory_ports",
    "nats_ports",
]


async def create_server(
    address: str = "127.0.0.1:0",
    *,
    nats_url: str,
    engine_target: str,
    settings: Settings | None = None,
) -> tuple[grpc.aio.Server, int, SessionApp]:
    """Build and start a session instance on NATS: returns ``(server, port, app)``.

    Connects to NATS (retrying for ``settings.nats_connect_timeout_s`` while it starts or
    a cluster forms), creates the ``GAME_EVENTS`` stream and the KV buckets when missing,
    mirrors the directory, leases and presence, follows the log, then serves on
    ``address`` (port 0 = a free port) with health and reflection and starts the ticker
    and the keeper, talking to the engine replicas ``engine_target``. No game is loaded
    at start: a game is loaded on first use or when this instance takes its lease.

    Raises:
        NatsUnavailable: NATS unreachable past the deadline, or a step it refuses for
            good (services/common/natsconn.py).
    """
    settings = settings or Settings()
    engine = engine_client(engine_target, settings)
    try:
        ports = await nats_ports(nats_url, settings, engine=engine)
    except BaseException:
        await engine.close()
        raise
    app = await bootstrap(ports, settings, address)  # closes the ports and engine if it fails
    return app.server, app.port, app
