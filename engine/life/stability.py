"""Stability detection of a running Life board (docs/playing.md "Life": a still life, or an
oscillator of period <= 15).

The board is stable when, after a generation, it equals one of the previous 15 boards
(a still life, or an oscillator of period <= 15).

A state keeps, for each of the last :data:`HISTORY` boards, its population and a digest
(``(population, digest)`` pairs, oldest first). Within one tick call
:class:`RepeatDetector` also keeps the boards it has seen, so a new board is compared
exactly with those, and hashed only when its population equals that of a board known by
digest alone; digests of the boards that stay in the history are computed once, at the
end. This keeps hashing off the per-generation path of long ticks.

Which digest: Life games of engine version 3 and later digest a board's bit planes
(:func:`planes_digest`, ~4x less to hash than the uint8 board and no unpacking on the
packed tick path); version 1 and 2 Life games and every campaign game digest the uint8
board (:func:`board_digest`). The version decides because the digests are part of the
recorded state (its hash): a log of version 2 folds with version 2 digests forever
(:mod:`engine.versions`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engine.life.kernel import pack
from engine.versions import at_least

#: How many previous boards a new board is compared with.
HISTORY = 15

#: Bytes per board digest (sha256 truncated: 128 bits make an accidental match negligible).
DIGEST_SIZE = 16

#: One history entry: (live cells, digest of the board bytes).
Entry = tuple[int, bytes]


def board_digest(board: np.ndarray) -> bytes:
    """Digest of an (H, W) uint8 board's cells (colours included)."""
    return hashlib.sha256(np.ascontiguousarray(board)).digest()[:DIGEST_SIZE]


#: The first engine version whose Life stability digests are :func:`planes_digest`.
PLANES_DIGEST_VERSION = "3"


def digests_planes(rules: str) -> bool:
    """Whether Life games of engine version ``rules`` digest boards by :func:`planes_digest`."""
    return at_least(rules, PLANES_DIGEST_VERSION)


def canonical_planes(cells: Mapping[int, Any], alive: Any, *, keep_empty: bool = False) -> list[Any]:
    """The planes a version 3 digest reads, from a board's live cells and its cells by
    colour: ``[alive, colour 2 or 4, colour 3 or 4]`` (the colour's bits 0 and 1 of
    ``colour - 1``), the last one left out when it is empty.

    Works on any bitwise values: Python ints (:mod:`engine.life.bitboard`) or uint64
    arrays (:func:`engine.life.kernel.pack` words).

    Args:
        cells: colour (1..4) -> that colour's cells as a plane; colours absent may be left out.
        alive: every live cell as a plane.
        keep_empty: keep the third plane even when it is empty (a caller that decides
            per board, e.g. for a stack of boards).
    """
    bit0 = bit1 = alive & 0
    for colour, plane in cells.items():
        if colour in (2, 4):
            bit0 = bit0 | plane
        if colour in (3, 4):
            bit1 = bit1 | plane
    if keep_empty:
        return [alive, bit0, bit1]
    empty = not bit1.any() if isinstance(bit1, np.ndarray) else not bit1
    return [alive, bit0] if empty else [alive, bit0, bit1]


def planes_digest(planes: Sequence[np.ndarray] | np.ndarray) -> bytes:
    """Version 3 digest of a board: sha256 over its :func:`canonical_planes` as
    :func:`engine.life.kernel.pack` words ((H, ceil(W / 64)) uint64 each, little-endian,
    the bits past column W - 1 zero), one after the other, truncated to
    :data:`DIGEST_SIZE` bytes. ``planes``: a sequence of planes or one C-contiguous
    uint64 array of them (any leading axes, read in order). Equal boards give equal
    digests, whatever planes a path keeps (the canonical planes are derived from cells)."""
    if isinstance(planes, np.ndarray) and planes.dtype == np.dtype("<u8") and planes.flags.c_contiguous:
        return hashlib.sha256(planes).digest()[:DIGEST_SIZE]  # the planes' words in order
    h = hashlib.sha256()
    for plane in planes:
        h.update(np.ascontiguousarray(plane, dtype="<u8"))
    return h.digest()[:DIGEST_SIZE]


def stack_digests(data: np.ndarray) -> list[bytes]:
    """:func:`planes_digest` of each of k boards given by the planes a packing keeps
    (:mod:`engine.life.kernel`), as (k, P, H, ceil(W / 64)) uint64 pack words: P = 2,
    alive and colour 2 of colours (1, 2) (the canonical planes themselves), or P = 4,
    alive and colours 1, 2, 3 (colour 4 the rest). The canonical planes of all k boards
    are made in a few whole-array operations, then hashed one board each."""
    if data.shape[1] == 2:
        planes = np.ascontiguousarray(data, dtype="<u8")
        return [planes_digest(planes[j]) for j in range(planes.shape[0])]
    alive, p1, p2, p3 = data[:, 0], data[:, 1], data[:, 2], data[:, 3]
    cells = {1: p1, 2: p2, 3: p3, 4: alive & ~(p1 | p2 | p3)}
    planes = np.ascontiguousarray(
        np.stack(canonical_planes(cells, alive, keep_empty=True), axis=1), dtype="<u8"
    )
    third = planes[:, 2].any(axis=(1, 2))  # the third plane counts only when not empty
    return [planes_digest(planes[j, : 3 if third[j] else 2]) for j in range(planes.shape[0])]


def board_canonical_planes(board: np.ndarray) -> list[np.ndarray]:
    """:func:`canonical_planes` of an (H, W) uint8 board (0 dead, k = colour k), as
    :func:`engine.life.kernel.pack` words: what :func:`board_planes_digest` hashes."""
    cells = {c: pack(board == c) for c in range(1, 5)}
    return canonical_planes(cells, pack(board != 0))


def board_planes_digest(board: np.ndarray) -> bytes:
    """:func:`planes_digest` of an (H, W) uint8 board (0 dead, k = colour k)."""
    return planes_digest(board_canonical_planes(board))


def life_digest(board: np.ndarray, rules: str) -> bytes:
    """The stability digest of an (H, W) uint8 Life board under engine version ``rules``."""
    return board_planes_digest(board) if digests_planes(rules) else board_digest(board)


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
