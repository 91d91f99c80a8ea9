"""Games: create, join, state, actions, turns, leave, event log, replay, lobby (docs/api/index.md).

Thin handlers: validate the body (schemas), check the token (deps), call the session
service; errors of the session become HTTP errors in gateway/errors.py.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import grpc
from fastapi import APIRouter, Body, Path, Query, Request, status
from fastapi.responses import Response

from cellwar.v1 import session_pb2
from gateway import commands
from gateway.deps import (
    RPC_TIMEOUT_S,
    CommandId,
    CurrentPlayer,
    OptionalPlayer,
    SessionDep,
    SignerDep,
    player_id_of,
)
from gateway.errors import ApiError, Code
from gateway.lobby import CURSOR_PATTERN, LOBBY_DEFAULT_LIMIT, LOBBY_MAX_LIMIT
from gateway.profile_deps import ProfileHeader
from gateway.replay_streams import JSONL, events_jsonl, spectator_state
from gateway.responses import errors
from gateway.schemas import (
    MAX_INT64,
    MAX_UNIT_ID,
    ActionBody,
    CommandResult,
    CreateGameBody,
    EventsOut,
    GameCreated,
    GamesOut,
    JoinBody,
    Joined,
    ValidActionsOut,
    config_json,
)
from gateway.wire import raw_json_response, seq_view_response
from services.common.jsonwire import event_json

router = APIRouter(tags=["games"])

GameId = Annotated[str, Path(min_length=1, max_length=64, description="Game id from /game/create")]

#: Statuses of a command on a game (a POST with a player token).
_COMMAND_ERRORS = errors(401, 403, 404, 409, 413, 422, 429, 503)
#: A player's token is optional here (a spectator reads a finished game without one).
_OPTIONAL_TOKEN = {"security": [{}]}

_VIEW_DOC = (
    "The view: `game_id, kind, seq, phase, turn, you, players, width, height, winner, "
    "result, turn_deadline` (when the running timed turn ends, ISO 8601 UTC; null without "
    "a turn timer), plus for Life `generation, torus, zone, stable, speed, board` "
    "(multi-state RLE) and for CellWar `round, units, visible`."
)


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


@router.post(
    "/game/create",
    status_code=status.HTTP_201_CREATED,
    response_model=GameCreated,
    responses=errors(401, 404, 409, 413, 422, 429, 503),
    summary="Create a game",
    description="Create a Life, campaign or CellWar game. Omitted config fields take "
    "the defaults (Life: 60×60, 2 players, budget 100, hard edges, 5000 generations; no "
    "turn timer: `turn_time_s` sets one). `\"rated\": true` (Life, CellWar) makes the "
    "game count for ratings: seats joined with `X-Profile-Token` are rated when it ends. "
    "Campaign: send `X-Profile-Token` (from POST /profiles) so the level counts for your "
    "profile; a level above the profile's `unlocked` is refused with 409 `LEVEL_LOCKED`. "
    "A config that fits the schema but not the rules (CellWar: a unit off the board, two "
    "units on one cell, a player without units) is 409 `INVALID_CONFIG`. Limited to "
    "`CELLWAR_CREATE_LIMIT_PER_MIN` (30) creates a minute per client address (429).",
)
async def create_game(
    body: Annotated[CreateGameBody, Body()], session: SessionDep, cid: CommandId, profile_id: ProfileHeader
) -> GameCreated:
    """POST /game/create → 201 ``{"game_id"}``. Campaign: ``X-Profile-Token`` makes the
    level count for that profile (409 ``LEVEL_LOCKED`` when not unlocked yet)."""
    reply = await session.CreateGame(
        session_pb2.CreateGameRequest(
            kind=body.kind,
            config=_dumps(config_json(body)),
            command_id=cid,
            profile_id=profile_id if body.kind == "campaign" and profile_id else "",
        ),
        timeout=RPC_TIMEOUT_S,
    )
    return GameCreated(game_id=reply.game_id)


@router.post(
    "/game/{game_id}/join",
    response_model=Joined,
    responses=errors(401, 404, 409, 413, 422, 429, 503),
    summary="Take a seat",
    description="Join the next free seat (ids from 1). Keep `player_token`: send it as "
    "`Authorization: Bearer <token>` on every call of this game. It expires after "
    "`CELLWAR_TOKEN_MAX_AGE_S` (7 days; renew with POST /game/{id}/token). Limited to "
    "`CELLWAR_JOIN_LIMIT_PER_MIN` (60) joins a minute per client address (429). In a rated "
    "game, `X-Profile-Token` (from POST /profiles) makes the seat count for that profile's "
    "rating (the event log records the profile id, never the token); without it the seat "
    "plays at the provisional rating and is not rated. A profile holds at most one seat of "
    "a rated game: its second join is 409 `ALREADY_SEATED` (docs/ratings.md).",
)
async def join_game(
    request: Request,
    game_id: GameId,
    body: JoinBody,
    session: SessionDep,
    signer: SignerDep,
    cid: CommandId,
    profile_id: ProfileHeader,
) -> Joined:
    """POST /game/{id}/join → ``{"player_id", "player_token"}``; ``X-Profile-Token``: the
    profile that holds the seat in a rated game (409 ``ALREADY_SEATED`` when it holds one)."""
    request.state.game_id = game_id
    reply = await session.Join(
        session_pb2.JoinRequest(
            game_id=game_id, name=body.name, command_id=cid, profile_id=profile_id or ""
        ),
        timeout=RPC_TIMEOUT_S,
    )
    request.state.player_id = reply.player_id
    return Joined(player_id=reply.player_id, player_token=signer.issue(game_id, reply.player_id))


@router.get(
    "/game/{game_id}/state",
    response_model=dict[str, Any],
    responses=errors(401, 403, 404, 409, 422, 503),
    openapi_extra=_OPTIONAL_TOKEN,
    summary="Your view of the game",
    description=_VIEW_DOC + " Spectators (no token): `?spectate=1&delay_s=N` answers "
    "`{\"seq\", \"view\"}` of the game as it was N seconds ago (default and least: 10 "
    "for a running CellWar game, whose spectator sees everything; 0 elsewhere; at most "
    "3600); 409 `NOT_YET_VISIBLE` while no event is that old. A running CellWar game "
    "admits spectators only when created with `\"spectators\": \"live\"`; otherwise "
    "409 `SPECTATORS_AFTER_END` until it has ended (docs/spectators.md).",
)
async def get_state(
    game_id: GameId,
    player: OptionalPlayer,
    session: SessionDep,
    spectate: Annotated[
        bool, Query(description="Spectate without a token, delayed by `delay_s`")
    ] = False,
    delay_s: Annotated[
        float | None, Query(ge=0, le=3600, description="Spectator delay (seconds)")
    ] = None,
) -> Response:
    """GET /game/{id}/state → the player's view; ``?spectate=1&delay_s=N`` → a delayed
    spectator's ``{"seq", "view"}``."""
    if spectate:
        return await spectator_state(session, game_id, delay_s)
    if player is None:
        await _must_exist(session, game_id)
        raise ApiError(
            401,
            Code.UNAUTHORIZED,
            "a player token is required (Authorization: Bearer <token>); spectators add ?spectate=1",
        )
    reply = await session.GetView(
        session_pb2.GetViewRequest(game_id=game_id, player_id=player.player_id), timeout=RPC_TIMEOUT_S
    )
    return raw_json_response(reply.view)


