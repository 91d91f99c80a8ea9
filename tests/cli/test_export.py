"""``cellwar export`` against a real stack (gateway on uvicorn, session, engine, NATS;
tests/api/conftest.py), then ``cellwar verify`` of the file (the offline half): a finished
game's log is OK with every hash checked, and one flipped cell is named by its seq. The tool
runs as a child process (``python -m client.cli``), as a user runs it, so the test's event
loop keeps serving the gateway meanwhile."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from client.sdk import ApiError, AsyncCellWarClient
from tests.cli.conftest import ROOT, Run, read, write

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

LIFE = {"width": 30, "height": 30, "players": 2, "budget": 20}
RED_CELLS = [[2, 2], [3, 2], [2, 3], [3, 3], [7, 7], [8, 7], [9, 7]]  # a block and a blinker
GREEN_CELLS = [[20, 20], [21, 20], [20, 21], [21, 21]]
#: CellWar 8×8: red's infantry next to green's only unit, so one attack ends the game
#: (ids drawn per owner: player p's first unit has id p).
CELLWAR = {
    "width": 8,
    "height": 8,
    "players": 2,
    "units": [
        {"owner": 1, "type": "infantry", "x": 1, "y": 1},
        {"owner": 1, "type": "infantry", "x": 0, "y": 0},
        {"owner": 2, "type": "infantry", "x": 2, "y": 1},
    ],
}


async def cellwar_cli(*args: object, timeout: float = 90) -> Run:
    """Run ``python -m client.cli ARGS`` as a child process; its exit code and output."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client.cli", *map(str, args),
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return Run(proc.returncode, out.decode(), err.decode())


async def wait_finished(api: AsyncCellWarClient, game_id: str, timeout: float = 60) -> list[dict]:
    """The spectator's log once it ends with GameFinished (seconds). A Life or CellWar
    log is private until the game is finished (403 FORBIDDEN to a spectator until then)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            events = await api.events(game_id)
        except ApiError as exc:
            if exc.code != "FORBIDDEN":
                raise
            events = []
        if events and events[-1]["type"] == "GameFinished":
            return events
        assert asyncio.get_running_loop().time() < deadline, "the game did not finish"
        await asyncio.sleep(0.1)


async def test_export_of_a_finished_life_game_verifies_and_a_flipped_cell_is_named(
    api: AsyncCellWarClient, gateway: str, tmp_path: Path
):
    game_id = await api.create_game("life", LIFE)
    red = await api.join(game_id, "red")
    green = await api.join(game_id, "green")
    await api.place(game_id, red.token, RED_CELLS)
    await api.end_turn(game_id, red.token)
    await api.place(game_id, green.token, GREEN_CELLS)
    await api.end_turn(game_id, green.token)  # running: the session ticks
    # blocks and a blinker: stable (period 2) after a few generations, which opens redraw
    deadline = asyncio.get_running_loop().time() + 30
    while (await api.state(game_id, red.token))["phase"] != "redraw":
        assert asyncio.get_running_loop().time() < deadline, "the board did not become stable"
        await asyncio.sleep(0.05)
    await api.simple(game_id, green.token, "resign")
    served = await wait_finished(api, game_id)

    out = tmp_path / "life.jsonl"
    run = await cellwar_cli("export", game_id, "--url", gateway, "-o", out)
    assert run.code == 0, run.err
    assert f"exported {len(served)} events of game {game_id} to {out}" in run.err
    assert read(out) == served  # exactly the REST objects, one per line
    assert any(e["type"] == "GenerationsTicked" for e in served)

    run = await cellwar_cli("verify", out)
    assert run.code == 0, run.out + run.err
    assert f"{out}: OK ({len(served)} events, all hashes checked)" in run.out
    assert "events/s" in run.out

    events = read(out)
    placement = next(e for e in events if e["type"] == "ActionApplied" and e["actor"] == 1)
    placement["payload"]["action"]["cells"][0] = [4, 4]  # one cell moved, still red's zone
    tampered = write(tmp_path / "tampered.jsonl", events)
    run = await cellwar_cli("verify", tampered)
    assert run.code == 1
    assert f"{tampered}: FAIL seq {placement['seq']}: hash " in run.out

    # to standard output when no -o is given
    run = await cellwar_cli("export", game_id, "--url", gateway)
    assert run.code == 0 and run.out == out.read_text("utf-8")


async def test_export_of_cellwar_as_spectator_waits_for_the_end_and_a_player_log_is_not_verifiable(
    api: AsyncCellWarClient, gateway: str, tmp_path: Path
):
    game_id = await api.create_game("cellwar", CELLWAR)
    red = await api.join(game_id, "red")
    await api.join(game_id, "green")

    running = tmp_path / "running.jsonl"
    run = await cellwar_cli("export", game_id, "--url", gateway, "-o", running)
    assert run.code == 1
    assert "error: 403 FORBIDDEN" in run.err
    assert not running.exists()  # nothing half-written

    mine = tmp_path / "red.jsonl"
    run = await cellwar_cli("export", game_id, "--url", gateway, "--token", red.token, "-o", mine)
    assert run.code == 0, run.err
    assert "a player's filtered log" in run.err
    run = await cellwar_cli("verify", mine)
    assert run.code == 2 and "cannot be verified" in run.out

    await api.move(game_id, red.token, 1, 1, 0)  # red's infantry destroys green's only unit
    served = await wait_finished(api, game_id)
    whole = tmp_path / "cellwar.jsonl"
    run = await cellwar_cli("export", game_id, "--url", gateway, "-o", whole)
    assert run.code == 0, run.err
    assert read(whole) == served
    run = await cellwar_cli("verify", whole)
    assert run.code == 0 and f"OK ({len(served)} events, all hashes checked)" in run.out
    run = await cellwar_cli("show", whole, "--color", "never")
    assert run.code == 0 and "result win (winner: player 1)" in run.out


async def test_export_of_an_unknown_game_or_an_unreachable_server_exits_1(gateway: str, tmp_path: Path):
    run = await cellwar_cli("export", "no-such-game", "--url", gateway, "-o", tmp_path / "x.jsonl")
    assert run.code == 1 and "404 GAME_NOT_FOUND" in run.err
    run = await cellwar_cli("export", "g", "--url", "http://127.0.0.1:9", "-o", tmp_path / "x.jsonl")
    assert run.code == 1 and "cannot reach http://127.0.0.1:9" in run.err
    assert list(tmp_path.iterdir()) == []
