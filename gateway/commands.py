"""The one code path of a player's game commands, whichever way they come: the REST
routes ``POST /game/{id}/action`` and ``/end_turn`` (gateway/routes/games.py) and the
command frames of ``WS /game/{id}/stream`` (gateway/ws_commands.py) both validate and
call the session here, so they refuse the same bodies with the same codes and apply a
command id (``Idempotency-Key`` header / the frame's ``id``) the same way. The legal
moves a player asks before a command (``GET /game/{id}/valid_actions``, the stream's
``valid_actions`` frame) come from here too: :func:`valid_actions`.

- :data:`ACTION_ADAPTER` is the REST body's schema (``gateway.schemas.ActionBody``);
  :func:`parse_action` validates a decoded JSON object against it exactly as FastAPI
  does for the REST body (python mode, ``from_attributes``, the same model), and words the error as
  FastAPI's handler does (``body.move.dx: ...``): 422 ``MALFORMED``.
- :func:`act` / :func:`end_turn` call ``Session.Act`` / ``Session.EndTurn`` with the
  action's JSON (written by :func:`action_payload`) and return ``(seq, view bytes)``; a
  gRPC error propagates (gateway/errors.py maps it: REST answers it, the stream turns it
  into an error frame with :func:`gateway.errors.from_rpc_error`). With
  ``CELLWAR_SESSION_COMMANDS=stream`` (the default) the stub's ``Act`` / ``EndTurn`` are
  frames of the channel's ``Session.Commands`` stream (gateway/command_stream.py), shared
  by every game and socket of this gateway; they answer, fail and time out as the unary
  calls do (``RPC_TIMEOUT_S``).
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError

from cellwar.v1 import session_pb2
from gateway.deps import RPC_TIMEOUT_S
from gateway.errors import ApiError, Code, summarise_validation_errors
from gateway.schemas import ActionBody, action_json

#: The schema of an action body (REST ``POST /game/{id}/action``, a WebSocket ``action``
#: frame's ``action``).
ACTION_ADAPTER: TypeAdapter[Any] = TypeAdapter(ActionBody)


def parse_action(value: Any) -> BaseModel:
    """The validated action of a decoded JSON value (the REST body's schema).

    Raises:
        ApiError: 422 ``MALFORMED`` with the message REST gives for the same body
            (``body.<tag>.<field>: <problem>``).
    """
    try:
        return ACTION_ADAPTER.validate_python(value, from_attributes=True)
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e.get("loc", ()))} for e in exc.errors()]
        raise ApiError(422, Code.MALFORMED, summarise_validation_errors(errors)) from None


def action_payload(action: BaseModel) -> bytes:
    """The JSON the session gets for ``action`` (compact; cells as ``[x, y]`` lists),
    written here for REST and WebSocket alike. The session parses it and takes its
    idempotency digest over its own key-sorted form (services/session/domain/commands.py
    ``Command.act``), so the same action is the same command whichever way it came."""
    return orjson.dumps(action_json(action))


async def act(
    session: Any, game_id: str, player_id: int, action: BaseModel, command_id: str
) -> tuple[int, bytes]:
    """``Session.Act``: ``(seq, view)`` — the player's own version after the action and
    its view as JSON bytes.

    Raises:
        grpc.aio.AioRpcError: the session's refusal (code in its trailing metadata).
    """
    reply = await session.Act(
        session_pb2.ActRequest(
            game_id=game_id, player_id=player_id, action=action_payload(action), command_id=command_id
        ),
        timeout=RPC_TIMEOUT_S,
    )
    return reply.seq, reply.view


async def end_turn(session: Any, game_id: str, player_id: int, command_id: str) -> tuple[int, bytes]:
    """``Session.EndTurn``: ``(seq, view)`` as :func:`act`.

    Raises:
        grpc.aio.AioRpcError: the session's refusal.
    """
    reply = await session.EndTurn(
        session_pb2.EndTurnRequest(game_id=game_id, player_id=player_id, command_id=command_id),
        timeout=RPC_TIMEOUT_S,
    )
    return reply.seq, reply.view


async def valid_actions(session: Any, game_id: str, player_id: int, unit_id: int | None) -> bytes:
    """``Session.GetValidActions``: the JSON array of the legal moves of the player's unit
    ``unit_id`` now (every unit of the player's for None), each ``{"unit_id", "dx", "dy",
    "kind"}``, as the engine wrote it (``[]`` when there are none).

    Raises:
        grpc.aio.AioRpcError: the session's refusal (code in its trailing metadata).
    """
    reply = await session.GetValidActions(
        session_pb2.GetValidActionsRequest(game_id=game_id, player_id=player_id, unit_id=unit_id or 0),
        timeout=RPC_TIMEOUT_S,
    )
    return reply.actions or b"[]"
