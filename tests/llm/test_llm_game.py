"""``python -m client.play --kind cellwar --bot llm`` against the API heuristic bot through
the real platform (gateway, session, engine, NATS), with the real local model: a whole
6×6 game, every move legal (an illegal one would be refused by the engine and end the
seat with an API error); and a Life game whose seat 1 is placed by the model."""

from __future__ import annotations

import asyncio

import pytest

from client.bots.llm import LifePlacer
from client.bots.llm_local import SMOLLM2_ALIAS
from client.play import main, play

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


async def test_client_play_cellwar_llm_plays_a_whole_game(gateway: str, llm_url: str, capsys):
    argv = [
        "--url", gateway, "--kind", "cellwar", "--bot", "llm", "--llm-url", llm_url,
        "--model", SMOLLM2_ALIAS, "--size", "6", "--seed", "2", "--quiet",
    ]
    code = await asyncio.to_thread(main, argv)
    out = capsys.readouterr().out
    assert code == 0, out
    lines = [line for line in out.splitlines() if not line[:4].isdigit()]  # not the in-process gateway's log
    assert lines[0] in ("llm (player 1): won", "llm (player 1): lost")
    assert lines[1].startswith("llm (player 1): ") and " moves, " in lines[1]
    moves = int(lines[1].split(": ", 1)[1].split()[0])
    assert moves > 0
    assert lines[2].startswith("winner: player ")
    assert any(line.startswith("final state hash: ") and len(line.split()[-1]) > 8 for line in lines)


async def test_the_model_places_the_cells_of_a_life_seat(gateway: str, llm_url: str):
    placer = LifePlacer(llm_url, SMOLLM2_ALIAS, max_cells=8)
    try:
        result = await play(
            gateway, size=16, budget=8, max_generations=40, quiet=True, players=2, llm_seat=1, placer=placer,
        )
    finally:
        placer.close()
    assert result["final_view"]["phase"] == "finished"
    assert placer.stats.moves >= 1 and placer.stats.requests == placer.stats.moves + placer.stats.retries
    assert [p["name"] for p in result["final_view"]["players"]][0] == "llm-1"
