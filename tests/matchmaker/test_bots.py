"""``python -m client.play --matchmaking``: bots queue, get matched, play to the end and
see their ratings move (through a real gateway, matchmaker, session and engine)."""

from __future__ import annotations

import random

import pytest

from client.matchplay import play_matchmaking, print_matchmaking

pytestmark = pytest.mark.integration


async def test_bots_queue_get_matched_play_and_are_rated(mm_url: str, capsys):
    # A small board and a generation limit no other test asks for: a short, private game.
    config = {"width": 20, "height": 20, "budget": 20, "max_generations": random.randrange(200, 2000)}
    result = await play_matchmaking(mm_url, kind="life", players=2, config=config, quiet=True)
    assert len(result["games"]) == 1
    (game_id, game), = result["games"].items()
    assert sorted(game["players"]) == ["mm-bot-1", "mm-bot-2"]
    assert game["result"] in ("win", "draw")
    bots = {b["player_id"]: b for b in result["bots"]}
    assert set(bots) == {1, 2} and all(b["game_id"] == game_id for b in bots.values())
    assert all(b["rating_before"] == 1500.0 and b["rating_after"] is not None for b in bots.values())
    if game["winner"]:
        loser = 3 - game["winner"]
        assert bots[game["winner"]]["rating_after"] > 1500 > bots[loser]["rating_after"]
    assert print_matchmaking(result) == 0
    out = capsys.readouterr().out
    assert f"game {game_id}" in out and "rating 1500 →" in out


def test_a_game_is_summed_up_from_the_view_that_saw_its_end():
    """In a 3-player CellWar game the bot knocked out first stops with a view that has no
    result; the summary takes the result the others saw (it said "draw" before)."""
    from client.matchplay import game_results

    players = [{"name": "mm-bot-1"}, {"name": "mm-bot-2"}, {"name": "mm-bot-3"}]
    end = {"winner": 2, "result": "win", "players": players}
    out = {"winner": None, "result": None, "players": players}
    for order in ([end, end, out], [out, end, end]):
        bots = [{"game_id": "g", "final": final} for final in order]
        assert game_results(bots) == {"g": {"winner": 2, "result": "win",
                                            "players": ["mm-bot-1", "mm-bot-2", "mm-bot-3"]}}
        assert all("final" not in b for b in bots)
