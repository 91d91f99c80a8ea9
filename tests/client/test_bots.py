"""The Life bot's own logic: reading the board RLE and choosing cells it may place."""

from __future__ import annotations

import pytest

from client.bots import FIGURES, LifeBot, decode_board


def view(zone, budget=100, width=60, height=60):
    return {
        "phase": "placement", "turn": 1, "you": 1, "width": width, "height": height, "zone": zone,
        "players": [{"id": 1, "name": "a", "budget_left": budget}],
    }


def test_multi_state_rle_decodes_colours_rows_and_runs():
    assert decode_board("2.A$B2A!", 4, 3) == [[0, 0, 1, 0], [2, 1, 1, 0], [0, 0, 0, 0]]


def test_rle_header_comments_and_blank_rows_are_understood():
    rle = "#C made by a test\nx = 4, y = 3, rule = B3/S23\nD2$.C!"
    assert decode_board(rle, 4, 3) == [[4, 0, 0, 0], [0, 0, 0, 0], [0, 3, 0, 0]]


def test_chosen_cells_stay_in_the_zone_and_within_budget():
    bot = LifeBot(None, "g", "b", seed=3)
    for budget in (0, 1, 4, 17, 100):
        cells = bot.pick_cells(view([30, 0, 60, 60]), budget, board=None)
        assert len(cells) <= budget
        assert len(set(cells)) == len(cells)
        assert all(30 <= x < 60 and 0 <= y < 60 for x, y in cells)
    assert len(bot.pick_cells(view([30, 0, 60, 60]), 100, board=None)) >= 80


def test_chosen_cells_keep_clear_of_live_cells():
    board = decode_board("60A$" * 60 + "!", 60, 60)
    for y in range(10, 20):
        for x in range(10, 20):
            board[y][x] = 0
    cells = LifeBot(None, "g", "b", seed=5).pick_cells(view([0, 0, 30, 60]), 20, board=board)
    assert all(11 <= x < 19 and 11 <= y < 19 for x, y in cells)


def test_reserved_cells_are_kept_clear_of_when_a_board_is_given_too():
    """``reserved`` (a stamp's square) and the board's live cells both count as taken: a
    board given with ``reserved`` used to replace the reserved cells by the live ones."""
    free = {(x, y) for y in range(10, 20) for x in range(10, 20)}
    reserved = [(x, y) for y in range(60) for x in range(30) if (x, y) not in free]
    empty = decode_board("!", 60, 60)
    for seed in range(5):
        cells = LifeBot(None, "g", "b", seed=seed).pick_cells(
            view([0, 0, 30, 60]), 20, board=empty, reserved=reserved
        )
        assert cells, seed
        assert all(11 <= x < 19 and 11 <= y < 19 for x, y in cells), seed
    board = decode_board("!", 60, 60)
    board[14][14] = 1  # a live cell inside the free window: kept clear of as well
    cells = LifeBot(None, "g", "b", seed=1).pick_cells(view([0, 0, 30, 60]), 20, board=board, reserved=reserved)
    assert all(11 <= x < 19 and 11 <= y < 19 and max(abs(x - 14), abs(y - 14)) > 1 for x, y in cells)


def test_decode_board_is_the_view_codecs_and_refuses_what_is_not_a_board():
    assert decode_board("", 3, 2) == [[0, 0, 0], [0, 0, 0]]  # a view without the field
    assert decode_board("b2ob$2o2b!", 4, 2) == [[0, 1, 1, 0], [1, 1, 0, 0]]  # a fog mask
    assert decode_board("2pA$yO!", 2, 2) == [[25, 25], [255, 0]]
    for bad, message in (("4A!", "past the right edge"), ("$$A!", "below the board"), ("A?!", "'?'")):
        with pytest.raises(ValueError, match=message):
            decode_board(bad, 3, 2)


def test_same_seed_same_choices():
    a = LifeBot(None, "g", "b", seed=42).pick_cells(view([0, 0, 30, 60]), 50, board=None)
    b = LifeBot(None, "g", "b", seed=42).pick_cells(view([0, 0, 30, 60]), 50, board=None)
    assert a == b


def test_figures_are_connected_small_shapes():
    assert {len(cells) for cells in FIGURES.values()} <= {3, 4, 5, 6}
