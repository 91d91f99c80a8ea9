"""Channels besides views, logs and frames through which hidden information could reach a
player: everything a player receives (the lobby, ``Retry-After``, metrics it can read)
must be a function of that player's information alone (docs/architecture/contracts.md
"Indistinguishability over REST and WebSocket"). Views, frames,
filtered logs, replays, ``valid_actions``, error bodies and lobby entries are compared
game against game in tests/api/test_indistinguishable.py; here the gateway-wide ones.
The real gateway app, in process through httpx's ASGI transport (no session needed)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx

from gateway.app import create_app
from services.common.settings import Settings

OPERATOR = "metrics-operator-token"
#: A documentation address (RFC 5737): a player on another machine.
REMOTE = ("203.0.113.9", 40123)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@asynccontextmanager
async def gateway(**settings) -> AsyncIterator[tuple[Callable[..., httpx.AsyncClient], object]]:
    """A gateway app without a reachable session; yields ``(client(address), signer)``."""
    app = create_app(Settings(session_addr=f"127.0.0.1:{_closed_port()}", secret="s3cret", **settings))
    async with app.router.lifespan_context(app):

        def client(address: tuple[str, int] = REMOTE) -> httpx.AsyncClient:
            transport = httpx.ASGITransport(app=app, client=address)
            return httpx.AsyncClient(transport=transport, base_url="http://gateway")

        yield client, app.state.signer


async def test_metrics_are_for_operators_not_players():
    """The counters are gateway-wide totals: on a quiet server the count of
    ``POST /game/{id}/action`` moves by the opponent's hidden moves. A remote client
    without the operator's token gets 403; the operator (token, or this host) reads them."""
    async with gateway(metrics_token=OPERATOR) as (client, signer):
        async with client() as player, client(("127.0.0.1", 5000)) as local:
            opponent = {"Authorization": f"Bearer {signer.issue('g1', 2)}"}
            for _ in range(3):  # the opponent's moves (refused here: no session; counted all the same)
                await player.post("/game/g1/action", json={"unit_id": 2, "dx": 1, "dy": 0}, headers=opponent)
            refused = await player.get("/metrics", headers={"Authorization": f"Bearer {signer.issue('g1', 1)}"})
            assert refused.status_code == 403 and refused.json()["error"]["code"] == "FORBIDDEN"
            wrong = await player.get("/metrics", headers={"Authorization": "Bearer guess"})
            assert wrong.status_code == 403
            series = 'cellwar_http_requests_total{method="POST",route="/game/{game_id}/action",status="503"} 3.0'
            operator = await player.get("/metrics", headers={"Authorization": f"Bearer {OPERATOR}"})
            assert operator.status_code == 200 and series in operator.text
            on_the_host = await local.get("/metrics")
            assert on_the_host.status_code == 200 and series in on_the_host.text
    async with gateway() as (client, _):  # no token configured: this host only
        async with client() as player:
            assert (await player.get("/metrics")).status_code == 403


async def test_a_players_rate_limit_counts_its_own_requests_only():
    """``Retry-After`` and 429s come from the player's own bucket: an opponent that
    exhausted its bucket (many hidden moves) changes nothing for player 1, whose answers
    are the same as in a game where the opponent sent nothing."""
    answers = []
    for opponent_requests in (6, 0):
        async with gateway(rate_limit_per_s=0.001, rate_limit_burst=3) as (client, signer):
            async with client() as http:
                move = {"unit_id": 2, "dx": 1, "dy": 0}
                two = {"Authorization": f"Bearer {signer.issue('g1', 2)}"}
                statuses = [
                    (await http.post("/game/g1/action", json=move, headers=two)).status_code
                    for _ in range(opponent_requests)
                ]
                assert statuses.count(429) == max(opponent_requests - 3, 0)
                one = {"Authorization": f"Bearer {signer.issue('g1', 1)}"}
                mine = [await http.post("/game/g1/action", json=move, headers=one) for _ in range(4)]
                answers.append([(r.status_code, "retry-after" in r.headers) for r in mine])
                assert int(mine[-1].headers["retry-after"]) >= 1
    assert answers[0] == answers[1] == [(503, True)] * 3 + [(429, True)]  # a fault: Retry-After
