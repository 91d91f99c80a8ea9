"""How a Life game ends (the Life seed's end rules, docs/game-end.md "Life"), each condition
with its winner and result: extinction, budget deadlock, empty redraw round, agreement and
resignation, max_generations, removal."""

from __future__ import annotations

import pytest

import engine
from engine.errors import GameError
from tests.engine.lifekit import act, shift, start

BLOCK = [[0, 0], [1, 0], [0, 1], [1, 1]]
GLIDER = [[1, 0], [2, 1], [0, 2], [1, 2], [2, 2]]


def placed(cells_by_player, **config):
    """Every player places its cells and ends its turn: phase running."""
    state = start(**config)
    for pid, cells in enumerate(cells_by_player, start=1):
        if cells:
            state = act(state, pid, "place", cells=cells)
        state = engine.end_player_turn(state, pid)
    return state


def finished(state, winner, result):
    assert state.phase == "finished"
    assert (state.winner, state.result) == (winner, result)
    assert engine.get_winner(state) == winner
    view = engine.get_visible_state(state, None)
    assert (view["winner"], view["result"]) == (winner, result)
    assert engine.summary(state).finished


def singles(n, x0, y0):
    """``n`` isolated cells (they die after one generation) on a row, 3 apart."""
    return [[x0, y0 + 3 * i] for i in range(n)]


# ----------------------------------------------------------------------------- 1 extinction


def test_extinction_the_survivor_wins():
    state = placed([shift(BLOCK, 1, 1), [[12, 12]]])
    state = engine.tick(state, 8)
    assert state.generation == 1
    assert state.player(2).out
    finished(state, 1, "win")


def test_extinction_of_everyone_is_a_draw():
    state = engine.tick(placed([[[1, 1]], [[12, 12]]]), 8)
    assert state.generation == 1
    finished(state, None, "draw")


def test_extinction_needs_a_generation():
    # a player who placed nothing is not out before the first generation
    state = placed([shift(BLOCK, 1, 1), []])
    assert state.phase == "running" and not state.player(2).out
    finished(engine.tick(state, 1), 1, "win")


def test_extinction_with_four_players_goes_on_while_two_have_cells():
    state = placed(
        [shift(BLOCK, 1, 1), [[12, 1]], shift(BLOCK, 1, 12), shift(BLOCK, 12, 12)], players=4
    )
    state = engine.tick(state, 1)
    assert state.player(2).out and state.phase == "running"
    state = engine.tick(state, 5)
    assert (state.phase, state.generation) == ("redraw", 2)  # the three blocks are still
    view = engine.get_visible_state(state, 2)
    assert view["players"][1]["out"] is True


# ----------------------------------------------------------------------------- 2 budget deadlock


def test_budget_deadlock_behind_player_has_nothing_left():
    # p1: one block (4) and 6 cells that die, budget 0; p2: two blocks (8), budget 2
    state = placed(
        [
            shift(BLOCK, 1, 1) + singles(5, 5, 0) + [[1, 12]],
            shift(BLOCK, 9, 1) + shift(BLOCK, 12, 9),
        ],
        budget=10,
    )
    assert state.player(1).budget_left == 0 and state.player(2).budget_left == 2
    state = engine.tick(state, 5)
    assert state.generation == 2  # singles die at 1, the board repeats at 2
    finished(state, 2, "win")


def test_budget_deadlock_equal_scores_needs_every_budget_spent():
    state = engine.tick(placed([shift(BLOCK, 1, 1), shift(BLOCK, 12, 1)], budget=4), 3)
    finished(state, None, "draw")
    # equal scores, one player still has budget: the redraw stays open
    state = placed([shift(BLOCK, 1, 1), shift(BLOCK, 12, 1)], budget=5)
    state = act(state, 1, "speed", multiplier=2)
    state = engine.tick(state, 3)
    assert state.phase == "redraw"
    state = act(state, 1, "place", cells=[[5, 12]])
    assert state.phase == "redraw"  # p1 has a cell of this turn to erase
    state = act(state, 2, "place", cells=[[12, 12]])
    assert state.phase == "redraw"


