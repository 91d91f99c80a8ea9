"""Request limits of the gateway, as ASGI middlewares: body size, rates, costly reads.

:class:`BodySizeLimit` answers 413 ``PAYLOAD_TOO_LARGE`` for a body above
``max_body_bytes`` without reading it: a ``Content-Length`` above the limit is refused
before the app runs; a body without one (chunked) is counted while the app reads it and
the read fails with the 413 as soon as the count passes the limit.

:class:`RateLimit` sorts each request into one class (:func:`request_class`):

=========  ==========================================  =====================================
class      requests                                    limit (per gateway process)
=========  ==========================================  =====================================
create     ``POST /game/create``, ``/profiles``,       ``create_limit_per_min`` per client
           ``/matchmaking/tickets``, ``/games/import``,  address and path (all forks: one
           ``/game/{id}/fork`` (they make games)       path) in any 60 s (moving window)
join       ``POST /game/{id}/join``                    ``join_limit_per_min`` per address
command    every other ``POST``                        token bucket per player token, else
                                                       per address
read       ``GET /game/{id}/replay``, ``/events``      token bucket per address, at most
                                                       ``read_global_per_s`` a second and
                                                       ``read_concurrency`` at once in all
=========  ==========================================  =====================================

With ``CELLWAR_SHARED_LIMITS=1`` the create and join windows are also kept in NATS KV
(gateway/shared_limits.py), so they hold for every gateway of the deployment together.
Creates and joins also take a token from the address's command bucket. A create or a
join is keyed by the client address even when it carries a valid player token: a token
of one's own game never buys more creates. The client address is the socket peer, or,
when the peer is a trusted proxy (``CELLWAR_TRUSTED_PROXIES``, applied before this
middleware by uvicorn's ``ProxyHeadersMiddleware``), the rightmost address of
``X-Forwarded-For`` that is not a trusted proxy; an IPv6 client counts by its /64.

A refused request is answered 429 ``RATE_LIMITED`` with ``Retry-After`` (whole seconds,
from the client's own window or bucket only; for costly reads stretched by a random
factor up to 2, so a herd of refused clients comes back spread out), or, when the costly
reads are all busy, 503 ``BUSY`` with ``Retry-After`` 1..3 s (random: it says nothing
about who else reads).
A small in-process limiter rather than the ``limits`` library: ``limits`` has no
refilling bucket with a burst, and slowapi wants a decorator and a ``Request`` parameter
on every route.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import json
import math
import random
import re
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import structlog
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.errors import Code, error_body
from gateway.tokens import TokenSigner

_log = structlog.get_logger("gateway.limits")


class PayloadTooLarge(HTTPException):
    """A request body above the limit (413); FastAPI passes an ``HTTPException`` raised
    while reading the body through to the error handlers unchanged."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"the request body is larger than {max_bytes} bytes")


class BodySizeLimit:
    """ASGI middleware: 413 ``PAYLOAD_TOO_LARGE`` for an HTTP body above ``max_bytes``.

    Args:
        app: the wrapped ASGI app.
        max_bytes: the largest body accepted; 0 = no limit.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a declared length above the limit at once; count a streamed body."""
        if scope["type"] != "http" or self.max_bytes <= 0:
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > self.max_bytes:
            response = JSONResponse(
                error_body(Code.PAYLOAD_TOO_LARGE, PayloadTooLarge(self.max_bytes).detail),
                status_code=413,
                headers={"Connection": "close"},
            )
            await response(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise PayloadTooLarge(self.max_bytes)
            return message

        await self.app(scope, counted, send)


class TokenBuckets:
    """Token buckets by key: ``rate`` tokens/s refill up to ``burst``; one request takes one.

    Args:
        rate: refill rate, tokens per second (> 0).
        burst: bucket size (>= 1).
        clock: monotonic seconds (tests pass a fake one).
        max_keys: when more keys than this are held, full buckets are forgotten (a full
            bucket is the same as a new one), so memory stays bounded.
        max_debt_s: a refused request still takes its token, down to ``max_debt_s``
            seconds of refill below empty (0 = refusals cost nothing): a client that keeps
            asking while refused is told to wait longer (``Retry-After`` grows with its
            own flood, up to ``max_debt_s``), so a herd of clients that obey Retry-After
            thins out instead of coming back every second.
    """

    def __init__(
        self,
        rate: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 100_000,
        max_debt_s: float = 0.0,
    ) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.clock = clock
        self.max_keys = max_keys
        self.floor = -max_debt_s * rate
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)

    def take(self, key: str) -> float:
        """Take a token for ``key``: 0.0 when granted, else the seconds until one is due."""
        now = self.clock()
        tokens, at = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            if len(self._buckets) > self.max_keys:
                self._prune(now)
            return 0.0
        if self.floor < 0:
            tokens = max(self.floor, tokens - 1.0)
        self._buckets[key] = (tokens, now)
        return (1.0 - tokens) / self.rate

    def charge(self, key: str, tokens: float) -> None:
        """Take ``tokens`` more from ``key``'s bucket (down to the debt floor, or to empty
        without one), e.g. for a request refused for another reason after it was let in."""
        now = self.clock()
        have, at = self._buckets.get(key, (self.burst, now))
        have = min(self.burst, have + (now - at) * self.rate)
        self._buckets[key] = (max(min(self.floor, 0.0), have - tokens), now)

    def _prune(self, now: float) -> None:
        full = [
            k for k, (tokens, at) in self._buckets.items()
            if tokens + (now - at) * self.rate >= self.burst
        ]
        for k in full:
            del self._buckets[k]


