"""The six end conditions of a Life game (docs/architecture/rules.md "Life"), each driven
through the gateway (REST + SDK) on a small board with the test stack's fast ticking: the
final view names the winner and the result, and the log ends with ``GameFinished {"winner",
"result"}``."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from client.sdk import AsyncCellWarClient, Seat
from tests.support.versions import versions

pytestmark = pytest.mark.integration

#: 16×16, two players: player 1 draws in x < 8, player 2 in x >= 8.
SMALL = {"width": 16, "height": 16, "players": 2}
#: 20×20, four players: quadrants of 10×10 (1 top-left, 2 top-right, 3 bottom-left, 4
#: bottom-right).
QUAD = {"width": 20, "height": 20, "players": 4}

BLOCK_1 = [(2, 2), (3, 2), (2, 3), (3, 3)]  # a still life in player 1's half
BLOCK_2 = [(11, 2), (12, 2), (11, 3), (12, 3)]  # the same in player 2's half
BLINKER_1 = [(2, 10), (3, 10), (4, 10)]  # period 2: the board repeats
BLINKER_2 = [(11, 10), (12, 10), (13, 10)]


async def new_game(api: AsyncCellWarClient, config: dict[str, Any]) -> tuple[str, list[Seat]]:
    """A Life game with every seat taken (phase ``placement``, player 1 to draw)."""
    game_id = await api.create_game("life", config)
    seats = [await api.join(game_id, f"p{i}") for i in range(1, config["players"] + 1)]
    assert [s.player_id for s in seats] == list(range(1, config["players"] + 1))
    return game_id, seats


async def placement(
    api: AsyncCellWarClient, game_id: str, seats: list[Seat], drawings: list[list[tuple[int, int]]]
) -> dict:
    """Every player in turn places its cells (none: just ends the turn); the answer of the
    last ``end_turn``."""
    answer: dict = {}
    for seat, cells in zip(seats, drawings, strict=True):
        if cells:
            await api.place(game_id, seat.token, cells)
        answer = await api.end_turn(game_id, seat.token)
    return answer


async def wait_phase(api: AsyncCellWarClient, game_id: str, seat: Seat, *phases: str) -> dict:
    """Poll the view until its phase is one of ``phases`` (bounded)."""
    view: dict = {}
    for _ in range(1000):
        view = await api.state(game_id, seat.token)
        if view["phase"] in phases:
            return view
        await asyncio.sleep(0.01)
    raise AssertionError(f"phase {view.get('phase')!r} never became one of {phases}")


def player(view: dict, player_id: int) -> dict:
    return next(p for p in view["players"] if p["id"] == player_id)


async def assert_finished(
    api: AsyncCellWarClient, game_id: str, seat: Seat, winner: int | None, result: str
) -> tuple[dict, list[dict]]:
    """The game is finished with ``winner``/``result`` in the view, in the final
    ``GameFinished`` event (the log's last) and nowhere before it; returns (view, log)."""
    view = await wait_phase(api, game_id, seat, "finished")
    assert (view["phase"], view["winner"], view["result"], view["turn"]) == (
        "finished",
        winner,
        result,
        0,
    )
    events = await api.events(game_id, seat.token)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["type"] == "GameFinished"
    assert events[-1]["payload"] == {"winner": winner, "result": result}
    assert events[-1]["actor"] == 0
    assert [e["type"] for e in events].count("GameFinished") == 1
    assert view["seq"] == versions(events)[seat.player_id]  # the player's own version
    # A finished game's log is public, and the same.
    assert [e["seq"] for e in await api.events(game_id)] == [e["seq"] for e in events]
    return view, events


# ---------------------------------------------------------------- 1. extinction


async def test_extinction_leaves_one_player_who_wins(api: AsyncCellWarClient):
    game_id, (one, two) = await new_game(api, {**SMALL, "budget": 10})
    answer = await placement(api, game_id, [one, two], [BLOCK_1, [(12, 12)]])
    assert answer["view"]["phase"] == "running"

    view, events = await assert_finished(api, game_id, one, 1, "win")
    assert view["generation"] == 1  # the lone cell died in the first generation
    assert player(view, 2)["out"] is True and player(view, 2)["cells"] == 0
    assert player(view, 2)["budget_left"] == 9  # budget does not save a player
    assert player(view, 1)["out"] is False and player(view, 1)["cells"] == 4
    assert events[-2]["type"] == "GenerationsTicked" and events[-2]["payload"] == {"count": 1}


async def test_extinction_of_every_player_is_a_draw(api: AsyncCellWarClient):
    game_id, (one, two) = await new_game(api, {**SMALL, "budget": 10})
    await placement(api, game_id, [one, two], [[(3, 3)], [(12, 12)]])

    view, events = await assert_finished(api, game_id, two, None, "draw")
    assert view["generation"] == 1
    assert [(p["cells"], p["out"]) for p in view["players"]] == [(0, True), (0, True)]
    assert view["board"].count("A") == view["board"].count("B") == 0
    assert events[-2]["type"] == "GenerationsTicked"


async def test_four_player_extinction(api: AsyncCellWarClient):
    """Quadrants: 2 and 3 place a lone cell each, 4 places nothing; after the first
    generation only player 1 (a block) has cells."""
    game_id, seats = await new_game(api, {**QUAD, "budget": 4})
    assert (await api.state(game_id, seats[3].token))["zone"] == [10, 10, 20, 20]
    await placement(api, game_id, seats, [BLOCK_1, [(15, 5)], [(5, 15)], []])

    view, _ = await assert_finished(api, game_id, seats[2], 1, "win")
    assert view["generation"] == 1
    assert [(p["id"], p["cells"], p["out"]) for p in view["players"]] == [
        (1, 4, False),
        (2, 0, True),
        (3, 0, True),
        (4, 0, True),
    ]


# ---------------------------------------------------------------- 2. budget deadlock


async def test_budget_deadlock_the_leader_wins(api: AsyncCellWarClient):
    """Budget 4: player 1 spends it on a block (4 cells), player 2 on a blinker and a
    cell that dies (3 cells left). The board repeats, redraw opens, and player 2 (behind,
    budget 0) cannot move: finished at once, without any end_turn."""
    game_id, (one, two) = await new_game(api, {**SMALL, "budget": 4})
    await placement(api, game_id, [one, two], [BLOCK_1, [*BLINKER_2, (14, 3)]])

    view, events = await assert_finished(api, game_id, one, 1, "win")
    assert [(p["cells"], p["budget_left"], p["out"]) for p in view["players"]] == [
        (4, 0, False),
        (3, 0, False),
    ]
    assert view["stable"] is True
    assert view["generation"] == 3  # the blinker's board repeats at generation 3
    # After the last placement turn only the simulation ran: nobody said ready.
    last_turn = max(i for i, e in enumerate(events) if e["type"] == "TurnEnded")
    assert (events[last_turn]["actor"], events[last_turn]["payload"]) == (2, {})
    after = [e["type"] for e in events[last_turn + 1 :]]
    assert set(after[:-1]) == {"GenerationsTicked"} and after[-1] == "GameFinished"


async def test_budget_deadlock_with_equal_scores_is_a_draw(api: AsyncCellWarClient):
    """Budget 5, two blocks: redraw opens with 1 cell of budget each, so the game goes
    on. Each places its last cell: budgets are 0 but a cell of this turn could still be
    erased, so still no deadlock. Both ready: the lone cells die, the board repeats,
    redraw opens with equal scores and no budget: a draw."""
    game_id, (one, two) = await new_game(api, {**SMALL, "budget": 5})
    await placement(api, game_id, [one, two], [BLOCK_1, BLOCK_2])

    view = await wait_phase(api, game_id, one, "redraw", "finished")
    assert (view["phase"], view["stable"], view["generation"]) == ("redraw", True, 1)
    assert [(p["cells"], p["budget_left"]) for p in view["players"]] == [(4, 1), (4, 1)]

    view = (await api.place(game_id, one.token, [(5, 12)]))["view"]
    assert view["phase"] == "redraw"  # player 2 is behind but still has budget
    view = (await api.place(game_id, two.token, [(13, 12)]))["view"]
    assert view["phase"] == "redraw"  # equal, budgets 0, but each could erase its cell
    assert [(p["cells"], p["budget_left"]) for p in view["players"]] == [(5, 0), (5, 0)]
    await api.end_turn(game_id, one.token)
    assert (await api.end_turn(game_id, two.token))["view"]["phase"] in (
        "running",
        "redraw",
        "finished",
    )

    view, events = await assert_finished(api, game_id, two, None, "draw")
    assert [(p["cells"], p["budget_left"], p["out"]) for p in view["players"]] == [
        (4, 0, False),
        (4, 0, False),
    ]
    assert view["generation"] == 2
    assert [e["type"] for e in events[-3:]] == ["TurnEnded", "GenerationsTicked", "GameFinished"]


# ---------------------------------------------------------------- 3. empty redraw round


async def test_empty_redraw_round_ends_by_score(api: AsyncCellWarClient):
    """A round with a cell placed resumes the simulation; a round where nothing placed
    is left on the board (placed then erased) ends the game by score."""
    game_id, (one, two) = await new_game(api, {**SMALL, "budget": 10})
    await placement(api, game_id, [one, two], [BLOCK_1, BLINKER_2])
    view = await wait_phase(api, game_id, one, "redraw")
    assert view["generation"] == 2

    # A round with a placed cell (it dies at once): the simulation resumes.
    await api.place(game_id, one.token, [(6, 13)])
    view = (await api.end_turn(game_id, one.token))["view"]
    assert view["phase"] == "redraw" and player(view, 1)["ready"] is True
    view = (await api.end_turn(game_id, two.token))["view"]
    assert view["phase"] != "finished"
    view = await wait_phase(api, game_id, two, "redraw", "finished")
    assert view["phase"] == "redraw" and view["generation"] > 2

    # Placed and erased: nothing placed in this round. Both ready: finished by score.
    await api.place(game_id, two.token, [(14, 14)])
    await api.erase(game_id, two.token, [(14, 14)])
    await api.end_turn(game_id, two.token)
    view = (await api.end_turn(game_id, one.token))["view"]
    assert view["phase"] == "finished"

    view, events = await assert_finished(api, game_id, one, 1, "win")
    assert [(p["cells"], p["budget_left"]) for p in view["players"]] == [(4, 5), (3, 7)]
    assert [(e["type"], e["actor"]) for e in events[-3:]] == [
        ("TurnEnded", 2),
        ("TurnEnded", 1),
        ("GameFinished", 0),
    ]


# ---------------------------------------------------------------- 4. agreement, resign


async def test_agreement_of_every_player_ends_by_score(api: AsyncCellWarClient):
    game_id, (one, two) = await new_game(api, {**SMALL, "budget": 10})
    await placement(api, game_id, [one, two], [BLOCK_1, BLINKER_2])
    await wait_phase(api, game_id, one, "redraw")

    view = (await api.simple(game_id, two.token, "propose_finish"))["view"]
    assert view["phase"] == "redraw"  # one proposal alone does not finish
    assert [p["proposed_finish"] for p in view["players"]] == [False, True]
    view = (await api.simple(game_id, one.token, "propose_finish"))["view"]
    assert view["phase"] == "finished"

    view, events = await assert_finished(api, game_id, two, 1, "win")
    assert [p["cells"] for p in view["players"]] == [4, 3]
    last_action = events[-2]
    assert (last_action["type"], last_action["actor"]) == ("ActionApplied", 1)
    assert last_action["payload"] == {"action": {"type": "propose_finish"}}


async def test_resign_puts_the_player_out_and_the_other_wins(api: AsyncCellWarClient):
    """Player 1 leads on cells but resigns: player 2 wins (not by score)."""
    game_id, (one, two) = await new_game(api, {**SMALL, "budget": 10})
    await placement(api, game_id, [one, two], [BLOCK_1, BLINKER_2])
    await wait_phase(api, game_id, one, "redraw")

    view = (await api.simple(game_id, one.token, "resign"))["view"]
    assert view["phase"] == "finished"
    view, events = await assert_finished(api, game_id, two, 2, "win")
    assert (player(view, 1)["out"], player(view, 1)["cells"]) == (True, 0)
    assert (player(view, 2)["out"], player(view, 2)["cells"]) == (False, 3)
    assert (events[-2]["type"], events[-2]["actor"], events[-2]["payload"]) == (
        "ActionApplied",
        1,
        {"action": {"type": "resign"}},
    )


async def test_four_players_resign_leave_and_agree(api: AsyncCellWarClient):
    """With four players the game goes on after a resign and a leave; the two left must
    both propose to finish; player 1 (two blocks) wins by score."""
    game_id, seats = await new_game(api, {**QUAD, "budget": 8})
    one, two, three, four = seats
    drawings = [
        [*BLOCK_1, (6, 6), (7, 6), (6, 7), (7, 7)],
        [(12, 2), (13, 2), (12, 3), (13, 3)],
        [(2, 12), (3, 12), (2, 13), (3, 13)],
        [(12, 12), (13, 12), (12, 13), (13, 13)],
    ]
    await placement(api, game_id, seats, drawings)
    view = await wait_phase(api, game_id, one, "redraw")
    assert [p["cells"] for p in view["players"]] == [8, 4, 4, 4]

    view = (await api.simple(game_id, three.token, "resign"))["view"]
    assert (
        view["phase"] == "redraw"
        and player(view, 3)["out"] is True
        and player(view, 3)["cells"] == 0
    )
    view = (await api.leave(game_id, four.token))["view"]
    assert (
        view["phase"] == "redraw"
        and player(view, 4)["out"] is True
        and player(view, 4)["cells"] == 0
    )
    view = (await api.simple(game_id, one.token, "propose_finish"))["view"]
    assert view["phase"] == "redraw"
    view = (await api.simple(game_id, two.token, "propose_finish"))["view"]
    assert view["phase"] == "finished"

    view, events = await assert_finished(api, game_id, two, 1, "win")
    assert [(p["cells"], p["out"]) for p in view["players"]] == [
        (8, False),
        (4, False),
        (0, True),
        (0, True),
    ]
    removed = [e for e in events if e["type"] == "PlayerRemoved"]
    assert [(e["actor"], e["payload"]) for e in removed] == [
        (4, {"player_id": 4, "reason": "left"})
    ]


# ---------------------------------------------------------------- 5. max_generations


async def test_max_generations_ends_by_score(api: AsyncCellWarClient):
    """Two gliders on a torus never repeat a board within 15 generations, so only
    ``max_generations`` (30) ends the game; player 1 has a glider and a block."""
    config = {
        "width": 20,
        "height": 20,
        "players": 2,
        "budget": 20,
        "torus": True,
        "max_generations": 30,
    }
    game_id, (one, two) = await new_game(api, config)
    await api.stamp(game_id, one.token, 1, 1, "glider")
    await api.place(game_id, one.token, [(7, 15), (8, 15), (7, 16), (8, 16)])
    await api.end_turn(game_id, one.token)
    await api.stamp(game_id, two.token, 11, 1, "glider")
    await api.end_turn(game_id, two.token)

    view, events = await assert_finished(api, game_id, one, 1, "win")
    assert view["generation"] == view["max_generations"] == 30
    assert view["stable"] is False
    assert [(p["cells"], p["out"]) for p in view["players"]] == [(9, False), (5, False)]
    ticked = [e["payload"]["count"] for e in events if e["type"] == "GenerationsTicked"]
    assert sum(ticked) == 30
    assert events[-2]["type"] == "GenerationsTicked"


# ---------------------------------------------------------------- 6. a player removed


async def test_player_removed_by_leave_the_other_wins(api: AsyncCellWarClient, gateway: str):
    """Player 2 leads on cells and leaves (``POST /game/{id}/leave``): player 1 wins."""
    game_id, (one, two) = await new_game(api, {**SMALL, "budget": 10})
    await placement(api, game_id, [one, two], [BLINKER_1, BLOCK_2])
    view = await wait_phase(api, game_id, one, "redraw")
    assert [p["cells"] for p in view["players"]] == [3, 4]

    async with httpx.AsyncClient(base_url=gateway, timeout=30) as http:
        response = await http.post(
            f"/game/{game_id}/leave", headers={"Authorization": f"Bearer {two.token}"}
        )
    assert response.status_code == 200, response.text
    assert response.json()["view"]["phase"] == "finished"

    view, events = await assert_finished(api, game_id, one, 1, "win")
    assert [(p["cells"], p["out"]) for p in view["players"]] == [(3, False), (0, True)]
    assert (events[-2]["type"], events[-2]["actor"], events[-2]["payload"]) == (
        "PlayerRemoved",
        2,
        {"player_id": 2, "reason": "left"},
    )


async def test_leave_during_placement_ends_the_game(api: AsyncCellWarClient):
    game_id, (one, two) = await new_game(api, {**SMALL, "budget": 10})
    await api.place(game_id, one.token, BLOCK_1)
    view = (await api.leave(game_id, one.token))["view"]
    assert view["phase"] == "finished"
    view, events = await assert_finished(api, game_id, two, 2, "win")
    assert view["generation"] == 0
    assert [(p["cells"], p["out"]) for p in view["players"]] == [(0, True), (0, False)]
    assert events[-2]["type"] == "PlayerRemoved"
