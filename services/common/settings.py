"""One settings class for every CellWar process: environment variables ``CELLWAR_*``."""

from __future__ import annotations

import difflib
import ipaddress
import os
import sys
from functools import lru_cache
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

#: Largest replica count of a JetStream stream (NATS refuses more: "maximum replicas is 5").
MAX_REPLICAS = 5

#: URL schemes nats-py connects with as installed (``ws``/``wss`` would need aiohttp).
NATS_SCHEMES = ("nats", "tls")


def nats_server_url(url: str) -> str:
    """Check one NATS server URL (``nats://host:port``; ``host`` or ``host:port`` alone
    mean ``nats://``, as nats-py reads them).

    Raises:
        ValueError: another scheme, no host, or a port outside 1..65535 (said in words,
            without the URL).
    """
    full = url if "://" in url else f"nats://{url}"
    parts = urlsplit(full)
    if parts.scheme not in NATS_SCHEMES:
        raise ValueError(f"the scheme must be one of {', '.join(NATS_SCHEMES)}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("the port must be a number in 1..65535") from None
    if not parts.hostname:
        raise ValueError("no host")
    if port is not None and not 1 <= port <= 65535:
        raise ValueError("the port must be a number in 1..65535")
    return url


def grpc_addresses(value: str) -> list[str]:
    """The ``host:port`` addresses of a gRPC address setting: one, or several comma
    separated, or gRPC's ``ipv4:a,b`` / ``ipv6:`` list (what ``make run-cluster`` gives a
    gateway); a target with a scheme (``dns:///…``, ``unix:…``) is taken as it is.

    Raises:
        ValueError: no address, an address without ``host:port``, or a port outside
            0..65535 (0: any free port, for a server).
    """
    text = value.strip()
    if "://" in text or text.startswith("unix:"):
        return [text]
    for prefix in ("ipv4:", "ipv6:"):
        text = text.removeprefix(prefix)
    addrs = [a.strip() for a in text.split(",") if a.strip()]
    if not addrs:
        raise ValueError("no address given (host:port)")
    for addr in addrs:
        host, sep, port = addr.rpartition(":")
        if not sep or not host or not port.isdigit() or int(port) > 65535:
            where = f"{addr!r} is" if len(addrs) > 1 else "it is"
            raise ValueError(f"{where} not host:port with a port in 0..65535")
    return addrs


class Settings(BaseSettings):
    """Configuration read from ``CELLWAR_*`` environment variables (and a ``.env`` file).

    Attributes:
        nats_url: NATS server URL (``CELLWAR_NATS_URL``; several servers of a cluster
            comma separated).
        engine_addr: host:port of the engine gRPC service; the session takes several,
            comma separated, and spreads its calls over them (replicas).
        session_addr: host:port of the session gRPC service.
        http_host / http_port: where the gateway listens.
        secret: HMAC key that signs player tokens. Unset (``None``): a random one is
            generated once in ``<data_dir>/secret`` (mode 0600) and shared by every
            gateway on that folder; a known public default is refused at start
            (services/common/signing_key.py).
        log_format: ``json`` (services) or ``console`` (people).
        log_level: ``debug``, ``info``, ``warning``, ``error``.
        generations_per_second: base Life tick rate (8), times the speed multiplier.
        instance_id: name of this session instance in the lease bucket.
        lease_ttl_s: seconds a ticking lease lives without renewal (seconds).
        data_dir: where the local runner keeps NATS data.
        web_dir: folder of the browser client served at ``/`` (empty: the packaged one).
        tick_interval_s: longest pause between two ticks of the session's ticker (seconds);
            shorter when the rate is high, so one batch stays around 8..64 generations.
        snapshot_every: the session keeps a snapshot of a game as history (replays
            fold from the nearest) at least every this many events (100); its latest
            snapshot also after each turn and at every change of phase or turn.
        checkpoint_s: a running game's generations are recorded at least every this
            much running time (seconds; 8): a session that dies loses at most that much
            of a running game. Shorter costs engine CPU per hosted game (a record and the
            stability digests of the 15 boards before it, docs/architecture/ticking.md).
        stream_replicas: replicas of the GAME_EVENTS stream and the KV buckets (1 locally,
            3 in a cluster).
        engine_timeout_s: deadline of one call to the engine service (seconds).
        engine_decide: how the session sends Decide (every command) to an engine replica:
            ``stream`` over one ``Engine.Decides`` stream per replica, ``unary`` one
            unary call each (docs/architecture/batching.md).
        engine_kernel: the Life kernel of the engine's slot pools (running hard-edged Life
            games): ``native`` (engine/life/_native.c, when the install built it; else the
            numpy circuits, logged at start) or ``numpy`` (the same rule as numpy calls,
            engine/life/bitplan.py; slower).
        shutdown_grace_s: seconds a stopping gRPC server lets running calls finish.
        event_loop: the event loop of the engine, session and matchmaker processes:
            ``auto`` (uvloop when installed), ``uvloop`` or ``asyncio``
            (services/common/loop.py; the gateway's loop is uvicorn's choice, the same).
        max_body_bytes: largest HTTP request body the gateway accepts (bytes; larger →
            413 ``PAYLOAD_TOO_LARGE``; 0 = no limit).
        rate_limit_per_s / rate_limit_burst: the gateway's token bucket for POST requests,
            per player token (else per client IP): refill rate (requests/s) and size;
            0 in either disables the limit.
        matchmaker_addr: host:port of the matchmaker gRPC service.
        matchmaker_interval_s: pause between two matching steps (seconds).
        ticket_ttl_s: a matchmaking ticket expires after searching this long (seconds; 5
            minutes).
        match_claim_timeout_s: a match claimed this long ago (seconds) by an instance
            that has not finished forming it is rolled forward or back by any instance.
        matchmaker_concurrency: matches one matchmaker instance forms at once.
        presence_ttl_s: a session instance renews the presence of the players it streams
            to every third of this; a presence not renewed for this long is gone (seconds).
        waiting_game_ttl_s: a game whose seats stay open this long expires (seconds).
        abandoned_after_s: the lobby leaves out a started, unfinished game whose last
            event is older than this (seconds; such a game is abandoned: docs/abandoned-games.md).
        game_idle_s: a loaded game unused this long (no stream, no lease) leaves the
            session's cache (seconds).
        nats_connect_timeout_s: how long a starting session keeps retrying NATS (a cluster
            still forming) before it gives up (seconds).
        nats_ping_interval_s / nats_max_outstanding_pings: a service pings its NATS
            server every this many seconds and leaves a server that lets this many pings
            go unanswered (a hung node is dropped within about 8 s; docs/faults.md).
        nats_randomize: connect to the servers of ``nats_url`` in a shuffled order, so
            the connections spread over a cluster's nodes (False: in the order given).
        session_failover_s: the gateway sends a call to another session instance when
            the one it asked has not answered within this many seconds and does not
            answer a health check either (a paused instance; docs/faults.md; 0 = never).
        session_commands: how the gateway sends Act / EndTurn (REST actions and stream
            command frames) and its Watches: ``stream`` over one ``Session.Commands`` and
            one ``Session.Watches`` stream per session channel, ``unary`` one call each
            (docs/architecture/batching.md).
        token_max_age_s: player tokens older than this (seconds since issue) are refused
            with 401 ``TOKEN_EXPIRED`` (default 7 days; ``POST /game/{id}/token`` renews).
        trusted_proxies: comma list of addresses/CIDRs whose ``X-Forwarded-For`` /
            ``X-Forwarded-Proto`` the gateway believes (the rightmost address not in the
            list is the client); empty = none, the socket peer is the client.
        create_limit_per_min: game and profile creates per client address per minute
            (a moving 60 s window; 0 = no limit).
        join_limit_per_min: joins per client address per minute (0 = no limit).
        read_limit_per_s / read_limit_burst: the token bucket per client address of the
            expensive reads (``/replay``, ``/events``): refill rate and size (0 = off).
        read_concurrency: expensive reads running at once in one gateway process; one
            more is answered 503 ``BUSY`` with ``Retry-After`` (0 = no bound).
        read_global_per_s: expensive reads per second in one gateway process, from all
            clients together (beyond: 503 ``BUSY``; 0 = no bound).
        metrics_token: bearer token that lets a client read the gateway's ``/metrics``;
            without it only loopback clients may (players must not read the totals).
        shared_limits: keep the create and join windows in the NATS KV bucket
            ``cellwar-limits`` (at ``nats_url``), so they hold for all gateways together
            (docs/security.md); off: each gateway process counts alone.
        ws_max_message_bytes: largest message a client may send on a WebSocket (bytes;
            larger: not read, the game stream answers a 413 error frame; 0 = no limit).
        ws_messages_per_s / ws_message_burst: inbound messages per WebSocket, a token
            bucket (refill per second, size); an empty bucket closes the socket with 1008
            (0 in either = no limit). A player's command frames take from its
            ``rate_limit_per_s`` bucket instead (docs/api/websocket.md).
        ws_max_per_address: WebSockets open at once per client address in one gateway
            (one more is refused with 429 ``RATE_LIMITED``; 0 = no cap).
        ws_deflate_level: the zlib level of the gateway's WebSocket compression
            (permessage-deflate, RFC 7692; 1 = fastest, 9 = smallest frames, 0 = not
            offered; gateway/ws_protocol.py, docs/hosting.md).
        http_keep_alive_s: the gateway closes an idle keep-alive connection after this
            long (seconds; nginx's upstream keep-alive is shorter, deploy/nginx.conf).
        body_read_timeout_s: a request whose body has not fully arrived this long after
            the request began is answered 408 ``REQUEST_TIMEOUT`` (seconds; 0 = none).
        bots_addr: host:port where the bot runner (``python -m client.seats``) listens
            (internal; docs/bot-seats.md).
        bots_url: the bot runner the gateway forwards ``POST /game/{id}/bots`` to
            (``http://host:port``); empty: no runner, answered 503 ``UNAVAILABLE``.
        bots_api_url: the public API the bot runner plays through (empty: the gateway
            at ``http_host:http_port``).
        bots_max_seats: bot seats one runner plays at once (one more: 429
            ``BOT_SEATS_FULL``).
        bots_llm_url / bots_llm_model: the chat model server of the ``llm`` policy
            (OpenAI-compatible ``…/v1`` or Ollama; empty URL: ``llm`` is refused with 409
            ``BOT_POLICY_UNAVAILABLE``).
    """

    model_config = SettingsConfigDict(
        env_prefix="CELLWAR_", env_file=".env", extra="ignore", allow_inf_nan=False
    )

    nats_url: str = "nats://127.0.0.1:4222"
    engine_addr: str = "127.0.0.1:50051"
    session_addr: str = "127.0.0.1:50052"
    http_host: str = "127.0.0.1"
    http_port: int = Field(8000, ge=0, le=65535)
    secret: str | None = None
    log_format: Literal["json", "console"] = "json"
    log_level: Literal["debug", "info", "warning", "error", "critical"] = "info"
    generations_per_second: float = Field(8.0, gt=0)
    instance_id: str = "session-1"
    lease_ttl_s: float = Field(10.0, gt=0)
    data_dir: str = ".data"
    web_dir: str = ""
    tick_interval_s: float = Field(0.125, gt=0)
    snapshot_every: int = Field(100, gt=0)
    checkpoint_s: float = Field(8.0, gt=0)
    stream_replicas: int = Field(1, ge=1, le=MAX_REPLICAS)
    engine_timeout_s: float = Field(30.0, gt=0)
    engine_decide: Literal["stream", "unary"] = "stream"
    engine_kernel: Literal["native", "numpy"] = "native"
    shutdown_grace_s: float = Field(5.0, ge=0)
    event_loop: Literal["auto", "uvloop", "asyncio"] = "auto"
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=0)
    rate_limit_per_s: float = Field(50.0, ge=0)
    rate_limit_burst: int = Field(100, ge=0)
    # Matchmaker
    matchmaker_addr: str = "127.0.0.1:50053"
    matchmaker_interval_s: float = Field(0.1, gt=0)
    ticket_ttl_s: float = Field(300.0, gt=0)
    match_claim_timeout_s: float = Field(10.0, gt=0)
    matchmaker_concurrency: int = Field(32, ge=1)
    presence_ttl_s: float = Field(10.0, gt=0)
    waiting_game_ttl_s: float = Field(3600.0, gt=0)
    abandoned_after_s: float = Field(900.0, gt=0)
    game_idle_s: float = Field(600.0, gt=0)
    nats_connect_timeout_s: float = Field(120.0, gt=0)
    nats_ping_interval_s: float = Field(2.0, gt=0, le=120)
    nats_max_outstanding_pings: int = Field(3, ge=1, le=100)
    nats_randomize: bool = True
    session_failover_s: float = Field(1.0, ge=0)
    session_commands: Literal["stream", "unary"] = "stream"
    token_max_age_s: float = Field(7 * 24 * 3600.0, gt=0)
    trusted_proxies: str = ""
    create_limit_per_min: int = Field(30, ge=0)
    join_limit_per_min: int = Field(60, ge=0)
    read_limit_per_s: float = Field(10.0, ge=0)
    read_limit_burst: int = Field(60, ge=0)
    read_concurrency: int = Field(2, ge=0)
    read_global_per_s: float = Field(40.0, ge=0)
    metrics_token: str = ""
    shared_limits: bool = False
    ws_max_message_bytes: int = Field(4096, ge=0)
    ws_messages_per_s: float = Field(5.0, ge=0)
    ws_message_burst: int = Field(20, ge=0)
    ws_max_per_address: int = Field(64, ge=0)
    ws_deflate_level: int = Field(1, ge=0, le=9)
    http_keep_alive_s: float = Field(20.0, gt=0)
    body_read_timeout_s: float = Field(30.0, ge=0)
    # Bot seats (docs/bot-seats.md)
    bots_addr: str = "127.0.0.1:50054"
    bots_url: str = ""
    bots_api_url: str = ""
    bots_max_seats: int = Field(8, ge=1, le=1000)
    bots_llm_url: str = ""
    bots_llm_model: str = "smollm2"

    @field_validator("log_format", "log_level", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("nats_url")
    @classmethod
    def _nats_urls(cls, value: str) -> str:
        servers = [u.strip() for u in value.split(",") if u.strip()]
        if not servers:
            raise ValueError("no NATS server given")
        for url in servers:
            try:
                nats_server_url(url)
            except ValueError as exc:
                raise ValueError(f"{url!r}: {exc}" if len(servers) > 1 else str(exc)) from None
        return value

    @field_validator("engine_addr", "session_addr", "matchmaker_addr")
    @classmethod
    def _grpc_addresses(cls, value: str) -> str:
        grpc_addresses(value)
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, value: str) -> str:
        for item in (p.strip() for p in value.split(",")):
            if item and item != "*":
                try:
                    ipaddress.ip_network(item, strict=False)
                except ValueError:
                    raise ValueError(
                        f"{item!r} is not an IP address or network (CIDR), nor '*'"
                    ) from None
        return value



