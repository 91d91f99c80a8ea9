"""Which processes a runner starts, on which ports, with which environment.

Two shapes, both lists of :class:`deploy.supervisor.ProcessSpec`:

- :func:`single_node` (``make run``): ``nats``, ``engine``, ``session``, ``gateway``
  (+ ``matchmaker``) and ``bots`` (the bot runner, ``python -m client.seats``,
  docs/bot-seats.md), each reading the runner's own ``CELLWAR_*`` variables.
- :func:`cluster` (``make run-cluster``, docs/hosting.md): ``nats-1..3`` (one JetStream
  cluster, streams and KV R3), ``engine-1..2``, ``session-1..2``, ``gateway-1..2``
  (+ ``matchmaker-1..2``), ``bots-1..2`` and ``nginx`` in front; ports from
  :mod:`deploy.ports`.

The services are data (:data:`SERVICES`): adding one (the matchmaker) is one entry.
An entry whose module is not in this checkout is left out.
"""

from __future__ import annotations

import grp
import ipaddress
import os
import pwd
import signal
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from deploy import nginx
from deploy.nats import nats_server_binary, write_cluster_config, write_config
from deploy.ports import CLUSTER_SIZE, Bases
from deploy.supervisor import ProcessSpec, grpc_health_probe, http_probe, tcp_probe

ROOT = Path(__file__).resolve().parent.parent

#: Start groups (stops go in reverse): NATS first, nginx, then the bot runners (clients
#: of the public API) last.
G_NATS, G_ENGINE, G_SESSION, G_MATCHMAKER, G_GATEWAY, G_NGINX, G_BOTS = range(7)

#: The bot runner's module (docs/bot-seats.md): a client of the public API, so it lives
#: under client/ (services never import the engine; the bots' policies may).
BOTS_MODULE = "client.seats"


@dataclass(frozen=True)
class Service:
    """A Python service of the platform, as the runners start it.

    Attributes:
        role: name in ``cluster.json`` (``engine``); instances are ``<role>-<k>``.
        module: ``python -m <module>``.
        group: start group (see ``G_*``).
        grpc: True for a gRPC service (probed with the gRPC health check; its address
            is ``Bases.grpc_addr(role, k)``, bound through ``bind_env``); False for the
            gateway (HTTP, probed on ``/healthz``).
        bind_env: the variable that tells the process where to listen.
    """

    role: str
    module: str
    group: int
    grpc: bool
    bind_env: str

    def available(self) -> bool:
        """The module exists in this checkout."""
        return (ROOT / Path(*self.module.split(".")) / "__main__.py").exists()


#: The platform's services in start order. The matchmaker joins the runners by
#: itself once ``services/matchmaker/__main__.py`` exists.
SERVICES: tuple[Service, ...] = (
    Service("engine", "services.engine", G_ENGINE, True, "CELLWAR_ENGINE_ADDR"),
    Service("session", "services.session", G_SESSION, True, "CELLWAR_SESSION_ADDR"),
    Service("matchmaker", "services.matchmaker", G_MATCHMAKER, True, "CELLWAR_MATCHMAKER_ADDR"),
    Service("gateway", "gateway", G_GATEWAY, False, "CELLWAR_HTTP_PORT"),
)


def services() -> list[Service]:
    """The :data:`SERVICES` present in this checkout."""
    return [s for s in SERVICES if s.available()]


def has_matchmaker() -> bool:
    """The matchmaker service exists in this checkout."""
    return any(s.role == "matchmaker" for s in services())


def has_bots() -> bool:
    """The bot runner exists in this checkout."""
    return (ROOT / Path(*BOTS_MODULE.split(".")) / "__main__.py").exists()


def bots_spec(name: str, addr: str, api_url: str, env: Mapping[str, str], **spec: object) -> ProcessSpec:
    """The :class:`ProcessSpec` of one bot runner listening on ``addr`` (``host:port``)
    and playing through ``api_url``; ``spec``: more ProcessSpec fields (``log_path``)."""
    host, _, port = addr.rpartition(":")
    return ProcessSpec(
        name=name,
        role="bots",
        argv=_python(BOTS_MODULE),
        env={**env, "CELLWAR_BOTS_ADDR": addr, "CELLWAR_BOTS_API_URL": api_url},
        addr=addr,
        probe=http_probe(f"http://{_loopback(host)}:{port}/healthz"),
        group=G_BOTS,
        cwd=ROOT,
        **spec,  # type: ignore[arg-type]
    )


def _python(module: str) -> list[str]:
    return [sys.executable, "-m", module]


# -- make run


