"""The matchmaker's gRPC face: :class:`MatchmakerServicer` (each RPC calls one method of
the :class:`~services.matchmaker.service.Matchmaker` facade) and :func:`create_server`,
which serves ``bootstrap(await nats_ports(...), settings)`` (services/matchmaker/bootstrap.py)
with health and reflection."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any

import grpc
import structlog
from nats.aio.client import Client as NATS

from cellwar.v1 import matchmaker_pb2, matchmaker_pb2_grpc
from services.common import grpcutil
from services.common.errors import ServiceError, abort
from services.common.settings import Settings
from services.matchmaker.bootstrap import bootstrap, nats_ports
from services.matchmaker.domain import MatchErrorCode
from services.matchmaker.projection import RatingsProjection
from services.matchmaker.service import Matchmaker
from services.matchmaker.tickets import wait_of

log = structlog.get_logger("cellwar.matchmaker")

SERVICE_NAME = matchmaker_pb2.DESCRIPTOR.services_by_name["Matchmaker"].full_name


def ticket_message(record: dict[str, Any], now: float) -> matchmaker_pb2.Ticket:
    """The ``Ticket`` message of a stored ticket record at time ``now`` (seconds)."""
    match = record.get("match") or {}
    return matchmaker_pb2.Ticket(
        ticket_id=str(record["ticket_id"]),
        status=str(record.get("status", "")),
        queue=str(record.get("queue", "")),
        kind=str(record.get("kind", "")),
        players=int(record.get("players", 0)),
        config=json.dumps(record.get("config") or {}, sort_keys=True).encode(),
        name=str(record.get("name", "")),
        profile_id=str(record.get("profile_id") or ""),
        created_at=float(record.get("created_at", 0.0)),
        wait_s=wait_of(record, now),
        game_id=str(match.get("game_id", "")),
        player_id=int(match.get("player_id", 0)),
        rating=float(record.get("rating", 0.0)),
        reason=str(record.get("reason") or ""),
    )


def _entry(row: dict[str, Any]) -> matchmaker_pb2.RatingEntry:
    return matchmaker_pb2.RatingEntry(**row)


def _rpc(method):  # noqa: ANN001, ANN202 - decorator of servicer methods
    """Turn a :class:`ServiceError` into the gRPC status of its code (trailing metadata
    carries the code), bind the ticket id to the log context."""

    async def wrapper(self, request, context):  # noqa: ANN001, ANN202
        structlog.contextvars.clear_contextvars()
        if getattr(request, "ticket_id", ""):
            structlog.contextvars.bind_contextvars(ticket_id=request.ticket_id)
        try:
            return await method(self, request, context)
        except ServiceError as exc:
            await abort(context, exc.code, exc.message)

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


class MatchmakerServicer(matchmaker_pb2_grpc.MatchmakerServicer):
    """RPCs of ``cellwar.v1.Matchmaker`` (proto/cellwar/v1/matchmaker.proto)."""

    def __init__(self, mm: Matchmaker, closing: asyncio.Event) -> None:
        self.mm = mm
        self.closing = closing

    @_rpc
    async def CreateTicket(self, request, context):  # noqa: N802 - gRPC method names
        try:
            config = json.loads(request.config or b"{}")
        except ValueError as exc:
            raise ServiceError(MatchErrorCode.MALFORMED, "config is not valid JSON") from exc
        if not isinstance(config, dict):
            raise ServiceError(MatchErrorCode.MALFORMED, "config must be a JSON object")
        record = await self.mm.create_ticket(
            request.kind,
            int(request.players),
            config,
            request.name,
            request.profile_id,
            request.command_id,
        )
        return ticket_message(record, self.mm.clock())

    @_rpc
    async def GetTicket(self, request, context):  # noqa: N802
        return ticket_message(await self.mm.get_ticket(request.ticket_id), self.mm.clock())

    @_rpc
    async def CancelTicket(self, request, context):  # noqa: N802
        return ticket_message(await self.mm.cancel_ticket(request.ticket_id), self.mm.clock())

    async def WatchTicket(self, request, context):  # noqa: N802
        structlog.contextvars.bind_contextvars(ticket_id=request.ticket_id)
        stream = self.mm.watch_ticket(request.ticket_id)
        closing = asyncio.create_task(self.closing.wait())
        nxt: asyncio.Future | None = None
        try:
            while True:
                nxt = asyncio.ensure_future(anext(stream))
                done, _ = await asyncio.wait({nxt, closing}, return_when=asyncio.FIRST_COMPLETED)
                if nxt not in done:
                    nxt.cancel()
                    await abort(context, "UNAVAILABLE", "the matchmaker is stopping")
                try:
                    record = nxt.result()
                except StopAsyncIteration:
                    return
                except ServiceError as exc:
                    await abort(context, exc.code, exc.message)
                yield ticket_message(record, self.mm.clock())
        finally:
            closing.cancel()
            if nxt is not None:  # the caller went mid-wait: its end must not go unretrieved
                nxt.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, Exception):
                    await nxt
            with contextlib.suppress(Exception):
                await stream.aclose()

    @_rpc
    async def Queues(self, request, context):  # noqa: N802
        return matchmaker_pb2.QueuesReply(
            queues=[
                matchmaker_pb2.QueueStats(**{k: v for k, v in q.items() if v is not None})
                for q in self.mm.queue_stats()
            ]
        )

    @_rpc
    async def Leaderboard(self, request, context):  # noqa: N802
        rows = self.mm.leaderboard(request.kind, int(request.players), int(request.limit or 100))
        return matchmaker_pb2.LeaderboardReply(entries=[_entry(r) for r in rows])

    @_rpc
    async def Ratings(self, request, context):  # noqa: N802
        return matchmaker_pb2.RatingsReply(
            ratings=[_entry(r) for r in self.mm.profile_ratings(request.profile_id)]
        )


@dataclass
class MatchmakerApp:
    """The running parts of one matchmaker instance; ``await app.stop()`` ends them."""

    server: grpc.aio.Server
    port: int
    nc: NATS
    session_channel: grpc.aio.Channel
    matchmaker: Matchmaker
    projection: RatingsProjection
    closing: asyncio.Event
    settings: Settings

    async def stop(self, grace: float | None = None) -> None:
        """Stop matching and projecting, end Watch streams, let calls finish for
        ``grace`` seconds (default ``settings.shutdown_grace_s``), close NATS."""
        self.closing.set()
        await self.matchmaker.stop()
        await self.projection.stop()
        await self.server.stop(self.settings.shutdown_grace_s if grace is None else grace)
        with contextlib.suppress(Exception):
            await self.nc.drain()
        await self.session_channel.close()
        log.info("matchmaker_stopped", port=self.port)


async def create_server(
    address: str = "127.0.0.1:0",
    *,
    nats_url: str,
    session_target: str,
    settings: Settings | None = None,
) -> tuple[grpc.aio.Server, int, MatchmakerApp]:
    """Build and start a matchmaker instance: returns ``(server, port, app)``.

    Creates the ``MATCH_TICKETS``, ``MATCH_GAMES`` and ``RATINGS`` buckets and the
    ``MATCH_EVENTS`` stream when missing, loads the buckets, starts the matching loop and
    the ratings projection, then serves on ``address`` (port 0 = a free port) with health
    and reflection.

    Raises:
        NatsUnavailable: NATS unreachable past ``settings.nats_connect_timeout_s``, or a
            step it refuses for good (services/common/natsconn.py).
    """
    settings = settings or Settings()
    ports = await nats_ports(nats_url, session_target, settings)
    core = bootstrap(ports, settings)
    try:
        await core.start()
    except BaseException:
        await ports.close()
        raise
    mm = core.matchmaker
    closing = asyncio.Event()
    server = grpcutil.new_server()
    matchmaker_pb2_grpc.add_MatchmakerServicer_to_server(MatchmakerServicer(mm, closing), server)
    health = grpcutil.add_health_and_reflection(server, [SERVICE_NAME])
    port = grpcutil.bind(server, address)
    await server.start()
    await grpcutil.set_serving(health, [SERVICE_NAME], True)
    log.info(
        "matchmaker_started",
        port=port,
        instance_id=mm.options.instance_id,
        session=session_target,
        tickets=len(mm.ticket_mirror.entries),
    )
    app = MatchmakerApp(server, port, ports.nc, ports.session_channel, mm, core.projection, closing, settings)
    return server, port, app
