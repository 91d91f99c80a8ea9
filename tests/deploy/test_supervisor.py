"""The runners' supervisor (deploy/supervisor.py) on real, small child processes: a dead
child comes back under its name with a new PID while the others keep theirs, quick
deaths in a row back off, a stop leaves nothing of any child's process group, a runner
killed outright takes its children with it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from deploy.harness import pid_alive
from deploy.run import write_state
from deploy.supervisor import DOWN, UP, ProcessSpec, StartError, Supervisor, describe_exit

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def spec(name: str, argv=SLEEPER, *, group: int = 0, probe=lambda: True, **kw) -> ProcessSpec:
    return ProcessSpec(name=name, role="test", argv=argv, env=dict(os.environ), addr="-", probe=probe, group=group, **kw)


def wait(condition, timeout: float = 30.0, step=None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if step:
            step()
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        time.sleep(0.05)


@pytest.fixture
def lines():
    return []


def test_a_killed_child_is_restarted_after_the_delay_and_the_others_keep_running(lines):
    sup = Supervisor([spec("a"), spec("b")], restart_delay_s=0.5, say=lines.append)
    try:
        sup.start_all(timeout_s=30)
        a_pid, b_pid = sup.child("a").pid, sup.child("b").pid
        os.kill(a_pid, signal.SIGKILL)
        wait(lambda: sup.child("a").state == DOWN, step=sup.step)
        killed_at = time.monotonic()
        wait(lambda: sup.child("a").state == UP, step=sup.step)
        assert time.monotonic() - killed_at >= 0.4  # not before the restart delay
        assert sup.child("a").pid not in (None, a_pid)
        assert sup.child("a").restarts == 1
        assert sup.child("b").pid == b_pid and sup.child("b").restarts == 0
        assert not pid_alive(a_pid)
        assert any(f"a (pid {a_pid}) killed by SIGKILL" in line and "restarting in 0.5 s" in line for line in lines)
        assert any(line.startswith("a is back (pid ") for line in lines)
    finally:
        sup.stop_all(timeout_s=5)


def test_quick_deaths_in_a_row_double_the_delay_up_to_the_cap(lines):
    quitter = [sys.executable, "-c", "import sys; sys.exit(3)"]
    sup = Supervisor(
        [spec("q", quitter, probe=lambda: False)], restart_delay_s=0.05, max_delay_s=0.2, stable_after_s=60, say=lines.append
    )
    delays = []
    child = sup.child("q")
    sup._spawn(child)
    try:
        while len(delays) < 5:
            before = child.restarts, child.state
            sup.step()
            if child.state == DOWN and before[1] != DOWN:
                delays.append(child.delay)
            time.sleep(0.01)
    finally:
        sup.stop_all(timeout_s=5)
    assert delays == [0.05, 0.1, 0.2, 0.2, 0.2]
    assert "exited with code 3" in lines[0]


def test_a_child_that_stayed_up_gets_the_short_delay_again():
    clock = [0.0]
    sup = Supervisor([spec("a")], restart_delay_s=2.0, stable_after_s=10.0, say=lambda _: None, clock=lambda: clock[0])
    child = sup.child("a")
    sup._spawn(child)
    try:
        for lived, expected in ((1.0, 2.0), (1.0, 4.0), (30.0, 2.0)):
            clock[0] += lived
            child.started_at = clock[0] - lived
            os.kill(child.proc.pid, signal.SIGKILL)
            child.proc.wait()
            sup.step()
            assert child.state == DOWN and child.delay == expected
            clock[0] = child.restart_at
            sup.step()  # the restart
    finally:
        sup.stop_all(timeout_s=5)


def test_stop_leaves_nothing_of_a_childs_process_group(tmp_path: Path):
    # The child starts a grandchild in its own group (as nginx's master starts workers)
    # and writes its PID down.
    script = f"import subprocess, sys, time; p = subprocess.Popen({SLEEPER!r}); open({str(tmp_path / 'gc')!r}, 'w').write(str(p.pid)); time.sleep(600)"
    sup = Supervisor([spec("parent", [sys.executable, "-c", script])], say=lambda _: None)
    sup.start_all(timeout_s=30)
    wait(lambda: (tmp_path / "gc").exists() and (tmp_path / "gc").read_text())
    grandchild = int((tmp_path / "gc").read_text())
    parent = sup.child("parent").pid
    assert pid_alive(grandchild)
    sup.stop_all(timeout_s=5)
    assert not pid_alive(parent)
    wait(lambda: not pid_alive(grandchild), timeout=10)


def test_groups_start_in_order_and_stop_in_reverse(tmp_path: Path):
    log = tmp_path / "order"

    def writer(name: str) -> list[str]:
        code = textwrap.dedent(f"""
            import signal, sys, time
            def bye(*_):
                open({str(log)!r}, "a").write("stop {name}\\n"); sys.exit(0)
            signal.signal(signal.SIGTERM, bye)
            open({str(log)!r}, "a").write("start {name}\\n")
            time.sleep(600)
        """)
        return [sys.executable, "-c", code]

    def started(name: str):
        return lambda: log.exists() and f"start {name}" in log.read_text()

    sup = Supervisor(
        [spec("nats", writer("nats"), group=0, probe=started("nats")),
         spec("gateway", writer("gateway"), group=2, probe=started("gateway")),
         spec("session", writer("session"), group=1, probe=started("session"))],
        say=lambda _: None,
    )
    sup.start_all(timeout_s=30)
    sup.stop_all(timeout_s=10)
    assert log.read_text().split("\n")[:-1] == [
        "start nats", "start session", "start gateway", "stop gateway", "stop session", "stop nats",
    ]


def test_a_child_that_never_starts_fails_the_start_with_its_log(tmp_path: Path):
    failing = [sys.executable, "-c", "import sys; print('port 4222 is taken'); sys.exit(1)"]
    sup = Supervisor(
        [spec("nats", failing, probe=lambda: False, log_path=tmp_path / "nats.log")],
        restart_delay_s=0.05,
        max_start_failures=3,
        say=lambda _: None,
    )
    with pytest.raises(StartError) as err:
        sup.start_all(timeout_s=30)
    sup.stop_all(timeout_s=5)
    assert "nats exited with code 1 3 times" in str(err.value)
    assert "port 4222 is taken" in str(err.value)


def test_the_process_table_is_written_whole_and_current(tmp_path: Path):
    path = tmp_path / "cluster.json"
    sup = Supervisor(
        [spec("a")], say=lambda _: None,
        on_change=lambda s: write_state(path, url="http://127.0.0.1:8000", mode="cluster", supervisor=s),
    )
    sup.start_all(timeout_s=30)
    table = json.loads(path.read_text())
    pid = sup.child("a").pid
    assert table["url"] == "http://127.0.0.1:8000"
    assert table["processes"] == [
        {"name": "a", "role": "test", "pid": pid, "addr": "-", "state": "up", "restarts": 0, "log": None}
    ]
    sup.stop_all(timeout_s=5)
    assert json.loads(path.read_text())["processes"][0]["state"] == "stopped"
    assert json.loads(path.read_text())["processes"][0]["pid"] is None
    assert [p.name for p in tmp_path.iterdir()] == ["cluster.json"]  # no temporary file left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_children_end_when_the_runner_is_killed_outright(tmp_path: Path):
    pid_file = tmp_path / "child"
    runner = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from deploy.supervisor import ProcessSpec, Supervisor
        sup = Supervisor([ProcessSpec("c", "test", {SLEEPER!r}, dict(os.environ), "-", lambda: True)], say=lambda _: None)
        sup.start_all()
        open({str(pid_file)!r}, "w").write(str(sup.child("c").pid))
        sup.supervise()
    """)
    proc = subprocess.Popen([sys.executable, "-c", runner])
    try:
        wait(lambda: pid_file.exists() and pid_file.read_text())
        child = int(pid_file.read_text())
        assert pid_alive(child)
        proc.kill()
        proc.wait()
        wait(lambda: not pid_alive(child), timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_exit_descriptions():
    assert describe_exit(-9) == "killed by SIGKILL"
    assert describe_exit(0) == "exited with code 0"
    assert describe_exit(2) == "exited with code 2"
