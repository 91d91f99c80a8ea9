"""Wiring of one session instance from a bundle of ports (the composition root).

:func:`bootstrap` builds every part once, in dependency order, each given what it needs
at construction (no attribute is set on a part after it is built), then starts them:
the engine client, the game cache, the command loop and its projections, presence,
leases, the follower, the keeper, the ticker, the progress relay and the gRPC server.
Two callbacks run "backwards" (a part calls one built after it): leases lost go to the
ticker through a :class:`Hook` made before both, and the presence pokes the keeper
through the ``asyncio.Event`` the keeper waits on, made before both.

The ports (:class:`SessionPorts`) are where the instance keeps its facts:

- :func:`nats_ports`: production, NATS (the ``GAME_EVENTS`` stream, the KV buckets of
  services/session/adapters/kv.py, the follower's consumer, core NATS for progress),
  every step retried while NATS starts;
- :func:`memory_ports`: one process, no NATS (services/session/adapters/memory.py): the
  same adapters on in-memory buckets, an in-memory log with the same fence and
  de-duplication; instances built on one :class:`MemoryServer` see each other.

``services.session.server.create_server`` is ``bootstrap(await nats_ports(...))``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, ParamSpec, TypeVar

import grpc
import structlog

from cellwar.v1 import events_pb2, session_pb2, session_pb2_grpc
from services.common import grpcutil, natsconn
from services.common.natsconn import retrying
from services.common.settings import Settings
from services.session.adapters import kv
from services.session.adapters.directory import Directory
from services.session.adapters.engine_client import EngineClient
from services.session.adapters.event_store import EventStore
from services.session.adapters.leases import Leases
from services.session.adapters.memory import MemoryEventLog, MemoryFollower, MemoryServer
from services.session.adapters.profiles import Profiles
from services.session.adapters.snapshots import SnapshotStore
from services.session.entrypoints.follower import Follower, OnEvent
from services.session.entrypoints.grpc_service import SessionServicer
from services.session.entrypoints.keeper import Keeper
from services.session.entrypoints.presence import Presence
from services.session.entrypoints.progress import ProgressRelay
from services.session.entrypoints.ticker import RunPeek, Ticker, tick_interval
from services.session.entrypoints.timers import TurnTimers
from services.session.service_layer.cache import GameCache
from services.session.service_layer.library import Library
from services.session.service_layer.loop import CommandLoop
from services.session.service_layer.ports import EventLog, Rules
from services.session.service_layer.projections import (
    DirectoryProjection,
    ProgressProjection,
    SnapshotProjection,
)
from services.session.service_layer.spectators import Spectators

log = structlog.get_logger("cellwar.session")

SERVICE_NAME = session_pb2.DESCRIPTOR.services_by_name["Session"].full_name

T = TypeVar("T")
P = ParamSpec("P")

#: Seconds one step of a stop may take before the next one runs anyway.
STOP_STEP_S = 10.0

class Hook(Generic[P]):
    """Callbacks connected after the part that calls them is built: ``hook(*args)`` calls
    each in turn (one that raises is logged, the others still run)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._callbacks: list[Callable[P, None]] = []

    def connect(self, callback: Callable[P, None]) -> None:
        """Call ``callback`` on every later call of the hook."""
        self._callbacks.append(callback)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> None:
        for callback in self._callbacks:
            try:
                callback(*args, **kwargs)
            except Exception:  # noqa: BLE001 - one callback must not stop the others
                log.exception("hook_failed", hook=self.name)


def engine_client(target: str, settings: Settings) -> EngineClient:
    """The gRPC client of the engine replicas ``target`` (comma separated ``host:port``)
    with ``settings.engine_timeout_s`` and ``settings.engine_decide``."""
    return EngineClient(target, timeout=settings.engine_timeout_s, decide=settings.engine_decide)


async def _once(name: str, step: Callable[[], Awaitable[T]]) -> T:
    return await step()


async def _nothing() -> None:
    return None


@dataclass
class SessionPorts:
    """Where one session instance keeps its facts, and how to reach them.

    Attributes:
        store: the event log (:class:`~services.session.service_layer.ports.EventLog`).
        snapshots, directory, leases, presence, profiles: the KV buckets (nats.py
            ``KeyValue`` or :class:`~services.session.adapters.memory.MemoryKeyValue`);
            ``leases`` has the TTL ``settings.lease_ttl_s`` and, like ``presence``,
            expiry markers.
        follow: ``follow(on_event, on_reset)`` gives the follower (``start``, ``stop``,
            ``reset``; ``on_reset`` is awaited after each reset).
        bus: core pub/sub for the progress relay (``subscribe``, ``publish``,
            ``is_closed``).
        step: ``await step(name, fn)`` runs one start-up step (NATS: retried while it
            starts, up to ``settings.nats_connect_timeout_s``).
        reconnected: coroutine functions run after a reconnect (the bootstrap adds the
            resync of the follower, the mirrors and the cache).
        close: closes the connection (drains NATS) at the end of a stop.
        engine: the rules; None: an :class:`EngineClient` of ``settings.engine_addr``.
        nc: the NATS connection (None in memory), for white-box checks.
        memory: the in-memory server (None on NATS), for white-box checks and faults.
    """

    store: EventLog
    snapshots: Any
    directory: Any
    leases: Any
    presence: Any
    profiles: Any
    follow: Callable[[OnEvent], Any]
    bus: Any
    step: Callable[[str, Callable[[], Awaitable[Any]]], Awaitable[Any]] = _once
    reconnected: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    close: Callable[[], Awaitable[None]] = _nothing
    engine: Rules | None = None
    nc: Any = None
    memory: MemoryServer | None = None


