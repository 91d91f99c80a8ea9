"""The whole CellWar platform as containers on one Docker network (testcontainers).

``python -m deploy.containers up [--port 8000]`` builds the images when needed
(:mod:`deploy.images`, no registry pull), then starts NATS, engine, session, matchmaker,
gateway and nginx; the platform answers on ``http://localhost:<port>`` (nginx, published on
127.0.0.1 only). ``python -m deploy.containers down`` removes the containers and the
network (``--volumes`` also the NATS data volume, kept otherwise so games survive an
``up``/``down`` cycle). The integration tests in ``tests/containers`` start the same
stack through :class:`ContainerStack`.

Containers are ``<name>-nats``, ``<name>-engine``, ``<name>-session``,
``<name>-matchmaker``, ``<name>-gateway``, ``<name>-nginx`` on the network ``<name>-net``, all labelled ``org.cellwar.stack=<name>``
(``down`` removes by label). Inside the network they reach each other by those short
names (``nats:4222``, ``engine:50051``, ``session:50052``, ``matchmaker:50053``,
``gateway:8000``). Each
service waits for the one before it to be ready (:data:`START_ORDER`; nginx, started
before the gateway, is waited for last): Docker health checks of the images, polled
every :attr:`StackConfig.health_interval_s`; for NATS its "Server is ready" log line.

The token signing secret is ``CELLWAR_SECRET`` when set, else a random one made for
this ``up`` (never a known default). The gateway trusts ``X-Forwarded-For`` only from
nginx (``CELLWAR_TRUSTED_PROXIES`` = the nginx container's address: nginx starts first and
waits for the gateway's name to resolve).

Testcontainers' reaper container (Ryuk) is pulled from a registry, so it is turned off
here (``TESTCONTAINERS_RYUK_DISABLED``); :meth:`ContainerStack.stop` and ``down`` remove
what was started.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")

from deploy.images import BuildError, ImageNames, build_all, docker_answers, image_names  # noqa: E402
from deploy.ports import port_free  # noqa: E402

#: Label on every container, network and volume of a stack.
STACK_LABEL = "org.cellwar.stack"

#: Ports inside the network.
NATS_PORT = 4222
ENGINE_PORT = 50051
SESSION_PORT = 50052
MATCHMAKER_PORT = 50053
GATEWAY_PORT = 8000
NGINX_PORT = 8080

#: The services: name → command of the platform image (None: the service's own image).
SERVICES: dict[str, list[str] | None] = {
    "nats": None,
    "engine": ["python", "-m", "services.engine"],
    "session": ["python", "-m", "services.session"],
    "matchmaker": ["python", "-m", "services.matchmaker"],
    "gateway": ["python", "-m", "gateway"],
    "nginx": None,
}
#: Start order. nginx starts before the gateway (it waits for the name ``gateway`` to
#: resolve) so that its address is known when the gateway starts: the gateway trusts
#: ``X-Forwarded-For`` from that one address only.
START_ORDER = ("nats", "engine", "session", "matchmaker", "nginx", "gateway")


def service_env(config: StackConfig, secret: str, trusted_proxies: str) -> dict[str, dict[str, str]]:
    """The environment of each service of the stack (compose.yaml holds the same)."""
    common = {"CELLWAR_LOG_FORMAT": "json", "CELLWAR_LOG_LEVEL": config.log_level}
    return {
        "nats": {},
        "engine": {**common, "CELLWAR_ENGINE_ADDR": f"0.0.0.0:{ENGINE_PORT}"},
        "session": {
            **common,
            "CELLWAR_NATS_URL": f"nats://nats:{NATS_PORT}",
            "CELLWAR_ENGINE_ADDR": f"engine:{ENGINE_PORT}",
            "CELLWAR_SESSION_ADDR": f"0.0.0.0:{SESSION_PORT}",
            "CELLWAR_INSTANCE_ID": "session-1",
            "CELLWAR_GENERATIONS_PER_SECOND": str(config.generations_per_second),
        },
        "matchmaker": {
            **common,
            "CELLWAR_NATS_URL": f"nats://nats:{NATS_PORT}",
            "CELLWAR_SESSION_ADDR": f"session:{SESSION_PORT}",
            "CELLWAR_MATCHMAKER_ADDR": f"0.0.0.0:{MATCHMAKER_PORT}",
        },
        "gateway": {
            **common,
            "CELLWAR_SESSION_ADDR": f"session:{SESSION_PORT}",
            "CELLWAR_MATCHMAKER_ADDR": f"matchmaker:{MATCHMAKER_PORT}",
            "CELLWAR_HTTP_HOST": "0.0.0.0",
            "CELLWAR_HTTP_PORT": str(GATEWAY_PORT),
            "CELLWAR_SECRET": secret,
            "CELLWAR_TRUSTED_PROXIES": trusted_proxies,
        },
        "nginx": {
            "CELLWAR_NGINX_GATEWAYS": f"gateway:{GATEWAY_PORT}",
            "CELLWAR_NGINX_LISTEN": str(NGINX_PORT),
        },
    }


@dataclass
class StackConfig:
    """What differs between one stack and another.

    Attributes:
        name: prefix of container, network and volume names (and the stack label).
        port: host port of nginx on 127.0.0.1 (0 = a free one; see ``ContainerStack.url``).
        secret: token signing key (None: ``CELLWAR_SECRET`` or a random one).
        nats_volume: named volume for NATS' ``/data`` (None: an anonymous volume,
            removed with the container).
        generations_per_second: the session's base Life tick rate.
        health_interval_s: seconds between two Docker health checks while waiting.
        start_timeout_s: longest wait for one service to become healthy (seconds).
        log_level: the services' ``CELLWAR_LOG_LEVEL``.
        publish_nats: also publish NATS' client port on 127.0.0.1 (a free port;
            ``ContainerStack.nats_url``), for tests that read the event stream.
        extra_env: more environment per service, e.g. ``{"session": {...}}``.
    """

    name: str = "cellwar"
    port: int = 8000
    secret: str | None = None
    nats_volume: str | None = None
    generations_per_second: float = 8.0
    health_interval_s: float = 2.0
    start_timeout_s: float = 120.0
    log_level: str = "info"
    publish_nats: bool = False
    extra_env: dict[str, dict[str, str]] = field(default_factory=dict)


class StackError(RuntimeError):
    """The stack could not start (a service never became healthy, images missing, ...)."""


def _healthcheck_override(image_info: dict[str, Any], interval_s: float) -> dict[str, Any] | None:
    """The image's own health check with a shorter interval (Docker 20.10 has no
    start interval: the first check runs one interval after start)."""
    health = (image_info.get("Config") or {}).get("Healthcheck")
    if not health or not health.get("Test"):
        return None
    ns = int(interval_s * 1e9)
    return {
        "test": health["Test"],
        "interval": ns,
        "timeout": int(health.get("Timeout") or 5e9),
        "retries": int(health.get("Retries") or 3),
        "start_period": int(health.get("StartPeriod") or 0),
    }


class ContainerStack:
    """NATS, engine, session, matchmaker, gateway and nginx as containers (see the module docstring).

    Use ``with ContainerStack(config) as stack:`` or :meth:`start` / :meth:`stop`.
    ``stack.url`` is ``http://127.0.0.1:<port>`` (nginx). :meth:`kill` and
    :meth:`start_again` stop a service with SIGKILL and start the same container again
    (its name and network alias stay, its data too).

    Raises (from start):
        StackError: an image is missing (run ``make images``) or a service did not become
            healthy in ``config.start_timeout_s`` (its last log lines are in the message).
    """

    def __init__(self, config: StackConfig | None = None, names: ImageNames | None = None) -> None:
        self.config = config or StackConfig()
        self.names = names or image_names()
        self.network: Any = None
        self.containers: dict[str, Any] = {}
        self.port: int | None = None
        self.trusted_proxies = ""

    # -- lifecycle

    def start(self) -> ContainerStack:
        """Create the network and start every service in order, each healthy before the
        next starts. On failure everything started is removed again."""
        from testcontainers.core.config import testcontainers_config
        from testcontainers.core.network import Network

        testcontainers_config.ryuk_disabled = True
        images = self._image_infos()
        cfg = self.config
        labels = {STACK_LABEL: cfg.name}
        try:
            self.network = Network(docker_network_kw={"labels": labels})
            self.network.name = f"{cfg.name}-net"
            self.network.create()
            secret = cfg.secret or os.environ.get("CELLWAR_SECRET") or secrets.token_urlsafe(48)
            for service in START_ORDER:
                if service == "gateway":
                    self.trusted_proxies = self._address("nginx")
                envs = service_env(cfg, secret, self.trusted_proxies)
                image = {"nats": self.names.nats, "nginx": self.names.nginx}.get(
                    service, self.names.platform
                )
                env = {**envs[service], **cfg.extra_env.get(service, {})}
                container = self._container(
                    service, image, SERVICES[service], env, labels, images[image]
                )
                self.containers[service] = container
                container.start()
                if service != "nginx":  # nginx is healthy once a gateway answers
                    self._wait_ready(service)
            self._wait_ready("nginx")
            self.port = int(self.containers["nginx"].get_exposed_port(NGINX_PORT))
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Remove every container (with its anonymous volumes) and the network."""
        for container in reversed(list(self.containers.values())):
            try:
                container.stop()
            except Exception:  # noqa: BLE001 - best effort: remove the rest anyway
                pass
        self.containers.clear()
        if self.network is not None:
            try:
                self.network.remove()
            except Exception:  # noqa: BLE001
                pass
            self.network = None

    def __enter__(self) -> ContainerStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` of nginx."""
        if self.port is None:
            raise StackError("the stack is not started")
        return f"http://127.0.0.1:{self.port}"

    @property
    def nats_url(self) -> str:
        """``nats://127.0.0.1:<port>`` (only with ``config.publish_nats``)."""
        if not self.config.publish_nats or "nats" not in self.containers:
            raise StackError("NATS is not published (StackConfig.publish_nats)")
        return f"nats://127.0.0.1:{self.containers['nats'].get_exposed_port(NATS_PORT)}"

    # -- chaos

    def kill(self, service: str) -> None:
        """SIGKILL the service's container (it stays, stopped)."""
        self.containers[service].get_wrapped_container().kill(signal="SIGKILL")
        wrapped = self.containers[service].get_wrapped_container()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            wrapped.reload()
            if wrapped.status != "running":
                return
            time.sleep(0.1)
        raise StackError(f"{service} still running after SIGKILL")

    def start_again(self, service: str) -> None:
        """Start the stopped container of ``service`` again and wait until healthy."""
        self.containers[service].get_wrapped_container().start()
        self._wait_ready(service)

    def logs(self, service: str, tail: int = 40) -> str:
        """The last ``tail`` lines of the service's output (stdout and stderr)."""
        wrapped = self.containers[service].get_wrapped_container()
        return wrapped.logs(tail=tail).decode(errors="replace")

    # -- internals

    def _image_infos(self) -> dict[str, dict[str, Any]]:
        import docker

        client = docker.from_env()
        infos: dict[str, dict[str, Any]] = {}
        try:
            for tag in (self.names.nats, self.names.platform, self.names.nginx):
                try:
                    infos[tag] = client.images.get(tag).attrs
                except docker.errors.ImageNotFound:
                    raise StackError(f"image {tag} missing: run `make images`") from None
        finally:
            client.close()
        return infos

    def _address(self, service: str) -> str:
        """The service container's IPv4 address on the stack's network."""
        wrapped = self.containers[service].get_wrapped_container()
        wrapped.reload()
        networks = wrapped.attrs["NetworkSettings"]["Networks"]
        address = (networks.get(self.network.name) or {}).get("IPAddress")
        if not address:
            raise StackError(f"{service} has no address on {self.network.name}")
        return str(address)

    def _container(self, service: str, image: str, command: list[str] | None,
                   env: dict[str, str], labels: dict[str, str], info: dict[str, Any]) -> Any:
        from testcontainers.core.container import DockerContainer

        kwargs: dict[str, Any] = {"labels": labels}
        health = _healthcheck_override(info, self.config.health_interval_s)
        if health:
            kwargs["healthcheck"] = health
        container = DockerContainer(
            image, command=command, env=env, name=f"{self.config.name}-{service}",
            network=self.network, network_aliases=[service], **kwargs,
        )
        if service == "nats" and self.config.nats_volume:
            container.with_volume_mapping(self.config.nats_volume, "/data", "rw")
        # Published on 127.0.0.1 only (docker-py: (host ip, host port); None = any free).
        if service == "nginx":
            container.ports[f"{NGINX_PORT}/tcp"] = ("127.0.0.1", self.config.port or None)
        if service == "nats" and self.config.publish_nats:
            container.ports[f"{NATS_PORT}/tcp"] = ("127.0.0.1", None)
        return container

    def _wait_ready(self, service: str) -> None:
        """NATS: its "Server is ready" line; the others: Docker health ``healthy``."""
        container = self.containers[service]
        wrapped = container.get_wrapped_container()
        deadline = time.monotonic() + self.config.start_timeout_s
        while True:
            wrapped.reload()
            state = wrapped.attrs.get("State") or {}
            if service == "nats":
                if b"Server is ready" in wrapped.logs(since=int(_started_at(state))):
                    return
            elif (state.get("Health") or {}).get("Status") == "healthy":
                return
            if state.get("Status") in ("exited", "dead"):
                raise StackError(f"{service} exited ({state.get('ExitCode')}):\n{self.logs(service)}")
            if time.monotonic() > deadline:
                raise StackError(
                    f"{service} not ready after {self.config.start_timeout_s:.0f} s:\n{self.logs(service)}"
                )
            time.sleep(0.2)


def _started_at(state: dict[str, Any]) -> float:
    """The container's last start as a Unix time (seconds; 0 when unknown)."""
    from datetime import datetime

    text = str(state.get("StartedAt") or "")
    if not text or text.startswith("0001"):
        return 0.0
    text = text.rstrip("Z")
    whole, _, frac = text.partition(".")
    stamp = datetime.fromisoformat(whole + "+00:00").timestamp()
    return stamp - 1.0  # a second early: `since` is whole seconds


def remove_stack(name: str, *, volumes: bool = False) -> list[str]:
    """Remove every container and network labelled ``org.cellwar.stack=<name>`` (and its
    NATS data volume with ``volumes``). Returns what was removed, e.g. ``["container
    cellwar-nginx", "network cellwar-net"]``."""
    import docker

    client = docker.from_env()
    removed: list[str] = []
    try:
        selector = {"label": f"{STACK_LABEL}={name}"}
        for container in client.containers.list(all=True, filters=selector):
            container.remove(force=True, v=True)
            removed.append(f"container {container.name}")
        for network in client.networks.list(filters=selector):
            network.remove()
            removed.append(f"network {network.name}")
        if volumes:
            for volume in client.volumes.list(filters=selector):
                volume.remove(force=True)
                removed.append(f"volume {volume.name}")
    finally:
        client.close()
    return removed


def _ensure_volume(name: str, stack: str) -> tuple[str, bool]:
    """The NATS data volume ``name``, made when missing: ``(name, made now)``."""
    import docker

    client = docker.from_env()
    try:
        try:
            client.volumes.get(name)
            made = False
        except docker.errors.NotFound:
            client.volumes.create(name, labels={STACK_LABEL: stack})
            made = True
    finally:
        client.close()
    return name, made


def _running(name: str) -> list[str]:
    import docker

    client = docker.from_env()
    try:
        return [c.name for c in client.containers.list(all=True, filters={"label": f"{STACK_LABEL}={name}"})]
    finally:
        client.close()


def up(port: int, name: str, *, build: bool = True) -> int:
    """``up``: build the images if needed, start the stack, print where it answers."""
    if port and not port_free("127.0.0.1", port):
        print(f"port {port} is in use (another make run or stack?): choose another with --port",
              file=sys.stderr)
        return 1
    if not docker_answers():
        print("no Docker engine answers: start dockerd (as root: dockerd &) and try again",
              file=sys.stderr)
        return 1
    try:
        import docker
        import testcontainers  # noqa: F401
    except ImportError:
        print("testcontainers is missing: pip install -e '.[dev]' (make install)", file=sys.stderr)
        return 1
    if _running(name):
        print(f"stack {name!r} exists ({', '.join(_running(name))}): "
              f"python -m deploy.containers down --name {name}", file=sys.stderr)
        return 1
    made_volume = False
    try:
        if build:
            build_all()
        volume, made_volume = _ensure_volume(f"{name}-nats-data", name)
        started = time.monotonic()
        print(f"[containers] starting {', '.join(SERVICES)} on network {name}-net", flush=True)
        stack = ContainerStack(StackConfig(name=name, port=port, nats_volume=volume))
        stack.start()
    except (BuildError, StackError, docker.errors.DockerException) as exc:
        print(f"[containers] error: {exc}", file=sys.stderr)
        removed = remove_stack(name, volumes=made_volume)  # leave nothing of a stack that never ran
        if removed:
            print(f"[containers] removed {', '.join(removed)}", file=sys.stderr)
        return 1
    print(f"[containers] up in {time.monotonic() - started:.0f} s: {stack.url.replace('127.0.0.1', 'localhost')}")
    print(f"  bots:  python -m client.play --url http://localhost:{stack.port} --size 60 --budget 100")
    print(f"  stop:  python -m deploy.containers down{'' if name == 'cellwar' else f' --name {name}'}")
    return 0


def down(name: str, *, volumes: bool = False) -> int:
    """``down``: remove the stack's containers and network (and volume with ``volumes``)."""
    if not docker_answers():
        print("no Docker engine answers", file=sys.stderr)
        return 1
    removed = remove_stack(name, volumes=volumes)
    for item in removed:
        print(f"[containers] removed {item}")
    if not removed:
        print(f"[containers] nothing to remove for stack {name!r}")
    if not volumes:
        print(f"[containers] kept the NATS data volume {name}-nats-data (down --volumes removes it)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m deploy.containers up [--port 8000] [--name cellwar] | down [--volumes]``."""
    parser = argparse.ArgumentParser(prog="python -m deploy.containers",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    up_parser = sub.add_parser("up", help="build the images if needed and start the stack")
    up_parser.add_argument("--port", type=int, default=8000, help="host port of nginx (127.0.0.1)")
    up_parser.add_argument("--name", default="cellwar", help="stack name (prefix of every container)")
    up_parser.add_argument("--no-build", action="store_true", help="use the images as they are")
    down_parser = sub.add_parser("down", help="remove the stack's containers and network")
    down_parser.add_argument("--name", default="cellwar")
    down_parser.add_argument("--volumes", action="store_true", help="also remove the NATS data volume")
    args = parser.parse_args(argv)
    if args.command == "up":
        return up(args.port, args.name, build=not args.no_build)
    return down(args.name, volumes=args.volumes)


if __name__ == "__main__":
    raise SystemExit(main())
