"""Stability detection of a running Life board (DESIGN.md §3 "Stable").

The board is stable when, after a generation, it equals one of the previous 15 boards
(a still life, or an oscillator of period <= 15).

A state keeps, for each of the last :data:`HISTORY` boards, its population and a digest
(``(population, digest)`` pairs, oldest first). Within one tick call
:class:`RepeatDetector` also keeps the boards it has seen, so a new board is compared
exactly with those, and hashed only when its population equals that of a board known by
digest alone; digests of the boards that stay in the history are computed once, at the
end. This keeps hashing off the per-generation path of long ticks.
"""

from __future__ import annotations

import hashlib

import numpy as np

#: How many previous boards a new board is compared with.
HISTORY = 15

#: Bytes per board digest (sha256 truncated: 128 bits make an accidental match negligible).
DIGEST_SIZE = 16

#: One history entry: (live cells, digest of the board bytes).
Entry = tuple[int, bytes]


def board_digest(board: np.ndarray) -> bytes:
    """Digest of an (H, W) uint8 board's cells (colours included)."""
    return hashlib.sha256(np.ascontiguousarray(board)).digest()[:DIGEST_SIZE]


def population(board: np.ndarray) -> int:
    """Live cells of any colour."""
    return int(np.count_nonzero(board))


class RepeatDetector:
    """Remembers the last :data:`HISTORY` boards of one tick call (a local, mutable helper;
    states only ever hold :meth:`history`)."""

    def __init__(self, history: tuple[Entry, ...]) -> None:
        # [population, digest or None, board or None]
        self._entries: list[list] = [[pop, dig, None] for pop, dig in history][-HISTORY:]

    def push(self, board: np.ndarray, pop: int, digest: bytes | None = None) -> None:
        """Remember ``board`` (not to be changed afterwards) as the newest previous board."""
        self._entries.append([pop, digest, board])
        del self._entries[:-HISTORY]

    def seen(self, board: np.ndarray, pop: int) -> tuple[bool, bytes | None]:
        """Whether ``board`` equals one of the remembered boards; also its digest if one
        had to be computed (pass it on to :meth:`push`)."""
        digest = None
        for old_pop, old_digest, old_board in self._entries:
            if old_pop != pop:
                continue
            if old_board is not None:
                if np.array_equal(old_board, board):
                    return True, digest
                continue
            if digest is None:
                digest = board_digest(board)
            if digest == old_digest:
                return True, digest
        return False, digest

    def history(self) -> tuple[Entry, ...]:
        """The remembered boards as ``(population, digest)`` pairs, oldest first."""
        out = []
        for entry in self._entries:
            if entry[1] is None:
                entry[1] = board_digest(entry[2])
            out.append((entry[0], entry[1]))
        return tuple(out)
