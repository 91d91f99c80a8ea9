"""Known long-run facts of Life methuselahs, run on boards wide enough to act as the plane.

Figures from the Life literature (LifeWiki): the R-pentomino settles at generation 1103
with population 116 (six gliders included); the diehard vanishes at generation 130.
"""

from __future__ import annotations

import numpy as np

from engine.life import step
from engine.life.reference import step_reference

# (row, column) offsets, hard-coded so these tests do not depend on the pattern library.
R_PENTOMINO = [(0, 1), (0, 2), (1, 0), (1, 1), (2, 1)]  # .OO / OO. / .O.
DIEHARD = [(0, 6), (1, 0), (1, 1), (2, 1), (2, 5), (2, 6), (2, 7)]  # ......O. / OO...... / .O...OOO


def centred(cells: list[tuple[int, int]], size: int, colour: int = 1) -> np.ndarray:
    board = np.zeros((size, size), dtype=np.uint8)
    for r, c in cells:
        board[size // 2 + r, size // 2 + c] = colour
    return board


def population(board: np.ndarray) -> int:
    return int(np.count_nonzero(board))


def test_r_pentomino_population_116_at_generation_1103():
    # gliders travel c/4: about 276 cells by generation 1103, so 800 x 800 keeps all of
    # them off the hard edges (centre 400 cells from every side).
    board = centred(R_PENTOMINO, 800)
    at_1000 = step(board, generations=1000)
    at_1103 = step(at_1000, generations=103)
    assert population(at_1103) == 116
    np.testing.assert_array_equal(at_1103, step(board, generations=1103))
    # settled: the non-glider debris is periodic from here on, and the six gliders
    # keep moving, so the population stays 116 while nothing reaches an edge
    assert population(step(at_1103, generations=2)) == 116
    assert population(step(at_1103, generations=100)) == 116
    # and not before: generation 1102 still has 118 cells
    assert population(step(board, generations=1102)) == 118


def test_r_pentomino_on_torus_matches_hard_edges_while_far_from_edges():
    board = centred(R_PENTOMINO, 800)
    np.testing.assert_array_equal(
        step(board, torus=True, generations=1103), step(board, generations=1103)
    )


def test_diehard_vanishes_at_generation_130():
    board = centred(DIEHARD, 200)
    at_129 = step(board, generations=129)
    assert population(at_129) > 0
    assert population(step(at_129, generations=1)) == 0
    assert population(step(board, generations=130)) == 0


def test_diehard_in_colour_2_keeps_colour_and_matches_reference():
    board = centred(DIEHARD, 64, colour=2)
    got = step(board, generations=60)
    np.testing.assert_array_equal(got, step_reference(board, generations=60))
    assert set(np.unique(got)) <= {0, 2}


def test_r_pentomino_two_colours_matches_reference_for_200_generations():
    board = centred(R_PENTOMINO, 160)
    board[board > 0] = [1, 2, 1, 2, 2]
    np.testing.assert_array_equal(
        step(board, generations=200), step_reference(board, generations=200)
    )
