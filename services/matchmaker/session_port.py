"""How the matchmaker reaches the session service: only its public gRPC API
(``CreateGame``, ``Join``, ``GetView``), behind a small Protocol so the service layer
can be unit-tested with an in-memory fake."""

from __future__ import annotations

import json
from typing import Any, Protocol

import grpc

from cellwar.v1 import session_pb2, session_pb2_grpc
from services.common.errors import ServiceError, error_from_rpc

#: Deadline of one session call (seconds).
SESSION_TIMEOUT_S = 15.0


class SessionPort(Protocol):
    """The session calls the matchmaker makes. Every method raises
    :class:`~services.common.errors.ServiceError` with the session's machine code
    (``UNAVAILABLE`` when it cannot be reached)."""

    async def create_game(self, kind: str, config: dict[str, Any], command_id: str) -> str:
        """Create a game (the same ``command_id`` gives the same game); returns its id."""
        ...

    async def join(self, game_id: str, name: str, command_id: str) -> int:
        """Take the next seat (the same ``command_id`` gives the same seat); its player id."""
        ...

    async def final_view(self, game_id: str) -> dict[str, Any]:
        """The spectator's view of a game (public once the game is finished)."""
        ...


def _error(exc: grpc.aio.AioRpcError) -> ServiceError:
    code, message = error_from_rpc(exc)
    return ServiceError(code, f"session: {message}")


class GrpcSession:
    """:class:`SessionPort` over a grpc.aio channel to the session service."""

    def __init__(self, channel: grpc.aio.Channel, timeout: float = SESSION_TIMEOUT_S) -> None:
        self.stub = session_pb2_grpc.SessionStub(channel)
        self.timeout = timeout

    async def create_game(self, kind: str, config: dict[str, Any], command_id: str) -> str:
        request = session_pb2.CreateGameRequest(
            kind=kind, config=json.dumps(config, sort_keys=True).encode(), command_id=command_id
        )
        try:
            reply = await self.stub.CreateGame(request, timeout=self.timeout)
        except grpc.aio.AioRpcError as exc:
            raise _error(exc) from exc
        return reply.game_id

    async def join(self, game_id: str, name: str, command_id: str) -> int:
        request = session_pb2.JoinRequest(game_id=game_id, name=name, command_id=command_id)
        try:
            reply = await self.stub.Join(request, timeout=self.timeout)
        except grpc.aio.AioRpcError as exc:
            raise _error(exc) from exc
        return int(reply.player_id)

    async def final_view(self, game_id: str) -> dict[str, Any]:
        request = session_pb2.GetViewRequest(game_id=game_id, player_id=0)
        try:
            reply = await self.stub.GetView(request, timeout=self.timeout)
        except grpc.aio.AioRpcError as exc:
            raise _error(exc) from exc
        return json.loads(reply.view or b"{}")
