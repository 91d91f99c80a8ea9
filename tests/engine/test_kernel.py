"""The bit-parallel Life kernel against the plain definition, plus known small patterns."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine.life
from engine.life.kernel import INTERLEAVED_FROM, PackedBoards, pack, step, step_many, unpack
from engine.life.reference import step_reference

SIDES = st.one_of(
    st.sampled_from([1, 2, 3, 63, 64, 65, 127, 128, 129]),
    st.integers(min_value=1, max_value=150),
)
COLOUR_SETS = st.sampled_from(
    [(1,), (2,), (3,), (1, 2), (2, 4), (1, 2, 3), (1, 2, 3, 4), (2, 3, 4)]
)


def random_board(seed: int, h: int, w: int, colours: tuple[int, ...], fill: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    alive = rng.random((h, w)) < fill
    return np.where(alive, rng.choice(np.array(colours, dtype=np.uint8), (h, w)), 0).astype(
        np.uint8
    )


def board_from(rows: list[str]) -> np.ndarray:
    """'.' dead, digits are colours."""
    return np.array([[0 if ch == "." else int(ch) for ch in row] for row in rows], dtype=np.uint8)


def cells(board: np.ndarray) -> set[tuple[int, int]]:
    """Live cells as (x, y) = (column, row)."""
    ys, xs = np.nonzero(board)
    return {(int(x), int(y)) for x, y in zip(xs, ys, strict=True)}


GLIDER = board_from([".1.", "..1", "111"])  # the standard south-east glider


# -- property: kernel == reference ------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    h=SIDES,
    w=SIDES,
    colours=COLOUR_SETS,
    fill=st.sampled_from([0.0, 0.05, 0.2, 0.35, 0.5, 0.8, 1.0]),
    torus=st.booleans(),
    generations=st.integers(1, 30),
)
def test_kernel_matches_reference(seed, h, w, colours, fill, torus, generations):
    board = random_board(seed, h, w, colours, fill)
    got = step(board, torus=torus, generations=generations)
    want = step_reference(board, torus=torus, generations=generations)
    assert got.dtype == np.uint8
    assert got.shape == (h, w)
    np.testing.assert_array_equal(got, want)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 5),
    h=st.integers(1, 70),
    w=st.sampled_from([1, 5, 31, 64, 65, 100]),
    colours=COLOUR_SETS,
    torus=st.booleans(),
    generations=st.integers(1, 12),
)
def test_step_many_matches_one_by_one(seed, n, h, w, colours, torus, generations):
    boards = np.stack([random_board(seed + i, h, w, colours, 0.35) for i in range(n)])
    got = step_many(boards, torus=torus, generations=generations)
    for i in range(n):
        np.testing.assert_array_equal(
            got[i], step_reference(boards[i], torus=torus, generations=generations)
        )


@pytest.mark.parametrize("width", [63, 64, 65, 127, 128, 129])
@pytest.mark.parametrize("colours", [(1,), (1, 2), (1, 2, 3, 4)])
@pytest.mark.parametrize("torus", [False, True])
def test_word_boundary_widths(width, colours, torus):
    board = random_board(width, 37, width, colours, 0.35)
    np.testing.assert_array_equal(
        step(board, torus=torus, generations=25),
        step_reference(board, torus=torus, generations=25),
    )


@pytest.mark.parametrize("shape", [(1, 1), (1, 70), (70, 1), (2, 2), (1, 64), (64, 1)])
@pytest.mark.parametrize("torus", [False, True])
def test_strips_and_tiny_boards(shape, torus):
    for seed in range(5):
        board = random_board(seed, *shape, (1, 2), 0.6)
        np.testing.assert_array_equal(
            step(board, torus=torus, generations=7),
            step_reference(board, torus=torus, generations=7),
        )


LAYOUTS = ["plain", "interleaved"]


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 4),
    h=st.integers(1, 40),
    w=st.sampled_from([1, 2, 7, 63, 64, 65, 100, 128, 129, 191, 200]),
    colours=COLOUR_SETS,
    torus=st.booleans(),
    generations=st.integers(1, 9),
    layout=st.sampled_from(LAYOUTS),
    band_rows=st.one_of(st.none(), st.integers(1, 12)),
)
def test_both_layouts_and_any_bands_match_reference(
    seed, n, h, w, colours, torus, generations, layout, band_rows
):
    boards = np.stack([random_board(seed + i, h, w, colours, 0.35) for i in range(n)])
    got = step_many(
        boards, torus=torus, generations=generations, layout=layout, band_rows=band_rows
    )
    for i in range(n):
        np.testing.assert_array_equal(
            got[i], step_reference(boards[i], torus=torus, generations=generations)
        )


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("torus", [False, True])
@pytest.mark.parametrize("h", [3, 4, 5, 6, 7, 9, 10, 11])
def test_heights_around_the_band_size(layout, torus, h):
    # 5-row bands over stacks of 3 boards: band edges fall on data rows, ghost rows and
    # the seams between boards, and the torus wraps rows across bands
    boards = np.stack([random_board(h * 10 + i, h, 70, (1, 2, 3, 4), 0.4) for i in range(3)])
    got = step_many(boards, torus=torus, generations=6, layout=layout, band_rows=5)
    for i in range(3):
        np.testing.assert_array_equal(
            got[i], step_reference(boards[i], torus=torus, generations=6)
        )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_glider_wraps_across_bands_on_a_torus(layout):
    n = 16
    board = np.zeros((n, n), dtype=np.uint8)
    board[1:4, 1:4] = GLIDER
    packed = PackedBoards(board[None], torus=True, layout=layout, band_rows=3)
    packed.advance(4 * n)  # once around both axes, through every band edge
    np.testing.assert_array_equal(packed.to_boards()[0], board)
    packed.advance(4 * n - 6)
    assert np.count_nonzero(packed.to_boards()) == 5


@pytest.mark.parametrize("layout", LAYOUTS)
def test_layouts_agree_over_many_advances(layout):
    board = random_board(11, 50, 150, (1, 2), 0.35)
    packed = PackedBoards(board[None], torus=True, layout=layout)
    assert packed.layout == layout
    for gens in (1, 2, 3, 1):  # odd and even counts: both directions of the double buffer
        packed.advance(gens)
    np.testing.assert_array_equal(
        packed.to_boards()[0], step_reference(board, torus=True, generations=7)
    )


def test_step_chooses_the_layout_by_generations_and_both_agree():
    board = random_board(5, 60, 90, (2, 3), 0.35)
    for gens in (INTERLEAVED_FROM - 1, INTERLEAVED_FROM):
        want = step_reference(board, generations=gens)
        np.testing.assert_array_equal(step(board, generations=gens), want)
        for layout in LAYOUTS:
            got = step_many(board[None], generations=gens, layout=layout)[0]
            np.testing.assert_array_equal(got, want)


def test_cached_programs_never_mix_shapes_colours_or_edges():
    # the same shape with other colours or edges, and other shapes, one after another:
    # a cached program reused for a different board must not leak any state
    cases = [
        (random_board(1, 30, 70, (1, 2), 0.4), False),
        (random_board(2, 30, 70, (1, 2), 0.4), True),
        (random_board(3, 30, 70, (1,), 0.4), False),
        (random_board(4, 30, 70, (1, 2, 3, 4), 0.4), False),
        (random_board(5, 31, 70, (1, 2), 0.4), False),
        (np.zeros((30, 70), dtype=np.uint8), False),
    ]
    for _ in range(2):
        for board, torus in cases:
            np.testing.assert_array_equal(
                step(board, torus=torus, generations=3),
                step_reference(board, torus=torus, generations=3),
            )


def test_concurrent_steps_of_one_shape_do_not_share_buffers():
    boards = [random_board(100 + i, 40, 80, (1, 2), 0.4) for i in range(4)]
    want = [step_reference(b, generations=5) for b in boards]
    errors: list[str] = []

    def worker(i: int) -> None:
        for _ in range(25):
            if not np.array_equal(step(boards[i], generations=5), want[i]):
                errors.append(f"board {i}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


def test_unknown_layout_and_bad_band_rows_raise_value_error():
    board = np.zeros((1, 4, 4), dtype=np.uint8)
    with pytest.raises(ValueError, match="layout"):
        PackedBoards(board, layout="diagonal")
    with pytest.raises(ValueError, match="band_rows"):
        PackedBoards(board, band_rows=0)


def test_packed_boards_advance_in_pieces_equals_one_call():
    board = random_board(7, 90, 130, (1, 2, 3, 4), 0.3)
    packed = PackedBoards(board[None], torus=True)
    for _ in range(5):
        packed.advance(3)
    np.testing.assert_array_equal(packed.to_boards()[0], step(board, torus=True, generations=15))


def test_engine_life_reexports_step():
    assert engine.life.step is step


# -- pack / unpack ------------------------------------------------------------------------


@pytest.mark.parametrize("width", [1, 7, 63, 64, 65, 200])
def test_pack_unpack_round_trip(width):
    rng = np.random.default_rng(width)
    bits = (rng.random((3, width)) < 0.5).astype(np.uint8)
    words = pack(bits)
    assert words.dtype == np.uint64
    assert words.shape == (3, -(-width // 64))
    np.testing.assert_array_equal(unpack(words, width), bits)


def test_pack_bit_order():
    bits = np.zeros((1, 70), dtype=np.uint8)
    bits[0, 0] = 1
    bits[0, 65] = 1
    words = pack(bits)
    assert words.tolist() == [[1, 2]]


def test_unpack_rejects_too_wide():
    with pytest.raises(ValueError):
        unpack(np.zeros((1, 1), dtype=np.uint64), 65)


# -- known patterns -----------------------------------------------------------------------


@pytest.mark.parametrize("torus", [False, True])
def test_block_is_still(torus):
    board = np.zeros((6, 6), dtype=np.uint8)
    board[2:4, 2:4] = 1
    np.testing.assert_array_equal(step(board, torus=torus, generations=1), board)
    np.testing.assert_array_equal(step(board, torus=torus, generations=17), board)


def test_blinker_has_period_2():
    board = np.zeros((5, 5), dtype=np.uint8)
    board[2, 1:4] = 1
    one = step(board)
    vertical = np.zeros((5, 5), dtype=np.uint8)
    vertical[1:4, 2] = 1
    np.testing.assert_array_equal(one, vertical)
    np.testing.assert_array_equal(step(board, generations=2), board)
    np.testing.assert_array_equal(step(board, generations=101), vertical)


def test_glider_moves_one_cell_south_east_every_4_generations():
    board = np.zeros((10, 10), dtype=np.uint8)
    board[1:4, 1:4] = GLIDER
    start = cells(board)
    after = cells(step(board, generations=4))
    assert after == {(x + 1, y + 1) for x, y in start}
    after8 = cells(step(board, generations=8))
    assert after8 == {(x + 2, y + 2) for x, y in start}


def test_glider_hits_hard_edge_but_wraps_on_torus():
    n = 12
    board = np.zeros((n, n), dtype=np.uint8)
    board[1:4, 1:4] = GLIDER
    # torus: back where it started after 4 n generations, and never lost a cell
    np.testing.assert_array_equal(step(board, torus=True, generations=4 * n), board)
    assert np.count_nonzero(step(board, torus=True, generations=4 * n - 6)) == 5
    # hard edges: it runs into the corner and becomes a block (4 cells), never 5 again
    end = step(board, generations=4 * n)
    assert not np.array_equal(end, board)
    assert cells(end) == {(n - 2, n - 2), (n - 1, n - 2), (n - 2, n - 1), (n - 1, n - 1)}


def test_glider_across_word_boundary_on_wide_torus():
    # a 1 x 65-wide torus strip is too thin; use 8 rows x 130 columns, crossing two words
    board = np.zeros((8, 130), dtype=np.uint8)
    board[0:3, 125:128] = GLIDER
    got = step(board, torus=True, generations=4 * 8 * 65)  # 520 cells east = 4 x 130
    np.testing.assert_array_equal(got, board)


# -- colours ------------------------------------------------------------------------------


def test_newborn_takes_majority_colour_and_survivor_keeps_its_own():
    board = board_from([".....", ".....", ".112.", ".....", "....."])
    want = board_from([".....", "..1..", "..1..", "..1..", "....."])
    np.testing.assert_array_equal(step(board), want)
    board = board_from([".....", ".....", ".212.", ".....", "....."])
    want = board_from([".....", "..2..", "..1..", "..2..", "....."])
    np.testing.assert_array_equal(step(board), want)


def test_newborn_majority_with_colours_3_and_4():
    board = board_from([".....", ".....", ".434.", ".....", "....."])
    want = board_from([".....", "..4..", "..3..", "..4..", "....."])
    np.testing.assert_array_equal(step(board), want)


@pytest.mark.parametrize(
    ("row", "absent"), [("123", 4), ("124", 3), ("314", 2), ("432", 1), ("241", 3)]
)
def test_quadlife_newborn_takes_the_absent_colour(row, absent):
    board = board_from([".....", ".....", "." + row + ".", ".....", "....."])
    got = step(board)
    assert got[1, 2] == absent
    assert got[3, 2] == absent
    assert got[2, 2] == int(row[1])  # the middle cell survives with its colour
    assert np.count_nonzero(got) == 3


def test_single_colour_keeps_its_colour():
    board = np.zeros((6, 6), dtype=np.uint8)
    board[2, 1:4] = 3
    got = step(board)
    assert set(np.unique(got)) == {0, 3}
    assert got[1, 2] == 3


def test_empty_board_stays_empty():
    board = np.zeros((9, 70), dtype=np.uint8)
    np.testing.assert_array_equal(step(board, torus=True, generations=5), board)


# -- contract ---------------------------------------------------------------------------


def test_input_not_mutated_and_result_is_new():
    board = random_board(3, 40, 70, (1, 2), 0.4)
    before = board.copy()
    got = step(board, generations=3)
    np.testing.assert_array_equal(board, before)
    assert not np.shares_memory(got, board)
    same = step(board, generations=0)
    np.testing.assert_array_equal(same, board)
    assert not np.shares_memory(same, board)
    many = np.stack([board, board])
    step_many(many, generations=2)
    np.testing.assert_array_equal(many[0], before)


def test_accepts_other_integer_dtypes():
    board = np.zeros((5, 5), dtype=np.int64)
    board[2, 1:4] = 2
    got = step(board)
    assert got.dtype == np.uint8
    assert got[1:4, 2].tolist() == [2, 2, 2]


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros(5, dtype=np.uint8),
        np.zeros((2, 3, 4), dtype=np.uint8),
        np.full((3, 3), 5, dtype=np.uint8),
        np.full((3, 3), -1, dtype=np.int16),
        np.zeros((3, 3), dtype=np.float64),
    ],
)
def test_bad_board_raises_value_error(bad):
    with pytest.raises(ValueError):
        step(bad)


def test_bad_generations_raise_value_error():
    board = np.zeros((3, 3), dtype=np.uint8)
    with pytest.raises(ValueError):
        step(board, generations=-1)
    with pytest.raises(ValueError):
        step(board, generations=1.5)


def test_step_many_rejects_2d():
    with pytest.raises(ValueError):
        step_many(np.zeros((3, 3), dtype=np.uint8))
