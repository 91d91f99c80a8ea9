"""Bot seats (docs/bot-seats.md): ``POST /game/{id}/bots`` through the real gateway to a
real bot runner (client/seats) that joins and plays through the public API, in front of
the real engine + session and NATS.

The runner is served first (its API URL is set once the gateway's port is known), then
the gateway with ``bots_url`` pointing at it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from client.bots.cellwar import CellWarBot
from client.sdk import AsyncCellWarClient
from client.seats.app import create_runner_app
from client.seats.runner import SeatRunner
from gateway.app import create_app
from services.common.settings import Settings
from tests.api.conftest import TEST_SECRET
from tests.support.serve import serve

pytestmark = pytest.mark.integration

#: Bot seats of the test runner.
CAP = 2


@pytest.fixture
async def runner() -> AsyncIterator[tuple[SeatRunner, str]]:
    seats = SeatRunner("http://unset.invalid", max_seats=CAP)
    async with serve(create_runner_app(seats)) as url:
        yield seats, url


@pytest.fixture
async def gateway_url(stack, runner) -> AsyncIterator[str]:
    seats, runner_url = runner
    settings = Settings(session_addr=stack.session_target, secret=TEST_SECRET, bots_url=runner_url)
    async with serve(create_app(settings)) as url:
        seats.api_url = url
        yield url


@pytest.fixture
async def client(gateway_url: str) -> AsyncIterator[AsyncCellWarClient]:
    async with AsyncCellWarClient(gateway_url, timeout=30) as api:
        yield api


async def _add(gateway_url: str, game_id: str, token: str, policy: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=gateway_url, timeout=60) as http:
        return await http.post(
            f"/game/{game_id}/bots", json={"policy": policy}, headers={"Authorization": f"Bearer {token}"}
        )


async def _waiting_cellwar(api: AsyncCellWarClient, players: int = 3) -> tuple[str, str]:
    game_id = await api.create_game("cellwar", {"width": 6, "height": 6, "players": players})
    seat = await api.join(game_id, "person")
    return game_id, seat.token


async def test_bots_beyond_the_cap_are_429_bot_seats_full(gateway_url, client, runner):
    seats, _ = runner
    games = [await _waiting_cellwar(client) for _ in range(CAP + 1)]
    for game_id, token in games[:CAP]:  # 3-player games: the bots wait for a third player
        answer = await _add(gateway_url, game_id, token, "random")
        assert answer.status_code == 201, answer.text
        assert answer.json()["player_id"] == 2 and answer.json()["policy"] == "random"
    game_id, token = games[CAP]
    answer = await _add(gateway_url, game_id, token, "random")
    assert answer.status_code == 429
    assert answer.json()["error"]["code"] == "BOT_SEATS_FULL"
    assert int(answer.headers["retry-after"]) >= 1
    assert str(CAP) in answer.json()["error"]["message"]
    assert seats.status()["seats"] == CAP
    state = await client.state(game_id, token)
    assert [p["id"] for p in state["players"]] == [1]  # nothing changed in the refused game


async def test_a_game_without_a_free_seat_is_409(gateway_url, client):
    game_id, token = await _waiting_cellwar(client, players=2)
    first = await _add(gateway_url, game_id, token, "random")
    assert first.status_code == 201, first.text
    again = await _add(gateway_url, game_id, token, "random")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "GAME_FULL"


async def test_an_unknown_policy_is_422_naming_the_known_ones(gateway_url, client):
    game_id, token = await _waiting_cellwar(client)
    answer = await _add(gateway_url, game_id, token, "alphazero")
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["code"] == "MALFORMED"
    for name in ("trained", "heuristic", "search", "random", "llm"):
        assert name in error["message"]


async def test_llm_without_a_model_server_and_trained_in_life_are_refused(gateway_url, client):
    game_id, token = await _waiting_cellwar(client)
    answer = await _add(gateway_url, game_id, token, "llm")
    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "BOT_POLICY_UNAVAILABLE"
    assert "CELLWAR_BOTS_LLM_URL" in answer.json()["error"]["message"]
    life = await client.create_game("life", {"width": 20, "height": 20, "players": 2, "budget": 10})
    seat = await client.join(life, "person")
    answer = await _add(gateway_url, life, seat.token, "trained")
    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "POLICY_NOT_FOR_KIND"


async def test_a_token_of_the_game_is_required(gateway_url, client):
    game_id, _ = await _waiting_cellwar(client)
    async with httpx.AsyncClient(base_url=gateway_url, timeout=30) as http:
        answer = await http.post(f"/game/{game_id}/bots", json={"policy": "random"})
    assert answer.status_code == 401


async def test_no_runner_is_503_with_retry_after(stack):
    settings = Settings(session_addr=stack.session_target, secret=TEST_SECRET)
    async with serve(create_app(settings)) as url, AsyncCellWarClient(url, timeout=30) as api:
        game_id, token = await _waiting_cellwar(api)
        answer = await _add(url, game_id, token, "random")
    assert answer.status_code == 503
    assert answer.json()["error"]["code"] == "UNAVAILABLE"
    assert answer.headers["retry-after"] == "1"


async def test_a_trained_bot_plays_a_cellwar_game_to_the_end(gateway_url, client, runner):
    """A person's seat (the API heuristic bot) against the runner's trained policy on
    6×6: the game ends with a winner, the bot's seat made moves, and its slot is free."""
    seats, _ = runner
    game_id = await client.create_game("cellwar", {"width": 6, "height": 6, "players": 2})
    person = CellWarBot(client, game_id, "person", seed=3)
    seat = await person.join()
    answer = await _add(gateway_url, game_id, seat.token, "trained")
    assert answer.status_code == 201, answer.text
    bot_seat = answer.json()["player_id"]
    assert bot_seat == 2 and answer.json()["name"] == "bot-trained"
    final = await person.play()
    while final.get("phase") != "finished":
        final = await client.state(game_id, seat.token)
    assert final["winner"] in (1, 2)
    events = await client.events(game_id, seat.token)
    assert any(e["actor"] == bot_seat and e["type"] in ("ActionApplied", "TurnEnded") for e in events)
    for task in [b.task for b in seats.seats.values()]:
        if task is not None:
            await task
    assert seats.status()["seats"] == 0 and seats.finished == 1


