"""Reaching NATS at start: a connection and the first JetStream steps, each with a deadline.

The session and the matchmaker connect at start while NATS may still be starting or a
cluster forming, so each step (the connection, then each stream or bucket) is retried for
up to ``CELLWAR_NATS_CONNECT_TIMEOUT_S`` seconds. Past that deadline, or at once for an
error no retry can mend (a replica count the server cannot
hold), they stop with :class:`NatsUnavailable`, whose message names the setting to look
at; the services' entry points log it as one ``nats_unavailable`` line and exit 1.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import nats
import nats.errors
import nats.js.errors
import structlog
from nats.aio.client import Client as NATS

log = structlog.get_logger("cellwar.nats")
T = TypeVar("T")

#: JetStream error codes no retry mends: ``replicas > 1 not supported in non-clustered
#: mode`` (10074) and ``replicas configuration can not be updated`` (10061).
PERMANENT_ERR_CODES = frozenset({10074, 10061})


class NatsUnavailable(RuntimeError):
    """NATS did not answer within the start deadline, or refused a step for good. The
    message says what was tried, the last error and which setting to check."""


async def or_exit(start: Awaitable[T], log: Any) -> T:
    """``await start`` (a service's ``create_server``); on :class:`NatsUnavailable`, log one
    ``nats_unavailable`` error with its message and exit 1 (no traceback).

    Raises:
        SystemExit: 1, when NATS is unavailable.
    """
    try:
        return await start
    except NatsUnavailable as exc:
        log.error("nats_unavailable", error=str(exc))
        raise SystemExit(1) from None


def _said(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


async def connect(
    url: str,
    *,
    name: str,
    deadline_s: float,
    on_reconnect: Callable[[], Awaitable[None]] | None = None,
) -> NATS:
    """Connect to NATS (``url``: one server or several, comma separated), trying again
    every 0.5 s for up to ``deadline_s`` seconds; once connected, reconnecting for ever
    after a loss (``on_reconnect`` runs after each reconnection).

    Raises:
        NatsUnavailable: no server answered within ``deadline_s`` seconds (with the last
            error and the variables to check).
    """
    last: list[str] = []

    async def on_error(exc: Exception) -> None:
        last[:] = [_said(exc)]
        log.warning("nats_error", error=last[0])

    async def on_reconnected() -> None:
        log.info("nats_reconnected")
        if on_reconnect is not None:
            await on_reconnect()

    servers = [u.strip() for u in url.split(",") if u.strip()]
    try:
        return await asyncio.wait_for(
            nats.connect(
                servers,
                name=name,
                max_reconnect_attempts=-1,
                reconnect_time_wait=0.5,
                connect_timeout=5,
                allow_reconnect=True,
                error_cb=on_error,
                reconnected_cb=on_reconnected,
            ),
            deadline_s,
        )
    except TimeoutError:
        raise NatsUnavailable(
            f"no NATS server at {url} answered within {deadline_s:g} s"
            f" (last error: {last[0] if last else 'none'}); check CELLWAR_NATS_URL, or give a"
            " starting cluster longer with CELLWAR_NATS_CONNECT_TIMEOUT_S"
        ) from None


async def retrying(what: str, fn: Callable[[], Awaitable[T]], deadline_s: float) -> T:
    """``await fn()`` until it succeeds or ``deadline_s`` seconds have passed (NATS still
    starting, a cluster without a JetStream leader yet), backing off up to 2 s.

    Raises:
        NatsUnavailable: the deadline passed, or JetStream refused the step with an error
            of :data:`PERMANENT_ERR_CODES` (at once).
    """
    deadline = time.monotonic() + deadline_s
    delay = 0.2
    while True:
        try:
            return await fn()
        except (TimeoutError, OSError, nats.errors.Error) as exc:
            if isinstance(exc, nats.js.errors.APIError) and exc.err_code in PERMANENT_ERR_CODES:
                raise NatsUnavailable(
                    f"JetStream refused {what}: {exc.description} (err_code {exc.err_code});"
                    " check CELLWAR_STREAM_REPLICAS (1 for a single NATS server)"
                ) from None
            if time.monotonic() + delay > deadline:
                raise NatsUnavailable(
                    f"NATS was not ready for {what} within {deadline_s:g} s (last error:"
                    f" {_said(exc)}); check CELLWAR_NATS_URL and CELLWAR_NATS_CONNECT_TIMEOUT_S"
                ) from None
            log.warning("nats_not_ready", step=what, error=_said(exc))
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)
