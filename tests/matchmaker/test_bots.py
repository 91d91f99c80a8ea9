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
