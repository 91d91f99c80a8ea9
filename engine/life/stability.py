"""Stability detection of a running Life board (DESIGN.md §3 "Stable").

The board is stable when, after a generation, it equals one of the previous 15 boards
(a still life, or an oscillator of period <= 15). The state keeps a digest of each of
the last :data:`HISTORY` boards rather than the boards themselves.
"""

from __future__ import annotations

import hashlib

import numpy as np

#: How many previous boards a new board is compared with.
HISTORY = 15

#: Bytes per board digest (blake2b; 128 bits make an accidental match negligible).
DIGEST_SIZE = 16


def board_digest(board: np.ndarray) -> bytes:
    """Digest of an (H, W) uint8 board's cells (colours included)."""
    return hashlib.blake2b(np.ascontiguousarray(board), digest_size=DIGEST_SIZE).digest()


def push_digest(history: tuple[bytes, ...], digest: bytes) -> tuple[bytes, ...]:
    """``history`` with ``digest`` appended, keeping the last :data:`HISTORY` entries."""
    return (*history, digest)[-HISTORY:]


def is_repeat(history: tuple[bytes, ...], digest: bytes) -> bool:
    """True when a board with ``digest`` equals one of the boards in ``history``."""
    return digest in history
