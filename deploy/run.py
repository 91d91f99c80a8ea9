"""The local runners: ``make run`` (one of each) and ``make run-cluster`` (``--cluster``).

``python -m deploy.run`` starts ``nats-server`` (JetStream on, data under
``<data_dir>/nats``), the engine, the session and the gateway (and the matchmaker once it
exists), then the bot runner (``python -m client.seats``, docs/bot-seats.md), each as a
child process, each once the ones it needs answer; prints the URL.

``python -m deploy.run --cluster`` starts, on this machine, 3 ``nats-server`` nodes in
one JetStream cluster (streams and KV R3, ``sync_interval: always``), 2 engines,
2 session instances, 2 gateways and nginx (Debian package ``nginx``) in front of the
gateways on ``CELLWAR_HTTP_PORT``; data and logs under ``<data_dir>/cluster``.

Both write ``<data_dir>/cluster.json`` ``{"url", "mode", "processes": [{"name", "role",
"pid", "addr", "state", "restarts", "log"}]}`` and keep it current. Both supervise: a child
that dies is started again after 2 s under the same name (backoff on quick deaths in a
row) while the others keep running (deploy/supervisor.py). Ctrl-C (SIGINT) or SIGTERM
stops everything and leaves no process behind. Data survives a restart.

Ports derive from ``CELLWAR_HTTP_PORT``, ``CELLWAR_NATS_PORT``, ``CELLWAR_ENGINE_ADDR``,
``CELLWAR_SESSION_ADDR`` (deploy/ports.py has the table); logs are printed for people
(``CELLWAR_LOG_FORMAT=console``) unless set otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from deploy import nginx, topology
from deploy.ports import Bases, out_of_range, overlapping, parse_scale, taken
from deploy.supervisor import StartError, Supervisor
from services.common.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent

#: Name of the process table in the data folder.
STATE_FILE = "cluster.json"


def _lock_data_dir(data_dir: Path):
    """Hold an exclusive lock on ``<data_dir>/run.lock`` for the life of this process.

    Two runners on one data folder would run two NATS servers on the same JetStream
    store and corrupt it.

    Raises:
        RuntimeError: another runner holds the lock.
    """
    import fcntl

    data_dir.mkdir(parents=True, exist_ok=True)
    handle = open(data_dir / "run.lock", "w")  # noqa: SIM115 - held until exit
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        handle.close()
        raise RuntimeError(
            f"another runner (make run / make run-cluster) uses {data_dir} (its JetStream "
            "store); stop it, or give this one its own CELLWAR_DATA_DIR and ports"
        ) from exc
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def write_state(path: Path, *, url: str, mode: str, supervisor: Supervisor) -> None:
    """Write the process table atomically (a temporary file renamed over ``path``), so a
    reader never sees half a file.

    Shape: ``{"url", "mode": "single"|"cluster", "runner_pid", "processes": [{"name",
    "role", "pid" (null while down), "addr", "state" ("starting"|"up"|"down"|"stopped"),
    "restarts", "log" (null: the runner's terminal)}]}``.
    """
    table = {
        "url": url,
        "mode": mode,
        "runner_pid": os.getpid(),
        "processes": [
            {
                "name": c.spec.name,
                "role": c.spec.role,
                "pid": c.pid,
                "addr": c.spec.addr,
                "state": c.state,
                "restarts": c.restarts,
                "log": str(c.spec.log_path) if c.spec.log_path else None,
            }
            for c in supervisor.children
        ],
    }
    fd, tmp = tempfile.mkstemp(prefix=".cluster-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(table, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _alive(pid: object) -> bool:
    """Whether a process of that PID exists now (``kill(pid, 0)``)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_state(path: Path) -> dict | None:
    """The process table of :func:`write_state` as it is now, or None when there is none.

    The file is only as current as its runner: one killed with SIGKILL cannot rewrite it
    (its children die with it, deploy/supervisor.py ``die_with_parent``). So the table is
    checked against the live PIDs: ``"runner_alive"`` is added, and a process whose PID is
    gone (or whose runner is gone) reads ``"state": "stopped"``, ``"pid": null``.
    """
    try:
        table = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    runner_alive = _alive(table.get("runner_pid"))
    table["runner_alive"] = runner_alive
    for proc in table.get("processes", []):
        if not runner_alive or (proc.get("pid") is not None and not _alive(proc["pid"])):
            proc["state"], proc["pid"] = "stopped", None
    return table


def _status(data_dir: Path) -> int:
    """``--status``: the process table now, a line each; 0 when the runner is up, else 1."""
    table = read_state(data_dir / STATE_FILE)
    if table is None:
        sys.stdout.write(f"no runner has used {data_dir} (no {STATE_FILE})\n")
        return 1
    who = "up" if table["runner_alive"] else "not running (the table is from its last run)"
    sys.stdout.write(f"runner {table.get('runner_pid')}: {who}; {table.get('mode')} at {table.get('url')}\n")
    for proc in table.get("processes", []):
        sys.stdout.write(
            f"  {proc['name']:<14} {proc['state']:<8} pid {proc['pid'] or '-':<8} {proc.get('addr') or ''}"
            f"  restarts {proc.get('restarts', 0)}\n"
        )
    return 0 if table["runner_alive"] else 1


def _say(line: str) -> None:
    sys.stderr.write(f"[run {time.strftime('%H:%M:%S')}] {line}\n")
    sys.stderr.flush()


#: The variables that set the port bases (docs/hosting.md, Ports).
_BASES = (
    "CELLWAR_HTTP_PORT, CELLWAR_NATS_PORT, CELLWAR_ENGINE_ADDR, CELLWAR_SESSION_ADDR, "
    "CELLWAR_MATCHMAKER_ADDR (docs/hosting.md, Ports)"
)


def _check_ports(ports: list[tuple[str, str, int]]) -> None:
    """Refuse a port plan whose ports coincide or are taken now (RuntimeError naming them)."""
    beyond = out_of_range(ports)
    if beyond:
        listing = ", ".join(f"{what} on {port}" for what, _, port in beyond)
        raise RuntimeError(f"ports past 65535: {listing}; choose lower bases with {_BASES}")
    clashes = overlapping(ports)
    if clashes:
        listing = ", ".join(f"{a} and {b} both on port {port}" for a, b, port in clashes)
        raise RuntimeError(f"port bases too close: {listing}; choose bases further apart with {_BASES}")
    busy = taken(ports)
    if busy:
        listing = ", ".join(f"{what} {host}:{port}" for what, host, port in busy)
        raise RuntimeError(
            f"ports in use: {listing} (another make run or cluster?); choose other bases with {_BASES}"
        )


def main(argv: list[str] | None = None) -> int:
    """Run the platform until interrupted. Returns the exit code (0 after Ctrl-C, 1 when
    it could not start)."""
    parser = argparse.ArgumentParser(prog="python -m deploy.run", description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", action="store_true", help="3 NATS nodes, 2 of each service, nginx (make run-cluster)")
    parser.add_argument("--nats-port", type=int, default=None, help="NATS base port (default CELLWAR_NATS_PORT or 4222)")
    parser.add_argument(
        "--external-nats",
        action="store_true",
        help="use the NATS server at CELLWAR_NATS_URL and start none (also when CELLWAR_NATS_URL is set; not with --cluster)",
    )
    parser.add_argument(
        "--scale",
        action="append",
        default=[],
        metavar="ROLE=N",
        help="with --cluster: N instances of ROLE (engine, session, gateway, matchmaker, bots) instead of 2; repeatable",
    )
    parser.add_argument("--restart-delay", type=float, default=2.0, help="seconds before a dead process is started again")
    parser.add_argument(
        "--status", action="store_true", help=f"print the processes of the runner of CELLWAR_DATA_DIR ({STATE_FILE}, checked against live PIDs) and exit"
    )
    args = parser.parse_args(argv)
    if args.status:
        data_dir = Path(load_settings().data_dir)
        return _status((data_dir if data_dir.is_absolute() else ROOT / data_dir).resolve())

    os.environ.setdefault("CELLWAR_LOG_FORMAT", "console")
    if args.nats_port is not None:
        os.environ["CELLWAR_NATS_PORT"] = str(args.nats_port)
    mode = "cluster" if args.cluster else "single"
    supervisor: Supervisor | None = None
    stopping = False

    def on_signal(signum, frame):  # noqa: ARG001
        nonlocal stopping
        if stopping:
            return
        stopping = True
        raise KeyboardInterrupt

    # Installed explicitly: a runner started in the background inherits SIGINT ignored.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        settings = load_settings()
        data_dir = Path(settings.data_dir)
        data_dir = (data_dir if data_dir.is_absolute() else ROOT / data_dir).resolve()
        lock = _lock_data_dir(data_dir)  # noqa: F841 - held while running
        bases = Bases.from_env(os.environ, settings)
        env = dict(os.environ)
        if args.cluster:
            nginx_bin = nginx.nginx_binary()  # FileNotFoundError with the install hint
            sizes = parse_scale(args.scale)
            _check_ports(
                bases.cluster_ports(matchmaker=topology.has_matchmaker(), sizes=sizes, bots=topology.has_bots())
            )
            specs = topology.cluster(bases, env, data_dir, nginx_bin=nginx_bin, sizes=sizes)
            url = topology.cluster_url(bases)
        else:
            external = args.external_nats or "CELLWAR_NATS_URL" in os.environ
            if external:
                _say(f"using the NATS server at {settings.nats_url}")
            _check_ports(
                bases.single_ports(nats=not external, matchmaker=topology.has_matchmaker(), bots=topology.has_bots())
            )
            specs = topology.single_node(bases, env, data_dir, nats_url=settings.nats_url if external else None)
            url = topology.cluster_url(bases)
        state_path = data_dir / STATE_FILE

        def on_change(sup: Supervisor) -> None:
            write_state(state_path, url=url, mode=mode, supervisor=sup)

        supervisor = Supervisor(specs, restart_delay_s=args.restart_delay, on_change=on_change, say=_say)
        if args.cluster:
            _say(f"starting {len(specs)} processes; logs in {data_dir / 'cluster' / 'logs'}")
        supervisor.start_all()
        counts: dict[str, int] = {}
        for spec in specs:
            counts[spec.role] = counts.get(spec.role, 0) + 1
        shape = ", ".join(f"{n} {role}" for role, n in counts.items())
        shown = url.replace("://127.0.0.1:", "://localhost:")
        sys.stderr.write(
            f"\nCellWar is up: {shown}  (API docs: {shown}/docs; {shape}; "
            f"processes in {state_path}; Ctrl-C stops all)\n\n"
        )
        sys.stderr.flush()
        supervisor.supervise()
        return 0  # pragma: no cover - supervise() returns only through a signal
    except KeyboardInterrupt:
        _say("stopping CellWar...")
        if supervisor is not None:
            supervisor.stop_all()
        return 0
    except (RuntimeError, FileNotFoundError, StartError, ValueError) as exc:
        sys.stderr.write(f"{'make run-cluster' if args.cluster else 'make run'} failed: {exc}\n")
        if supervisor is not None:
            stopping = True
            supervisor.stop_all()
        return 1


if __name__ == "__main__":
    sys.exit(main())
