"""Bot seats: ``POST /game/{id}/bots`` asks the bot runner for a computer player
(docs/bot-seats.md).

The gateway checks the caller's token (a seat of this game) and that the game still
waits for players, then forwards ``{"policy"}`` to the runner at ``CELLWAR_BOTS_URL``
(``python -m client.seats``). The runner joins the game through the public API like any
player; its answers (201 the bot's seat; 429 ``BOT_SEATS_FULL``; 409 ``GAME_FULL``,
``POLICY_NOT_FOR_KIND``, ``BOT_POLICY_UNAVAILABLE``; ...) pass through unchanged. No
runner configured, or one that does not answer: 503 ``UNAVAILABLE`` with
``Retry-After`` (a fault is retryable, docs/faults.md).
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

import httpx
import structlog
from fastapi import APIRouter, Path, Request, status
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from cellwar.v1 import session_pb2
from cellwar.v1.codes import ErrorCode
from gateway.deps import RPC_TIMEOUT_S, CurrentPlayer, SessionDep
from gateway.errors import ApiError, Code, error_body
from gateway.responses import errors

log = structlog.get_logger("gateway.bots")

router = APIRouter(tags=["games"])

GameId = Annotated[str, Path(min_length=1, max_length=64, description="Game id from /game/create")]

#: Every policy a bot seat may play (client.bots.ALL_POLICY_NAMES; docs/bot-seats.md).
BotPolicy = Literal["trained", "heuristic", "search", "random", "llm"]

#: Seconds the gateway waits for the runner (it reads the lobby and joins the game).
RUNNER_TIMEOUT_S = 15.0

#: ``Retry-After`` of a 429 ``BOT_SEATS_FULL`` passed through without one (seconds).
SEATS_FULL_RETRY_AFTER_S = 30


def runner_client() -> httpx.AsyncClient:
    """The app's one HTTP client to the bot runner (its connections are kept between
    requests): opened by the app's lifespan as ``app.state.bots_http``, closed at its
    shutdown (gateway/app.py)."""
    return httpx.AsyncClient(timeout=RUNNER_TIMEOUT_S)


class AddBotBody(BaseModel):
    """Body of POST /game/{id}/bots."""

    policy: BotPolicy = Field(
        "heuristic",
        description="The computer player: `trained` (CellWar's trained policy), `heuristic`, "
        "`search`, `random`, `llm` (a local chat model, when the server has one). Life "
        "games take `heuristic`, `random` or `llm`.",
    )


class BotSeated(BaseModel):
    """Answer of POST /game/{id}/bots: the seat the bot took."""

    game_id: str
    player_id: int = Field(description="The bot's seat number, from 1")
    policy: str
    name: str = Field(description="The bot's player name")


def _unavailable(message: str) -> ApiError:
    return ApiError(503, Code.UNAVAILABLE, message)


@router.post(
    "/game/{game_id}/bots",
    status_code=status.HTTP_201_CREATED,
    response_model=BotSeated,
    responses=errors(401, 403, 404, 409, 413, 422, 429, 503),
    summary="Add a computer player",
    description="A bot takes the next free seat of this game, which must still wait for "
    "players; send the token of a seat of this game. The bot is a player of the public "
    "API run by the platform's bot runner, and plays the game to its end. 409 `GAME_FULL` "
    "(no free seat: the game has started), `GAME_FINISHED`, `POLICY_NOT_FOR_KIND` (e.g. "
    "`trained` in Life), `BOT_POLICY_UNAVAILABLE` (`llm` without a model server); 429 "
    "`BOT_SEATS_FULL` when the runner plays `CELLWAR_BOTS_MAX_SEATS` bots already "
    "(Retry-After); 503 `UNAVAILABLE` when no bot runner answers (docs/bot-seats.md).",
)
async def add_bot(
    request: Request, game_id: GameId, body: AddBotBody, player: CurrentPlayer, session: SessionDep
) -> JSONResponse:
    """POST /game/{id}/bots ``{"policy"}`` → 201 ``{"game_id", "player_id", "policy",
    "name"}`` (the runner's answer)."""
    reply = await session.GetView(
        session_pb2.GetViewRequest(game_id=game_id, player_id=player.player_id), timeout=RPC_TIMEOUT_S
    )
    phase = json.loads(reply.view or b"{}").get("phase")
    if phase == "finished":
        raise ApiError(409, ErrorCode.GAME_FINISHED, f"game {game_id} is over")
    if phase != "waiting":  # every seat is taken once a game starts
        raise ApiError(409, ErrorCode.GAME_FULL, f"game {game_id} has no free seat: it has started")
    base = request.app.state.settings.bots_url.rstrip("/")
    if not base:
        raise _unavailable("no bot runner is configured (CELLWAR_BOTS_URL)")
    try:
        client: httpx.AsyncClient = request.app.state.bots_http
        answer = await client.post(f"{base}/games/{game_id}/bots", json={"policy": body.policy})
    except httpx.HTTPError as exc:
        log.warning("bot_runner_unreachable", game_id=game_id, error=type(exc).__name__)
        raise _unavailable("the bot runner does not answer") from None
    try:
        data = answer.json()
    except ValueError:
        data = None
    if answer.status_code >= 500 or not isinstance(data, dict):
        log.warning("bot_runner_failed", game_id=game_id, status=answer.status_code)
        raise _unavailable("the bot runner failed")
    if answer.status_code == 201:
        seated = BotSeated.model_validate(data)
        log.info("bot_added", game_id=game_id, player_id=seated.player_id, policy=seated.policy)
        return JSONResponse(seated.model_dump(), status_code=201)
    err = data.get("error") if isinstance(data.get("error"), dict) else {}
    code = str(err.get("code") or "ERROR")
    message = str(err.get("message") or "the bot runner refused")
    headers = None
    if answer.status_code == 429:
        headers = {"Retry-After": answer.headers.get("retry-after", str(SEATS_FULL_RETRY_AFTER_S))}
    if answer.status_code not in (404, 409, 422, 429):  # anything else: the runner's fault
        log.warning("bot_runner_answer", game_id=game_id, status=answer.status_code, code=code)
        raise _unavailable(f"the bot runner answered {answer.status_code}")
    return JSONResponse(error_body(code, message), status_code=answer.status_code, headers=headers)

