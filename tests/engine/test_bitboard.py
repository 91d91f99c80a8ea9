"""The Python-int Life board (engine/life/bitboard.py) against the plain definition of the
rule (engine.life.reference.step_reference): random boards of one to four colours, hard
edges and tori, sizes around the word and row boundaries, many generations."""

from __future__ import annotations

import numpy as np
import pytest

from engine.life.bitboard import Bitboard, bitboard, colours_of
from engine.life.reference import step_reference

SIZES = [(1, 1), (3, 5), (8, 8), (17, 23), (40, 64), (33, 65), (64, 1), (60, 60)]


def random_board(rng: np.random.Generator, h: int, w: int, colours: int, fill: float) -> np.ndarray:
    alive = rng.random((h, w)) < fill
    return (alive * rng.integers(1, colours + 1, (h, w))).astype(np.uint8)


@pytest.mark.parametrize("torus", [False, True])
@pytest.mark.parametrize("colours", [1, 2, 3, 4])
@pytest.mark.parametrize("h,w", SIZES)
def test_generations_equal_the_reference(h, w, colours, torus):
    rng = np.random.default_rng(h * 1000 + w * 10 + colours + 7 * torus)
    for fill in (0.2, 0.45):
        board = random_board(rng, h, w, colours, fill)
        bb = Bitboard(h, w, torus, colours_of(board))
        planes = bb.load(board)
        assert np.array_equal(bb.board(planes), board)
        for _ in range(25):
            board = step_reference(board, torus=torus)
            planes = bb.step(planes)
            assert np.array_equal(bb.board(planes), board)
            counts = bb.counts(planes)
            assert counts == [int(np.count_nonzero(board))] + [int((board == c).sum()) for c in (1, 2, 3, 4)]


def test_a_colour_set_wider_than_the_board_changes_nothing():
    rng = np.random.default_rng(5)
    board = random_board(rng, 30, 30, 1, 0.4)  # colour 1 only
    wide = bitboard(30, 30, False, (1, 2, 3, 4))
    narrow = bitboard(30, 30, False, (1,))
    a, b = wide.load(board), narrow.load(board)
    for _ in range(10):
        a, b = wide.step(a), narrow.step(b)
        assert np.array_equal(wide.board(a), narrow.board(b))


def test_three_different_parents_give_the_absent_colour():
    board = np.zeros((5, 5), dtype=np.uint8)
    board[1, 1], board[1, 3], board[3, 2] = 1, 2, 4  # parents 1, 2, 4 of cell (2, 2)
    bb = Bitboard(5, 5, False, (1, 2, 3, 4))
    nxt = bb.board(bb.step(bb.load(board)))
    assert nxt[2, 2] == 3 == step_reference(board)[2, 2]


def test_colour_sets_are_one_two_or_four():
    with pytest.raises(ValueError):
        Bitboard(8, 8, False, (1, 2, 3))
