"""Life kernel benchmark: the bit-parallel kernel beside the plain numpy reference.

Rows (targets of docs/benchmarks.md, one core):

* two colours, 1024 x 1024 torus, 30 % random, 200 generations: >= 6e9 cell-updates/s
  and >= 40x the plain numpy uint8 shifted-sum step of the same rule
  (:func:`engine.life.reference.step_reference`) measured in the same run;
* B3/S23 one colour, same board: >= 10e9 cell-updates/s;
* 300 x 300 two colours (hard edges, the game default): >= 5,000 generations/s;
* hosted capacity, kernel only: 1,000 games of 300 x 300 two colours advanced together
  with :func:`engine.life.kernel.step_many`, 8 generations per game-second: >= 1,000
  games per core;
* info: each layout's rate per generation (interleaved: long runs; plain: a few
  generations, cheap to pack) and one ``step`` of one generation of a 300 x 300 game,
  packing and unpacking included (what a game tick pays today).

Rates divide by the process's CPU time (``time.process_time``), the time the kernel
had a core: on a machine shared with other work, wall time also counts the waits for a
core. Each figure is the best of a few repeats, as ``timeit`` advises (slower repeats
measure the interference of other work on the shared caches, not the kernel); the
medians and the wall-time figures are in the JSON. Kernel times include packing and unpacking (the public ``step``). The
reference runs fewer generations (it is ~300x slower); rates are per generation so the
two compare.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.life.kernel import PackedBoards, step, step_many
from engine.life.reference import step_reference

SEED = 20240611


def random_board(size: int, colours: int, fill: float = 0.3, seed: int = SEED) -> np.ndarray:
    """(size, size) uint8 board, ``fill`` of the cells alive, colours drawn from 1..colours."""
    rng = np.random.default_rng(seed)
    alive = rng.random((size, size)) < fill
    return np.where(alive, rng.integers(1, colours + 1, (size, size)), 0).astype(np.uint8)


def timed(fn: Callable[[], object], repeats: int) -> dict[str, float]:
    """Run ``fn`` ``repeats`` times; CPU and wall seconds: the best (``cpu_s``,
    ``wall_s``) and the median of each."""
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return {
        "cpu_s": max(min(cpu), 1e-9),
        "cpu_median_s": max(statistics.median(cpu), 1e-9),
        "wall_s": max(min(wall), 1e-9),
        "wall_median_s": max(statistics.median(wall), 1e-9),
        "repeats": repeats,
    }


def _row(
    name: str,
    unit: str,
    kernel: float,
    reference: float | None,
    target: float | None,
    min_ratio: float | None,
    **extra: Any,
) -> dict[str, Any]:
    ratio = kernel / reference if reference else None
    if target is None:
        ok, target_text = True, "- (info)"
    else:
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
        "info": target is None,
        **extra,
    }


def _cell_rate_row(
    name: str, colours: int, gens: int, ref_gens: int, repeats: int, target: float, min_ratio
) -> dict[str, Any]:
    size = 1024
    board = random_board(size, colours)
    t = timed(lambda: step(board, torus=True, generations=gens), repeats)
    ref = timed(lambda: step_reference(board, torus=True, generations=ref_gens), 1)
    cells = size * size
    return _row(
        name,
        "cell-updates/s",
        cells * gens / t["cpu_s"],
        cells * ref_gens / ref["cpu_s"],
        target,
        min_ratio,
        generations=gens,
        reference_generations=ref_gens,
        kernel_time=t,
        reference_time=ref,
        wall_rate=cells * gens / t["wall_s"],
    )


def _layout_rows(gens: int, repeats: int) -> list[dict[str, Any]]:
    """Per-generation rate of each layout (advance only, no packing), two colours."""
    board = random_board(1024, 2)[None]
    rows = []
    for layout in ("interleaved", "plain"):
        packed = PackedBoards(board, torus=True, layout=layout)
        packed.advance(1)  # both directions of the double buffer prepared
        t = timed(lambda packed=packed: packed.advance(gens), repeats)
        rows.append(
            _row(
                f"  {layout} layout, two colours 1024x1024, per generation (no packing)",
                "cell-updates/s",
                board.size * gens / t["cpu_s"],
                None,
                None,
                None,
                kernel_time=t,
            )
        )
    return rows


def run(quick: bool = False) -> dict[str, Any]:
    """Measure the kernel rows; returns ``{"rows": [...], ...}`` (rates per second).

    Args:
        quick: fewer reference generations, games and repeats (a smoke run, figures are
            noisier).
    """
    gens = 200  # a fraction of a second of CPU: the same in a quick run
    ref_gens = 3 if quick else 20
    repeats = 3 if quick else 5
    rows = [
        _cell_rate_row(
            "two colours, 1024x1024 torus 30%, 200 generations",
            2,
            gens,
            ref_gens,
            repeats,
            6e9,
            40.0,
        ),
        _cell_rate_row("B3/S23 one colour, same board", 1, gens, ref_gens, repeats, 10e9, None),
    ]
    rows += _layout_rows(20 if quick else 50, 1 if quick else 3)

    small = random_board(300, 2)
    small_gens = 500 if quick else 5000
    small_ref_gens = 10 if quick else 100
    t = timed(lambda: step(small, generations=small_gens), repeats)
    ref = timed(lambda: step_reference(small, generations=small_ref_gens), 1)
    rows.append(
        _row(
            "300x300 two colours, hard edges",
            "generations/s",
            small_gens / t["cpu_s"],
            small_ref_gens / ref["cpu_s"],
            5000.0,
            None,
            generations=small_gens,
            reference_generations=small_ref_gens,
            kernel_time=t,
            reference_time=ref,
        )
    )
    one = timed(lambda: [step(small) for _ in range(100)], 1 if quick else 3)
    one_ref = timed(lambda: step_reference(small), 1)
    rows.append(
        _row(
            "  step(): one generation of a 300x300 game, packing included",
            "steps/s",
            100 / one["cpu_s"],
            1 / one_ref["cpu_s"],
            None,
            None,
            microseconds=one["cpu_s"] / 100 * 1e6,
        )
    )

    games = 100 if quick else 1000
    ticks = 8
    distinct = np.stack([random_board(300, 2, seed=SEED + i) for i in range(10)])
    many = distinct[np.arange(games) % len(distinct)]
    t = timed(lambda: step_many(many, generations=ticks), repeats)
    # one game-second = 8 generations per game; games one core keeps up with:
    capacity = games / t["cpu_s"]
    ref_board = many[0]
    ref = timed(lambda: step_reference(ref_board, generations=ticks), 1)
    rows.append(
        _row(
            f"hosted 300x300 games at 8 gen/s (kernel only, step_many of {games})",
            "games/core",
            capacity,
            1.0 / ref["cpu_s"],
            1000.0,
            None,
            games=games,
            generations=ticks,
            kernel_time=t,
            reference_time=ref,
        )
    )
    return {"rows": rows, "quick": quick, "seed": SEED, "clock": "process CPU time"}