def single_node(
    bases: Bases, env: Mapping[str, str], data_dir: Path, *, nats_url: str | None = None
) -> list[ProcessSpec]:
    """The processes of ``make run``: its own ``nats-server`` (JetStream under
    ``<data_dir>/nats``; none when ``nats_url`` names an external one), then every
    service of :func:`services`, all on the bases themselves, logs on the terminal.

    Args:
        bases: ports (:class:`deploy.ports.Bases`).
        env: the environment every child gets (``CELLWAR_*`` included).
        data_dir: the runner's data folder (absolute).
        nats_url: an external NATS to use instead of starting one.
    """
    specs: list[ProcessSpec] = []
    child_env = dict(env)
    child_env["PYTHONUNBUFFERED"] = "1"
    child_env["CELLWAR_DATA_DIR"] = str(data_dir)
    if nats_url is None:
        conf = write_config(data_dir / "nats.conf", port=bases.nats, store_dir=data_dir / "nats")
        specs.append(
            ProcessSpec(
                name="nats",
                role="nats",
                argv=[nats_server_binary(), "-c", str(conf)],
                env=child_env,
                addr=f"127.0.0.1:{bases.nats}",
                probe=tcp_probe("127.0.0.1", bases.nats),
                group=G_NATS,
                cwd=ROOT,
                start_timeout_s=30,
            )
        )
        child_env["CELLWAR_NATS_URL"] = f"nats://127.0.0.1:{bases.nats}"
    bots_addr = bases.grpc_addr("bots", 1)
    if has_bots():
        child_env.setdefault("CELLWAR_BOTS_URL", f"http://{bots_addr}")
    for service in services():
        if service.grpc:
            addr = bases.grpc_addr(service.role, 1)
            probe = grpc_health_probe(addr)
            run_env = {**child_env, service.bind_env: addr}
        else:
            addr = f"{bases.http_host}:{bases.http}"
            probe = http_probe(f"http://{_loopback(bases.http_host)}:{bases.http}/healthz")
            run_env = child_env
        specs.append(
            ProcessSpec(
                name=service.role,
                role=service.role,
                argv=_python(service.module),
                env=run_env,
                addr=addr,
                probe=probe,
                group=service.group,
                cwd=ROOT,
            )
        )
    if has_bots():
        api_url = f"http://{_loopback(bases.http_host)}:{bases.http}"
        specs.append(bots_spec("bots", bots_addr, api_url, child_env))
    return specs


# -- make run-cluster


def grpc_target(addrs: list[str], *, rotate: int = 0) -> str:
    """One gRPC target naming every address, for a client that passes it straight to
    ``grpc.insecure_channel`` (the gateway's session channel): gRPC's ``ipv4:a,b``
    (pick_first tries them in order, so a dead instance is skipped). ``rotate`` puts
    instance ``rotate`` first, so gateway k prefers session k. Falls back to the first
    address when a host is not an IPv4 literal (``ipv4:`` needs literals)."""
    ordered = addrs[rotate % len(addrs) :] + addrs[: rotate % len(addrs)]
    try:
        for addr in ordered:
            ipaddress.IPv4Address(addr.rpartition(":")[0])
    except ValueError:
        return ordered[0]
    return "ipv4:" + ",".join(ordered) if len(ordered) > 1 else ordered[0]


