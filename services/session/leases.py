"""Ticking leases in KV ``GAME_LEASES`` (TTL = ``settings.lease_ttl_s``).

Key ``<game_id>`` -> this instance's id. The instance holding a game's lease ticks it;
it renews every TTL/3 seconds, and when it dies the key expires and another instance
(or the same one restarted with the same instance id) takes the game over.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

import nats.errors
import nats.js.errors
import structlog
from nats.js.kv import KeyValue

log = structlog.get_logger("cellwar.session.leases")


class Leases:
    """The leases this instance holds.

    Args:
        kv: the GAME_LEASES bucket (created with ``ttl = ttl_s``).
        instance_id: this instance's name.
        ttl_s: lease lifetime without renewal (seconds).
    """

    def __init__(self, kv: KeyValue, instance_id: str, ttl_s: float) -> None:
        self.kv = kv
        self.instance_id = instance_id
        self.ttl_s = ttl_s
        self.held: dict[str, int] = {}  # game_id -> KV revision of our last write
        self._next_try: dict[str, float] = {}
        self._task: asyncio.Task | None = None

    async def acquire(self, game_ids: Iterable[str]) -> set[str]:
        """Try to hold each game's lease; returns the ids held now. A lease held by another
        instance is retried at most every TTL/3 seconds."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        value = self.instance_id.encode()
        for gid in game_ids:
            if gid in self.held or self._next_try.get(gid, 0.0) > now:
                continue
            try:
                self.held[gid] = await self.kv.create(gid, value)
                log.info("lease_acquired", game_id=gid)
                continue
            except nats.js.errors.KeyWrongLastSequenceError:
                pass
            except (TimeoutError, nats.errors.Error) as exc:
                log.warning("lease_error", game_id=gid, error=str(exc))
                self._next_try[gid] = now + self.ttl_s / 3
                continue
            try:  # exists: ours after a restart?
                entry = await self.kv.get(gid)
                if entry.value == value:
                    self.held[gid] = await self.kv.update(gid, value, last=entry.revision)
                    log.info("lease_resumed", game_id=gid)
                    continue
            except (TimeoutError, nats.errors.Error) as exc:
                log.debug("lease_busy", game_id=gid, error=str(exc))
            self._next_try[gid] = now + self.ttl_s / 3
        return {gid for gid in self.held}

    def holds(self, game_id: str) -> bool:
        """True while this instance holds the game's lease."""
        return game_id in self.held

    async def release(self, game_id: str) -> None:
        """Give a lease up (the game finished)."""
        rev = self.held.pop(game_id, None)
        self._next_try.pop(game_id, None)
        if rev is None:
            return
        with contextlib.suppress(nats.errors.Error, asyncio.TimeoutError):
            await self.kv.delete(game_id, last=rev)

    async def renew(self) -> None:
        """Renew every held lease once; a lease another instance took is dropped."""
        value = self.instance_id.encode()
        for gid, rev in list(self.held.items()):
            try:
                self.held[gid] = await self.kv.update(gid, value, last=rev)
            except nats.js.errors.KeyWrongLastSequenceError:
                self.held.pop(gid, None)
                log.warning("lease_lost", game_id=gid)
            except (TimeoutError, nats.errors.Error) as exc:
                log.warning("lease_renew_failed", game_id=gid, error=str(exc))

    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(self.ttl_s / 3)
            await self.renew()

    def start(self) -> None:
        """Start renewing every TTL/3 seconds."""
        if self._task is None:
            self._task = asyncio.create_task(self._renew_forever(), name="lease-renewal")

    async def stop(self) -> None:
        """Stop renewing (leases expire after the TTL, or are resumed by a restart)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
