"""Matchmaking and ratings (docs/matchmaking.md): tickets, their WebSocket, queue statistics and
the leaderboard, all answered by the matchmaker service over gRPC.

- ``POST /matchmaking/tickets`` ``{"kind", "players", "config"?, "name"}`` (optional
  ``X-Profile-Token``: the rated identity) → 201 ``{"ticket_id", "ticket_token"}``;
  409 ``ALREADY_QUEUED`` when the profile already searches in that queue.
- ``GET /matchmaking/tickets/{id}`` (``Authorization: Bearer <ticket token>``) →
  ``{"ticket_id", "status", "wait_s", "queue", ..., "match"?: {"game_id", "player_id",
  "player_token"}}``. The player token is signed here, from the match's game and seat,
  one token per seat however often it is read. The ticket token expires with the
  ticket (401 ``TOKEN_EXPIRED``, gateway/ticket_tokens.py).
- ``DELETE /matchmaking/tickets/{id}`` cancels (409 ``ALREADY_MATCHED`` too late).
- ``WS /matchmaking/tickets/{id}/stream?token=…``: ``{"type": "ticket", ...}`` now and
  at each status change; closes with 1000 after a final status (``matched``,
  ``cancelled``, ``expired``); errors as on the game stream (error frame, 4000 + HTTP
  status).
- ``GET /matchmaking/queues``: per queue ``waiting``, ``in_games``,
  ``matches_last_minute``, ``median_wait_s``, ``p90_wait_s``.
- ``GET /leaderboard?kind=life&players=2``: the top 100 ``{"profile_id", "name",
  "rating", "games"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Annotated, Any, Literal

import grpc
import structlog
from fastapi import APIRouter, Body, Depends, Path, Query, Request, WebSocket, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field, StrictInt

from cellwar.v1 import matchmaker_pb2, matchmaker_pb2_grpc
from gateway.deps import RPC_TIMEOUT_S, CommandId, SignerDep
from gateway.errors import ApiError, from_rpc_error
from gateway.profile_deps import ProfileHeader
from gateway.responses import errors
from gateway.schemas import CellWarTicketConfig, DisplayName, LifeTicketConfig, RequestBody
from gateway.ticket_tokens import TicketSigner, seat_token
from gateway.ws_auth import offered_token, selected_subprotocol

router = APIRouter(tags=["matchmaking"])
log = structlog.get_logger("gateway.matchmaking")

TicketId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]

_ticket_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="TicketToken",
    description="The `ticket_token` returned by POST /matchmaking/tickets.",
)

# --------------------------------------------------------------------------- schemas


class _TicketBase(RequestBody):

    name: Annotated[DisplayName, Field(min_length=1, description="Your name in the game")]

    def config_json(self) -> dict[str, Any]:
        """The partial config as sent (only the fields the ticket sets)."""
        config: BaseModel = self.config  # type: ignore[attr-defined]
        return config.model_dump(exclude_unset=True, exclude_none=True)


class LifeTicket(_TicketBase):
    """Ask for a Life match (2 or 4 players)."""

    kind: Literal["life"]
    players: Annotated[Literal[2, 4], Field(description="Life: 2 or 4")] = 2
    config: Annotated[
        LifeTicketConfig,
        Field(description="Partial config: a field set by two tickets must agree to be "
              "matched; unset fields take the defaults."),
    ] = Field(default_factory=LifeTicketConfig)


class CellWarTicket(_TicketBase):
    """Ask for a CellWar match (2..8 players)."""

    kind: Literal["cellwar"]
    players: Annotated[StrictInt, Field(ge=2, le=8, description="CellWar: 2..8")] = 2
    config: Annotated[
        CellWarTicketConfig,
        Field(description="Partial config, matched as for Life (no `units`: the default start)."),
    ] = Field(default_factory=CellWarTicketConfig)


#: The body of POST /matchmaking/tickets: the schema says exactly which player counts and
#: config fields each kind takes (what fits the schema is not refused as 422).
TicketBody = Annotated[LifeTicket | CellWarTicket, Field(discriminator="kind")]


class TicketCreated(BaseModel):
    """Answer of POST /matchmaking/tickets: keep the token, it is the ticket."""

    ticket_id: str
    ticket_token: str = Field(description="Send as `Authorization: Bearer <token>` (or `?token=`)")


class MatchOut(BaseModel):
    """Your seat in the matched game."""

    game_id: str
    player_id: int
    player_token: str = Field(description="The seat's player token for /game/{id}/…")


class TicketOut(BaseModel):
    """A ticket."""

    ticket_id: str
    status: Literal["searching", "matched", "cancelled", "expired"]
    wait_s: float = Field(description="Seconds searched (until now, or until the final status)")
    queue: str = Field(description='"<kind>-<players>", e.g. "life-2"')
    kind: str
    players: int
    config: dict[str, Any]
    rating: float = Field(description="The rating matched on (1500 provisional)")
    reason: str | None = Field(default=None, description="Why it ended unmatched")
    match: MatchOut | None = None


class QueueOut(BaseModel):
    """Statistics of one queue (kind × players)."""

    queue: str
    kind: str
    players: int
    waiting: int = Field(description="Tickets searching now")
    in_games: int = Field(description="Players in matchmade games of this queue still running")
    matches_last_minute: int
    median_wait_s: float | None = Field(description="Of tickets matched in the last 5 minutes")
    p90_wait_s: float | None


class QueuesOut(BaseModel):
    """Answer of GET /matchmaking/queues."""

    queues: list[QueueOut]


class RatingOut(BaseModel):
    """A rating (OpenSkill Plackett–Luce; rating = 1500 + 40 × (mu − 25))."""

    kind: str
    players: int
    rating: float
    games: int
    mu: float
    sigma: float


class LeaderEntry(BaseModel):
    """One line of the leaderboard."""

    profile_id: str
    name: str
    rating: float
    games: int


class LeaderboardOut(BaseModel):
    """Answer of GET /leaderboard."""

    kind: str
    players: int
    entries: list[LeaderEntry]


# --------------------------------------------------------------------------- helpers


async def get_matchmaker(request: Request) -> matchmaker_pb2_grpc.MatchmakerStub:
    """The matchmaker stub made by the app's lifespan."""
    return request.app.state.matchmaker


