"""Every port of a local run, derived from the bases ``make run`` reads.

The bases are the variables of ``make run`` (``CELLWAR_HTTP_PORT``, ``CELLWAR_NATS_PORT``,
``CELLWAR_ENGINE_ADDR``, ``CELLWAR_SESSION_ADDR``, and ``CELLWAR_MATCHMAKER_ADDR`` once the
matchmaker exists). Instance ``k`` (1, 2, 3) of a role sits at a fixed offset from its
base, so a cluster and a ``make run`` whose bases lie apart never collide (README, "Ports"):

============================  ==========  =====================  =========================
what                          ``make run``  ``make run-cluster``   defaults (cluster)
============================  ==========  =====================  =========================
nginx (the URL)               —           H                      8000
gateway k                     H           H + k                  8001, 8002
nats-k client port            N           N + k − 1              4222, 4223, 4224
nats-k cluster routes         —           N + 10 + k − 1         4232, 4233, 4234
nats-k monitoring (HTTP)      —           N + 20 + k − 1         4242, 4243, 4244
engine-k (gRPC)               E           E + 10 (k − 1)         50051, 50061
session-k (gRPC)              S           S + 10 (k − 1)         50052, 50062
matchmaker-k (gRPC)           M           M + 10 (k − 1)         50053, 50063
bots-k (HTTP, internal)       B           B + 10 (k − 1)         50054, 50064
============================  ==========  =====================  =========================

H = ``CELLWAR_HTTP_PORT`` (8000), N = ``CELLWAR_NATS_PORT`` (4222), E, S, M = the ports of
``CELLWAR_ENGINE_ADDR`` (50051), ``CELLWAR_SESSION_ADDR`` (50052),
``CELLWAR_MATCHMAKER_ADDR`` (50053); B = the port of ``CELLWAR_BOTS_ADDR``, the bot runner
(docs/bot-seats.md; unset: M + 1, 50054).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass

#: Offset of the NATS cluster route ports from the NATS base (ports).
NATS_ROUTE_OFFSET = 10
#: Offset of the NATS monitoring (HTTP) ports from the NATS base (ports).
NATS_MONITOR_OFFSET = 20
#: Distance between two instances of one gRPC service (ports), so that engine, session
#: and matchmaker bases one apart (50051, 50052, 50053) interleave without colliding.
GRPC_STRIDE = 10

#: Instances of each role in ``make run-cluster`` (docs/hosting.md "A cluster on one machine").
CLUSTER_SIZE: dict[str, int] = {"nats": 3, "engine": 2, "session": 2, "gateway": 2, "matchmaker": 2, "bots": 2}

#: Most instances of one role (``--scale``): the gRPC stride and the NATS offsets leave
#: room for this many.
MAX_INSTANCES = 9

#: Default matchmaker address, until the matchmaker's setting exists.
DEFAULT_MATCHMAKER_ADDR = "127.0.0.1:50053"


def split_addr(addr: str) -> tuple[str, int]:
    """``"host:port"`` → ``(host, port)``.

    Raises:
        ValueError: no port, or a port that is not a number in 1..65535.
    """
    host, sep, port_text = addr.rpartition(":")
    if not sep or not host:
        raise ValueError(f"{addr!r} is not host:port")
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"the port of {addr!r} is not a number") from None
    if not 0 < port < 65536:
        raise ValueError(f"the port of {addr!r} is not in 1..65535")
    return host, port


def _named(name: str, value: object, read):
    """``read(value)``, its ValueError said with the variable it came from."""
    try:
        return read(value)
    except ValueError as exc:
        raise ValueError(f"{name}={value!r}: {exc}") from None


def _port(value: object) -> int:
    """A base port (1..65535). Raises ValueError."""
    try:
        port = int(str(value))
    except ValueError:
        raise ValueError("not a port number") from None
    if not 0 < port < 65536:
        raise ValueError("a port is in 1..65535")
    return port


@dataclass(frozen=True)
class Bases:
    """The base of every role (see the module docstring).

    Attributes:
        http_host: where the gateway (``make run``) or nginx (cluster) listens.
        http: H, the HTTP port people open.
        nats: N, the first NATS client port.
        engine / session / matchmaker: ``(host, port)`` of instance 1 of each gRPC service.
        bots: ``(host, port)`` of bot runner 1 (HTTP, internal; docs/bot-seats.md); None:
            next to the matchmaker (its port + 1).
    """

    http_host: str = "127.0.0.1"
    http: int = 8000
    nats: int = 4222
    engine: tuple[str, int] = ("127.0.0.1", 50051)
    session: tuple[str, int] = ("127.0.0.1", 50052)
    matchmaker: tuple[str, int] = ("127.0.0.1", 50053)
    bots: tuple[str, int] | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str], settings=None) -> Bases:
        """The bases of ``settings`` (services/common/settings.py) and ``env``.

        ``CELLWAR_NATS_PORT`` and ``CELLWAR_MATCHMAKER_ADDR`` are read from ``env`` (the
        runner's own variables); the rest from ``settings`` when given, else from ``env``.

        Raises:
            ValueError: a port that is not a number in 1..65535, or an address that is
                not ``host:port``, naming its variable.
        """
        if settings is not None:
            http_host, http = settings.http_host, settings.http_port
            engine, session = settings.engine_addr, settings.session_addr
        else:
            http_host = env.get("CELLWAR_HTTP_HOST", cls.http_host)
            http = env.get("CELLWAR_HTTP_PORT", cls.http)
            engine = env.get("CELLWAR_ENGINE_ADDR", "127.0.0.1:50051")
            session = env.get("CELLWAR_SESSION_ADDR", "127.0.0.1:50052")
        matchmaker = getattr(settings, "matchmaker_addr", None) or env.get(
            "CELLWAR_MATCHMAKER_ADDR", DEFAULT_MATCHMAKER_ADDR
        )
        # The bot runner: CELLWAR_BOTS_ADDR when set, else next to the matchmaker (M + 1).
        bots = env.get("CELLWAR_BOTS_ADDR") or (
            settings.bots_addr if settings is not None and "bots_addr" in settings.model_fields_set else None
        )
        return cls(
            http_host=http_host,
            http=_named("CELLWAR_HTTP_PORT", http, _port),
            nats=_named("CELLWAR_NATS_PORT", env.get("CELLWAR_NATS_PORT", cls.nats), _port),
            engine=_named("CELLWAR_ENGINE_ADDR", engine.split(",")[0], split_addr),
            session=_named("CELLWAR_SESSION_ADDR", session.split(",")[0], split_addr),
            matchmaker=_named("CELLWAR_MATCHMAKER_ADDR", matchmaker.split(",")[0], split_addr),
            bots=_named("CELLWAR_BOTS_ADDR", bots.split(",")[0], split_addr) if bots else None,
        )

    # -- instance k of each role (k from 1)

    def gateway_port(self, k: int, *, cluster: bool) -> int:
        """HTTP port of gateway ``k``: H in ``make run``, H + k behind nginx."""
        return self.http + k if cluster else self.http

    def nats_port(self, k: int) -> int:
        """Client port of nats-``k``."""
        return self.nats + k - 1

    def nats_route_port(self, k: int) -> int:
        """Cluster route port of nats-``k``."""
        return self.nats + NATS_ROUTE_OFFSET + k - 1

    def nats_monitor_port(self, k: int) -> int:
        """Monitoring (HTTP, ``/healthz``) port of nats-``k``."""
        return self.nats + NATS_MONITOR_OFFSET + k - 1

    def grpc_addr(self, role: str, k: int) -> str:
        """``host:port`` of instance ``k`` of ``role`` (``engine``, ``session``,
        ``matchmaker``, ``bots``).

        Raises:
            KeyError: an unknown role.
        """
        bots = self.bots or (self.matchmaker[0], self.matchmaker[1] + 1)
        host, port = {
            "engine": self.engine, "session": self.session, "matchmaker": self.matchmaker, "bots": bots
        }[role]
        return f"{host}:{port + GRPC_STRIDE * (k - 1)}"

    def cluster_ports(
        self, *, matchmaker: bool, sizes: Mapping[str, int] = CLUSTER_SIZE, bots: bool = False
    ) -> list[tuple[str, str, int]]:
        """``(what, host, port)`` of every port ``make run-cluster`` listens on
        (``sizes``: instances per role; ``bots``: the bot runners too)."""
        out: list[tuple[str, str, int]] = [("nginx", self.http_host, self.http)]
        for k in range(1, sizes["gateway"] + 1):
            out.append((f"gateway-{k}", "127.0.0.1", self.gateway_port(k, cluster=True)))
        for k in range(1, sizes["nats"] + 1):
            out.append((f"nats-{k}", "127.0.0.1", self.nats_port(k)))
            out.append((f"nats-{k} routes", "127.0.0.1", self.nats_route_port(k)))
            out.append((f"nats-{k} monitoring", "127.0.0.1", self.nats_monitor_port(k)))
        roles = ["engine", "session"] + (["matchmaker"] if matchmaker else []) + (["bots"] if bots else [])
        for role in roles:
            for k in range(1, sizes.get(role, 1) + 1):
                host, port = split_addr(self.grpc_addr(role, k))
                out.append((f"{role}-{k}", host, port))
        return out

    def single_ports(self, *, nats: bool, matchmaker: bool, bots: bool = False) -> list[tuple[str, str, int]]:
        """``(what, host, port)`` of every port ``make run`` listens on (``nats``: it
        starts its own NATS; ``bots``: the bot runner)."""
        out: list[tuple[str, str, int]] = [("gateway", self.http_host, self.http)]
        if nats:
            out.append(("nats", "127.0.0.1", self.nats))
        roles = ["engine", "session"] + (["matchmaker"] if matchmaker else []) + (["bots"] if bots else [])
        out.extend((role, *split_addr(self.grpc_addr(role, 1))) for role in roles)
        return out


def parse_scale(items: list[str]) -> dict[str, int]:
    """Instances per role: :data:`CLUSTER_SIZE` with ``role=n`` items applied
    (``["session=1"]``).

    Raises:
        ValueError: an unknown role, NATS (always 3), or n outside 1..MAX_INSTANCES.
    """
    sizes = dict(CLUSTER_SIZE)
    for item in items:
        role, sep, count = item.partition("=")
        if not sep or role not in sizes or role == "nats":
            raise ValueError(f"--scale {item!r}: expected ROLE=N with ROLE one of engine, session, gateway, matchmaker, bots")
        n = int(count)
        if not 1 <= n <= MAX_INSTANCES:
            raise ValueError(f"--scale {item!r}: N must be 1..{MAX_INSTANCES}")
        sizes[role] = n
    return sizes


def port_free(host: str, port: int) -> bool:
    """Nothing listens on ``host:port``. A socket in TIME_WAIT after a stop does not
    count (SO_REUSEADDR, as the servers themselves bind)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def out_of_range(ports: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """The entries of ``ports`` past 65535 (a base too high for the ports derived from it)."""
    return [entry for entry in ports if not 0 < entry[2] < 65536]


def overlapping(ports: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """Pairs of entries of ``ports`` that would listen on one port (bases chosen too
    close: NATS takes its base + 0..2, + 10..12 and + 20..22 in a cluster), as
    ``(first, second, port)`` names. Hosts are not compared: two roles on one port of
    two loopback addresses is still a mistake here."""
    seen: dict[int, str] = {}
    out = []
    for what, _host, port in ports:
        if port in seen:
            out.append((seen[port], what, port))
        else:
            seen[port] = what
    return out


def taken(ports: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """The entries of ``ports`` whose port is in use now."""
    return [entry for entry in ports if not port_free(entry[1], entry[2])]
