"""Wiring of the session service: NATS (stream + KV buckets), the engine client, the game
cache, the command loop and its projections, the follower, presence, leases, the
ticker, the keeper and the grpc.aio server. :func:`create_server` is the one place.

Several instances run side by side on one NATS (distinct ``CELLWAR_INSTANCE_ID``); any of
them serves any game (docs/architecture/scale-out.md).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import grpc
import structlog
from nats.aio.client import Client as NATS

from cellwar.v1 import events_pb2, session_pb2, session_pb2_grpc
from services.common import grpcutil, natsconn
from services.common.natsconn import retrying
from services.common.settings import Settings
from services.session.adapters import kv
from services.session.adapters.directory import Directory
from services.session.adapters.engine_client import EngineClient
from services.session.adapters.event_store import EventStore
from services.session.adapters.leases import Leases
from services.session.adapters.profiles import Profiles
from services.session.adapters.snapshots import SnapshotStore
from services.session.entrypoints.follower import Follower
from services.session.entrypoints.grpc_service import SessionServicer
from services.session.entrypoints.keeper import Keeper
from services.session.entrypoints.presence import Presence
from services.session.entrypoints.progress import ProgressRelay
from services.session.entrypoints.ticker import Ticker, tick_interval
from services.session.service_layer.cache import GameCache
from services.session.service_layer.loop import CommandLoop
from services.session.service_layer.projections import (
    DirectoryProjection,
    ProgressProjection,
    SnapshotProjection,
)

log = structlog.get_logger("cellwar.session")

SERVICE_NAME = session_pb2.DESCRIPTOR.services_by_name["Session"].full_name

T = TypeVar("T")

#: Seconds one step of a stop may take before the next one runs anyway.
STOP_STEP_S = 10.0


@dataclass
class SessionApp:
    """The running parts of one session instance; ``await app.stop()`` ends them all.

    ``games`` (the cache), ``loop`` (the command loop), ``store``, ``presence``,
    ``leases``, ``directory``, ``follower`` are there for white-box checks in tests.
    """

    server: grpc.aio.Server
    port: int
    nc: NATS
    engine: EngineClient
    games: GameCache
    loop: CommandLoop
    store: EventStore
    snapshots: SnapshotStore
    directory: Directory
    leases: Leases
    presence: Presence
    follower: Follower
    ticker: Ticker
    keeper: Keeper
    closing: asyncio.Event
    settings: Settings
    relay: ProgressRelay | None = None

    async def stop(self, grace: float | None = None) -> None:
        """Stop serving: end Watch streams, stop ticking and housekeeping, give the leases up
        (other instances take the games over at once), let calls finish for ``grace``
        seconds (default ``settings.shutdown_grace_s``), close NATS and the engine
        channels. Each step has a deadline, so a stop always ends."""
        self.closing.set()
        steps: list[tuple[str, Callable[[], Awaitable[object]]]] = [
            ("ticker", self.ticker.stop),
            ("runs_recorded", self.ticker.flush),
            ("keeper", self.keeper.stop),
            ("leases_released", self.leases.release_all),
            (
                "server",
                lambda: self.server.stop(
                    self.settings.shutdown_grace_s if grace is None else grace
                ),
            ),
            ("presence", self.presence.stop),
            ("progress", self.relay.stop if self.relay else _nothing),
            ("follower", self.follower.stop),
            ("leases", self.leases.stop),
            ("directory", self.directory.stop),
            ("nats", self.nc.drain),
        ]
        for name, step in steps:
            try:
                await asyncio.wait_for(step(), STOP_STEP_S)
            except Exception as exc:  # noqa: BLE001 - stop the rest anyway
                log.warning("session_stop_step_failed", step=name, error=repr(exc))
        if not self.nc.is_closed:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.nc.close(), STOP_STEP_S)
        await self.engine.close()
        log.info("session_stopped", port=self.port)


async def _nothing() -> None:
    return None


async def create_server(
    address: str = "127.0.0.1:0",
    *,
    nats_url: str,
    engine_target: str,
    settings: Settings | None = None,
) -> tuple[grpc.aio.Server, int, SessionApp]:
    """Build and start a session instance: returns ``(server, port, app)``.

    Connects to NATS (retrying for ``settings.nats_connect_timeout_s`` while it starts or
    a cluster forms), creates the ``GAME_EVENTS`` stream and the KV buckets when missing,
    mirrors the directory, leases and presence, follows the log, then serves on
    ``address`` (port 0 = a free port) with health and reflection and starts the ticker
    and the keeper. No game is loaded at start: a game is loaded on first use or when
    this instance takes its lease.

    Raises:
        NatsUnavailable: NATS unreachable past the deadline, or a step it refuses for
            good (services/common/natsconn.py).
    """
    settings = settings or Settings()
    wait = settings.nats_connect_timeout_s
    reconnected: list[Callable[[], Awaitable[None]]] = []

    async def on_reconnect() -> None:
        for hook in reconnected:
            try:
                await hook()
            except Exception:  # noqa: BLE001 - one hook must not stop the others
                log.exception("reconnect_hook_failed")

    nc = await natsconn.connect(
        nats_url,
        name="cellwar-session",
        deadline_s=wait,
        on_reconnect=on_reconnect,
        **natsconn.settings_options(settings),
    )
    js = nc.jetstream(timeout=10.0)
    reps = settings.stream_replicas
    store = EventStore(js, replicas=reps)
    await retrying("stream", store.ensure_stream, wait)

    async def bucket(name: str, **kw) -> kv.KeyValue:
        return await retrying(name, lambda: kv.ensure_bucket(js, name, replicas=reps, **kw), wait)

    snapshots = SnapshotStore(await bucket(kv.SNAPSHOTS))
    directory = Directory(await bucket(kv.DIRECTORY), idle_after_s=settings.abandoned_after_s)
    leases_kv = await bucket(kv.LEASES, ttl_s=settings.lease_ttl_s, expiry_markers=True)
    presence_kv = await bucket(kv.PRESENCE, expiry_markers=True)
    profiles = Profiles(await bucket(kv.PROFILES))
    engine = EngineClient(engine_target, timeout=settings.engine_timeout_s)

    games = GameCache(store, snapshots, engine, directory, snapshot_every=settings.snapshot_every)
    loop = CommandLoop(
        games,
        store,
        engine,
        projections=[
            ProgressProjection(profiles, engine),
            SnapshotProjection(snapshots, store, settings.snapshot_every),
            DirectoryProjection(directory),
        ],
        progress=profiles,
    )
    presence = Presence(presence_kv, settings.instance_id, settings.presence_ttl_s, games)
    presence.loop = loop
    leases = Leases(leases_kv, settings.instance_id, settings.lease_ttl_s)

    def on_event(game_id: str, data: bytes, stream_seq: int) -> None:
        if game_id in games.games:
            games.followed(events_pb2.Event.FromString(data), stream_seq)

    follower = Follower(nc, js, on_event)
    await retrying("directory", directory.start, wait)
    await retrying("leases", leases.start, wait)
    await retrying("presence", presence.start, wait)
    await retrying("follower", follower.start, wait)
    keeper = Keeper(games, loop, leases, presence, directory, settings)
    presence.on_tracked = keeper.poke
    relay = ProgressRelay(nc, games, leases)
    await retrying("progress", relay.start, wait)
    ticker = Ticker(
        games,
        loop,
        leases,
        settings.generations_per_second,
        tick_interval(settings.generations_per_second, settings.tick_interval_s),
        checkpoint_s=settings.checkpoint_s,
        relay=relay,
    )
    leases.on_lost = ticker.lost

    async def resync() -> None:
        await follower.reset("reconnect")
        for mirror in (directory.mirror, leases.mirror, presence.mirror):
            await mirror.restart()
        await games.catch_up_all()

    reconnected.append(resync)

    closing = asyncio.Event()
    server = grpcutil.new_server()
    session_pb2_grpc.add_SessionServicer_to_server(
        SessionServicer(games, loop, presence, directory, profiles, closing, relay=relay), server
    )
    health = grpcutil.add_health_and_reflection(server, [SERVICE_NAME])
    port = grpcutil.bind(server, address)
    await server.start()
    await grpcutil.set_serving(health, [SERVICE_NAME], True)
    ticker.start()
    keeper.start()
    keeper.poke()
    log.info(
        "session_started",
        port=port,
        instance_id=settings.instance_id,
        open_games=len(directory.entries),
        engine=engine_target,
    )
    app = SessionApp(
        server,
        port,
        nc,
        engine,
        games,
        loop,
        store,
        snapshots,
        directory,
        leases,
        presence,
        follower,
        ticker,
        keeper,
        closing,
        settings,
        relay,
    )
    return server, port, app