async def get_ticket_signer(request: Request) -> TicketSigner:
    """The ticket token signer."""
    return request.app.state.ticket_signer


MatchmakerDep = Annotated[matchmaker_pb2_grpc.MatchmakerStub, Depends(get_matchmaker)]
TicketSignerDep = Annotated[TicketSigner, Depends(get_ticket_signer)]


def _from_rpc(exc: grpc.RpcError) -> ApiError:
    err = from_rpc_error(exc)
    if err.status == 503:
        err.message = err.message.replace("the session service", "the matchmaker")
    return err


async def _call(coro: Any) -> Any:
    """Await a matchmaker call; its errors become :class:`ApiError`."""
    try:
        return await coro
    except grpc.RpcError as exc:
        raise _from_rpc(exc) from None


def ticket_json(ticket: matchmaker_pb2.Ticket, signer: Any) -> dict[str, Any]:
    """The REST shape of a ticket; a matched one carries its seat's player token (the
    same one on every read, gateway/ticket_tokens.py)."""
    out: dict[str, Any] = {
        "ticket_id": ticket.ticket_id,
        "status": ticket.status,
        "wait_s": round(ticket.wait_s, 3),
        "queue": ticket.queue,
        "kind": ticket.kind,
        "players": ticket.players,
        "config": json.loads(ticket.config or b"{}"),
        "rating": round(ticket.rating, 1),
        "reason": ticket.reason or None,
        "match": None,
    }
    if ticket.status == "matched" and ticket.game_id:
        out["match"] = {
            "game_id": ticket.game_id,
            "player_id": ticket.player_id,
            "player_token": seat_token(signer, ticket.game_id, ticket.player_id, ticket.created_at),
        }
    return out


async def _ticket_holder(
    request: Request,
    ticket_id: TicketId,
    signer: TicketSignerDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_ticket_bearer)],
) -> str:
    """The ticket id of a verified bearer ticket token (401/403 otherwise)."""
    tid = signer.verify(credentials.credentials if credentials else None, ticket_id)
    structlog.contextvars.bind_contextvars(ticket_id=tid)
    request.state.ticket_id = tid
    return tid


