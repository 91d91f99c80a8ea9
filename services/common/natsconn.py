"""Reaching NATS at start: a connection and the first JetStream steps, each with a deadline.

The session and the matchmaker connect at start while NATS may still be starting or a
cluster forming, so each step (the connection, then each stream or bucket) is retried for
up to ``CELLWAR_NATS_CONNECT_TIMEOUT_S`` seconds. Past that deadline, or at once for an
error no retry can mend (a replica count the server cannot
hold), they stop with :class:`NatsUnavailable`, whose message names the setting to look
at; the services' entry points log it as one ``nats_unavailable`` line and exit 1.

Once connected, the client pings its server every ``CELLWAR_NATS_PING_INTERVAL_S``
(default :data:`PING_INTERVAL_S`) and drops a server that leaves
``CELLWAR_NATS_MAX_OUTSTANDING_PINGS`` pings unanswered (a hung or SIGSTOPped node is
left within about ``interval × (pings + 1)`` seconds, 8 s by default, instead of
nats-py's 120 s × 2), reconnecting to another node of the list. The list is shuffled
(nats-py ``dont_randomize=False``) so the services' connections spread over the
cluster's nodes (docs/faults.md).
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
#: Seconds between two pings of a connected client (nats-py's default: 120).
PING_INTERVAL_S = 2.0
#: Unanswered pings after which the server is taken as gone (nats-py's default: 2).
MAX_OUTSTANDING_PINGS = 3
#: Seconds one try to reach a server may take (a paused node accepts TCP, never answers).
CONNECT_TIMEOUT_S = 2.0


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


def settings_options(settings: Any) -> dict[str, Any]:
    """The keyword arguments of :func:`connect` that come from a service's settings
    (``nats_ping_interval_s``, ``nats_max_outstanding_pings``, ``nats_randomize``)."""
    return {
        "ping_interval_s": settings.nats_ping_interval_s,
        "max_outstanding_pings": settings.nats_max_outstanding_pings,
        "randomize": settings.nats_randomize,
    }


async def connect(
    url: str,
    *,
    name: str,
    deadline_s: float,
    on_reconnect: Callable[[], Awaitable[None]] | None = None,
    ping_interval_s: float = PING_INTERVAL_S,
    max_outstanding_pings: int = MAX_OUTSTANDING_PINGS,
    randomize: bool = True,
) -> NATS:
    """Connect to NATS (``url``: one server or several, comma separated), trying again
    every 0.5 s for up to ``deadline_s`` seconds; once connected, reconnecting for ever
    after a loss (``on_reconnect`` runs after each reconnection).

    ``ping_interval_s`` (seconds) and ``max_outstanding_pings``: a server that leaves
    that many pings unanswered is dropped (module docstring); ``randomize``: try the
    servers in a shuffled order (False: in the order given).

    Raises:
        NatsUnavailable: no server answered within ``deadline_s`` seconds (with the last
            error and the variables to check).
    """
    last: list[str] = []
    nc_box: list[NATS] = []

    async def on_error(exc: Exception) -> None:
        last[:] = [_said(exc)]
        log.warning("nats_error", error=last[0])

    async def on_reconnected() -> None:
        url_now = nc_box[0].connected_url if nc_box else None
        log.info("nats_reconnected", server=url_now.netloc if url_now else "")
        if on_reconnect is not None:
            await on_reconnect()

    async def on_disconnected() -> None:
        log.warning("nats_disconnected", error=last[0] if last else "")

    servers = [u.strip() for u in url.split(",") if u.strip()]
    try:
        nc = await asyncio.wait_for(
            nats.connect(
                servers,
                name=name,
                max_reconnect_attempts=-1,
                reconnect_time_wait=0.5,
                connect_timeout=CONNECT_TIMEOUT_S,
                allow_reconnect=True,
                error_cb=on_error,
                reconnected_cb=on_reconnected,
                disconnected_cb=on_disconnected,
                ping_interval=ping_interval_s,
                max_outstanding_pings=max_outstanding_pings,
                dont_randomize=not randomize,
            ),
            deadline_s,
        )
    except TimeoutError:
        raise NatsUnavailable(
            f"no NATS server at {url} answered within {deadline_s:g} s"
            f" (last error: {last[0] if last else 'none'}); check CELLWAR_NATS_URL, or give a"
            " starting cluster longer with CELLWAR_NATS_CONNECT_TIMEOUT_S"
        ) from None
    nc_box.append(nc)
    return nc


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
