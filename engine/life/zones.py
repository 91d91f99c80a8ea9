"""Drawing zones of a Life game (docs/playing.md "Life": a half with 2 players, a quadrant
with 4).

A zone is a half-open rectangle ``(x0, y0, x1, y1)``: columns ``x0 <= x < x1``, rows
``y0 <= y < y1`` (``x`` is the column, ``y`` the row). With 2 players the board splits
at ``width // 2`` into a left half (player 1) and a right half (player 2); with 4 it
splits at ``width // 2`` and ``height // 2`` into quadrants: 1 top-left, 2 top-right,
3 bottom-left, 4 bottom-right. A player may only place in their own zone, in every phase.
"""

from __future__ import annotations

import numpy as np

Zone = tuple[int, int, int, int]


def zones_for(width: int, height: int, players: int) -> dict[int, Zone]:
    """Every seat's zone, keyed by player id (1..players).

    Args:
        width, height: board size in cells.
        players: 2 or 4.

    Returns:
        ``{player_id: (x0, y0, x1, y1)}``, half-open, disjoint, covering the board.
    """
    mx, my = width // 2, height // 2
    if players == 2:
        return {1: (0, 0, mx, height), 2: (mx, 0, width, height)}
    return {
        1: (0, 0, mx, my),
        2: (mx, 0, width, my),
        3: (0, my, mx, height),
        4: (mx, my, width, height),
    }


def zone_of(width: int, height: int, players: int, player_id: int) -> Zone:
    """The zone of one player (see :func:`zones_for`)."""
    return zones_for(width, height, players)[player_id]


def in_zone(zone: Zone, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``(xs[i], ys[i])`` lie inside the half-open ``zone``."""
    x0, y0, x1, y1 = zone
    return (xs >= x0) & (xs < x1) & (ys >= y0) & (ys < y1)


def zone_slices(zone: Zone) -> tuple[slice, slice]:
    """``(rows, cols)`` slices selecting ``zone`` in an (H, W) board."""
    x0, y0, x1, y1 = zone
    return slice(y0, y1), slice(x0, x1)