def test_budget_deadlock_behind_player_with_budget_can_still_play():
    state = placed([shift(BLOCK, 1, 1), shift(BLOCK, 9, 1) + shift(BLOCK, 12, 9)], budget=8)
    state = engine.tick(state, 3)
    assert state.phase == "redraw"  # p1 is behind but has 4 cells left


def test_budget_deadlock_after_a_redraw_action():
    # both hold 8 cells after the lone red cell dies; p1 has spent everything, p2 has 1
    state = placed(
        [
            shift(BLOCK, 1, 1) + shift(BLOCK, 1, 9) + [[6, 14]],
            shift(BLOCK, 9, 1) + shift(BLOCK, 12, 9),
        ],
        budget=9,
    )
    state = engine.tick(state, 3)
    assert state.phase == "redraw"  # equal scores, p2 still has budget
    # p1 erases an old cell (no refund): now behind, budget 0, nothing of this turn
    state = act(state, 1, "erase", cells=[[1, 1]])
    finished(state, 2, "win")


# ----------------------------------------------------------------------------- 3 empty redraw round


def test_empty_redraw_round_ends_by_score():
    state = engine.tick(placed([shift(BLOCK, 1, 1) + shift(BLOCK, 1, 9), shift(BLOCK, 12, 1)]), 3)
    assert state.phase == "redraw"
    state = engine.end_player_turn(state, 1)
    assert state.phase == "redraw"
    state = engine.end_player_turn(state, 2)
    finished(state, 1, "win")


def test_empty_redraw_round_equal_scores_is_a_draw():
    state = engine.tick(placed([shift(BLOCK, 1, 1), shift(BLOCK, 12, 1)]), 3)
    state = engine.end_player_turn(engine.end_player_turn(state, 2), 1)
    finished(state, None, "draw")


def test_redraw_round_with_placed_then_erased_cell_counts_as_empty():
    state = engine.tick(placed([shift(BLOCK, 1, 1), shift(BLOCK, 12, 1)]), 3)
    state = act(state, 1, "place", cells=[[5, 12]])
    state = act(state, 1, "erase", cells=[[5, 12]])
    state = engine.end_player_turn(engine.end_player_turn(state, 1), 2)
    finished(state, None, "draw")


def test_redraw_round_with_a_placed_cell_resumes():
    state = engine.tick(placed([shift(BLOCK, 1, 1), shift(BLOCK, 12, 1)]), 3)
    state = act(state, 2, "place", cells=[[12, 12]])
    state = engine.end_player_turn(engine.end_player_turn(state, 1), 2)
    assert (state.phase, state.stable) == ("running", False)
    # the lone cell dies and the board repeats an earlier one: redraw again
    state = engine.tick(state, 5)
    assert state.phase == "redraw"


# ----------------------------------------------------------------------------- 4 agreement, resign


def test_propose_finish_by_all_ends_by_score():
    state = placed([shift(BLOCK, 1, 1) + [[5, 5], [5, 6], [5, 7]], shift(BLOCK, 12, 1)])
    state = act(state, 2, "propose_finish")
    assert state.phase == "running" and state.player(2).proposed_finish
    state = act(state, 1, "propose_finish")
    finished(state, 1, "win")  # 7 red cells against 4 green


def test_propose_finish_in_placement():
    state = start()
    state = act(state, 1, "place", cells=[[0, 0]])
    state = act(act(state, 2, "propose_finish"), 1, "propose_finish")
    finished(state, 1, "win")


def test_resign_two_players():
    state = placed([shift(BLOCK, 1, 1), shift(BLOCK, 12, 1) + [[12, 8], [13, 8], [14, 8]]])
    state = act(state, 2, "resign")
    finished(state, 1, "win")
    assert not (state.grid == 2).any()


