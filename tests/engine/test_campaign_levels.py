"""Campaign levels as data (``engine.campaign.levels()``; the Life seed's "Кампания")."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from engine.campaign import LEVEL_COUNT, SOLUTIONS, Level, UnknownLevelError, level, levels
from engine.campaign import generator as gen
from engine.campaign.levels import DATA_FILE
from engine.life import step

ROOT = Path(__file__).resolve().parents[2]
ALL = levels()
GENERATED = [lv for lv in ALL if lv.number >= gen.FIRST_LEVEL]


def _whole(lv: Level) -> tuple[int, int, int, int]:
    return (0, 0, lv.width, lv.height)


def _digest(items: list[Level]) -> str:
    text = json.dumps([lv.to_dict() for lv in items], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def test_103_levels_numbered_in_order():
    assert LEVEL_COUNT == 103
    assert [lv.number for lv in ALL] == list(range(1, 104))
    assert [lv.number for lv in GENERATED] == list(range(8, 104))


def test_hand_level_names():
    names = [(lv.name_en, lv.name_ru) for lv in ALL[:7]]
    assert names == [
        ("Warm-up", "Разминка"),
        ("Loaf", "Каравай"),
        ("Swarm", "Рой"),
        ("From Afar", "Издалека"),
        ("Flotilla", "Флотилия"),
        ("Chase", "Погоня"),
        ("Rabbits", "Кролики"),
    ]
    assert all(lv.hint_en and lv.hint_ru and lv.name_en and lv.name_ru for lv in ALL)


def test_generated_levels_regenerate_bit_for_bit():
    fresh = gen.generate_levels()
    assert fresh == GENERATED
    checked_in = resources.files("engine.campaign.data").joinpath(DATA_FILE).read_text("utf-8")
    assert gen.render_json(fresh) == checked_in, "run: python tools/gen_campaign_levels.py"


def test_data_file_is_one_level_per_line():
    text = resources.files("engine.campaign.data").joinpath(DATA_FILE).read_text("utf-8")
    lines = text.splitlines()
    assert len(lines) == 96 + 2
    assert all(line.startswith('{"number":') for line in lines[1:-1])


def test_zones_inside_board_and_non_empty():
    for lv in ALL:
        x0, y0, x1, y1 = lv.zone
        assert 0 <= x0 < x1 <= lv.width and 0 <= y0 < y1 <= lv.height, lv.number


def test_generated_zones_never_whole_board_and_varied():
    assert all(lv.zone != _whole(lv) for lv in GENERATED)
    kinds = set(gen.zone_kinds_schedule().values())
    assert {"centre", "strip_v", "strip_h", "rect"} <= kinds
    assert any(k.startswith("corner_") for k in kinds)
    assert kinds & {"left", "right", "top", "bottom"}


def test_hand_zones():
    assert level(1).zone == _whole(level(1))
    assert level(3).zone == _whole(level(3))
    lv4 = level(4)
    assert lv4.enemy and not any(lv4.in_zone(x, y) for x, y in lv4.enemy)
    for lv in ALL[:7]:
        assert 20 <= lv.width <= 60 and 20 <= lv.height <= 60


def test_board_sizes_grow_to_300():
    sides = [max(lv.width, lv.height) for lv in GENERATED]
    assert sides == sorted(sides)
    assert sides[0] <= 50
    assert (level(103).width, level(103).height) == (300, 300)
    assert any(lv.width != lv.height for lv in GENERATED)
    assert all(8 <= min(lv.width, lv.height) for lv in GENERATED)


def test_enemy_cells_on_board_sorted_and_budgets_positive():
    for lv in ALL:
        assert lv.enemy, lv.number
        assert list(lv.enemy) == sorted(set(lv.enemy))
        assert all(0 <= x < lv.width and 0 <= y < lv.height for x, y in lv.enemy)
        assert lv.budget > 0
        board = lv.enemy_board()
        assert board.shape == (lv.height, lv.width) and board.dtype == np.uint8
        assert int((board == 2).sum()) == len(lv.enemy) and set(np.unique(board)) <= {0, 2}


def test_hopeless_levels():
    assert [lv.number for lv in ALL if lv.hopeless] == list(gen.HOPELESS) == [50, 75, 100]


def _never_moves(board: np.ndarray) -> bool:
    settled = step(board, generations=30)
    cur = settled
    for _ in range(15):
        cur = step(cur)
        if np.array_equal(cur, settled):
            return True
    return False


@pytest.mark.parametrize("number", [n for n in range(1, 104) if n not in gen.HOPELESS])
def test_enemy_is_static_or_oscillating(number):
    board = level(number).enemy_board()
    assert _never_moves(board)
    # The level starts on its cycle: the enemy neither moves nor changes its shape for good.
    assert any(np.array_equal(step(board, generations=p), board) for p in range(1, 16))


def test_level_1_documented_solution_wins():
    lv = level(1)
    sol = SOLUTIONS[1]
    cells, generations = sol["cells"], sol["generations"]
    assert 0 < len(cells) <= lv.budget and generations <= 200
    board = lv.enemy_board()
    for x, y in cells:
        assert lv.in_zone(x, y) and board[y, x] == 0
        board[y, x] = 1
    for _ in range(generations):
        board = step(board)
    assert not (board == 2).any()
    for x, y in cells:
        assert f"({x}, {y})" in lv.hint_en and f"({x}, {y})" in lv.hint_ru


def test_level_lookup_and_errors():
    assert level(1) is ALL[0] and level(103) is ALL[-1]
    for bad in (0, 104, -1, "1", 1.0, True):
        with pytest.raises(UnknownLevelError) as info:
            level(bad)  # type: ignore[arg-type]
        assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
        assert "level" in str(info.value)


def test_level_round_trip_and_validation():
    for lv in ALL:
        assert Level.from_dict(json.loads(json.dumps(lv.to_dict()))) == lv
    base = level(2).to_dict()
    for patch in (
        {"zone": [0, 0, 0, 5]},
        {"zone": [0, 0, 25, 24]},
        {"enemy": [[24, 0]]},
        {"number": 104},
        {"budget": -1},
    ):
        with pytest.raises(ValueError):
            Level.from_dict({**base, **patch})
    with pytest.raises(ValueError):
        Level(**{**level(2).__dict__, "enemy": ((5, 5), (1, 1))})


def test_levels_deterministic_across_calls_and_processes():
    assert levels() == levels() and levels() is not levels()
    expected_loaded = _digest(ALL)
    expected_fresh = _digest(gen.generate_levels())
    code = (
        "import hashlib, json\n"
        "from engine.campaign import levels\n"
        "from engine.campaign.generator import generate_levels\n"
        "d = lambda items: hashlib.sha256(json.dumps([lv.to_dict() for lv in items], "
        "sort_keys=True, ensure_ascii=False).encode()).hexdigest()\n"
        "print(d(levels()), d(generate_levels()))\n"
    )
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert out == [expected_loaded, expected_fresh]


def test_rng_is_fixed():
    rng = gen.Rng(0)
    # SplitMix64 reference values for seed 0.
    assert [rng.next64() for _ in range(3)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]
    r = gen.Rng(7)
    assert all(0 <= r.below(10) < 10 for _ in range(100))
