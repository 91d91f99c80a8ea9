"""FastAPI dependencies and their ``Annotated`` aliases, used by every router.

``SessionDep`` (the session gRPC stub: :func:`session_client`), ``SignerDep`` (token signer), ``CurrentPlayer``
(a verified player token of the game in the path; 401/403 otherwise), ``OptionalPlayer``
(the same, or ``None`` for a spectator without a token) and ``CommandId`` (the
``Idempotency-Key`` header, or a fresh uuid4).
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import grpc
import structlog
from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from cellwar.v1 import session_pb2_grpc
from gateway.session_stub import StreamingSessionStub
from gateway.tokens import Player, TokenSigner
from services.common.grpcutil import GRPC_OPTIONS, FailoverStub
from services.common.jsonwire import IDEMPOTENCY_KEY_PATTERN
from services.common.settings import Settings, grpc_addresses

#: Deadline of one unary call to the session service (seconds).
RPC_TIMEOUT_S = 15.0
#: Length of a command id (``Idempotency-Key`` header, a stream command frame's ``id``).
COMMAND_ID_MIN_CHARS = 1
COMMAND_ID_MAX_CHARS = 200


def session_stub(channel: grpc.aio.Channel, settings: Settings, name: str = "") -> Any:
    """The stub of one session channel: a :class:`~gateway.session_stub.StreamingSessionStub`
    (``Act`` / ``EndTurn`` over the channel's ``Session.Commands`` stream, ``Watch`` over
    its ``Session.Watches`` stream) when ``settings.session_commands`` is ``stream``, else
    the plain ``SessionStub`` (one call per command and per watch)."""
    if settings.session_commands == "stream":
        return StreamingSessionStub(channel, name=name)
    return session_pb2_grpc.SessionStub(channel)


def session_client(settings: Settings) -> tuple[Any, list[grpc.aio.Channel]]:
    """The gateway's session stub and its channels: one channel per address of
    ``settings.session_addr`` (``make run-cluster`` gives each gateway both session
    instances, its own first), each with its stub of :func:`session_stub`. With several,
    a :class:`FailoverStub` over them that moves a call (a command on a stream too) from
    an instance silent for ``settings.session_failover_s`` seconds (and to its health
    check) to the next one (docs/faults.md); with one, that channel's stub. Close it
    with :func:`gateway.session_stub.close_streams` before the channels.

    Raises:
        ValueError: ``session_addr`` names no address.
    """
    addrs = grpc_addresses(settings.session_addr)
    channels = [grpc.aio.insecure_channel(a, options=GRPC_OPTIONS) for a in addrs]
    if len(channels) == 1:
        return session_stub(channels[0], settings, addrs[0]), channels
    names = {id(c): a for c, a in zip(channels, addrs, strict=True)}
    stub = FailoverStub(
        channels,
        lambda channel: session_stub(channel, settings, names[id(channel)]),
        failover_s=settings.session_failover_s,
        names=addrs,
    )
    return stub, channels


_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="PlayerToken",
    description="The `player_token` returned by POST /game/{id}/join.",
)


async def get_session(request: Request) -> session_pb2_grpc.SessionStub:
    """The session service stub made by the app's lifespan."""
    return request.app.state.session


async def get_signer(request: Request) -> TokenSigner:
    """The token signer (secret from settings)."""
    return request.app.state.signer


SessionDep = Annotated[session_pb2_grpc.SessionStub, Depends(get_session)]
SignerDep = Annotated[TokenSigner, Depends(get_signer)]


def _remember(request: Request, player: Player | None, game_id: str) -> None:
    """Bind game and player to the log context and to the access log of this request."""
    request.state.game_id = game_id
    structlog.contextvars.bind_contextvars(game_id=game_id)
    if player is not None:
        request.state.player_id = player.player_id
        structlog.contextvars.bind_contextvars(player_id=player.player_id)


async def current_player(
    request: Request,
    game_id: str,
    signer: SignerDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Player:
    """The player of the bearer token, checked against ``game_id`` of the path.

    Raises:
        ApiError: 401 ``UNAUTHORIZED`` (missing, garbled or forged token), 403
            ``FORBIDDEN`` (a token of another game).
    """
    token = credentials.credentials if credentials else None
    player = signer.verify(token, game_id)
    _remember(request, player, game_id)
    return player


async def optional_player(
    request: Request,
    game_id: str,
    signer: SignerDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Player | None:
    """Like :func:`current_player`, but ``None`` (a spectator) when no token is sent.

    Raises:
        ApiError: 401/403 for a token that is sent but not valid for this game.
    """
    player = signer.verify(credentials.credentials, game_id) if credentials else None
    _remember(request, player, game_id)
    return player


CurrentPlayer = Annotated[Player, Depends(current_player)]
OptionalPlayer = Annotated[Player | None, Depends(optional_player)]


async def command_id(
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            min_length=COMMAND_ID_MIN_CHARS,
            max_length=COMMAND_ID_MAX_CHARS,
            pattern=IDEMPOTENCY_KEY_PATTERN,
            description="Retry-safe key (1..200 printable ASCII characters, no spaces, e.g. a uuid4): a "
            "request retried with the same key is applied once. A key belongs to one game and "
            "one player; sent again with another body → 422 IDEMPOTENCY_KEY_REUSED.",
        ),
    ] = None,
) -> str:
    """The command id of a POST: the ``Idempotency-Key`` header, or a fresh uuid4."""
    return idempotency_key or str(uuid.uuid4())


CommandId = Annotated[str, Depends(command_id)]


def player_id_of(player: Player | None) -> int:
    """The player id to send to the session: 0 for a spectator."""
    return player.player_id if player is not None else 0