async def _must_exist(session: Any, game_id: str) -> None:
    """404 ``NOT_FOUND`` for a game that does not exist, before a tokenless request is told
    it needs a token (a 401 for ``/game/nosuch/state`` read as "this game exists")."""
    try:
        await session.GetView(session_pb2.GetViewRequest(game_id=game_id, player_id=0), timeout=RPC_TIMEOUT_S)
    except grpc.aio.AioRpcError as exc:
        if exc.code() == grpc.StatusCode.NOT_FOUND:
            raise
        # any other answer (a game whose spectators may not look now, ...): it exists


@router.post(
    "/game/{game_id}/action",
    response_model=CommandResult,
    responses=_COMMAND_ERRORS,
    summary="Act",
    description="Life: `place`, `erase`, `stamp`, `reset_turn`, `pause`, `resume`, `speed`, "
    "`propose_finish`, `resign`, `restart` (campaign); CellWar: `{unit_id, dx, dy}`. "
    "Answers your own view version after it (`seq`: the events you observed) and your view.",
)
async def act(
    game_id: GameId, action: Annotated[ActionBody, Body()], player: CurrentPlayer, session: SessionDep, cid: CommandId
) -> Response:
    """POST /game/{id}/action → ``{"seq", "view"}`` (gateway/commands.py, shared with the
    stream's ``action`` frames)."""
    seq, view = await commands.act(session, game_id, player.player_id, action, cid)
    return seq_view_response(seq, view)


