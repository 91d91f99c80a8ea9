"""``make run`` starts and supervises the bot runner (docs/bot-seats.md): the runner
(``python -m deploy.run``) in a subprocess on free ports lists ``bots`` up at the
matchmaker's port + 1; a bot added through the public gateway plays a CellWar game to the
end against an SDK player; the bot runner killed with SIGKILL comes back under its name
and takes seats again."""

from __future__ import annotations

import os
import signal

import httpx
import pytest

from client.bots.cellwar import CellWarBot
from client.sdk import AsyncCellWarClient
from deploy.harness import RunnerProcess
from tests.support.runner import running

pytestmark = [pytest.mark.integration, pytest.mark.nats]  # the platform runs its NATS


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    yield from running(
        tmp_path_factory.mktemp("run-bots") / "data",
        timeout_s=180,
        env={"CELLWAR_SECRET": "bot-runner-test-secret-0123456789", "CELLWAR_LOG_FORMAT": "json"},
    )


async def _add_bot(url: str, game_id: str, token: str, policy: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        return await http.post(
            f"/game/{game_id}/bots", json={"policy": policy}, headers={"Authorization": f"Bearer {token}"}
        )


def test_the_process_table_has_the_bot_runner(runner: RunnerProcess):
    bots = runner.process("bots")
    host, port = runner.bases.matchmaker
    assert bots["state"] == "up" and bots["role"] == "bots"
    assert bots["addr"] == f"{host}:{port + 1}"


async def test_a_bot_plays_to_the_end_and_a_killed_runner_comes_back(runner: RunnerProcess):
    async with AsyncCellWarClient(runner.url, timeout=30) as api:
        game_id = await api.create_game("cellwar", {"width": 6, "height": 6, "players": 2})
        person = CellWarBot(api, game_id, "person", seed=5)
        seat = await person.join()
        answer = await _add_bot(runner.url, game_id, seat.token, "heuristic")
        assert answer.status_code == 201, answer.text
        assert answer.json()["player_id"] == 2
        final = await person.play()
        while final.get("phase") != "finished":
            final = await api.state(game_id, seat.token)
        assert final["winner"] in (1, 2)

        before = runner.process("bots")["pid"]
        os.kill(before, signal.SIGKILL)
        back = runner.wait_back("bots", before, timeout_s=60)
        assert back["pid"] != before and back["restarts"] >= 1

        game_id = await api.create_game("cellwar", {"width": 6, "height": 6, "players": 3})
        seat = await api.join(game_id, "person")
        answer = await _add_bot(runner.url, game_id, seat.token, "random")
        assert answer.status_code == 201, answer.text
        state = await api.state(game_id, seat.token)
        assert [p["name"] for p in state["players"]] == ["person", "bot-random"]
