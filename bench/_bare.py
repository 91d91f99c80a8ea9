"""``python -m bench._bare PORT``: the bare FastAPI endpoint of the round-trip benchmark.

``POST /game/{game_id}/action`` of the same shape as the gateway's: the same body model
(:data:`gateway.schemas.ActionBody`), the same player-token check
(:data:`gateway.deps.CurrentPlayer`, secret ``CELLWAR_SECRET``) and ``Idempotency-Key``
dependency, the gateway's error handlers; it answers ``{"seq", "view"}`` with a fixed view of
a 60x60 Life game instead of calling the session. No middleware (the gateway adds an
access log and metrics). Served by uvicorn like ``python -m gateway``.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated

import uvicorn
from fastapi import Body, FastAPI
from fastapi.responses import Response

from gateway.deps import CommandId, CurrentPlayer
from gateway.errors import install_error_handlers
from gateway.schemas import ActionBody, action_json
from gateway.tokens import TokenSigner
from gateway.wire import seq_view_response
from services.common.settings import Settings
from services.common.signing_key import resolve_secret


def _view() -> bytes:
    """A view of the size the gateway returns for a 60x60 game (board as RLE)."""
    board = "$".join("30." + "A" * 5 + "25." for _ in range(60)) + "!"
    view = {
        "kind": "life",
        "phase": "placement",
        "turn": 1,
        "you": 1,
        "width": 60,
        "height": 60,
        "generation": 0,
        "torus": False,
        "zone": [0, 0, 30, 60],
        "zones": {"1": [0, 0, 30, 60], "2": [30, 0, 60, 60]},
        "stable": False,
        "speed": 1,
        "board": board,
        "players": [
            {"id": 1, "name": "p1", "colour": 1, "budget_left": 99, "cells": 1, "out": False},
            {"id": 2, "name": "p2", "colour": 2, "budget_left": None, "cells": None, "out": False},
        ],
        "winner": None,
        "result": None,
    }
    return json.dumps(view, separators=(",", ":"), sort_keys=True).encode()


def create_app(secret: str, answer: Callable[[str], Awaitable[bytes]] | None = None) -> FastAPI:
    """The bare app: ``/healthz`` and ``POST /game/{game_id}/action``. ``answer(game_id)``
    gives the view to answer (default: a fixed one; the hop floor, bench/_floor.py, calls
    its skeleton session there)."""
    app = FastAPI()
    app.state.signer = TokenSigner(secret)
    install_error_handlers(app)
    view = _view()
    seqs = itertools.count(1)

    @app.get("/healthz")
    async def healthz() -> dict:
        return {"status": "ok"}

    @app.post("/game/{game_id}/action")
    async def act(
        game_id: str, action: Annotated[ActionBody, Body()], player: CurrentPlayer, cid: CommandId
    ) -> Response:
        # The same work as the gateway's handler before its session call: serialise the
        # action; the token (player) and Idempotency-Key (cid) are checked by the deps.
        json.dumps(action_json(action), separators=(",", ":")).encode()
        del player, cid
        return seq_view_response(next(seqs), view if answer is None else await answer(game_id))

    return app


def main() -> int:
    """Serve on 127.0.0.1:PORT until SIGINT/SIGTERM."""
    port = int(sys.argv[1])
    uvicorn.run(
        create_app(resolve_secret(Settings().secret, Settings().data_dir)),
        host="127.0.0.1",
        port=port,
        log_config=None,
        access_log=False,
        ws="websockets-sansio",
        timeout_graceful_shutdown=5,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
