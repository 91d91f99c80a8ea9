"""``python -m client.play``'s CellWar progress lines (pure: views in, lines out)."""

from __future__ import annotations

from client.play import CellWarProgress


def _view(seq: int, round_: int, phase: str = "playing", units: tuple = (3, None, None)) -> dict:
    return {
        "seq": seq,
        "phase": phase,
        "round": round_,
        "turn": 1,
        "players": [{"name": f"bot-{i + 1}", "units": n, "out": n == 0} for i, n in enumerate(units)],
    }


def test_one_line_per_round_from_whichever_bot_sees_it_first_in_order(capsys):
    progress = CellWarProgress()
    bot1, bot2 = object(), object()
    progress(bot1, _view(10, 1))
    progress(bot2, _view(11, 1))  # the same round from another bot: said already
    progress(bot2, _view(20, 2, units=(None, 4, None)))
    progress(bot1, _view(19, 1))  # a late view of round 1: not said again
    # bot-1 is out: the others' views still move the progress on
    progress(bot2, _view(30, 3, units=(0, 4, None)))
    progress(bot2, _view(40, 4, phase="finished", units=(0, 4, 0)))
    lines = capsys.readouterr().err.splitlines()
    assert [line.split()[0] for line in lines] == ["[seq", "[seq", "[seq", "[seq"]
    assert [line.split("]")[0] for line in lines] == ["[seq 10", "[seq 20", "[seq 30", "[seq 40"]
    assert "bot-1=out" in lines[2] and "bot-2=4" in lines[2] and "bot-3=?" in lines[2]
    assert "finished" in lines[3] and "bot-3=out" in lines[3]
