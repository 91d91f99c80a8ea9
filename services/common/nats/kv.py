"""KV buckets through nats.py, shared by the session and the matchmaker.

- :func:`ensure_bucket`: open a bucket, creating it when absent (file storage, history 1,
  direct gets).
- :func:`bucket_name` and :func:`put_with_ttl`: the two things nats.py's
  :class:`~nats.js.kv.KeyValue` keeps private (``_name``; ``_js`` for a publish with a
  per-message TTL, which ``KeyValue.put`` does not take).
- :func:`bucket_keys` and :func:`live_keys`: every key of a bucket, from the server's list
  of its subjects (``KeyValue.keys`` can stop early while the bucket is written), and
  those of them holding a value.
- :class:`KvMirror`: a live local copy of a bucket (one watch per mirror).

Bucket names and key layouts belong to their owners (services/session/adapters/kv.py,
services/matchmaker/store.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable

import nats.errors
import nats.js.errors
import structlog
from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue

from services.common.tasks import cancel

log = structlog.get_logger("cellwar.nats.kv")

#: Seconds the server keeps the marker it writes when a key expires (so watchers see it).
MARKER_TTL_S = 60.0


async def ensure_bucket(
    js: JetStreamContext,
    bucket: str,
    *,
    replicas: int = 1,
    ttl_s: float | None = None,
    expiry_markers: bool = False,
    memory: bool = False,
) -> KeyValue:
    """Open ``bucket``, creating it (file storage, or memory with ``memory``; history 1,
    ``ttl_s`` seconds, direct gets) if absent. ``expiry_markers``: the server writes a delete marker when a key
    expires (by the bucket TTL or a per-message TTL), so watchers learn of it at once
    (NATS >= 2.11; created without markers on an older server).

    Raises:
        nats.errors.Error / TimeoutError: NATS did not answer.
    """
    try:
        return await js.key_value(bucket)
    except nats.js.errors.BucketNotFoundError:
        pass
    config = api.KeyValueConfig(
        bucket=bucket,
        history=1,
        ttl=ttl_s,
        storage=api.StorageType.MEMORY if memory else api.StorageType.FILE,
        replicas=replicas,
        direct=True,
        limit_marker_ttl=MARKER_TTL_S if expiry_markers else None,
    )
    try:
        return await js.create_key_value(config)
    except nats.js.errors.KeyValueLimitMarkerTTLNotSupportedError:
        config.limit_marker_ttl = None
        return await js.create_key_value(config)
    except nats.js.errors.BadRequestError:  # another instance created it meanwhile
        return await js.key_value(bucket)


def bucket_name(kv: KeyValue) -> str:
    """The name of the bucket ``kv`` is bound to, e.g. ``"GAME_PRESENCE"`` (nats.py:
    ``KeyValue._name``)."""
    return kv._name


async def put_with_ttl(kv: KeyValue, key: str, value: bytes, ttl_s: float) -> int:
    """Write ``key`` unconditionally with a per-message TTL of ``ttl_s`` seconds (whole
    seconds on the wire; NATS >= 2.11, in a bucket created with per-message TTLs allowed,
    e.g. with ``expiry_markers``). The subject is ``$KV.<bucket>.<key>``, as ``KeyValue.put``
    writes it; ``KeyValue.put`` takes no TTL, so this publishes through the bucket's
    JetStream context (nats.py: ``KeyValue._js``).

    Returns:
        The new revision (stream sequence).

    Raises:
        nats.errors.Error / TimeoutError: NATS did not answer or refused.
    """
    ack = await kv._js.publish(f"$KV.{bucket_name(kv)}.{key}", value, msg_ttl=ttl_s)
    return int(ack.seq)


#: Keys read at once by :func:`live_keys` when it drops the deleted ones.
LIVE_KEYS_WINDOW = 256


async def bucket_keys(kv: KeyValue) -> list[str]:
    """Every key of ``kv`` with a message, deleted and purged keys included (their last
    message is the marker), in the server's order; an empty bucket: ``[]``.

    The subjects come from the stream's own list (the JetStream API's ``STREAM.INFO``
    with a ``subjects_filter``, paged by ``offset``): a snapshot the server takes at once.
    ``KeyValue.keys`` is not used: it reads a watch until a message says nothing is
    pending, and under concurrent writes that count can reach zero before the replay
    ends, so the newest keys go missing (nats-io/nats.py#995, #842).

    Raises:
        nats.errors.Error / TimeoutError: NATS did not answer.
    """
    name = bucket_name(kv)
    prefix = f"$KV.{name}."
    js = kv._js
    subjects: list[str] = []
    while True:
        request = json.dumps({"subjects_filter": f"{prefix}>", "offset": len(subjects)}).encode()
        reply = await js._nc.request(f"{js._prefix}.STREAM.INFO.KV_{name}", request, timeout=js._timeout)
        info = json.loads(reply.data)
        if "error" in info:
            raise nats.errors.Error(f"stream info of KV_{name}: {info['error'].get('description', info['error'])}")
        page = list((info.get("state") or {}).get("subjects") or {})
        subjects.extend(page)
        if not page or len(subjects) >= int(info.get("total") or 0):
            return [subject[len(prefix):] for subject in subjects]


async def live_keys(kv: KeyValue) -> list[str]:
    """The keys of :func:`bucket_keys` holding a value (a key whose last message is a
    delete or purge marker is dropped by reading it, :data:`LIVE_KEYS_WINDOW` reads at a
    time); an empty bucket: ``[]``.

    Raises:
        nats.errors.Error / TimeoutError: NATS did not answer.
    """
    candidates = await bucket_keys(kv)

    async def holds_value(key: str) -> bool:
        try:
            await kv.get(key)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return False
        return True

    live: list[str] = []
    for start in range(0, len(candidates), LIVE_KEYS_WINDOW):
        window = candidates[start:start + LIVE_KEYS_WINDOW]
        held = await asyncio.gather(*(holds_value(key) for key in window))
        live.extend(key for key, yes in zip(window, held, strict=True) if yes)
    return live


#: ``on_change(key, value or None when deleted/expired, revision)``.
OnChange = Callable[[str, bytes | None, int], None]


class KvMirror:
    """A live local copy of a KV bucket: feeds ``on_change`` with every key of ``kv``
    matching ``keys`` and every change, over one watch (one ordered push consumer) for
    the life of the mirror.

    The watch first delivers every current key, then each change; :attr:`ready` is set
    after the current keys. nats-py's ordered consumer resets itself after missed
    heartbeats; after a reconnect the owner calls :meth:`restart` to replay the current
    keys (changes missed while away included).

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

    @property
    def bucket(self) -> str:
        """The mirrored bucket's name."""
        return bucket_name(self.kv)

    async def start(self) -> None:
        """Open the watch and start applying updates (returns at once; see :attr:`ready`)."""
        self._watcher = await self.kv.watch(self.keys)
        self._task = asyncio.create_task(self._run(self._watcher), name=f"mirror-{self.bucket}")

    async def _run(self, watcher) -> None:
        while True:
            try:
                entry = await watcher.updates(timeout=None)
            except asyncio.CancelledError:
                raise
            except (TimeoutError, nats.errors.Error) as exc:
                log.warning("mirror_update_failed", bucket=self.bucket, error=str(exc))
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
                log.exception("mirror_apply_failed", bucket=self.bucket, key=entry.key)

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
            log.warning("mirror_restart_failed", bucket=self.bucket, error=str(exc))

    async def wait_ready(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the current keys; True when they are in."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ready.wait(), timeout)
        return self.ready.is_set()