TicketHolder = Annotated[str, Depends(_ticket_holder)]


async def profile_ratings(request: Request, profile_id: str) -> list[dict[str, Any]] | None:
    """The profile's ratings (``[{"kind", "players", "rating", "games", "mu", "sigma"}]``)
    for ``GET /profile``; None when the matchmaker does not answer (the profile's other
    fields are still served)."""
    stub = getattr(request.app.state, "matchmaker", None)
    if stub is None:
        return None
    try:
        reply = await stub.Ratings(
            matchmaker_pb2.RatingsRequest(profile_id=profile_id), timeout=RPC_TIMEOUT_S
        )
    except grpc.RpcError as exc:
        log.warning("ratings_unavailable", profile_id=profile_id, error=_from_rpc(exc).message)
        return None
    return [
        {"kind": r.kind, "players": r.players, "rating": r.rating, "games": r.games, "mu": r.mu, "sigma": r.sigma}
        for r in reply.ratings
    ]


# --------------------------------------------------------------------------- routes


@router.post(
    "/matchmaking/tickets",
    status_code=status.HTTP_201_CREATED,
    response_model=TicketCreated,
    responses=errors(401, 409, 413, 422, 429, 503),
    summary="Ask for a match",
    description="Queue a ticket for a game of `kind` with `players` seats. With "
    "`X-Profile-Token` the match is rated for that profile (one searching ticket per "
    "profile and queue: 409 ALREADY_QUEUED); without it the rating is provisional (1500) "
    "and nothing is recorded. Poll GET /matchmaking/tickets/{id} or watch its stream; a "
    "ticket expires after 5 minutes. Matchmade games have turn timers (`turn_time_s`: "
    "Life 90 s, CellWar 60 s by default; a ticket may ask for 10..600 s).",
)
async def create_ticket(
    body: Annotated[TicketBody, Body()],
    matchmaker: MatchmakerDep,
    tickets: TicketSignerDep,
    cid: CommandId,
    profile_id: ProfileHeader,
) -> TicketCreated:
    """POST /matchmaking/tickets → 201 ``{"ticket_id", "ticket_token"}``."""
    reply = await _call(
        matchmaker.CreateTicket(
            matchmaker_pb2.CreateTicketRequest(
                kind=body.kind,
                players=body.players,
                config=json.dumps(body.config_json()).encode(),
                name=body.name,
                profile_id=profile_id or "",
                command_id=cid,
            ),
            timeout=RPC_TIMEOUT_S,
        )
    )
    return TicketCreated(ticket_id=reply.ticket_id, ticket_token=tickets.issue(reply.ticket_id))


@router.get(
    "/matchmaking/tickets/{ticket_id}",
    response_model=TicketOut,
    responses=errors(401, 403, 404, 422, 503),
    summary="Your ticket",
    description="`status`: searching, matched (then `match` has your seat and its player "
    "token), cancelled or expired.",
)
async def get_ticket(
    ticket_id: TicketHolder, matchmaker: MatchmakerDep, signer: SignerDep
) -> dict[str, Any]:
    """GET /matchmaking/tickets/{id} → the ticket."""
    reply = await _call(
        matchmaker.GetTicket(matchmaker_pb2.TicketRequest(ticket_id=ticket_id), timeout=RPC_TIMEOUT_S)
    )
    return ticket_json(reply, signer)


@router.delete(
    "/matchmaking/tickets/{ticket_id}",
    response_model=TicketOut,
    responses=errors(401, 403, 404, 409, 422, 503),
    summary="Cancel your ticket",
    description="A cancelled ticket is never matched. Too late once it is being matched "
    "(409 ALREADY_MATCHED); cancelling a cancelled or expired ticket answers it unchanged.",
)
async def cancel_ticket(
    ticket_id: TicketHolder, matchmaker: MatchmakerDep, signer: SignerDep
) -> dict[str, Any]:
    """DELETE /matchmaking/tickets/{id} → the cancelled ticket."""
    reply = await _call(
        matchmaker.CancelTicket(
            matchmaker_pb2.TicketRequest(ticket_id=ticket_id), timeout=RPC_TIMEOUT_S
        )
    )
    return ticket_json(reply, signer)


