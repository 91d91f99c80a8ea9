"""A runner (``python -m deploy.run [--cluster]``) as a subprocess, for tests and the
chaos command: free port bases, a data folder of its own, ``cluster.json`` read back.

Example::

    with RunnerProcess(data_dir, cluster=True) as run:
        run.wait_up()
        print(run.url, [p["name"] for p in run.processes()])
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from deploy.ports import CLUSTER_SIZE, Bases, parse_scale, taken
from deploy.run import STATE_FILE
from deploy.supervisor import die_with_parent

ROOT = Path(__file__).resolve().parent.parent


def free_bases(*, cluster: bool, sizes: Mapping[str, int] = CLUSTER_SIZE, tries: int = 200) -> Bases:
    """Port bases whose every derived port (:mod:`deploy.ports`) is free now.

    The bases sit in one window of 300 ports picked at random below Linux's ephemeral
    range (32768+), so two runs at once rarely pick the same window.

    Raises:
        RuntimeError: no free window found in ``tries`` attempts.
    """
    rng = random.Random()
    for _ in range(tries):
        p = rng.randrange(20000, 32400, 10)
        bases = Bases(
            http=p, nats=p + 100, engine=("127.0.0.1", p + 200), session=("127.0.0.1", p + 201),
            matchmaker=("127.0.0.1", p + 202),
        )
        ports = (
            bases.cluster_ports(matchmaker=True, sizes=sizes)
            if cluster
            else bases.single_ports(nats=True, matchmaker=True)
        )
        if not taken(ports):
            return bases
    raise RuntimeError("no free window of ports found")


def bases_env(bases: Bases) -> dict[str, str]:
    """The ``CELLWAR_*`` variables that give a runner ``bases``."""
    return {
        "CELLWAR_HTTP_HOST": bases.http_host,
        "CELLWAR_HTTP_PORT": str(bases.http),
        "CELLWAR_NATS_PORT": str(bases.nats),
        "CELLWAR_ENGINE_ADDR": "{}:{}".format(*bases.engine),
        "CELLWAR_SESSION_ADDR": "{}:{}".format(*bases.session),
        "CELLWAR_MATCHMAKER_ADDR": "{}:{}".format(*bases.matchmaker),
    }


def http_get(url: str, timeout_s: float = 5.0) -> tuple[int, bytes]:
    """``(status, body)`` of ``GET url``; status 0 when nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:  # noqa: S310 - loopback
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()
    except OSError:
        return 0, b""


def pid_alive(pid: int) -> bool:
    """A process with this PID exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


class RunnerProcess:
    """``python -m deploy.run`` in a subprocess with its own data folder and free ports.

    Args:
        data_dir: the runner's ``CELLWAR_DATA_DIR`` (its log goes to ``runner.log`` there).
        cluster: ``--cluster``.
        scale: ``--scale`` items (``["session=1"]``).
        env: more environment variables for the runner and its children.
        bases: port bases (default: :func:`free_bases`).

    Attributes:
        bases, url, state_path, log_path; ``pids_seen``: every child PID read from
        ``cluster.json`` (checked gone by :meth:`stop`).
    """

    def __init__(
        self,
        data_dir: str | os.PathLike,
        *,
        cluster: bool = False,
        scale: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        bases: Bases | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.cluster = cluster
        self.scale = list(scale)
        self.sizes = parse_scale(self.scale)
        self.bases = bases or free_bases(cluster=cluster, sizes=self.sizes)
        self.url = f"http://127.0.0.1:{self.bases.http}"
        self.state_path = self.data_dir / STATE_FILE
        self.log_path = self.data_dir / "runner.log"
        self.extra_env = dict(env or {})
        self.proc: subprocess.Popen | None = None
        self.pids_seen: set[int] = set()
        self._log = None

    # -- life cycle

    def start(self) -> RunnerProcess:
        """Start the runner (returns at once; see :meth:`wait_up`)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CELLWAR_")}
        env.update(bases_env(self.bases))
        env.update(
            {
                "CELLWAR_DATA_DIR": str(self.data_dir),
                "CELLWAR_LOG_FORMAT": "console",
                "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
            }
        )
        env.update(self.extra_env)
        argv = [sys.executable, "-m", "deploy.run"]
        if self.cluster:
            argv.append("--cluster")
        for item in self.scale:
            argv += ["--scale", item]
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            # A test or chaos run that dies takes the runner (and so every server) with it.
            preexec_fn=die_with_parent,  # noqa: PLW1509
        )
        return self

    def wait_up(self, timeout_s: float = 180.0) -> dict[str, Any]:
        """Wait until every process of ``cluster.json`` is ``up`` and ``GET /healthz``
        answers 200 at the URL. Returns the table.

        Raises:
            RuntimeError: the runner exited (with the end of its log).
            TimeoutError: not up within ``timeout_s`` seconds.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"the runner exited with code {self.proc.returncode}:\n{self.log_tail()}")
            table = self.table()
            if table and table["processes"] and all(p["state"] == "up" for p in table["processes"]):
                if http_get(self.url + "/healthz", 2.0)[0] == 200:
                    return table
            if time.monotonic() > deadline:
                raise TimeoutError(f"runner not up after {timeout_s:.0f} s:\n{self.log_tail()}")
            time.sleep(0.25)

    def stop(self, timeout_s: float = 60.0) -> int:
        """SIGINT (Ctrl-C) the runner and wait; SIGKILL after ``timeout_s`` seconds.
        Returns its exit code.

        Raises:
            RuntimeError: a child PID seen in ``cluster.json`` is still alive 10 s after
                the runner exited.
        """
        if self.proc is None:
            return 0
        self.table()  # note the last PIDs
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        code = self.proc.returncode
        if self._log is not None:
            self._log.close()
            self._log = None
        deadline = time.monotonic() + 10
        alive = [pid for pid in self.pids_seen if pid_alive(pid)]
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = [pid for pid in alive if pid_alive(pid)]
        if alive:
            raise RuntimeError(f"processes left behind by the runner: {alive}")
        return code

    def __enter__(self) -> RunnerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- reading

    def table(self) -> dict[str, Any] | None:
        """``cluster.json`` now (None before the runner wrote it)."""
        try:
            table = json.loads(self.state_path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        for p in table.get("processes", []):
            if p.get("pid"):
                self.pids_seen.add(int(p["pid"]))
        return table

    def processes(self) -> list[dict[str, Any]]:
        """The ``processes`` of ``cluster.json`` (empty before it exists)."""
        table = self.table()
        return list(table["processes"]) if table else []

    def process(self, name: str) -> dict[str, Any]:
        """The entry called ``name``. Raises KeyError."""
        for p in self.processes():
            if p["name"] == name:
                return p
        raise KeyError(name)

    def wait_back(self, name: str, old_pid: int, timeout_s: float = 60.0) -> dict[str, Any]:
        """Wait until ``name`` is ``up`` again with a PID other than ``old_pid``.
        Returns its entry. Raises TimeoutError."""
        deadline = time.monotonic() + timeout_s
        while True:
            entry = self.process(name)
            if entry["state"] == "up" and entry["pid"] and entry["pid"] != old_pid:
                return entry
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} not back after {timeout_s:.0f} s: {entry}")
            time.sleep(0.2)

    def log_tail(self, lines: int = 30) -> str:
        """The end of the runner's own log."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""
