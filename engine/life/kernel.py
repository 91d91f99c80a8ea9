"""Life kernel entry point (temporary: delegates to the reference until the
bit-parallel kernel lands)."""

from __future__ import annotations

import numpy as np

from engine.life.reference import step_reference


def step(board: np.ndarray, *, torus: bool = False, generations: int = 1) -> np.ndarray:
    """Run ``generations`` generations of coloured B3/S23; (H, W) uint8 in, new (H, W) uint8 out."""
    return step_reference(board, torus=torus, generations=generations)