@router.get(
    "/matchmaking/queues",
    response_model=QueuesOut,
    responses=errors(503),
    summary="Queue statistics",
)
async def queues(matchmaker: MatchmakerDep) -> dict[str, Any]:
    """GET /matchmaking/queues → ``{"queues": [...]}``, every kind × players."""
    reply = await _call(matchmaker.Queues(matchmaker_pb2.QueuesRequest(), timeout=RPC_TIMEOUT_S))
    return {
        "queues": [
            {
                "queue": q.queue,
                "kind": q.kind,
                "players": q.players,
                "waiting": q.waiting,
                "in_games": q.in_games,
                "matches_last_minute": q.matches_last_minute,
                "median_wait_s": round(q.median_wait_s, 3) if q.HasField("median_wait_s") else None,
                "p90_wait_s": round(q.p90_wait_s, 3) if q.HasField("p90_wait_s") else None,
            }
            for q in reply.queues
        ]
    }


@router.get(
    "/leaderboard",
    response_model=LeaderboardOut,
    responses=errors(409, 422, 503),
    summary="Leaderboard",
    description="The top 100 rated profiles of one queue, best first.",
)
async def leaderboard(
    matchmaker: MatchmakerDep,
    kind: Annotated[Literal["life", "cellwar"], Query()] = "life",
    players: Annotated[int, Query(ge=2, le=8)] = 2,
) -> dict[str, Any]:
    """GET /leaderboard?kind=life&players=2 → ``{"kind", "players", "entries": [...]}``."""
    reply = await _call(
        matchmaker.Leaderboard(
            matchmaker_pb2.LeaderboardRequest(kind=kind, players=players, limit=100),
            timeout=RPC_TIMEOUT_S,
        )
    )
    return {
        "kind": kind,
        "players": players,
        "entries": [
            {"profile_id": e.profile_id, "name": e.name, "rating": e.rating, "games": e.games}
            for e in reply.entries
        ],
    }


# --------------------------------------------------------------------------- WebSocket


async def _close_with_error(websocket: WebSocket, err: ApiError) -> None:
    with contextlib.suppress(Exception):
        await websocket.send_text(json.dumps({"type": "error", **err.body()}, separators=(",", ":")))
        await websocket.close(code=err.ws_close_code, reason=err.code[:120])


@router.websocket("/matchmaking/tickets/{ticket_id}/stream")
async def ticket_stream(websocket: WebSocket, ticket_id: str, token: str | None = None) -> None:
    """``{"type": "ticket", ...}`` now and at each status change, until a final status."""
    app = websocket.app
    await websocket.accept(subprotocol=selected_subprotocol(websocket.scope))
    structlog.contextvars.bind_contextvars(ticket_id=ticket_id)
    # The token as the subprotocol `bearer.<token>` (kept out of URLs and logs) or ?token=.
    token = offered_token(websocket.scope) or token
    try:
        app.state.ticket_signer.verify(token, ticket_id)
    except ApiError as err:
        await _close_with_error(websocket, err)
        return
    call = app.state.matchmaker.WatchTicket(matchmaker_pb2.TicketRequest(ticket_id=ticket_id))

    async def pump() -> None:
        async for ticket in call:
            body = ticket_json(ticket, app.state.signer)
            await websocket.send_text(json.dumps({"type": "ticket", **body}))

    async def drain() -> None:
        while (await websocket.receive())["type"] != "websocket.disconnect":
            pass

    pump_task = asyncio.create_task(pump())
    drain_task = asyncio.create_task(drain())
    try:
        done, _ = await asyncio.wait({pump_task, drain_task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        call.cancel()
        for task in (pump_task, drain_task):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    if pump_task in done and not pump_task.cancelled():
        exc = pump_task.exception()
        if exc is None:
            with contextlib.suppress(Exception):
                await websocket.close(code=1000)
        elif isinstance(exc, grpc.RpcError):
            await _close_with_error(websocket, _from_rpc(exc))
        else:
            log.warning("ticket_stream_failed", error=repr(exc))
            await _close_with_error(websocket, ApiError(500, "INTERNAL", "stream failed"))
