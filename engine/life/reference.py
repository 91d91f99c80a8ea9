"""The plain definition of one Life generation: numpy uint8 shifted sums.

This is the reference the bit-parallel kernel (:mod:`engine.life.kernel`) is tested
against and measured beside (``make bench``). Rule (the Life seed's): B3/S23 on the Moore
neighbourhood, all colours count as neighbours; a survivor keeps its colour; a newborn
takes the colour held by at least 2 of its 3 parents, and when all 3 differ (4 players
only) the one player colour absent among them (QuadLife).
"""

from __future__ import annotations

import numpy as np

_OFFSETS = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0)]


def _neighbours(plane: np.ndarray, torus: bool) -> np.ndarray:
    """Moore-neighbourhood sum of a (H, W) uint8 0/1 plane; cells beyond a hard edge are dead."""
    h, w = plane.shape
    if torus:
        total = np.zeros((h, w), dtype=np.uint8)
        for dy, dx in _OFFSETS:
            total += np.roll(plane, (dy, dx), axis=(0, 1))
        return total
    padded = np.zeros((h + 2, w + 2), dtype=np.uint8)
    padded[1:-1, 1:-1] = plane
    total = np.zeros((h, w), dtype=np.uint8)
    for dy, dx in _OFFSETS:
        total += padded[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
    return total


def step_reference(board: np.ndarray, *, torus: bool = False, generations: int = 1) -> np.ndarray:
    """Run ``generations`` generations of coloured B3/S23 by the plain definition.

    Args:
        board: (H, W) uint8, 0 dead, k = colour k (1..4).
        torus: wrap both axes; otherwise hard edges.
        generations: number of generations (>= 0).

    Returns:
        A new (H, W) uint8 array.
    """
    cur = np.array(board, dtype=np.uint8, copy=True)
    for _ in range(generations):
        alive = (cur > 0).astype(np.uint8)
        n = _neighbours(alive, torus)
        born = (alive == 0) & (n == 3)
        survive = (alive == 1) & ((n == 2) | (n == 3))
        nxt = np.where(survive, cur, 0).astype(np.uint8)
        if born.any():
            counts = [_neighbours((cur == c).astype(np.uint8), torus) for c in (1, 2, 3, 4)]
            colour = np.zeros_like(cur)
            for c, cnt in zip((1, 2, 3, 4), counts, strict=True):
                colour = np.where(cnt >= 2, c, colour).astype(np.uint8)
            # All three parents differ: the absent colour among 1..4.
            absent = np.zeros_like(cur)
            for c, cnt in zip((1, 2, 3, 4), counts, strict=True):
                absent = np.where(cnt == 0, c, absent).astype(np.uint8)
            colour = np.where(colour == 0, absent, colour)
            nxt = np.where(born, colour, nxt).astype(np.uint8)
        cur = nxt
    return cur
