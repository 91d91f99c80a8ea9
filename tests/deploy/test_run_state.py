"""``cluster.json`` read back against the live PIDs, and log files without ANSI colours."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from deploy.run import STATE_FILE, main, read_state


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _table(runner_pid: int, child_pid: int) -> dict:
    return {
        "url": "http://127.0.0.1:8000",
        "mode": "single",
        "runner_pid": runner_pid,
        "processes": [
            {"name": "gateway-1", "role": "gateway", "pid": child_pid, "addr": "127.0.0.1:8000",
             "state": "up", "restarts": 0, "log": None},
        ],
    }


def test_a_table_left_by_a_killed_runner_reads_stopped(tmp_path: Path, monkeypatch, capsys) -> None:
    path = tmp_path / STATE_FILE
    path.write_text(json.dumps(_table(_dead_pid(), os.getpid())))
    table = read_state(path)
    assert table["runner_alive"] is False
    assert [(p["state"], p["pid"]) for p in table["processes"]] == [("stopped", None)]
    monkeypatch.setenv("CELLWAR_DATA_DIR", str(tmp_path))
    assert main(["--status"]) == 1
    out = capsys.readouterr().out
    assert "not running" in out and "gateway-1" in out and "stopped" in out


def test_a_live_runner_keeps_its_states_but_a_dead_child_reads_stopped(tmp_path: Path) -> None:
    path = tmp_path / STATE_FILE
    table = _table(os.getpid(), os.getpid())
    table["processes"].append(dict(table["processes"][0], name="engine-1", pid=_dead_pid()))
    path.write_text(json.dumps(table))
    got = read_state(path)
    assert got["runner_alive"] is True
    assert [(p["name"], p["state"]) for p in got["processes"]] == [("gateway-1", "up"), ("engine-1", "stopped")]


def test_no_table_is_none(tmp_path: Path) -> None:
    assert read_state(tmp_path / STATE_FILE) is None


def test_console_logs_to_a_file_carry_no_colour_codes(tmp_path: Path) -> None:
    code = (
        "from services.common.logging import configure_logging; import structlog;"
        "configure_logging('console'); structlog.get_logger().warning('hello', game_id='g1')"
    )
    log = tmp_path / "svc.log"
    with open(log, "wb") as out:
        subprocess.run([sys.executable, "-c", code], stderr=out, check=True, timeout=60)
    text = log.read_text()
    assert "hello" in text and "game_id" in text
    assert "\x1b[" not in text