async def nats_ports(
    nats_url: str, settings: Settings, *, engine: Rules | None = None
) -> SessionPorts:
    """The ports of a production instance: connects to NATS (retrying for
    ``settings.nats_connect_timeout_s`` while it starts or a cluster forms), creates the
    ``GAME_EVENTS`` stream and the KV buckets when missing (``settings.stream_replicas``).
    ``engine``: the rules (default: an :class:`EngineClient` of ``settings.engine_addr``,
    made by :func:`bootstrap`).

    Raises:
        NatsUnavailable: NATS unreachable past the deadline, or a step it refuses for
            good (services/common/natsconn.py).
    """
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

    async def step(name: str, fn: Callable[[], Awaitable[T]]) -> T:
        return await retrying(name, fn, wait)

    async def bucket(name: str, **kw: Any) -> Any:
        return await step(name, lambda: kv.ensure_bucket(js, name, replicas=reps, **kw))

    async def close() -> None:
        try:
            await asyncio.wait_for(nc.drain(), STOP_STEP_S)
        except Exception as exc:  # noqa: BLE001 - close anyway
            log.warning("session_stop_step_failed", step="nats", error=repr(exc))
        if not nc.is_closed:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(nc.close(), STOP_STEP_S)

    try:
        await step("stream", store.ensure_stream)
        return SessionPorts(
            store=store,
            snapshots=await bucket(kv.SNAPSHOTS),
            directory=await bucket(kv.DIRECTORY),
            leases=await bucket(kv.LEASES, ttl_s=settings.lease_ttl_s, expiry_markers=True),
            presence=await bucket(kv.PRESENCE, expiry_markers=True),
            profiles=await bucket(kv.PROFILES),
            follow=lambda on_event, on_reset=None: Follower(nc, js, on_event, on_reset),
            bus=nc,
            step=step,
            reconnected=reconnected,
            close=close,
            engine=engine,
            nc=nc,
        )
    except BaseException:
        with contextlib.suppress(Exception):
            await nc.close()
        raise


def memory_ports(
    server: MemoryServer | None = None, *, settings: Settings | None = None, engine: Rules | None = None
) -> SessionPorts:
    """The ports of an instance in memory (services/session/adapters/memory.py): no NATS,
    no socket but the engine's. Instances given the same ``server`` share their log,
    buckets and pub/sub, as instances on one NATS do (default: a new server). ``settings``
    gives the leases bucket its TTL (``lease_ttl_s``); ``engine``: the rules (default: an
    :class:`EngineClient` of ``settings.engine_addr``, made by :func:`bootstrap`)."""
    server = server or MemoryServer()
    ttl = (settings or Settings()).lease_ttl_s
    bus = server.connect()

    async def close() -> None:
        await bus.drain()

    return SessionPorts(
        store=MemoryEventLog(server.events),
        snapshots=server.bucket(kv.SNAPSHOTS),
        directory=server.bucket(kv.DIRECTORY),
        leases=server.bucket(kv.LEASES, ttl_s=ttl, expiry_markers=True),
        presence=server.bucket(kv.PRESENCE, expiry_markers=True),
        profiles=server.bucket(kv.PROFILES),
        follow=lambda on_event, on_reset=None: MemoryFollower(server.events, on_event, on_reset),
        bus=bus,
        close=close,
        engine=engine,
        memory=server,
    )


@dataclass
class SessionApp:
    """The running parts of one session instance; ``await app.stop()`` ends them all.

    ``games`` (the cache), ``loop`` (the command loop), ``store``, ``presence``,
    ``leases``, ``directory``, ``follower`` are there for white-box checks in tests;
    ``nc`` is the NATS connection (None in memory), ``ports`` what the instance was built
    on.
    """

    server: grpc.aio.Server
    port: int
    nc: Any
    engine: Rules
    games: GameCache
    loop: CommandLoop
    store: EventLog
    snapshots: SnapshotStore
    directory: Directory
    leases: Leases
    presence: Presence
    follower: Any
    ticker: Ticker
    keeper: Keeper
    closing: asyncio.Event
    settings: Settings
    relay: ProgressRelay | None = None
    ports: SessionPorts | None = None

    async def stop(self, grace: float | None = None) -> None:
        """Stop serving: end Watch streams, stop ticking and housekeeping, give the leases up
        (other instances take the games over at once), let calls finish for ``grace``
        seconds (default ``settings.shutdown_grace_s``), close the ports (drain NATS) and
        the engine channels. Each step has a deadline, so a stop always ends."""
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
        ]
        for name, step in steps:
            try:
                await asyncio.wait_for(step(), STOP_STEP_S)
            except Exception as exc:  # noqa: BLE001 - stop the rest anyway
                log.warning("session_stop_step_failed", step=name, error=repr(exc))
        if self.ports is not None:  # its own deadlines (a drain, then a close)
            await self.ports.close()
        close = getattr(self.engine, "close", None)
        if close is not None:
            await close()
        log.info("session_stopped", port=self.port)


