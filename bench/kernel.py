"""Life kernel benchmark: the bit-parallel kernel beside the plain numpy reference.

Rows (DESIGN.md §8, one core):

* B3/S23 one colour, 1024 x 1024 torus, 30 % random, 200 generations: >= 4e9
  cell-updates/s;
* two colours, same board: >= 2e9 cell-updates/s and >= 2x the reference
  (:func:`engine.life.reference.step_reference`) measured in the same run;
* 300 x 300 two colours (hard edges, the game default): >= 5,000 generations/s;
* hosted capacity, kernel only: 1,000 games of 300 x 300 two colours advanced together
  with :func:`engine.life.kernel.step_many`, 8 generations per game-second: >= 1,000
  games per core.

The reference runs fewer generations (it is ~100x slower); rates are per generation so
the two compare. Kernel times include packing and unpacking (the public ``step``); each
figure is the best of a few repeats, since other processes may share the machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.life.kernel import step, step_many
from engine.life.reference import step_reference

SEED = 20240611


def random_board(size: int, colours: int, fill: float = 0.3, seed: int = SEED) -> np.ndarray:
    """(size, size) uint8 board, ``fill`` of the cells alive, colours drawn from 1..colours."""
    rng = np.random.default_rng(seed)
    alive = rng.random((size, size)) < fill
    return np.where(alive, rng.integers(1, colours + 1, (size, size)), 0).astype(np.uint8)


def _best_seconds(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _row(
    name: str,
    unit: str,
    kernel: float,
    reference: float | None,
    target: float,
    min_ratio: float | None,
    **extra: Any,
) -> dict[str, Any]:
    ratio = kernel / reference if reference else None
    ok = kernel >= target and (min_ratio is None or (ratio is not None and ratio >= min_ratio))
    target_text = f">= {target:.3g} {unit}"
    if min_ratio is not None:
        target_text += f", >= {min_ratio:g}x reference"
    return {
        "name": name,
        "unit": unit,
        "kernel": kernel,
        "reference": reference,
        "ratio": ratio,
        "target": target,
        "min_ratio": min_ratio,
        "target_text": target_text,
        "pass": bool(ok),
        **extra,
    }


def _cell_rate_row(
    name: str,
    colours: int,
    gens: int,
    ref_gens: int,
    repeats: int,
    target: float,
    min_ratio: float | None,
) -> dict[str, Any]:
    size = 1024
    board = random_board(size, colours)
    secs = _best_seconds(lambda: step(board, torus=True, generations=gens), repeats)
    ref_secs = _best_seconds(lambda: step_reference(board, torus=True, generations=ref_gens), 1)
    cells = size * size
    return _row(
        name,
        "cell-updates/s",
        cells * gens / secs,
        cells * ref_gens / ref_secs,
        target,
        min_ratio,
        generations=gens,
        reference_generations=ref_gens,
        seconds=secs,
        reference_seconds=ref_secs,
    )


def run(quick: bool = False) -> dict[str, Any]:
    """Measure the kernel rows; returns ``{"rows": [...], ...}`` (rates per second).

    Args:
        quick: fewer generations and repeats (a smoke run, figures are noisier).
    """
    gens = 50 if quick else 200
    ref_gens = 5 if quick else 20
    repeats = 1 if quick else 3
    rows = [
        _cell_rate_row(
            "B3/S23 one colour, 1024x1024 torus 30%", 1, gens, ref_gens, repeats, 4e9, None
        ),
        _cell_rate_row("two colours, 1024x1024 torus 30%", 2, gens, ref_gens, repeats, 2e9, 2.0),
    ]

    small = random_board(300, 2)
    small_gens = 500 if quick else 5000
    small_ref_gens = 20 if quick else 100
    secs = _best_seconds(lambda: step(small, generations=small_gens), repeats)
    ref_secs = _best_seconds(lambda: step_reference(small, generations=small_ref_gens), 1)
    rows.append(
        _row(
            "300x300 two colours, hard edges",
            "generations/s",
            small_gens / secs,
            small_ref_gens / ref_secs,
            5000.0,
            None,
            generations=small_gens,
            reference_generations=small_ref_gens,
            seconds=secs,
            reference_seconds=ref_secs,
        )
    )

    games = 100 if quick else 1000
    ticks = 8
    many = np.stack([random_board(300, 2, seed=SEED + i) for i in range(games)])
    secs = _best_seconds(lambda: step_many(many, generations=ticks), repeats)
    # one game-second = 8 generations per game; games one core keeps up with:
    capacity = games / secs
    ref_board = many[0]
    ref_secs = _best_seconds(lambda: step_reference(ref_board, generations=ticks), 1)
    rows.append(
        _row(
            "hosted 300x300 games at 8 gen/s (kernel only, step_many)",
            "games/core",
            capacity,
            1.0 / ref_secs,
            1000.0,
            None,
            games=games,
            generations=ticks,
            seconds=secs,
            reference_seconds=ref_secs,
        )
    )
    return {"rows": rows, "quick": quick, "seed": SEED}
