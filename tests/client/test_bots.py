"""The Life bot's own logic: reading the board RLE and choosing cells it may place."""

from __future__ import annotations

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


def test_same_seed_same_choices():
    a = LifeBot(None, "g", "b", seed=42).pick_cells(view([0, 0, 30, 60]), 50, board=None)
    b = LifeBot(None, "g", "b", seed=42).pick_cells(view([0, 0, 30, 60]), 50, board=None)
    assert a == b


def test_figures_are_connected_small_shapes():
    assert {len(cells) for cells in FIGURES.values()} <= {3, 4, 5, 6}
