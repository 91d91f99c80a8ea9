"""Building a whole matchmaker (the service layer and the ratings projection) from a
bundle of ports: :func:`bootstrap` takes :class:`MatchmakerPorts` and the settings and
passes every dependency in at construction.

- :func:`nats_ports`: production. Connects to NATS, opens (creating when missing) the
  ``MATCH_TICKETS``, ``MATCH_GAMES`` and ``RATINGS`` buckets and the ``MATCH_EVENTS``
  stream (services/matchmaker/store.py), opens a gRPC channel to the session.
  services/matchmaker/server.py :func:`~services.matchmaker.server.create_server`
  serves what ``bootstrap(await nats_ports(...), settings)`` builds.
- :func:`memory_ports`: no NATS. In-memory buckets, stream and session with the same
  semantics (services/matchmaker/memory.py); a real session port may be passed in.
  The ratings projection then has no ``GAME_EVENTS`` consumer: whoever ends a game
  calls ``core.projection.rate(game_id)``, as the consumer does per ``GameFinished``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import grpc
import structlog
from nats.aio.client import Client as NATS
from nats.js.client import JetStreamContext

from services.common import grpcutil, natsconn
from services.common.natsconn import retrying
from services.common.settings import Settings
from services.matchmaker import store
from services.matchmaker.memory import MemoryBucket, MemoryEventLog, MemorySession
from services.matchmaker.options import MatchmakerOptions
from services.matchmaker.projection import GameLog, GameLogs, RatingsProjection, StreamGameLogs
from services.matchmaker.service import Matchmaker
from services.matchmaker.session_port import GrpcSession, SessionPort
from services.matchmaker.store import EventSink, KvStore

log = structlog.get_logger("cellwar.matchmaker")


@dataclass
class MatchmakerPorts:
    """Everything a matchmaker reaches outside itself.

    Attributes:
        tickets / games / ratings: the ``MATCH_TICKETS``, ``MATCH_GAMES`` and
            ``RATINGS`` buckets.
        events: the ``MATCH_EVENTS`` audit trail.
        session: how games are created, joined and read when finished.
        game_logs: the games' logs, for the ratings projection.
        js: JetStream context of the projection's ``GAME_EVENTS`` consumer (None: no
            consumer).
        nc / session_channel: the connections these ports opened (closed by
            :meth:`close`; None in memory).
    """

    tickets: KvStore
    games: KvStore
    ratings: KvStore
    events: EventSink
    session: SessionPort
    game_logs: GameLogs
    js: JetStreamContext | None = None
    nc: NATS | None = None
    session_channel: grpc.aio.Channel | None = None

    async def close(self) -> None:
        """Flush the events, drain NATS, close the session channel (what is open)."""
        await self.events.flush()
        if self.nc is not None:
            with contextlib.suppress(Exception):
                await self.nc.drain()
        if self.session_channel is not None:
            await self.session_channel.close()


async def nats_ports(nats_url: str, session_target: str, settings: Settings) -> MatchmakerPorts:
    """The production ports: NATS KV buckets and the event stream (created when missing,
    ``settings.stream_replicas`` replicas), the session over gRPC at ``session_target``.

    Raises:
        NatsUnavailable: NATS unreachable past ``settings.nats_connect_timeout_s``, or a
            step it refuses for good (services/common/natsconn.py).
    """
    wait = settings.nats_connect_timeout_s
    nc = await natsconn.connect(
        nats_url, name="cellwar-matchmaker", deadline_s=wait, **natsconn.settings_options(settings)
    )
    try:
        js = nc.jetstream(timeout=10.0)
        reps = settings.stream_replicas

        async def bucket(name: str, **kw) -> store.Bucket:
            return store.Bucket(
                await retrying(name, lambda: store.ensure_bucket(js, name, replicas=reps, **kw), wait)
            )

        tickets = await bucket(store.TICKETS, max_age_s=store.TICKETS_MAX_AGE_S)
        games = await bucket(store.GAMES)
        ratings = await bucket(store.RATINGS)
        await retrying("events stream", lambda: store.ensure_events_stream(js, replicas=reps), wait)
    except BaseException:
        with contextlib.suppress(Exception):
            await nc.close()
        raise
    channel = grpc.aio.insecure_channel(session_target, options=grpcutil.GRPC_OPTIONS)
    return MatchmakerPorts(
        tickets=tickets,
        games=games,
        ratings=ratings,
        events=store.EventLog(js),
        session=GrpcSession(channel),
        game_logs=StreamGameLogs(js),
        js=js,
        nc=nc,
        session_channel=channel,
    )


class NoGameLogs:
    """:class:`~services.matchmaker.projection.GameLogs` with no game (nothing is rated)."""

    async def read(self, game_id: str, matchmade: bool = False) -> GameLog | None:
        return None

    async def finished_games(self) -> list[str]:
        return []


def memory_ports(
    session: SessionPort | None = None,
    game_logs: GameLogs | None = None,
    *,
    clock: Callable[[], float] = time.time,
) -> MatchmakerPorts:
    """In-memory ports (services/matchmaker/memory.py): buckets with revisions,
    compare-and-set and the tickets' max age (:data:`~services.matchmaker.store.TICKETS_MAX_AGE_S`
    by ``clock``), an event log, and ``session`` (default: a
    :class:`~services.matchmaker.memory.MemorySession`, which also gives the game logs;
    a session passed in without ``game_logs`` rates nothing)."""
    if session is None:
        memory = MemorySession()
        session, game_logs = memory, game_logs or memory
    return MatchmakerPorts(
        tickets=MemoryBucket(store.TICKETS, ttl_s=store.TICKETS_MAX_AGE_S, clock=clock),
        games=MemoryBucket(store.GAMES, clock=clock),
        ratings=MemoryBucket(store.RATINGS, clock=clock),
        events=MemoryEventLog(),
        session=session,
        game_logs=game_logs or NoGameLogs(),
    )


@dataclass
class MatchmakerCore:
    """A matchmaker built by :func:`bootstrap`: the service layer and the ratings
    projection over one bundle of ports. ``await start()``, then ``await stop()``."""

    matchmaker: Matchmaker
    projection: RatingsProjection
    ports: MatchmakerPorts

    async def start(self) -> None:
        """Load the mirrors, start the matching loop and the projection's consumer."""
        await self.matchmaker.start()
        self.projection.start()

    async def stop(self) -> None:
        """Stop the matching loop and the projection (the ports stay open)."""
        await self.matchmaker.stop()
        await self.projection.stop()


def bootstrap(
    ports: MatchmakerPorts, settings: Settings, *, clock: Callable[[], float] = time.time
) -> MatchmakerCore:
    """A matchmaker over ``ports``, tuned by ``settings`` (:meth:`MatchmakerOptions.from_settings`),
    not started. ``clock``: unix time in seconds."""
    matchmaker = Matchmaker(
        ports.js,
        ports.tickets,
        ports.games,
        ports.ratings,
        ports.session,
        MatchmakerOptions.from_settings(settings),
        clock,
        events=ports.events,
    )
    projection = RatingsProjection(
        ports.js,
        ports.games,
        ports.ratings,
        ports.session,
        games_mirror=matchmaker.games_mirror,
        clock=clock,
        logs=ports.game_logs,
        events=ports.events,
    )
    return MatchmakerCore(matchmaker, projection, ports)
