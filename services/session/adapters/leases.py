"""Leases in KV ``GAME_LEASES`` (bucket TTL = ``settings.lease_ttl_s``): which instance
ticks a running game and runs its disconnect clocks.

Key ``<game_id>`` -> the holder's instance id. A holder renews every TTL/3 seconds
(revision-checked, so a lease another instance took is noticed and dropped); when it
dies the key expires and another instance (or the same one restarted with the same
instance id, which resumes it) takes the game over within the TTL. Every instance
mirrors the bucket (one KV watch), so it knows who holds what without asking, and only
tries to create the key of a lease nobody has renewed for a TTL.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Container, Iterable

import nats.errors
import nats.js.errors
import structlog
from nats.js.kv import KeyValue

from services.common.backoff import Backoff
from services.common.nats.kv import KvMirror
from services.common.tasks import cancel, every

log = structlog.get_logger("cellwar.session.leases")


class Leases:
    """The leases this instance holds, and who holds the others.

    Args:
        kv: the GAME_LEASES bucket (created with ``ttl = ttl_s``).
        instance_id: this instance's name.
        ttl_s: lease lifetime without renewal (seconds).
        on_lost: called with a game id when another instance took a lease we held.
    """

    def __init__(
        self,
        kv: KeyValue,
        instance_id: str,
        ttl_s: float,
        on_lost: Callable[[str], None] | None = None,
    ) -> None:
        self.kv = kv
        self.instance_id = instance_id
        self.ttl_s = ttl_s
        self.on_lost = on_lost
        self.held: dict[str, int] = {}  # game_id -> KV revision of our last write
        self._holders: dict[str, tuple[str, float]] = {}  # game_id -> (holder, loop time seen)
        self._retry = Backoff(ttl_s / 3, ttl_s / 3, self._now)  # failed tries: TTL/3
        self._task: asyncio.Task | None = None
        self.mirror = KvMirror(kv, self._on_change)

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    def _on_change(self, key: str, value: bytes | None, revision: int) -> None:
        if value is None:
            self._holders.pop(key, None)
            return
        holder = value.decode(errors="replace")
        self._holders[key] = (holder, self._now())
        if holder != self.instance_id and key in self.held:
            self._lost(key)

    def _lost(self, game_id: str) -> None:
        self.held.pop(game_id, None)
        log.warning("lease_lost", game_id=game_id)
        if self.on_lost is not None:
            self.on_lost(game_id)

    def holder(self, game_id: str) -> str | None:
        """The instance holding ``game_id``'s lease, as last renewed within a TTL (None
        when nobody has renewed it for a TTL)."""
        if game_id in self.held:
            return self.instance_id
        seen = self._holders.get(game_id)
        if seen is None or self._now() - seen[1] > self.ttl_s:
            return None
        return seen[0]

    def holds(self, game_id: str) -> bool:
        """True while this instance holds the game's lease."""
        return game_id in self.held

    async def acquire(self, game_ids: Iterable[str]) -> set[str]:
        """Try to take the lease of each game nobody holds; returns the ids newly taken.
        A game held by another live instance is skipped; a failed try waits TTL/3
        (:class:`services.common.backoff.Backoff`), a taken one is forgotten there."""
        now = self._now()
        value = self.instance_id.encode()
        taken: set[str] = set()
        for gid in game_ids:
            if gid in self.held or self._retry.waiting(gid):
                continue
            holder = self.holder(gid)
            if holder is not None and holder != self.instance_id:
                continue
            try:
                self.held[gid] = await self.kv.create(gid, value)
                self._holders[gid] = (self.instance_id, now)
                self._retry.forget(gid)
                taken.add(gid)
                log.info("lease_acquired", game_id=gid)
                continue
            except nats.js.errors.KeyWrongLastSequenceError:
                pass
            except (TimeoutError, nats.errors.Error) as exc:
                log.warning("lease_error", game_id=gid, error=str(exc))
                self._retry.failed(gid)
                continue
            try:  # exists: ours after a restart, or the marker of an expired key?
                entry = await self.kv.get(gid)
                # A key that expired by the bucket's TTL is replaced by the server's marker
                # (NATS >= 2.11, ``Nats-Marker-Reason: MaxAge``, kept up to a TTL). nats.py's
                # get and create read only ``KV-Operation``, so the marker is an entry with
                # no value here and ``create`` fails on it; a holder's value is never empty.
                if entry.value == value or not entry.value:
                    self.held[gid] = await self.kv.update(gid, value, last=entry.revision)
                    self._holders[gid] = (self.instance_id, now)
                    self._retry.forget(gid)
                    taken.add(gid)
                    log.info("lease_resumed" if entry.value else "lease_acquired", game_id=gid)
                    continue
            except (TimeoutError, nats.errors.Error) as exc:
                log.debug("lease_busy", game_id=gid, error=str(exc))
            self._retry.failed(gid)
        return taken

    def keep_retries(self, game_ids: Container[str]) -> None:
        """Forget the failed tries of the games not in ``game_ids`` (no longer wanted: a
        game another instance took, or that ended, leaves no entry behind)."""
        self._retry.keep_only(game_ids)

    async def release(self, game_id: str) -> None:
        """Give a lease up (the game no longer needs a holder)."""
        rev = self.held.pop(game_id, None)
        self._retry.forget(game_id)
        if rev is None:
            return
        self._holders.pop(game_id, None)
        with contextlib.suppress(nats.errors.Error, asyncio.TimeoutError):
            await self.kv.delete(game_id, last=rev)
        log.info("lease_released", game_id=game_id)

    async def release_all(self) -> None:
        """Give every lease up (a graceful stop: the others take the games over at their
        next pass instead of after the TTL)."""
        for gid in list(self.held):
            await self.release(gid)

    async def renew(self) -> None:
        """Renew every held lease once; a lease another instance took is dropped."""
        value = self.instance_id.encode()
        for gid, rev in list(self.held.items()):
            try:
                self.held[gid] = await self.kv.update(gid, value, last=rev)
            except nats.js.errors.KeyWrongLastSequenceError:
                if gid in self.held:
                    self._lost(gid)
            except (TimeoutError, nats.errors.Error) as exc:
                log.warning("lease_renew_failed", game_id=gid, error=str(exc))

    async def start(self) -> None:
        """Mirror the bucket and renew every TTL/3 seconds."""
        await self.mirror.start()
        await self.mirror.wait_ready(10.0)
        if self._task is None:
            self._task = asyncio.create_task(
                every(self.ttl_s / 3, self.renew, "lease_renewal_failed"), name="lease-renewal"
            )

    async def stop(self) -> None:
        """Stop renewing (leases expire after the TTL, or are resumed by a restart)."""
        await cancel(self._task)
        self._task = None
        await self.mirror.stop()