def _loopback(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else host


def _static_owner(static_dir: Path) -> str | None:
    """When the runner is root, nginx's workers run as the owner of the client's files
    (nginx's default, nobody, may not read a checkout under /root); else None."""
    if os.geteuid() != 0:
        return None
    owner = pwd.getpwuid(static_dir.stat().st_uid)
    return f"{owner.pw_name} {grp.getgrgid(owner.pw_gid).gr_name}"


def cluster_url(bases: Bases) -> str:
    """The URL people open: nginx on ``http_host:H``."""
    return f"http://{_loopback(bases.http_host)}:{bases.http}"


def cluster(
    bases: Bases,
    env: Mapping[str, str],
    data_dir: Path,
    *,
    nginx_bin: str,
    nginx_workers: int | str = 1,
    sizes: Mapping[str, int] = CLUSTER_SIZE,
) -> list[ProcessSpec]:
    """The processes of ``make run-cluster`` (module docstring); data and logs under
    ``<data_dir>/cluster`` (``nats-<k>/`` JetStream stores, ``nginx/``, ``logs/``).

    Args:
        bases: ports (:class:`deploy.ports.Bases`; the table in README "Ports").
        env: the environment every child starts from (``CELLWAR_*`` included).
        data_dir: the runner's data folder (absolute).
        nginx_bin: the nginx executable (:func:`deploy.nginx.nginx_binary`).
        nginx_workers: nginx ``worker_processes``.
        sizes: instances per role (default :data:`deploy.ports.CLUSTER_SIZE`: 3 NATS,
            2 of each service).
    """
    root = data_dir / "cluster"
    logs = root / "logs"
    base_env = dict(env)
    base_env.update(
        {
            "PYTHONUNBUFFERED": "1",
            "CELLWAR_DATA_DIR": str(data_dir),
            "CELLWAR_STREAM_REPLICAS": "3",
        }
    )
    specs: list[ProcessSpec] = []

    # NATS: three nodes of one JetStream cluster.
    n_nats = sizes["nats"]
    routes = [bases.nats_route_port(k) for k in range(1, n_nats + 1)]
    nats_urls = [f"nats://127.0.0.1:{bases.nats_port(k)}" for k in range(1, n_nats + 1)]
    for k in range(1, n_nats + 1):
        name = f"nats-{k}"
        conf = write_cluster_config(
            root / name / "nats.conf",
            name=name,
            port=bases.nats_port(k),
            route_port=bases.nats_route_port(k),
            routes=routes,
            store_dir=root / name / "jetstream",
            monitor_port=bases.nats_monitor_port(k),
        )
        specs.append(
            ProcessSpec(
                name=name,
                role="nats",
                argv=[nats_server_binary(), "-c", str(conf)],
                env=base_env,
                addr=f"127.0.0.1:{bases.nats_port(k)}",
                probe=http_probe(f"http://127.0.0.1:{bases.nats_monitor_port(k)}/healthz"),
                group=G_NATS,
                log_path=logs / f"{name}.log",
                cwd=ROOT,
                start_timeout_s=60,
            )
        )

    def nats_url_for(role: str, k: int) -> str:
        # The session splits a list; any other client gets one node (instance k its
        # own), and nats-py learns the others from the server's INFO.
        if role == "session":
            return ",".join(nats_urls)
        return nats_urls[(k - 1) % len(nats_urls)]

    def addrs(role: str) -> list[str]:
        return [bases.grpc_addr(role, k) for k in range(1, sizes[role] + 1)]

    engine_list = ",".join(addrs("engine"))
    matchmaker = has_matchmaker()
    bots = has_bots() and sizes.get("bots", 0) > 0
    for service in services():
        for k in range(1, sizes[service.role] + 1):
            name = f"{service.role}-{k}"
            child = {**base_env, "CELLWAR_NATS_URL": nats_url_for(service.role, k), "CELLWAR_INSTANCE_ID": name}
            if service.grpc:
                addr = bases.grpc_addr(service.role, k)
                child[service.bind_env] = addr
                probe: Callable[[], bool] = grpc_health_probe(addr)
            else:  # the gateway, behind nginx
                port = bases.gateway_port(k, cluster=True)
                addr = f"127.0.0.1:{port}"
                child.update(
                    {
                        "CELLWAR_HTTP_HOST": "127.0.0.1",
                        "CELLWAR_HTTP_PORT": str(port),
                        "CELLWAR_TRUSTED_PROXIES": "127.0.0.1",
                        # Create and join windows of the whole cluster (NATS KV).
                        "CELLWAR_SHARED_LIMITS": "1",
                    }
                )
                probe = http_probe(f"http://127.0.0.1:{port}/healthz")
            if service.role == "session":
                child["CELLWAR_ENGINE_ADDR"] = engine_list
            if service.role in ("gateway", "matchmaker"):
                child["CELLWAR_SESSION_ADDR"] = grpc_target(addrs("session"), rotate=k - 1)
            if service.role == "gateway" and matchmaker:
                child["CELLWAR_MATCHMAKER_ADDR"] = grpc_target(addrs("matchmaker"), rotate=k - 1)
            if service.role == "gateway" and bots:
                # gateway k asks bot runner k (of as many as there are)
                child.setdefault("CELLWAR_BOTS_URL", f"http://{addrs('bots')[(k - 1) % len(addrs('bots'))]}")
            specs.append(
                ProcessSpec(
                    name=name,
                    role=service.role,
                    argv=_python(service.module),
                    env=child,
                    addr=addr,
                    probe=probe,
                    group=service.group,
                    log_path=logs / f"{name}.log",
                    cwd=ROOT,
                )
            )

    # nginx in front of the gateways.
    run_dir = nginx.prepare_run_dir(root / "nginx")
    gateways = [f"127.0.0.1:{bases.gateway_port(k, cluster=True)}" for k in range(1, sizes["gateway"] + 1)]
    conf = run_dir / "nginx.conf"
    static_dir = ROOT / "client" / "web"
    conf.write_text(
        nginx.render_config(
            listen=f"{bases.http_host}:{bases.http}",
            gateways=gateways,
            static_dir=static_dir,
            run_dir=run_dir,
            workers=nginx_workers,
            user=_static_owner(static_dir),
        )
    )
    specs.append(
        ProcessSpec(
            name="nginx",
            role="nginx",
            argv=[nginx_bin, "-p", str(run_dir), "-c", str(conf), "-e", str(run_dir / "error.log")],
            env=base_env,
            addr=f"{bases.http_host}:{bases.http}",
            probe=tcp_probe(bases.http_host, bases.http),
            group=G_NGINX,
            stop_signal=signal.SIGTERM,
            log_path=logs / "nginx.log",
            cwd=ROOT,
            start_timeout_s=30,
        )
    )
    # The bot runners play through nginx, the URL people open: clients like any other.
    if bots:
        for k in range(1, sizes["bots"] + 1):
            name = f"bots-{k}"
            specs.append(
                bots_spec(
                    name, bases.grpc_addr("bots", k), cluster_url(bases),
                    {**base_env, "CELLWAR_INSTANCE_ID": name}, log_path=logs / f"{name}.log",
                )
            )
    return specs
