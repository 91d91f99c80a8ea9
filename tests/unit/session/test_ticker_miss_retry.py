"""The ticker's Run call sends a missed item again with its base only while the game is
still on that base (a command that moved it during the first call would make the base
disagree with the item's ``base_hash``, which the engine refuses as ``MALFORMED``)."""

from __future__ import annotations

from types import SimpleNamespace

from cellwar.v1 import engine_pb2
from services.session.entrypoints.ticker import MISS, OK, Ticker


class RecordingEngine:
    """``run`` answers MISS the first time and OK after; ``moved`` runs during the first
    call (a command landing meanwhile)."""

    def __init__(self, moved) -> None:
        self.calls: list[list[engine_pb2.RunItem]] = []
        self.moved = moved

    async def run(self, items):
        self.calls.append(list(items))
        if len(self.calls) == 1:
            self.moved()
            return [engine_pb2.RunResult(game_id=i.game_id, status=MISS) for i in items]
        return [engine_pb2.RunResult(game_id=i.game_id, status=OK) for i in items]


def _game(game_id: str, state_hash: str) -> SimpleNamespace:
    return SimpleNamespace(game_id=game_id, state=engine_pb2.GameState(state_hash=state_hash))


async def test_a_missed_item_is_sent_again_only_while_its_game_is_on_its_base():
    still, moved = _game("g-still", "h1"), _game("g-moved", "h2")

    def a_command_lands() -> None:
        moved.state = engine_pb2.GameState(state_hash="h3")

    engine = RecordingEngine(a_command_lands)
    ticker = SimpleNamespace(games=SimpleNamespace(engine=engine))
    batch = [
        (still, engine_pb2.RunItem(game_id="g-still", base_hash="h1")),
        (moved, engine_pb2.RunItem(game_id="g-moved", base_hash="h2")),
    ]
    results = await Ticker._call(ticker, batch)
    assert [i.game_id for i in engine.calls[1]] == ["g-still"]
    assert engine.calls[1][0].base.state_hash == "h1"
    assert [r.status for r in results] == [OK, MISS]