async def bootstrap(
    ports: SessionPorts, settings: Settings, address: str = "127.0.0.1:0"
) -> SessionApp:
    """Build and start a session instance on ``ports`` serving gRPC on ``address`` (port
    0 = a free port) with health and reflection: mirrors the directory, leases and
    presence, follows the log, then serves and starts the ticker and the keeper. No game
    is loaded at start: a game is loaded on first use or when this instance takes its
    lease. On a failure every part started so far is stopped and the ports closed.

    Raises:
        NatsUnavailable: (NATS ports) a start-up step NATS refuses past its deadline.
    """
    engine = ports.engine or engine_client(settings.engine_addr, settings)
    started: list[Callable[[], Awaitable[Any]]] = []
    try:
        return await _build(ports, settings, address, engine, started)
    except BaseException:
        for stop in reversed(started):
            with contextlib.suppress(Exception):
                await stop()
        with contextlib.suppress(Exception):
            await ports.close()
        close = getattr(engine, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()
        raise


async def _build(
    ports: SessionPorts,
    settings: Settings,
    address: str,
    engine: Rules,
    started: list[Callable[[], Awaitable[Any]]],
) -> SessionApp:
    step = ports.step
    store = ports.store
    snapshots = SnapshotStore(ports.snapshots)
    directory = Directory(ports.directory, idle_after_s=settings.abandoned_after_s)
    profiles = Profiles(ports.profiles)
    lease_lost: Hook[[str]] = Hook("lease_lost")
    leases = Leases(ports.leases, settings.instance_id, settings.lease_ttl_s, on_lost=lease_lost)

    games = GameCache(
        store,
        snapshots,
        engine,
        directory,
        snapshot_every=settings.snapshot_every,
        peek=RunPeek(leases, engine),
    )
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
    lease_pass_due = asyncio.Event()
    presence = Presence(
        ports.presence,
        settings.instance_id,
        settings.presence_ttl_s,
        games,
        loop=loop,
        on_tracked=lease_pass_due.set,
    )

    def on_event(game_id: str, data: bytes, stream_seq: int) -> None:
        if game_id in games.games:
            games.followed(events_pb2.Event.FromString(data), stream_seq)

    follower = ports.follow(on_event, games.catch_up_all)
    keeper = Keeper(
        games,
        loop,
        leases,
        presence,
        directory,
        settings,
        poked=lease_pass_due,
        timers=TurnTimers(games, loop),
    )
    relay = ProgressRelay(ports.bus, games, leases)
    ticker = Ticker(
        games,
        loop,
        leases,
        settings.generations_per_second,
        tick_interval(settings.generations_per_second, settings.tick_interval_s),
        checkpoint_s=settings.checkpoint_s,
        relay=relay,
    )
    lease_lost.connect(ticker.lost)

    for name, part in (
        ("directory", directory),
        ("leases", leases),
        ("presence", presence),
        ("follower", follower),
        ("progress", relay),
    ):
        await step(name, part.start)
        started.append(part.stop)

    async def resync() -> None:
        await follower.reset("reconnect")  # then the cache catches up (on_reset)
        for mirror in (directory.mirror, leases.mirror, presence.mirror):
            await mirror.restart()

    ports.reconnected.append(resync)

    closing = asyncio.Event()
    server = grpcutil.new_server()
    servicer = SessionServicer(
        games,
        loop,
        presence,
        directory,
        profiles,
        closing,
        relay=relay,
        library=Library(engine),
        spectators=Spectators(games),
    )
    session_pb2_grpc.add_SessionServicer_to_server(servicer, server)
    health = grpcutil.add_health_and_reflection(server, [SERVICE_NAME])
    port = grpcutil.bind(server, address)
    await server.start()
    started.append(lambda: server.stop(0))
    await grpcutil.set_serving(health, [SERVICE_NAME], True)
    ticker.start()
    keeper.start()
    keeper.poke()
    log.info(
        "session_started",
        port=port,
        instance_id=settings.instance_id,
        open_games=len(directory.entries),
        engine=getattr(engine, "target", None) or settings.engine_addr,
        ports="memory" if ports.memory is not None else "nats",
    )
    return SessionApp(
        server=server,
        port=port,
        nc=ports.nc,
        engine=engine,
        games=games,
        loop=loop,
        store=store,
        snapshots=snapshots,
        directory=directory,
        leases=leases,
        presence=presence,
        follower=follower,
        ticker=ticker,
        keeper=keeper,
        closing=closing,
        settings=settings,
        relay=relay,
        ports=ports,
    )
