"""Recently replayed states, so scrubbing through a replay is cheap
(docs/architecture/ticking.md "Replay from snapshots").

``GET /replay?seq=n`` needs the state after event ``n``: the nearest snapshot at or
before ``n`` plus a fold of the events after it (:meth:`GameCache.state_at`). A viewer
scrubbing through a game asks for neighbouring seqs one after the other; each answer is
kept here (bounded: least recently used out, by bytes), and the next one folds from the
nearest kept state at or before it instead of from a snapshot. Views rendered for a
replay are kept with their state. States are values, so a kept state never goes stale.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from dataclasses import dataclass, field

from cellwar.v1 import engine_pb2

#: Bytes of kept states (their serialised size) at most, per session instance.
MAX_BYTES = 64 * 1024 * 1024


@dataclass
class Kept:
    """One kept state: the state after event ``seq`` and views of it by
    ``(player id, reveal)``."""

    seq: int
    state: engine_pb2.GameState
    size: int
    views: dict[tuple[int, bool], bytes] = field(default_factory=dict)


class ReplayCache:
    """Kept replay states by ``(game id, seq)`` (module docstring).

    Args:
        max_bytes: bytes of states kept at most.
    """

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._kept: OrderedDict[tuple[str, int], Kept] = OrderedDict()
        self._seqs: dict[str, list[int]] = {}  # game id -> sorted kept seqs
        self.hits = 0

    def __len__(self) -> int:
        return len(self._kept)

    def nearest(self, game_id: str, seq: int) -> Kept | None:
        """The kept state with the greatest seq <= ``seq`` (None when there is none)."""
        seqs = self._seqs.get(game_id)
        if not seqs:
            return None
        i = bisect.bisect_right(seqs, seq)
        if i == 0:
            return None
        kept = self._kept[(game_id, seqs[i - 1])]
        self._kept.move_to_end((game_id, kept.seq))
        if kept.seq == seq:
            self.hits += 1
        return kept

    def put(self, game_id: str, seq: int, state: engine_pb2.GameState) -> Kept:
        """Keep the state after event ``seq`` (the kept one when already there)."""
        key = (game_id, seq)
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            return kept
        kept = Kept(seq, state, state.ByteSize())
        self._kept[key] = kept
        bisect.insort(self._seqs.setdefault(game_id, []), seq)
        self.bytes += kept.size
        while self.bytes > self.max_bytes and len(self._kept) > 1:
            (gid, old), gone = self._kept.popitem(last=False)
            self._drop(gid, old, gone)
        return kept

    def _drop(self, game_id: str, seq: int, kept: Kept) -> None:
        self.bytes -= kept.size
        seqs = self._seqs.get(game_id, [])
        i = bisect.bisect_left(seqs, seq)
        if i < len(seqs) and seqs[i] == seq:
            del seqs[i]
        if not seqs:
            self._seqs.pop(game_id, None)

    def forget(self, game_id: str) -> None:
        """Drop every kept state of a game (it left the cache)."""
        for seq in self._seqs.pop(game_id, []):
            kept = self._kept.pop((game_id, seq), None)
            if kept is not None:
                self.bytes -= kept.size
