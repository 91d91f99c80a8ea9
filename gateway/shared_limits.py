"""Create and join windows that hold for the whole deployment: kept in the NATS KV
bucket ``cellwar-limits`` (``CELLWAR_SHARED_LIMITS=1``), so 30 creates a minute from an
address stay 30 however many gateways answer it (docs/security.md).

A window is one key per (class, path, client address): its value is the JSON list of the
hits' times (Unix seconds) inside the last ``window_s`` seconds. A hit reads the key,
drops the hits that left the window and, when fewer than the limit remain, writes the
list back with its own time under the revision it read (compare-and-set: a gateway that
wrote in between makes it read again). The bucket's TTL is the window, so a quiet
address's key goes away by itself. Within one gateway the hits of one key are taken one
at a time (an ``asyncio.Lock``), so only other gateways race for it.

While NATS does not answer (not connected yet, or a call fails within
:data:`KV_TIMEOUT_S`), :meth:`SharedWindows.hit` answers None and the gateway counts in
its own window alone (gateway/limits.py), as without this module: a NATS outage never
stops creates by itself. The clocks of the gateways' machines are assumed within a
second or so of each other (NTP).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any

import structlog
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError

from services.common import natsconn
from services.common.nats.kv import ensure_bucket

log = structlog.get_logger("gateway.limits")

#: The KV bucket of the windows.
BUCKET = "cellwar-limits"
#: Deadline of one KV call (seconds); a slower NATS makes the hit fall back to the
#: gateway's own window.
KV_TIMEOUT_S = 1.0
#: Reads and writes of one hit before it gives up on a key other gateways keep winning
#: (then the hit is refused with a 1 s Retry-After: the key is that busy).
MAX_ATTEMPTS = 20
#: Per-key locks kept before the idle ones are forgotten (bounded memory).
MAX_LOCKS = 10_000
#: Seconds between two tries to connect to NATS while it does not answer.
RECONNECT_S = 2.0


def kv_key(window_key: str) -> str:
    """The KV key of a window (``create:/game/create:ip:2001:db8::/64`` has characters
    KV keys may not hold): its URL-safe base64."""
    return base64.urlsafe_b64encode(window_key.encode()).decode()


class SharedWindows:
    """Moving windows of ``window_s`` seconds in the KV bucket :data:`BUCKET`.

    Args:
        settings: ``nats_url``, ``stream_replicas`` (the bucket's replicas) and the NATS
            ping settings.
        window_s: the window (seconds).
        clock: Unix seconds (tests pass a fake one).
    """

    def __init__(
        self, settings: Any, window_s: float = 60.0, clock: Callable[[], float] = time.time
    ) -> None:
        self.settings = settings
        self.window_s = window_s
        self.clock = clock
        self._kv: Any = None
        self._nc: Any = None
        self._task: asyncio.Task[None] | None = None
        self._locks: dict[str, asyncio.Lock] = {}

    @property
    def ready(self) -> bool:
        """True once the bucket is open."""
        return self._kv is not None

    def start(self) -> None:
        """Connect to NATS and open the bucket in the background (retrying until it works)."""
        self._task = asyncio.create_task(self._open())

    async def _open(self) -> None:
        while True:
            try:
                nc = await natsconn.connect(
                    self.settings.nats_url,
                    name="gateway-limits",
                    deadline_s=RECONNECT_S * 5,
                    **natsconn.settings_options(self.settings),
                )
                js = nc.jetstream(timeout=KV_TIMEOUT_S * 5)
                kv = await ensure_bucket(
                    js, BUCKET, replicas=self.settings.stream_replicas, ttl_s=self.window_s, memory=True
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure: try again later
                log.warning("shared_limits_unavailable", error=repr(exc))
                await asyncio.sleep(RECONNECT_S)
                continue
            self._nc, self._kv = nc, kv
            log.info("shared_limits_ready", bucket=BUCKET)
            return

    async def close(self) -> None:
        """Stop connecting; close the NATS connection."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await self._nc.close()
        self._kv = self._nc = None

    async def hit(self, window_key: str, limit: int) -> float | None:
        """Record a hit of ``window_key`` when fewer than ``limit`` hits are in its window.

        Returns:
            0.0 when recorded; the seconds until the oldest hit leaves the window when
            the window is full; None when the bucket cannot be used (the caller counts
            alone).
        """
        kv = self._kv
        if kv is None:
            return None
        key = kv_key(window_key)
        lock = self._locks.setdefault(key, asyncio.Lock())
        try:
            async with lock:
                return await asyncio.wait_for(self._hit(kv, key, limit), KV_TIMEOUT_S * 3)
        except Exception as exc:  # noqa: BLE001 - NATS down or slow: count alone
            log.warning("shared_limits_failed", error=repr(exc))
            return None
        finally:
            if len(self._locks) > MAX_LOCKS:
                for idle in [k for k, held in self._locks.items() if not held.locked()]:
                    del self._locks[idle]

    async def _hit(self, kv: Any, key: str, limit: int) -> float:
        for _ in range(MAX_ATTEMPTS):
            try:
                entry = await kv.get(key)
            except KeyNotFoundError:
                entry = None
            now = self.clock()
            hits = [t for t in _times(entry) if t > now - self.window_s]
            if len(hits) >= limit:
                return max(0.001, hits[0] + self.window_s - now)
            data = json.dumps([*hits, round(now, 3)]).encode()
            try:
                if entry is None:
                    await kv.create(key, data)
                else:
                    await kv.update(key, data, last=entry.revision)
            except KeyWrongLastSequenceError:
                continue  # another gateway wrote first: read again
            return 0.0
        return 1.0


def _times(entry: Any) -> list[float]:
    """The hit times of a KV entry (an empty, deleted or garbled one: none)."""
    if entry is None or not entry.value:
        return []
    try:
        times = json.loads(entry.value)
    except ValueError:
        return []
    return sorted(float(t) for t in times if isinstance(t, int | float)) if isinstance(times, list) else []