@router.post(
    "/game/{game_id}/end_turn",
    response_model=CommandResult,
    responses=_COMMAND_ERRORS,
    summary="End your turn (Life redraw: ready)",
)
async def end_turn(game_id: GameId, player: CurrentPlayer, session: SessionDep, cid: CommandId) -> Response:
    """POST /game/{id}/end_turn → ``{"seq", "view"}`` (gateway/commands.py, shared with the
    stream's ``end_turn`` frames)."""
    seq, view = await commands.end_turn(session, game_id, player.player_id, cid)
    return seq_view_response(seq, view)


@router.post(
    "/game/{game_id}/leave",
    response_model=CommandResult,
    responses=_COMMAND_ERRORS,
    summary="Leave the game",
    description="You and everything you own leave the game (PlayerRemoved).",
)
async def leave(game_id: GameId, player: CurrentPlayer, session: SessionDep, cid: CommandId) -> Response:
    """POST /game/{id}/leave → ``{"seq", "view"}``."""
    reply = await session.Leave(
        session_pb2.LeaveRequest(game_id=game_id, player_id=player.player_id, command_id=cid),
        timeout=RPC_TIMEOUT_S,
    )
    return seq_view_response(reply.seq, reply.view)


@router.get(
    "/game/{game_id}/events",
    response_model=EventsOut,
    responses={**errors(401, 403, 404, 422, 429, 503), 200: {"content": {JSONL: {"schema": {"type": "string"}}}}},
    openapi_extra=_OPTIONAL_TOKEN,
    summary="The event log",
    description="Events from `from_seq` on, in order. A player gets the log filtered to "
    "what it may see (CellWar while it runs: its fog, no `state_hash`); without a token "
    "(spectator) the log of a finished game (403 FORBIDDEN while a CellWar game runs or a "
    "Life game is in placement). The token is optional. Costly: limited per client "
    "address (429) and in how many run at once (503 `BUSY`). "
    f"`?format=jsonl`: the same event objects one per line (`{JSONL}`, JSON Lines), "
    "streamed: the log file format of `cellwar export` and `POST /games/import`.",
)
async def list_events(
    game_id: GameId,
    player: OptionalPlayer,
    session: SessionDep,
    from_seq: Annotated[
        int, Query(ge=0, le=MAX_INT64, description="First sequence number (0 or 1: all)")
    ] = 0,
    format: Annotated[  # noqa: A002 - the query parameter's name
        Literal["json", "jsonl"], Query(description="`json` (a document) or `jsonl` (JSON Lines)")
    ] = "json",
) -> Response:
    """GET /game/{id}/events?from_seq=0 → ``{"events": [...]}``; ``&format=jsonl`` → one
    event object per line, streamed."""
    request = session_pb2.ListEventsRequest(
        game_id=game_id, player_id=player_id_of(player), from_seq=from_seq
    )
    if format == "jsonl":
        return await events_jsonl(session, request)
    reply = await session.ListEvents(request, timeout=RPC_TIMEOUT_S)
    return raw_json_response(_dumps({"events": [event_json(e) for e in reply.events]}))


