"""Snapshots of game states in KV ``GAME_SNAPSHOTS``.

Keys: ``<game_id>`` holds the latest snapshot, ``<game_id>.<seq>`` every snapshot (so a
replay finds the nearest one at or before a seq). Value: one JSON line
``{"seq", "stream_seq", "state_hash"}``, a newline, then the zlib-compressed
``cellwar.v1.GameState`` protobuf.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass

import nats.errors
import nats.js.errors
import structlog
from nats.js.kv import KeyValue

from cellwar.v1 import engine_pb2

log = structlog.get_logger("cellwar.session.snapshots")

#: A KV value above this is not stored (NATS max_payload is 1 MiB by default), bytes.
MAX_SNAPSHOT_BYTES = 900 * 1024


@dataclass(frozen=True)
class Snapshot:
    """A game state after event ``seq`` (per-game) whose stream sequence is ``stream_seq``."""

    seq: int
    stream_seq: int
    state: engine_pb2.GameState


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

    async def put(self, game_id: str, snap: Snapshot) -> bool:
        """Store ``snap`` as the latest and as ``<game_id>.<seq>``; False when not stored."""
        value = encode(snap)
        if len(value) > MAX_SNAPSHOT_BYTES:
            log.warning("snapshot_too_large", game_id=game_id, seq=snap.seq, bytes=len(value))
            return False
        try:
            await self.kv.put(f"{game_id}.{snap.seq}", value)
            await self.kv.put(game_id, value)
            return True
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning("snapshot_not_stored", game_id=game_id, seq=snap.seq, error=str(exc))
            return False

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
        """The snapshot with the greatest seq <= ``seq``, or None."""
        try:
            latest = await self._get(game_id)
            if latest is not None and latest.seq <= seq:
                return latest
            seqs = await self._seqs(game_id)
            best = max((s for s in seqs if s <= seq), default=None)
            return None if best is None else await self._get(f"{game_id}.{best}")
        except (TimeoutError, nats.errors.Error, ValueError, zlib.error) as exc:
            log.warning("snapshot_unreadable", game_id=game_id, error=str(exc))
            return None

    async def _seqs(self, game_id: str) -> list[int]:
        watcher = await self.kv.watch(f"{game_id}.*", meta_only=True, ignore_deletes=True)
        seqs: list[int] = []
        try:
            while True:
                entry = await watcher.updates(timeout=5.0)
                if entry is None:
                    break
                tail = entry.key.rsplit(".", 1)[-1]
                if tail.isdigit():
                    seqs.append(int(tail))
        finally:
            await watcher.stop()
        return seqs
