"""``make run`` supervises (docs/hosting.md "Supervision"): the runner started as a
subprocess on free ports; the session is killed with SIGKILL and comes back under its name
with a new PID while the rest stays up; a game is played afterwards; Ctrl-C leaves no
process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from client.play import play
from deploy.harness import RunnerProcess, bases_env, http_get, pid_alive
from tests.support.runner import running

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.integration, pytest.mark.nats]  # the platform runs its NATS


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    yield from running(
        tmp_path_factory.mktemp("run") / "data",
        timeout_s=120,
        env={"CELLWAR_GENERATIONS_PER_SECOND": "100", "CELLWAR_SECRET": "supervision-test-secret-0123456789"},
    )


def test_the_process_table_lists_the_single_node_platform(runner: RunnerProcess):
    table = runner.table()
    assert table["mode"] == "single"
    assert table["url"] == f"http://127.0.0.1:{runner.bases.http}"
    by_name = {p["name"]: p for p in table["processes"]}
    assert set(by_name) >= {"nats", "engine", "session", "gateway"}
    assert by_name["nats"]["addr"] == f"127.0.0.1:{runner.bases.nats}"
    assert by_name["session"]["addr"] == "{}:{}".format(*runner.bases.session)
    for p in table["processes"]:
        assert p["state"] == "up" and pid_alive(p["pid"]), p


async def test_a_killed_session_comes_back_and_the_platform_keeps_serving(runner: RunnerProcess):
    before = {p["name"]: p["pid"] for p in runner.processes()}
    os.kill(before["session"], signal.SIGKILL)
    back = runner.wait_back("session", before["session"], timeout_s=60)
    assert back["pid"] != before["session"] and back["restarts"] >= 1
    after = {p["name"]: p["pid"] for p in runner.processes()}
    assert {k: v for k, v in after.items() if k != "session"} == {k: v for k, v in before.items() if k != "session"}
    assert f"session (pid {before['session']}) killed by SIGKILL" in runner.log_tail(200)
    assert http_get(runner.url + "/healthz")[0] == 200
    # /readyz asks the new session; the gateway's channel reconnects by itself.
    deadline = time.monotonic() + 30
    while http_get(runner.url + "/readyz")[0] != 200:
        assert time.monotonic() < deadline, "the gateway never saw the new session ready"
        time.sleep(0.2)
    result = await play(runner.url, size=16, budget=12, max_generations=100, quiet=True)
    assert result["final_view"]["phase"] == "finished"
    assert [e["seq"] for e in result["events"]] == list(range(1, len(result["events"]) + 1))


def test_a_second_runner_on_the_same_data_folder_is_refused(runner: RunnerProcess):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CELLWAR_")}
    env.update(bases_env(runner.bases))
    env["CELLWAR_DATA_DIR"] = str(runner.data_dir)
    done = subprocess.run(
        [sys.executable, "-m", "deploy.run"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert f"another runner (make run / make run-cluster) uses {runner.data_dir}" in done.stderr


def test_taken_ports_are_named_before_anything_starts(runner: RunnerProcess, tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CELLWAR_")}
    env.update(bases_env(runner.bases))  # the running platform holds every one of them
    env["CELLWAR_DATA_DIR"] = str(tmp_path / "other")
    done = subprocess.run(
        [sys.executable, "-m", "deploy.run"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert f"gateway 127.0.0.1:{runner.bases.http}" in done.stderr
    assert f"nats 127.0.0.1:{runner.bases.nats}" in done.stderr
    assert not (tmp_path / "other" / "cluster.json").exists()
