"""The bot runner's internal HTTP API (docs/bot-seats.md), for the gateway only:

- ``POST /games/{game_id}/bots`` ``{"policy": "trained"}`` → 201 ``{"game_id",
  "player_id", "policy", "kind", "name"}``; errors ``{"error": {"code", "message"}}``
  as :class:`client.seats.runner.SeatError` says (429 ``BOT_SEATS_FULL`` with
  ``Retry-After``, 409, 422, 404);
- ``GET /healthz`` → ``{"status": "ok", "seats", "max_seats", ...}`` (the supervisor's
  readiness probe);
- ``GET /bots`` → the same, with every bot seat.

It listens on ``CELLWAR_BOTS_ADDR`` (loopback by default): it is not the public API.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from client.seats.runner import SeatError, SeatRunner

log = structlog.get_logger("bots")

#: ``Retry-After`` of a 429 ``BOT_SEATS_FULL`` (seconds): a slot frees when a game ends.
SEATS_FULL_RETRY_AFTER_S = 30


class AddBotBody(BaseModel):
    """Body of ``POST /games/{game_id}/bots``."""

    policy: str = Field("heuristic", max_length=32)


def _error(status: int, code: str, message: str) -> JSONResponse:
    headers = {"Retry-After": str(SEATS_FULL_RETRY_AFTER_S)} if status == 429 else None
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def create_runner_app(runner: SeatRunner) -> FastAPI:
    """The runner's app around ``runner`` (closed with the app's lifespan)."""

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        log.info("bots_started", api_url=runner.api_url, max_seats=runner.max_seats, llm=bool(runner.llm_url))
        try:
            yield
        finally:
            await runner.aclose()
            log.info("bots_stopped")

    app = FastAPI(title="CellWar bot runner", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.runner = runner

    @app.exception_handler(SeatError)
    async def _seat_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, SeatError)
        return _error(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _malformed(_request: Request, exc: Exception) -> JSONResponse:
        return _error(422, "MALFORMED", "the body is {\"policy\": NAME}")

    @app.post("/games/{game_id}/bots", status_code=201)
    async def add_bot(game_id: str, body: AddBotBody) -> dict[str, Any]:
        return await runner.add(game_id, body.policy)

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"status": "ok", **{k: v for k, v in runner.status().items() if k != "bots"}}

    @app.get("/bots")
    async def bots() -> dict[str, Any]:
        return runner.status()

    return app
