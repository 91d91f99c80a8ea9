"""Snapshots of game states in KV ``GAME_SNAPSHOTS``.

Keys: ``<game_id>`` holds the latest snapshot, ``<game_id>.<seq>`` each history
snapshot (the session keeps one at least every ``CELLWAR_SNAPSHOT_EVERY`` events; a
replay's fold fills in more), and ``<game_id>.i<k>`` the index of bucket ``k``: a JSON
list of the seqs of the history snapshots with ``seq // INDEX_SPAN == k``. A latest that
is not history (the snapshot after a turn) is one KV write; a history snapshot three
(its key, the index, and the latest when it is also that). A replay finds the nearest
snapshot at or before a seq with key gets only (the bucket's index, then the previous
buckets'), never a KV watch: a watch is a consumer, and hundreds of concurrent replays
hit the server's consumer limit (docs/architecture/scale-out.md "NATS consumers").
Value: one JSON line
``{"seq", "stream_seq", "state_hash"}``, a newline, then the zlib-compressed
``cellwar.v1.GameState`` protobuf (with its envelope: view versions, turn anchor).
"""

from __future__ import annotations

import json
import zlib

import nats.errors
import nats.js.errors
import structlog
from nats.js.kv import KeyValue

from cellwar.v1 import engine_pb2
from services.session.service_layer.ports import Snapshot

#: :class:`Snapshot` is the port's value (services/session/service_layer/ports.py).
__all__ = ["INDEX_SPAN", "MAX_SNAPSHOT_BYTES", "Snapshot", "SnapshotStore", "decode", "encode"]

log = structlog.get_logger("cellwar.session.snapshots")

#: A KV value above this is not stored (NATS max_payload is 1 MiB by default), bytes.
MAX_SNAPSHOT_BYTES = 900 * 1024
#: Seqs per index bucket (key ``<game_id>.i<seq // INDEX_SPAN>``).
INDEX_SPAN = 1000
#: Index buckets looked at below the one of the asked seq before giving up.
INDEX_LOOKBACK = 3
#: Revision-checked index writes tried before the index misses one snapshot.
_INDEX_ATTEMPTS = 5


def encode(snap: Snapshot) -> bytes:
    """The KV value of a snapshot."""
    meta = {"seq": snap.seq, "stream_seq": snap.stream_seq, "state_hash": snap.state.state_hash}
    return json.dumps(meta).encode() + b"\n" + zlib.compress(snap.state.SerializeToString(), 1)


def decode(data: bytes) -> Snapshot:
    """Inverse of :func:`encode`. Raises ValueError on a damaged value."""
    head, _, body = data.partition(b"\n")
    meta = json.loads(head)
    state = engine_pb2.GameState.FromString(zlib.decompress(body))
    if state.state_hash != meta["state_hash"]:
        raise ValueError("snapshot hash does not match its state")
    return Snapshot(int(meta["seq"]), int(meta["stream_seq"]), state)


class SnapshotStore:
    """Reads and writes snapshots; every failure is logged and treated as "no snapshot"
    (snapshots only make loading faster; the event log is the truth)."""

    def __init__(self, kv: KeyValue) -> None:
        self.kv = kv

    async def put(
        self, game_id: str, snap: Snapshot, *, latest: bool = True, history: bool = True
    ) -> bool:
        """Store ``snap`` (``history``) as ``<game_id>.<seq>`` and in its bucket's index,
        and (``latest``) as the latest; False when not stored. ``latest=False``: a
        snapshot of the past filled in by a replay; ``history=False``: the latest only
        (replaced by the next one)."""
        value = encode(snap)
        if len(value) > MAX_SNAPSHOT_BYTES:
            log.warning("snapshot_too_large", game_id=game_id, seq=snap.seq, bytes=len(value))
            return False
        try:
            if history:
                await self.kv.put(f"{game_id}.{snap.seq}", value)
                await self._index(game_id, snap.seq)
            if latest:
                await self.kv.put(game_id, value)
            return True
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning("snapshot_not_stored", game_id=game_id, seq=snap.seq, error=str(exc))
            return False

    async def _index(self, game_id: str, seq: int) -> None:
        """Add ``seq`` to its bucket's index (revision-checked, retried on conflict)."""
        key = f"{game_id}.i{seq // INDEX_SPAN}"
        for _ in range(_INDEX_ATTEMPTS):
            seqs, revision = await self._read_index(key)
            if seq in seqs:
                return
            value = json.dumps(sorted({*seqs, seq})).encode()
            try:
                if revision:
                    await self.kv.update(key, value, last=revision)
                else:
                    await self.kv.create(key, value)
                return
            except nats.js.errors.KeyWrongLastSequenceError:
                continue
        log.warning("snapshot_not_indexed", game_id=game_id, seq=seq)

    async def _read_index(self, key: str) -> tuple[list[int], int]:
        try:
            entry = await self.kv.get(key)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return [], 0
        try:
            seqs = [int(s) for s in json.loads(entry.value or b"[]")]
        except (ValueError, TypeError):
            seqs = []
        return seqs, int(entry.revision or 0)

    async def _get(self, key: str) -> Snapshot | None:
        try:
            entry = await self.kv.get(key)
        except nats.js.errors.KeyNotFoundError:
            return None
        if not entry.value:
            return None
        return decode(entry.value)

    async def latest(self, game_id: str) -> Snapshot | None:
        """The latest snapshot of a game, or None."""
        try:
            return await self._get(game_id)
        except (TimeoutError, nats.errors.Error, ValueError, zlib.error) as exc:
            log.warning("snapshot_unreadable", game_id=game_id, error=str(exc))
            return None

    async def at_or_before(self, game_id: str, seq: int) -> Snapshot | None:
        """The latest snapshot when its seq is <= ``seq``, else the history snapshot with
        the greatest seq <= ``seq``, or None (KV gets only: the latest, then the index of
        ``seq``'s bucket and up to :data:`INDEX_LOOKBACK` below it)."""
        try:
            latest = await self._get(game_id)
            if latest is not None and latest.seq <= seq:
                return latest
            bucket = seq // INDEX_SPAN
            for k in range(bucket, max(bucket - INDEX_LOOKBACK, 0) - 1, -1):
                seqs, _ = await self._read_index(f"{game_id}.i{k}")
                best = max((s for s in seqs if s <= seq), default=None)
                if best is not None:
                    return await self._get(f"{game_id}.{best}")
            return None
        except (TimeoutError, nats.errors.Error, ValueError, zlib.error) as exc:
            log.warning("snapshot_unreadable", game_id=game_id, error=str(exc))
            return None