def test_resign_four_players_game_goes_on():
    cells = [shift(BLOCK, 1, 1), shift(BLOCK, 12, 1), shift(BLOCK, 1, 12), shift(BLOCK, 12, 12)]
    state = placed(cells, players=4)
    state = act(state, 3, "resign")
    assert state.phase == "running" and state.player(3).out
    assert not (state.grid == 3).any()
    with pytest.raises(GameError) as err:
        act(state, 3, "pause")
    assert err.value.code == "INVALID_ACTION"
    state = act(act(state, 1, "resign"), 4, "resign")
    finished(state, 2, "win")


def test_resign_in_placement_passes_the_turn_or_ends():
    state = act(start(players=4), 1, "resign")
    assert (state.phase, state.turn) == ("placement", 2)
    state = act(start(), 1, "resign")
    finished(state, 2, "win")


# ----------------------------------------------------------------------------- 5 max generations


def test_max_generations_ends_by_score():
    state = placed([GLIDER + shift(BLOCK, 1, 12), shift(GLIDER, 10, 0)], max_generations=3)
    state = engine.tick(state, 10)
    assert state.generation == 3
    finished(state, 1, "win")


def test_max_generations_tie_is_a_draw():
    state = placed([GLIDER, shift(GLIDER, 10, 0)], max_generations=5)
    state = engine.tick(engine.tick(state, 2), 10)
    assert state.generation == 5
    finished(state, None, "draw")


# ----------------------------------------------------------------------------- 6 removal


def test_remove_player_while_running():
    state = placed([shift(BLOCK, 1, 1), shift(BLOCK, 12, 1)])
    state = engine.remove_player(state, 1)
    finished(state, 2, "win")
    assert not (state.grid == 1).any()


def test_remove_current_player_in_four_player_placement_passes_turn():
    state = start(players=4)
    state = act(state, 1, "place", cells=[[1, 1]])
    state = engine.remove_player(state, 1)
    assert (state.phase, state.turn) == ("placement", 2)
    assert not state.grid.any()
    state = engine.remove_player(state, 3)
    assert state.turn == 2
    state = engine.end_player_turn(state, 2)
    assert state.turn == 4
    state = engine.remove_player(state, 4)
    finished(state, 2, "win")


def test_remove_player_in_redraw_may_complete_the_round():
    cells = [shift(BLOCK, 1, 1), shift(BLOCK, 12, 1), shift(BLOCK, 1, 12), shift(BLOCK, 12, 12)]
    state = engine.tick(placed(cells, players=4), 3)
    assert state.phase == "redraw"
    state = act(state, 1, "place", cells=[[5, 5]])
    for pid in (1, 2, 3):
        state = engine.end_player_turn(state, pid)
    state = engine.remove_player(state, 4)
    assert state.phase == "running"


def test_remove_player_while_waiting_marks_the_seat_out():
    state = engine.new_game(engine.config_from_dict("life", {"width": 16, "height": 16}))
    state = engine.add_player(state, "a")
    state = engine.remove_player(state, 1)
    assert state.phase == "waiting" and state.player(1).out
    state = engine.add_player(state, "b")
    finished(state, 2, "win")


def test_remove_player_errors_and_idempotence():
    state = placed([shift(BLOCK, 1, 1), shift(BLOCK, 12, 1)], players=4)
    with pytest.raises(GameError) as err:
        engine.remove_player(state, 5)
    assert err.value.code == "UNKNOWN_PLAYER"
    once = engine.remove_player(state, 2)
    assert engine.remove_player(once, 2) is once
    done = engine.remove_player(engine.remove_player(once, 3), 4)
    finished(done, 1, "win")
    for call in (
        lambda: engine.remove_player(done, 1),
        lambda: act(done, 1, "speed", multiplier=2),
        lambda: engine.end_player_turn(done, 1),
        lambda: engine.add_player(done, "late"),
    ):
        with pytest.raises(GameError) as err:
            call()
        assert err.value.code == "GAME_FINISHED"
    assert engine.tick(done, 5) is done