async def test_a_bot_in_a_game_that_stays_open_frees_its_slot(stack):
    """A runner whose bots wait at most 1 s: bots seated in games that never
    fill (Life and CellWar) give their slots back, counted as failed, and a new bot can
    be seated again."""
    seats = SeatRunner("http://unset.invalid", max_seats=2, wait_s=1.0)
    async with serve(create_runner_app(seats)) as runner_url:
        settings = Settings(session_addr=stack.session_target, secret=TEST_SECRET, bots_url=runner_url)
        async with serve(create_app(settings)) as url, AsyncCellWarClient(url, timeout=30) as api:
            seats.api_url = url
            life = await api.create_game("life", {"width": 20, "height": 20, "players": 4, "budget": 10})
            life_seat = await api.join(life, "person")
            cellwar, cellwar_token = await _waiting_cellwar(api)
            assert (await _add(url, life, life_seat.token, "heuristic")).status_code == 201
            assert (await _add(url, cellwar, cellwar_token, "random")).status_code == 201
            tasks = [b.task for b in seats.seats.values()]
            for task in tasks:
                await task
            assert seats.status()["seats"] == 0 and seats.failed == 2 and seats.finished == 0
            again = await _add(url, cellwar, cellwar_token, "random")
            assert again.status_code == 201 and again.json()["player_id"] == 3


async def test_the_gateway_keeps_one_client_to_the_runner_and_closes_it_at_shutdown(runner):
    _, runner_url = runner
    app = create_app(Settings(session_addr="127.0.0.1:9", secret=TEST_SECRET, bots_url=runner_url))
    async with serve(app):
        client = app.state.bots_http
        assert isinstance(client, httpx.AsyncClient) and not client.is_closed
        assert client.timeout.read == 15.0  # RUNNER_TIMEOUT_S
    assert client.is_closed and app.state.bots_http is client
