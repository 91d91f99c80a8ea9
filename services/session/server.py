"""Wiring of the session service: NATS (stream + KV buckets), the engine client, the game
repository, the ticker and the grpc.aio server. :func:`create_server` is the one place."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

import grpc
import nats
import structlog
from nats.aio.client import Client as NATS

from cellwar.v1 import session_pb2, session_pb2_grpc
from services.common import grpcutil
from services.common.settings import Settings
from services.session import kv
from services.session.directory import Directory
from services.session.engine_client import EngineClient
from services.session.games import Games
from services.session.leases import Leases
from services.session.profiles import Profiles
from services.session.service import SessionServicer
from services.session.snapshots import SnapshotStore
from services.session.store import EventStore
from services.session.ticker import Ticker, tick_interval

log = structlog.get_logger("cellwar.session")

SERVICE_NAME = session_pb2.DESCRIPTOR.services_by_name["Session"].full_name


@dataclass
class SessionApp:
    """The running parts of one session instance; ``await app.stop()`` ends them all."""

    server: grpc.aio.Server
    port: int
    nc: NATS
    engine: EngineClient
    games: Games
    ticker: Ticker
    closing: asyncio.Event
    settings: Settings

    async def stop(self, grace: float | None = None) -> None:
        """Stop serving: end Watch streams, stop ticking, let calls finish for ``grace``
        seconds (default ``settings.shutdown_grace_s``), close NATS and the engine channel."""
        self.closing.set()
        await self.ticker.stop()
        await self.server.stop(self.settings.shutdown_grace_s if grace is None else grace)
        with contextlib.suppress(Exception):
            await self.nc.drain()
        await self.engine.close()
        log.info("session_stopped", port=self.port)


async def connect_nats(url: str) -> NATS:
    """Connect to NATS, reconnecting for ever after a loss. Raises on a first failure."""

    async def on_error(exc: Exception) -> None:
        log.warning("nats_error", error=str(exc))

    return await nats.connect(
        url,
        name="cellwar-session",
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.5,
        connect_timeout=5,
        error_cb=on_error,
    )


async def create_server(
    address: str = "127.0.0.1:0",
    *,
    nats_url: str,
    engine_target: str,
    settings: Settings | None = None,
) -> tuple[grpc.aio.Server, int, SessionApp]:
    """Build and start a session instance: returns ``(server, port, app)``.

    Creates the ``GAME_EVENTS`` stream and the KV buckets when missing, rebuilds every
    unfinished game from NATS (needs the engine service), then serves on ``address``
    (port 0 = a free port) with health and reflection, and starts the ticker.

    Raises:
        nats.errors.Error / OSError: NATS unreachable.
    """
    settings = settings or Settings()
    nc = await connect_nats(nats_url)
    js = nc.jetstream(timeout=10.0)
    store = EventStore(js, replicas=settings.stream_replicas)
    await store.ensure_stream()
    reps = settings.stream_replicas
    snapshots = SnapshotStore(await kv.ensure_bucket(js, kv.SNAPSHOTS, replicas=reps))
    directory = Directory(await kv.ensure_bucket(js, kv.DIRECTORY, replicas=reps))
    leases_kv = await kv.ensure_bucket(js, kv.LEASES, replicas=reps, ttl_s=settings.lease_ttl_s)
    profiles = Profiles(await kv.ensure_bucket(js, kv.PROFILES, replicas=reps))
    engine = EngineClient(engine_target, timeout=settings.engine_timeout_s)
    games = Games(store, snapshots, directory, engine, settings, profiles)
    await games.start()
    leases = Leases(leases_kv, settings.instance_id, settings.lease_ttl_s)
    ticker = Ticker(
        games,
        leases,
        settings.generations_per_second,
        tick_interval(settings.generations_per_second, settings.tick_interval_s),
    )
    closing = asyncio.Event()
    server = grpcutil.new_server()
    session_pb2_grpc.add_SessionServicer_to_server(SessionServicer(games, closing), server)
    health = grpcutil.add_health_and_reflection(server, [SERVICE_NAME])
    port = grpcutil.bind(server, address)
    await server.start()
    await grpcutil.set_serving(health, [SERVICE_NAME], True)
    ticker.start()
    log.info(
        "session_started",
        port=port,
        instance_id=settings.instance_id,
        games=len(games.games),
        engine=engine_target,
    )
    app = SessionApp(server, port, nc, engine, games, ticker, closing, settings)
    return server, port, app
