"""A live local copy of a KV bucket: one watch (one ordered push consumer) per mirror,
per instance, for the life of the instance.

Every instance mirrors ``GAME_DIRECTORY`` (the lobby, leases to take, games to expire),
``GAME_LEASES`` (who holds what) and ``GAME_PRESENCE`` (who is connected), so each knows
what the others wrote within milliseconds without asking NATS per request. The watch
first delivers every current key, then each change; :meth:`KvMirror.ready` is set
after the current keys. nats-py's ordered consumer resets itself after missed
heartbeats; after a reconnect the owner calls :meth:`KvMirror.restart` to replay the
current keys (changes missed while away included).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import nats.errors
import structlog
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue

from services.common.tasks import cancel

log = structlog.get_logger("cellwar.session.mirror")

#: ``on_change(key, value or None when deleted/expired, revision)``.
OnChange = Callable[[str, bytes | None, int], None]


class KvMirror:
    """Feeds ``on_change`` with every key of ``kv`` matching ``keys`` and every change.

    Args:
        kv: the bucket.
        on_change: called on the event loop for each current key, then each change.
        keys: a key filter (``>`` = all).
    """

    def __init__(self, kv: KeyValue, on_change: OnChange, keys: str = ">") -> None:
        self.kv = kv
        self.on_change = on_change
        self.keys = keys
        self.ready = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._watcher = None

    async def start(self) -> None:
        """Open the watch and start applying updates (returns at once; see :attr:`ready`)."""
        self._watcher = await self.kv.watch(self.keys)
        self._task = asyncio.create_task(self._run(self._watcher), name=f"mirror-{self.kv._name}")

    async def _run(self, watcher) -> None:
        while True:
            try:
                entry = await watcher.updates(timeout=None)
            except asyncio.CancelledError:
                raise
            except (TimeoutError, nats.errors.Error) as exc:
                log.warning("mirror_update_failed", bucket=self.kv._name, error=str(exc))
                await asyncio.sleep(0.5)
                continue
            if entry is KeyValue.KeyWatcher.STOP_ITER:
                return
            if entry is None:
                self.ready.set()
                continue
            deleted = entry.operation in (KV_DEL, KV_PURGE)
            try:
                self.on_change(entry.key, None if deleted else (entry.value or b""), entry.revision)
            except Exception:  # noqa: BLE001 - a bad value must not stop the mirror
                log.exception("mirror_apply_failed", bucket=self.kv._name, key=entry.key)

    async def stop(self) -> None:
        """Stop the watch."""
        await cancel(self._task)
        self._task = None
        if self._watcher is not None:
            with contextlib.suppress(Exception):
                await self._watcher.stop()
            self._watcher = None

    async def restart(self) -> None:
        """Replay the current keys on a new watch (after a reconnect)."""
        await self.stop()
        try:
            await self.start()
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning("mirror_restart_failed", bucket=self.kv._name, error=str(exc))

    async def wait_ready(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the current keys; True when they are in."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ready.wait(), timeout)
        return self.ready.is_set()
