"""Request limits of the gateway, as ASGI middlewares: body size and rate.

:class:`BodySizeLimit` answers 413 ``PAYLOAD_TOO_LARGE`` for a body above
``max_body_bytes`` without reading it: a ``Content-Length`` above the limit is refused
before the app runs; a body without one (chunked) is counted while the app reads it and
the read fails with the 413 as soon as the count passes the limit.

:class:`RateLimit` is a token bucket per client on ``POST`` requests: ``rate`` requests/s
refill a bucket of ``burst``; an empty bucket answers 429 ``RATE_LIMITED`` with
``Retry-After`` (whole seconds). The client is the player of a valid bearer token
(``player:<game>:<id>``), else the client IP (``ip:<addr>``: behind a proxy run uvicorn
with ``--proxy-headers`` so this is the real client). Buckets live in the process: each
gateway replica counts on its own. A small in-process bucket rather than the ``limits``
library: ``limits`` offers fixed and moving windows, not a refilling bucket with a burst,
and slowapi wants a decorator and a ``Request`` parameter on every route.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.errors import error_body
from gateway.tokens import TokenSigner


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
                error_body("PAYLOAD_TOO_LARGE", PayloadTooLarge(self.max_bytes).detail),
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
    """

    def __init__(
        self,
        rate: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 100_000,
    ) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.clock = clock
        self.max_keys = max_keys
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
        self._buckets[key] = (tokens, now)
        return (1.0 - tokens) / self.rate

    def _prune(self, now: float) -> None:
        full = [
            k for k, (tokens, at) in self._buckets.items()
            if tokens + (now - at) * self.rate >= self.burst
        ]
        for k in full:
            del self._buckets[k]


class RateLimit:
    """ASGI middleware: 429 ``RATE_LIMITED`` (+ ``Retry-After``) when a client's bucket
    is empty; only ``POST`` requests take tokens.

    Args:
        app: the wrapped ASGI app.
        rate: requests per second refilled; 0 disables the limit.
        burst: bucket size; 0 disables the limit.
        signer: verifies bearer tokens to key the bucket by player.
    """

    def __init__(self, app: ASGIApp, rate: float, burst: int, signer: TokenSigner) -> None:
        self.app = app
        self.signer = signer
        self.buckets = TokenBuckets(rate, burst) if rate > 0 and burst > 0 else None

    def client_key(self, scope: Scope) -> str:
        """``player:<game>:<id>`` for a valid bearer token, else ``ip:<client address>``."""
        auth = _header(scope, b"authorization")
        if auth is not None:
            scheme, _, token = auth.partition(" ")
            player = self.signer.player_of(token.strip()) if scheme.lower() == "bearer" else None
            if player is not None:
                return f"player:{player.game_id}:{player.player_id}"
        client = scope.get("client")
        return f"ip:{client[0] if client else 'unknown'}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Take a token for a POST; answer 429 when none is left."""
        if self.buckets is None or scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        wait = self.buckets.take(self.client_key(scope))
        if wait > 0:
            response = JSONResponse(
                error_body("RATE_LIMITED", f"too many requests; retry in {wait:.2f} s"),
                status_code=429,
                headers={"Retry-After": str(max(1, math.ceil(wait)))},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _header(scope: Scope, name: bytes) -> str | None:
    """The first value of header ``name`` (lower-case bytes), decoded as latin-1."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None