class MovingWindow:
    """At most ``limit`` hits per key in any ``window_s`` seconds (a sliding log).

    Args:
        limit: hits allowed per window (>= 1).
        window_s: window length (seconds).
        clock: monotonic seconds (tests pass a fake one).
        max_keys: above this many keys, keys whose hits have all left the window are
            forgotten, so memory stays bounded (at most ``limit`` floats per key).
    """

    def __init__(
        self,
        limit: int,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 100_000,
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.max_keys = max_keys
        self._hits: dict[str, deque[float]] = {}

    def wait(self, key: str) -> float:
        """0.0 when ``key`` may hit now, else the seconds until its oldest hit leaves the
        window. Records nothing."""
        hits = self._hits.get(key)
        if hits is None:
            return 0.0
        now = self.clock()
        while hits and hits[0] <= now - self.window_s:
            hits.popleft()
        if len(hits) < self.limit:
            return 0.0
        return hits[0] + self.window_s - now

    def hit(self, key: str) -> None:
        """Record a hit of ``key`` now (after :meth:`wait` said 0)."""
        self._hits.setdefault(key, deque()).append(self.clock())
        if len(self._hits) > self.max_keys:
            horizon = self.clock() - self.window_s
            for stale in [k for k, h in self._hits.items() if not h or h[-1] <= horizon]:
                del self._hits[stale]


class ConcurrencyLimit:
    """At most ``limit`` holders at once; up to ``max_waiting`` more wait at most
    ``max_wait_s`` for a slot, anyone beyond is refused at once (never an unbounded
    queue).

    Args:
        limit: slots (>= 1).
        max_waiting: requests allowed to wait for a slot.
        max_wait_s: longest wait for a slot (seconds).
    """

    def __init__(self, limit: int, max_waiting: int, max_wait_s: float) -> None:
        self.limit = limit
        self.max_waiting = max_waiting
        self.max_wait_s = max_wait_s
        self._slots = asyncio.Semaphore(limit)
        self.waiting = 0

    async def acquire(self) -> bool:
        """Take a slot: True when taken (call :meth:`release` later), False when refused."""
        if not self._slots.locked():
            await self._slots.acquire()
            return True
        if self.waiting >= self.max_waiting:
            return False
        self.waiting += 1
        try:
            await asyncio.wait_for(self._slots.acquire(), self.max_wait_s)
        except TimeoutError:
            return False
        finally:
            self.waiting -= 1
        return True

    def release(self) -> None:
        """Give a slot back."""
        self._slots.release()


#: POSTs that create something that lasts (a game, a profile, a ticket that makes a game;
#: an imported log and a fork make games too).
CREATE_PATHS = frozenset({"/game/create", "/profiles", "/matchmaking/tickets", "/games/import"})
_FORK_PATH = re.compile(r"^/game/[^/]+/fork/?$")
#: Request classes of :func:`request_class`.
CREATE, JOIN, COMMAND, READ = "create", "join", "command", "read"
_JOIN_PATH = re.compile(r"^/game/[^/]+/join/?$")
_READ_PATH = re.compile(r"^/game/[^/]+/(?:replay|events)/?$")


def request_class(method: str, path: str) -> str | None:
    """The limit class of a request (see the module table); None when not limited."""
    if method == "POST":
        if path in CREATE_PATHS or _FORK_PATH.match(path):
            return CREATE
        if _JOIN_PATH.match(path):
            return JOIN
        return COMMAND
    if method in ("GET", "HEAD") and _READ_PATH.match(path):
        return READ
    return None


def create_path(path: str) -> str:
    """The path a create's window counts under: every fork counts as one path."""
    return "/game/{id}/fork" if _FORK_PATH.match(path) else path


def client_address(scope: Scope) -> str:
    """The client's address as limits count it: IPv4 as is, IPv6 as its /64 network
    (one host holds a whole /64), anything else (a unix socket) as given."""
    client = scope.get("client")
    return _address_key(str(client[0]) if client else "unknown")


@functools.lru_cache(maxsize=4096)
def _address_key(host: str) -> str:
    """:func:`client_address` of the peer ``host`` (parsed once per address, not per
    request)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return host


def player_bucket_key(game_id: str, player_id: int) -> str:
    """The command bucket of a seat: one budget for its REST commands and its WebSocket
    command frames (gateway/ws_commands.py)."""
    return f"player:{game_id}:{player_id}"


#: Longest Retry-After of a costly read refused for its address's flood (seconds).
READ_MAX_DEBT_S = 60.0
#: Retry-After of a 503 BUSY (seconds): BUSY_RETRY_AFTER_S plus a random 0 ..
#: BUSY_RETRY_SPREAD_S - 1, so it tells nothing of other readers and a herd of refused
#: clients does not come back in one burst.
BUSY_RETRY_AFTER_S = 1
BUSY_RETRY_SPREAD_S = 3


#: What a refusal by a command bucket says (REST's 429 and the stream's error frame).
TOO_MANY_REQUESTS = "too many requests"


def refusal(wait: float, what: str) -> tuple[int, str]:
    """``(retry after, message)`` of a 429 for ``wait`` seconds: the whole seconds, at
    least 1 (``Retry-After``, an error frame's ``retry_after``), and ``"<what>; retry in
    <n> s"``."""
    after = max(1, math.ceil(wait))
    return after, f"{what}; retry in {after} s"


def command_buckets(rate: float, burst: int) -> TokenBuckets | None:
    """The command buckets of ``rate`` requests/s and ``burst`` (None when either is 0:
    no limit)."""
    return TokenBuckets(rate, burst) if rate > 0 and burst > 0 else None


class RateLimit:
    """ASGI middleware: 429 ``RATE_LIMITED`` (+ ``Retry-After``) when a client's window or
    bucket is empty, 503 ``BUSY`` when the costly reads are all taken (module table).

    Args:
        app: the wrapped ASGI app.
        rate / burst: the command bucket (requests/s, size); 0 in either disables it.
        signer: verifies bearer tokens to key command buckets by player.
        create_per_min / join_per_min: creates / joins per address per minute (0 = off).
        read_rate / read_burst: the costly-read bucket per address (0 = off).
        read_concurrency: costly reads at once (0 = no bound); as many again may wait up
            to :data:`READ_MAX_WAIT_S` for a slot.
        read_global_per_s: costly reads per second of the whole process, whoever asks
            (0 = no bound): what bounds the session's CPU spent on replays when many
            addresses ask at once. Beyond it: 503 ``BUSY``.
        shared: the create and join windows of the whole deployment
            (:class:`gateway.shared_limits.SharedWindows`), checked after this process's
            own; None = this process counts alone.
        buckets: the command buckets to use instead of new ones of ``rate`` / ``burst``
            (the app's ``state.command_buckets``, which the stream's command frames take
            from too).
    """

    #: Longest wait of a costly read for a slot (seconds).
    READ_MAX_WAIT_S = 2.0

    def __init__(
        self,
        app: ASGIApp,
        rate: float,
        burst: int,
        signer: TokenSigner,
        create_per_min: int = 0,
        join_per_min: int = 0,
        read_rate: float = 0.0,
        read_burst: int = 0,
        read_concurrency: int = 0,
        read_global_per_s: float = 0.0,
        shared: Any = None,
        buckets: TokenBuckets | None = None,
    ) -> None:
        self.app = app
        self.signer = signer
        self.shared = shared
        self.buckets = buckets if buckets is not None else command_buckets(rate, burst)
        self.windows = {
            CREATE: MovingWindow(create_per_min) if create_per_min > 0 else None,
            JOIN: MovingWindow(join_per_min) if join_per_min > 0 else None,
        }
        self.read_buckets = (
            TokenBuckets(read_rate, read_burst, max_debt_s=READ_MAX_DEBT_S)
            if read_rate > 0 and read_burst > 0
            else None
        )
        self.reads = (
            ConcurrencyLimit(read_concurrency, read_concurrency, self.READ_MAX_WAIT_S)
            if read_concurrency > 0
            else None
        )
        self.read_rate_all = (
            TokenBuckets(read_global_per_s, max(1, math.ceil(read_global_per_s)))
            if read_global_per_s > 0
            else None
        )

    def client_key(self, scope: Scope) -> str:
        """``player:<game>:<id>`` for a valid bearer token, else ``ip:<client address>``
        (the key of a command's bucket)."""
        auth = _header(scope, b"authorization")
        if auth is not None:
            scheme, _, token = auth.partition(" ")
            player = self.signer.player_of(token.strip()) if scheme.lower() == "bearer" else None
            if player is not None:
                return player_bucket_key(player.game_id, player.player_id)
        return f"ip:{client_address(scope)}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request's class limits, then pass it on (or answer 429/503)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        kind = request_class(scope.get("method", ""), scope.get("path", ""))
        if kind is None:
            await self.app(scope, receive, send)
            return
        if kind == READ:
            await self._read(scope, receive, send)
            return
        address_key = f"ip:{client_address(scope)}"
        window = self.windows.get(kind)
        path = create_path(str(scope.get("path", ""))) if kind == CREATE else ""
        window_key = f"{kind}:{path}:{address_key}"
        if window is not None:
            wait = window.wait(window_key)
            if wait > 0:
                await _refuse(scope, receive, send, wait, f"too many {kind}s from this address")
                return
        if self.buckets is not None:
            key = address_key if kind in (CREATE, JOIN) else self.client_key(scope)
            wait = self.buckets.take(key)
            if wait > 0:
                await _refuse(scope, receive, send, wait, TOO_MANY_REQUESTS)
                return
        if window is not None and self.shared is not None:
            wait = await self.shared.hit(window_key, window.limit)
            if wait:  # None: the shared store is out of reach, this process's window holds
                await _refuse(scope, receive, send, wait, f"too many {kind}s from this address")
                return
        if window is not None:
            window.hit(window_key)
        await self.app(scope, receive, send)

    async def _read(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = f"ip:{client_address(scope)}"
        if self.read_buckets is not None:
            wait = self.read_buckets.take(key)
            if wait > 0:
                await _refuse(scope, receive, send, wait, "too many replay/event reads", READ_JITTER)
                return
        if self.read_rate_all is not None and self.read_rate_all.take("all") > 0:
            await self._busy(scope, receive, send, key)
            return
        if self.reads is None:
            await self.app(scope, receive, send)
            return
        if not await self.reads.acquire():
            await self._busy(scope, receive, send, key)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.reads.release()

    async def _busy(self, scope: Scope, receive: Receive, send: Send, key: str) -> None:
        """503 ``BUSY`` with a random 1..3 s ``Retry-After``; the refusal costs the caller a
        whole burst of its own bucket: a client that comes back at once meets its own
        (growing) 429 Retry-After, so a herd thins out."""
        if self.read_buckets is not None:
            self.read_buckets.charge(key, self.read_buckets.burst)
        _mark_limited(scope)
        retry_after = BUSY_RETRY_AFTER_S + _jitter.randrange(BUSY_RETRY_SPREAD_S)
        response = JSONResponse(
            error_body(Code.BUSY, "too many replay/event reads in progress; retry shortly"),
            status_code=503,
            headers={"Retry-After": str(retry_after)},
        )
        await response(scope, receive, send)


def _mark_limited(scope: Scope) -> None:
    """Tell the access log (gateway/observability.py) this answer is a limit's refusal."""
    scope.setdefault("state", {})["limited"] = True


#: Spreads the retries of a herd: the costly reads' Retry-After is stretched by a random
#: factor in [1, 1 + READ_JITTER) (random, so it says nothing about anyone else).
READ_JITTER = 1.0
_jitter = random.Random()


async def _refuse(
    scope: Scope, receive: Receive, send: Send, wait: float, what: str, jitter: float = 0.0
) -> None:
    """Answer 429 ``RATE_LIMITED`` with ``Retry-After`` = ``wait`` (stretched by a random
    factor in [1, 1 + ``jitter``)) rounded up (>= 1 s)."""
    _mark_limited(scope)
    wait *= 1.0 + jitter * _jitter.random()
    after, message = refusal(wait, what)
    response = JSONResponse(
        error_body(Code.RATE_LIMITED, message),
        status_code=429,
        headers={"Retry-After": str(after)},
    )
    await response(scope, receive, send)


def _header(scope: Scope, name: bytes) -> str | None:
    """The first value of header ``name`` (lower-case bytes), decoded as latin-1."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


class RequestTimeout(HTTPException):
    """A request body that did not arrive within the read timeout (408); raised while the
    app reads the body, so it reaches the error handlers like :class:`PayloadTooLarge`."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(
            408,
            f"the request body did not arrive within {timeout_s:g} s",
            headers={"Connection": "close"},
        )


class BodyReadTimeout:
    """ASGI middleware: 408 ``REQUEST_TIMEOUT`` for a body not fully read ``timeout_s``
    seconds after the request began (a body trickled at 10 B/s holds no connection and
    no worker for longer). Once the body is complete, ``receive`` passes through
    untouched (a streaming response still hears the client's disconnect).

    Args:
        app: the wrapped ASGI app.
        timeout_s: seconds from the request's start to its body's last byte; 0 = none.
    """

    def __init__(self, app: ASGIApp, timeout_s: float) -> None:
        self.app = app
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Bound every body read by what is left of the deadline."""
        if scope["type"] != "http" or self.timeout_s <= 0:
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        complete = False

        async def timed() -> Message:
            nonlocal complete
            if complete:
                return await receive()
            left = deadline - loop.time()
            if left <= 0:
                raise RequestTimeout(self.timeout_s)
            try:
                # asyncio.timeout, not wait_for: no task per read, one timer handle
                async with asyncio.timeout(left):
                    message = await receive()
            except TimeoutError:
                raise RequestTimeout(self.timeout_s) from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                complete = True
            return message

        await self.app(scope, timed, send)


#: Close code of a WebSocket closed by a limit (RFC 6455 §7.4.1: policy violation).
WS_POLICY_CLOSE = 1008


#: Scope key of a WebSocket's :class:`WebSocketLimits` credit: a callable that gives the
#: socket's bucket back the token of the message just read (a command frame, which the
#: player's command bucket pays for instead: gateway/ws_commands.py).
WS_CREDIT_KEY = "cellwar.ws_credit"
#: Key of the ``websocket.receive`` message that stands for a message above the size
#: limit (its value: the message's size in bytes; no ``text``, no ``bytes``).
WS_TOO_LARGE_KEY = "cellwar.too_large"


class WebSocketLimits:
    """ASGI middleware: the limits of every WebSocket route (game stream, ticket stream).

    - Inbound messages take a token from the socket's own bucket (``messages_per_s``
      refill, ``burst`` size); a message meeting an empty bucket closes the socket with
      1008 and the reason ``RATE_LIMITED: ...``: a flood is cut after ``burst``. The app
      may give a message's token back (``scope[WS_CREDIT_KEY]()``): the game stream
      does for a player's command frames, which its command bucket pays for, so the
      socket's bucket counts only the other messages (docs/api/websocket.md).
    - A message above ``max_message_bytes`` (within the bucket) is not passed on: the
      app receives ``{"type": "websocket.receive", WS_TOO_LARGE_KEY: size}`` instead
      (no ``text``, no ``bytes``), and the game stream answers it with an error frame
      ``PAYLOAD_TOO_LARGE``; the socket stays open. (uvicorn's ``ws_max_size``,
      gateway/__main__.py, closes a far larger one with 1009 before it is buffered.)
    - At most ``max_per_address`` sockets open at once per client address
      (:func:`client_address`, after the trusted-proxy rewrite); one more is refused
      before the handshake with HTTP 429 ``RATE_LIMITED`` + ``Retry-After`` (servers
      without the ASGI WebSocket denial response: close 1008 before accept, a 403).

    After a limit's close, the app reads ``websocket.disconnect`` (code 1008) and what it
    still sends is dropped. Messages passed to the app (oversized ones too), limit
    closes and refusals are counted in ``metrics`` (gateway/observability.py).

    Args:
        app: the wrapped ASGI app.
        max_message_bytes: largest inbound message (bytes; 0 = no limit).
        messages_per_s / burst: the per-socket bucket (0 in either = no rate limit).
        max_per_address: open sockets per address (0 = no cap).
        metrics: the app's :class:`gateway.observability.Metrics`, or None.
        clock: monotonic seconds (tests pass a fake one).
    """

    def __init__(
        self,
        app: ASGIApp,
        max_message_bytes: int,
        messages_per_s: float,
        burst: int,
        max_per_address: int,
        metrics: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.max_message_bytes = max_message_bytes
        self.rate = messages_per_s if messages_per_s > 0 and burst > 0 else 0.0
        self.burst = float(burst)
        self.max_per_address = max_per_address
        self.metrics = metrics
        self.clock = clock
        self.open: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Count the socket against its address, then police what it sends."""
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        address = client_address(scope)
        if self.max_per_address > 0 and self.open.get(address, 0) >= self.max_per_address:
            await self._refuse(scope, receive, send)
            return
        self.open[address] = self.open.get(address, 0) + 1
        tokens, at = self.burst, self.clock()
        closed = False

        def credit() -> None:
            nonlocal tokens
            if self.rate > 0:
                tokens = min(self.burst, tokens + 1.0)

        scope[WS_CREDIT_KEY] = credit

        async def policed() -> Message:
            nonlocal tokens, at, closed
            if closed:
                return {"type": "websocket.disconnect", "code": WS_POLICY_CLOSE}
            message = await receive()
            if message["type"] != "websocket.receive":
                return message
            reason = None
            if self.rate > 0:
                now = self.clock()
                tokens = min(self.burst, tokens + (now - at) * self.rate)
                at = now
                if tokens >= 1.0:
                    tokens -= 1.0
                else:
                    reason = (
                        f"{Code.RATE_LIMITED}: more than {self.burst:g} messages at once or "
                        f"{self.rate:g}/s"
                    )
            if reason is None:
                if self.metrics is not None:
                    self.metrics.ws_inbound.inc()
                size = self._oversize(message)
                if size:
                    return {"type": "websocket.receive", WS_TOO_LARGE_KEY: size}
                return message
            closed = True
            kind = reason.partition(":")[0]
            if self.metrics is not None:
                self.metrics.ws_limit_closes.labels(kind).inc()
            _log.info("ws_limit_closed", reason=kind, path=scope.get("path"))
            with contextlib.suppress(Exception):
                await send({"type": "websocket.close", "code": WS_POLICY_CLOSE, "reason": reason})
            return {"type": "websocket.disconnect", "code": WS_POLICY_CLOSE}

        async def guarded_send(message: Message) -> None:
            if closed:
                return  # the limit closed the socket; the app's late frames go nowhere
            await send(message)

        try:
            await self.app(scope, policed, guarded_send)
        finally:
            left = self.open.get(address, 1) - 1
            if left > 0:
                self.open[address] = left
            else:
                self.open.pop(address, None)

    def _oversize(self, message: Message) -> int:
        """The size of a message above the size limit (bytes), else 0."""
        if self.max_message_bytes <= 0:
            return 0
        data = message.get("bytes")
        text = message.get("text")
        size = len(data) if data is not None else len(text.encode()) if text is not None else 0
        return size if size > self.max_message_bytes else 0

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a socket past the address cap, before the handshake completes."""
        if self.metrics is not None:
            self.metrics.ws_refused.inc()
        _log.info("ws_refused", reason="too_many_sockets", path=scope.get("path"))
        message = await receive()  # websocket.connect
        if message["type"] != "websocket.connect":
            return
        if "websocket.http.response" in (scope.get("extensions") or {}):
            body = json.dumps(
                error_body(
                    Code.RATE_LIMITED,
                    f"more than {self.max_per_address} WebSockets open from this address",
                )
            ).encode()
            await send({
                "type": "websocket.http.response.start",
                "status": 429,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"retry-after", b"5"),
                ],
            })
            await send({"type": "websocket.http.response.body", "body": body})
            return
        await send({"type": "websocket.close", "code": WS_POLICY_CLOSE, "reason": Code.RATE_LIMITED})
