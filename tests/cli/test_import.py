"""``cellwar import`` against a real stack (docs/replays.md): an exported log imports into a
new game whose log folds to the same final hash (and exports and verifies again); the same
file with one flipped cell is refused with that seq, exit 1, and no game is made. The tool
runs as a child process, as a user runs it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import engine
from client.sdk import ApiError, AsyncCellWarClient
from tests.cli.conftest import LOGS, read, write
from tests.cli.test_export import CELLWAR, cellwar_cli, wait_finished

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

LIFE = {"width": 16, "height": 16, "players": 2}


def final_hash(events: list[dict]) -> str:
    """The hash of the state a log folds to (each event under its recorded version)."""
    state = engine.fold(None, [(e["type"], e["actor"], e["payload"], e["engine_version"]) for e in events])
    return engine.state_hash(state)


async def finished_life(api: AsyncCellWarClient) -> tuple[str, list[dict]]:
    """Red places a block and a blinker, green nothing: green dies out at generation 1."""
    game_id = await api.create_game("life", LIFE)
    red = await api.join(game_id, "red")
    green = await api.join(game_id, "green")
    await api.place(game_id, red.token, [[2, 2], [3, 2], [2, 3], [3, 3], [5, 8], [6, 8], [7, 8]])
    await api.end_turn(game_id, red.token)
    await api.end_turn(game_id, green.token)
    return game_id, await wait_finished(api, game_id)


async def test_import_of_an_export_folds_to_the_same_final_hash(api: AsyncCellWarClient, gateway: str, tmp_path: Path):
    game_id, served = await finished_life(api)
    exported = tmp_path / f"{game_id}.jsonl"
    run = await cellwar_cli("export", game_id, "--url", gateway, "-o", exported)
    assert run.code == 0, run.err

    run = await cellwar_cli("import", exported, "--url", gateway, "--origin-game-id", game_id)
    assert run.code == 0, run.err
    new_id = run.out.strip()
    assert new_id and new_id != game_id
    assert f"imported {len(served)} events of {exported} as game {new_id}: a finished game" in run.err

    copy = await api.events(new_id)
    assert final_hash(copy) == final_hash(served) == served[-1]["state_hash"]
    assert copy[0]["payload"]["origin"] == {"game_id": game_id, "file": exported.name}

    again = tmp_path / "again.jsonl"  # the imported game exports and verifies like any
    assert (await cellwar_cli("export", new_id, "--url", gateway, "-o", again)).code == 0
    run = await cellwar_cli("verify", again)
    assert run.code == 0 and f"OK ({len(served)} events, all hashes checked)" in run.out


async def test_import_of_a_tampered_file_is_refused_with_its_seq(api: AsyncCellWarClient, gateway: str, tmp_path: Path):
    game_id = await api.create_game("cellwar", CELLWAR)
    red = await api.join(game_id, "red")
    await api.join(game_id, "green")
    await api.move(game_id, red.token, 1, 1, 0)  # red's infantry destroys green's only unit
    await wait_finished(api, game_id)
    exported = tmp_path / "cellwar.jsonl"
    assert (await cellwar_cli("export", game_id, "--url", gateway, "-o", exported)).code == 0

    events = read(exported)
    move = next(e for e in events if e["type"] == "ActionApplied")
    move["payload"]["action"]["dy"] = 1  # the attack becomes a diagonal step: another state
    tampered = write(tmp_path / "tampered.jsonl", events)
    verify = await cellwar_cli("verify", tampered)
    assert verify.code == 1 and f"FAIL seq {move['seq']}" in verify.out

    key = "cli-tampered-import"
    run = await cellwar_cli("import", tampered, "--url", gateway, "--idempotency-key", key)
    assert run.code == 1
    assert f"refused at seq {move['seq']}: 409 LOG_MISMATCH" in run.err
    assert run.out == ""
    made = hashlib.sha256(b"cellwar-create:import:" + key.encode()).hexdigest()[:12]
    with pytest.raises(ApiError) as missing:
        await api.events(made)
    assert missing.value.status == 404  # nothing was written

    run = await cellwar_cli("import", tmp_path / "no-such-file.jsonl", "--url", gateway)
    assert run.code == 2


async def test_a_played_fork_exports_and_verifies_offline(api: AsyncCellWarClient, gateway: str, tmp_path: Path):
    """A fork's log starts with GameForked (its state inside): `cellwar verify` folds it
    with the engine library alone and checks every hash."""
    game_id = await api.create_game("cellwar", CELLWAR)
    red = await api.join(game_id, "red")
    await api.join(game_id, "green")
    await api.move(game_id, red.token, 1, 1, 0)
    await wait_finished(api, game_id)
    fork_id = await api.fork(game_id, 3)
    a = await api.join(fork_id, "a")
    await api.join(fork_id, "b")
    await api.move(fork_id, a.token, 1, 0, 1)  # a different game: red steps down first
    await api.leave(fork_id, a.token)  # red leaves in its turn: rolled back, green wins
    served = await wait_finished(api, fork_id)
    exported = tmp_path / "fork.jsonl"
    assert (await cellwar_cli("export", fork_id, "--url", gateway, "-o", exported)).code == 0
    run = await cellwar_cli("verify", exported)
    assert run.code == 0 and f"OK ({len(served)} events, all hashes checked)" in run.out
    types = [e["type"] for e in read(exported)]
    assert types[0] == "GameForked" and "RolledBack" in types


def test_a_bad_idempotency_key_is_refused_before_anything_is_sent(cellwar, capsys):
    log = LOGS / "v3" / "life-resign.jsonl"
    for key in ("bad\x01key", "with space", "k" * 201):
        with pytest.raises(SystemExit) as done:  # argparse's usage error
            cellwar("import", log, "--url", "http://127.0.0.1:9", "--idempotency-key", key)
        assert done.value.code == 2
        err = capsys.readouterr().err
        assert "a key is 1..200 printable ASCII characters without spaces" in err
        assert "cannot reach" not in err  # refused here, not by a server