#: ``CELLWAR_*`` variables read by programs other than the services (the runner, nginx's
#: wrapper, the image builder, the CLI, the test suite): known, so never warned about.
OTHER_VARIABLES = frozenset({
    "CELLWAR_BASE_IMAGE", "CELLWAR_BROWSER_BASE_URL", "CELLWAR_CHROMIUM", "CELLWAR_DEBIAN_MIRROR",
    "CELLWAR_DOC_SCREENSHOTS", "CELLWAR_NATS_PORT", "CELLWAR_NGINX_GATEWAYS", "CELLWAR_NGINX_IP",
    "CELLWAR_NGINX_LISTEN", "CELLWAR_NGINX_RUN_DIR", "CELLWAR_NGINX_WAIT_S", "CELLWAR_NGINX_WORKERS",
    "CELLWAR_SUBNET", "CELLWAR_TEST_NATS", "CELLWAR_TEST_NATS_URL", "CELLWAR_URL",
})


def known_variables() -> frozenset[str]:
    """Every ``CELLWAR_*`` name some CellWar program reads: the :class:`Settings` fields and
    :data:`OTHER_VARIABLES`."""
    return frozenset("CELLWAR_" + name.upper() for name in Settings.model_fields) | OTHER_VARIABLES


def unknown_variables(environ: dict[str, str] | os._Environ[str] | None = None) -> list[str]:
    """One warning per ``CELLWAR_*`` variable of ``environ`` (default ``os.environ``) that no
    program reads, with the closest known name: ``CELLWAR_HTTP_PROT is not a CellWar setting
    (ignored); did you mean CELLWAR_HTTP_PORT?``. pydantic-settings ignores such a variable
    silently (``extra="ignore"``), so a typo would otherwise change nothing unseen."""
    known = known_variables()
    env = os.environ if environ is None else environ
    lines = []
    for name in sorted(n for n in env if n.upper().startswith("CELLWAR_") and n.upper() not in known):
        close = difflib.get_close_matches(name.upper(), sorted(known), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        lines.append(f"{name} is not a CellWar setting (ignored){hint}")
    return lines


class SettingsError(ValueError):
    """Settings refused, one line per variable: ``CELLWAR_EVENT_LOOP='uv-loop': Input
    should be 'auto', 'uvloop' or 'asyncio'``."""


def describe(exc: ValidationError) -> str:
    """The errors of a refused :class:`Settings` by the variables a person sets."""
    lines = []
    for err in exc.errors():
        name = "CELLWAR_" + "_".join(str(part) for part in err["loc"]).upper()
        given = f"={err['input']!r}" if not isinstance(err.get("input"), dict) else ""
        lines.append(f"{name}{given}: {err['msg'].removeprefix('Value error, ')}")
    return "; ".join(lines)


def load_settings() -> Settings:
    """The settings of the environment now.

    Raises:
        SettingsError: a ``CELLWAR_*`` variable has a value the settings refuse (named).
    """
    for line in unknown_variables():
        sys.stderr.write(f"warning: {line}\n")
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingsError(describe(exc)) from None


def settings_or_exit(program: str) -> Settings:
    """:func:`get_settings`, or one line ``PROGRAM: CELLWAR_X='…': why`` on standard error
    and exit 2: what a service's entry point calls first, before anything starts.

    Raises:
        SystemExit: 2, when a ``CELLWAR_*`` variable is refused.
    """
    try:
        return get_settings()
    except SettingsError as exc:
        sys.stderr.write(f"{program}: {exc}\n")
        raise SystemExit(2) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (read once, :func:`load_settings`)."""
    return load_settings()
