"""``python -m client.play``'s flags: each works for the chosen kind or is a usage error;
a URL with nothing listening or of a page that is no CellWar server is said at once;
``--game-id`` and ``--players 4`` for Life; Ctrl-C is one line."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from client.bots import LifeBot
from client.bots.llm_local import free_port
from client.play import NotCellWarError, main, play, play_seat, probe
from client.sdk import ApiError


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--players", "3"], "a Life game has 2 or 4 players"),
        (["--bot", "trained"], "Life takes --bot llm"),
        (["--opponent", "random"], "--opponent is for CellWar"),
        (["--kind", "cellwar", "--budget", "5"], "--budget: Life only"),
        (["--kind", "cellwar", "--speed", "2"], "--speed: Life only"),
        (["--kind", "cellwar", "--max-generations", "9"], "Life only"),
        (["--anonymous"], "--anonymous is for --matchmaking"),
        (["--matchmaking", "--kind", "cellwar", "--bot", "trained"], "not with --matchmaking"),
        (["--matchmaking", "--game-id", "g1"], "not with --matchmaking"),
        (["--kind", "cellwar", "--seat", "2"], "give --bot"),
        (["--kind", "cellwar", "--opponent", "random"], "--opponent is for --bot"),
        (["--kind", "cellwar", "--game-id", "g1", "--players", "3"], "has its own config"),
        (["--game-id", "g1", "--size", "30"], "has its own config"),
        (["--kind", "cellwar", "--bot", "trained", "--model", "m"], "only with --bot llm"),
        (["--llm-url", "http://127.0.0.1:1/v1"], "only with --bot llm"),
        (["--kind", "cellwar", "--bot", "trained", "--seat", "5"], "--seat 5: the game has seats 1..2"),
        (["--kind", "cellwar", "--bot", "llm", "--llm-retries", "-1"], "--llm-retries -1: 0 or more"),
        (["--kind", "cellwar", "--bot", "llm", "--llm-timeout", "0"], "--llm-timeout 0.0: seconds, more than 0"),
        (["--kind", "cellwar", "--size", "3"], "cellwar boards are 4..64 cells a side"),
        (["--kind", "cellwar", "--size", "65"], "cellwar boards are 4..64 cells a side"),
        (["--kind", "cellwar", "--players", "9"], "a CellWar game has 2..8 players"),
        (["--size", "7"], "life boards are 8..1024 cells a side"),
    ],
)
def test_a_flag_that_does_not_apply_is_a_usage_error(argv, says, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--url", "http://127.0.0.1:9", *argv])
    assert exit_.value.code == 2
    assert says in capsys.readouterr().err


def test_a_url_with_nothing_listening_is_said_at_once(capsys):
    port = free_port()
    assert main(["--url", f"http://127.0.0.1:{port}", "--kind", "cellwar"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"nothing listens at http://127.0.0.1:{port} (connection refused): is the platform started (make run)?"]
    assert "trying again" not in err


class _NotCellWar(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        body = b"<html><body>a static site</body></html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_page_that_is_no_cellwar_server_is_said_clearly(capsys):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotCellWar)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert main(["--url", url]) == 2
        assert capsys.readouterr().err.strip() == f"{url} is not a CellWar server: GET /healthz answered 404 (text/html)"
    finally:
        server.shutdown()
        server.server_close()


async def test_the_probe_passes_on_the_real_gateway(gateway: str):
    await asyncio.to_thread(probe, gateway)
    with pytest.raises(NotCellWarError, match="nothing listens"):
        await asyncio.to_thread(probe, f"http://127.0.0.1:{free_port()}")


@pytest.mark.integration
@pytest.mark.timeout(180)
async def test_game_id_for_life_takes_the_free_seat_and_plays_to_the_end(gateway: str, api):
    game_id = await api.create_game("life", {"width": 16, "height": 16, "players": 2, "budget": 12, "max_generations": 60})
    person = LifeBot(api, game_id, "person", seed=5)
    await person.join()
    result, person_final = await asyncio.gather(play_seat(gateway, game_id, kind="life", seed=3, quiet=True), person.play())
    assert result["bot_seat"] == 2
    assert result["final_view"]["phase"] == "finished" and person_final["phase"] == "finished"
    assert result["events"][-1]["type"] == "GameFinished"
    assert [p["name"] for p in result["final_view"]["players"]] == ["person", "bot"]


@pytest.mark.integration
@pytest.mark.timeout(120)
async def test_game_id_of_another_kind_is_refused(gateway: str, api):
    game_id = await api.create_game("life", {"width": 16, "height": 16, "players": 2, "budget": 12})
    with pytest.raises(ApiError) as err:
        await play_seat(gateway, game_id, kind="cellwar", quiet=True)
    assert err.value.code == "WRONG_KIND" and "--kind life" in str(err.value)


@pytest.mark.integration
@pytest.mark.timeout(180)
async def test_life_with_four_players(gateway: str):
    result = await play(gateway, size=16, budget=8, players=4, max_generations=40, quiet=True)
    assert result["final_view"]["phase"] == "finished"
    assert len(result["final_view"]["players"]) == 4
    assert result["events"][-1]["type"] == "GameFinished"


@pytest.mark.integration
@pytest.mark.timeout(180)
async def test_ctrl_c_prints_one_line_and_no_traceback(gateway: str):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client.play", "--url", gateway, "--kind", "cellwar", "--size", "16",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )
    first = await asyncio.wait_for(process.stderr.readline(), 60)
    assert first.startswith(b"game "), first
    process.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 130
    lines = [line for line in err.decode().splitlines() if not line.startswith("[seq")]
    assert lines == ["interrupted (Ctrl-C): the game stays on the server as it was"], err.decode()
    assert b"Traceback" not in err and out == b""


@pytest.mark.integration
@pytest.mark.timeout(180)
async def test_game_id_for_cellwar_without_bot_takes_the_free_seat(gateway: str, api):
    from client.bots import CellWarBot

    game_id = await api.create_game("cellwar", {"width": 6, "height": 6, "players": 2})
    person = CellWarBot(api, game_id, "person", seed=7)
    await person.join()
    result, _ = await asyncio.gather(play_seat(gateway, game_id, kind="cellwar", seed=3, quiet=True), person.play())
    assert result["bot_seat"] == 2 and result["final_view"]["phase"] == "finished"
    assert result["winner"] in (1, 2)