@router.get(
    "/game/{game_id}/replay",
    response_model=CommandResult,
    responses=errors(401, 403, 404, 409, 422, 429, 503),
    openapi_extra=_OPTIONAL_TOKEN,
    summary="The game as it was at event `seq`",
    description="Same visibility rule as the event log (the token is optional). A `seq` "
    "beyond the game's last event is 409 `SEQ_OUT_OF_RANGE`. Costly: limited like the "
    "event log. " + _VIEW_DOC,
)
async def replay(
    game_id: GameId,
    player: OptionalPlayer,
    session: SessionDep,
    seq: Annotated[int, Query(ge=1, le=MAX_INT64, description="Sequence number of the event")],
) -> Response:
    """GET /game/{id}/replay?seq=n → ``{"seq", "view"}``."""
    try:
        reply = await session.Replay(
            session_pb2.ReplayRequest(game_id=game_id, player_id=player_id_of(player), seq=seq),
            timeout=RPC_TIMEOUT_S,
        )
    except grpc.aio.AioRpcError as exc:
        if exc.code() == grpc.StatusCode.INVALID_ARGUMENT:
            # The only argument the schema cannot bound is seq against the game's last event.
            raise ApiError(409, Code.SEQ_OUT_OF_RANGE, exc.details() or "seq is beyond the last event") from exc
        raise
    return seq_view_response(reply.seq, reply.view)


@router.get(
    "/game/{game_id}/valid_actions",
    response_model=ValidActionsOut,
    responses=errors(401, 403, 404, 409, 422, 503),
    summary="CellWar: legal moves",
    description="The legal `{dx, dy}` of a unit now (all your units without `unit_id`), "
    "each with what it would do (`move`, `attack`, `fortify`, `produce`, ...).",
)
async def valid_actions(
    game_id: GameId,
    player: CurrentPlayer,
    session: SessionDep,
    unit_id: Annotated[
        int | None, Query(ge=1, le=MAX_UNIT_ID, description="Unit id; omit for every unit")
    ] = None,
) -> Response:
    """GET /game/{id}/valid_actions?unit_id=7 → ``{"actions": [...]}``."""
    actions = await commands.valid_actions(session, game_id, player.player_id, unit_id)
    return raw_json_response(b'{"actions":' + actions + b"}")


@router.get(
    "/games",
    response_model=GamesOut,
    responses=errors(409, 422, 503),
    summary="Lobby: open and running games",
    description="Open and running games, oldest first, one page at a time: at most `limit` "
    f"(default {LOBBY_DEFAULT_LIMIT}, at most {LOBBY_MAX_LIMIT}); pass the answer's "
    "`next_cursor` as `cursor` for the next page (`null`: the last page). A page goes on "
    "after the last game of the previous one, so no game is shown twice. A cursor no "
    "page gave is refused (409 `MALFORMED`).",
)
async def list_games(
    session: SessionDep,
    limit: Annotated[
        int, Query(ge=1, le=LOBBY_MAX_LIMIT, description="Games per page")
    ] = LOBBY_DEFAULT_LIMIT,
    cursor: Annotated[
        str | None,
        Query(
            pattern=CURSOR_PATTERN,
            description="`next_cursor` of the previous page (opaque); omit for the first",
        ),
    ] = None,
) -> GamesOut:
    """GET /games?limit=50&cursor=... → ``{"games": [{"game_id", "kind", "phase",
    "players_joined", "max_players", "config"}], "next_cursor": str | null}``."""
    reply = await session.ListGames(
        session_pb2.ListGamesRequest(page_size=limit, cursor=cursor or ""), timeout=RPC_TIMEOUT_S
    )
    return GamesOut.model_validate(
        {
            "games": [
                {
                    "game_id": g.game_id,
                    "kind": g.kind,
                    "phase": g.phase,
                    "players_joined": g.players_joined,
                    "max_players": g.max_players,
                    "config": json.loads(g.config) if g.config else {},
                }
                for g in reply.games
            ],
            "next_cursor": reply.next_cursor or None,
        }
    )


@router.post(
    "/game/{game_id}/token",
    response_model=Joined,
    responses=errors(401, 403, 413, 422, 429),
    summary="Renew your player token",
    description="A fresh token of the same seat (issued now) for a token that has not "
    "expired yet; the old one stays valid until its own expiry. Player tokens expire "
    "`CELLWAR_TOKEN_MAX_AGE_S` (7 days) after they were issued (401 `TOKEN_EXPIRED`).",
)
async def renew_token(
    request: Request, game_id: GameId, player: CurrentPlayer, signer: SignerDep
) -> Joined:
    """POST /game/{id}/token → ``{"player_id", "player_token"}``."""
    request.state.player_id = player.player_id
    return Joined(player_id=player.player_id, player_token=signer.issue(game_id, player.player_id))
