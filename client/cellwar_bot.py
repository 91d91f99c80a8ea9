"""Kept for existing imports: the CellWar API bot lives in :mod:`client.bots.cellwar`."""

from client.bots.cellwar import CellWarBot, chebyshev, visible_cells

__all__ = ["CellWarBot", "chebyshev", "visible_cells"]
