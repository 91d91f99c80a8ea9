"""The stamp library (engine.life.patterns): ids, categories, and each pattern's
published behaviour checked with the kernel (facts from LifeWiki / the Life Lexicon)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.life import patterns, step
from engine.life.rle import Pattern, parse

EXPECTED = {
    "still_lifes": [
        "block",
        "beehive",
        "tub",
        "boat",
        "ship",
        "loaf",
        "eater",
        "pond",
        "aircraft_carrier",
        "long_boat",
        "canoe",
    ],
    "oscillators": ["blinker", "toad", "beacon", "clock", "pulsar", "pentadecathlon"],
    "spaceships": ["glider", "lwss", "mwss", "hwss", "loafer"],
    "methuselahs": ["r_pentomino", "acorn", "diehard", "thunderbird", "rabbits"],
    "guns": ["gosper_glider_gun", "simkin_glider_gun"],
}

# LifeWiki populations (the phase stored in the file).
POPULATION = {
    "block": 4,
    "beehive": 6,
    "tub": 4,
    "boat": 5,
    "ship": 6,
    "loaf": 7,
    "eater": 7,
    "pond": 8,
    "aircraft_carrier": 6,
    "long_boat": 7,
    "canoe": 8,
    "blinker": 3,
    "toad": 6,
    "beacon": 6,
    "clock": 6,
    "pulsar": 48,
    "pentadecathlon": 12,
    "glider": 5,
    "lwss": 9,
    "mwss": 11,
    "hwss": 13,
    "loafer": 20,
    "r_pentomino": 5,
    "acorn": 7,
    "diehard": 7,
    "thunderbird": 6,
    "rabbits": 9,
    "gosper_glider_gun": 36,
    "simkin_glider_gun": 36,
}

PERIOD = {
    "blinker": 2,
    "toad": 2,
    "beacon": 2,
    "clock": 2,
    "pulsar": 3,
    "pentadecathlon": 15,
}

# (period, (dx, dy) per period) for the orientation stored in the file.
SPACESHIP = {
    "glider": (4, (1, 1)),
    "lwss": (4, (-2, 0)),
    "mwss": (4, (-2, 0)),
    "hwss": (4, (-2, 0)),
    "loafer": (7, (-1, 0)),
}


def embed(board: np.ndarray, height: int, width: int, y: int, x: int) -> np.ndarray:
    out = np.zeros((height, width), dtype=np.uint8)
    out[y : y + board.shape[0], x : x + board.shape[1]] = board
    return out


def centred(name: str, margin: int = 20) -> np.ndarray:
    b = patterns.get(name).board
    return embed(b, b.shape[0] + 2 * margin, b.shape[1] + 2 * margin, margin, margin)


def test_ids_and_categories_are_the_design_list():
    assert patterns.categories() == EXPECTED
    assert list(patterns.categories()) == [
        "still_lifes",
        "oscillators",
        "spaceships",
        "methuselahs",
        "guns",
    ]
    assert patterns.names() == [pid for ids in EXPECTED.values() for pid in ids]
    assert len(patterns.names()) == 29 == len(set(patterns.names()))


@pytest.mark.parametrize("name", [pid for ids in EXPECTED.values() for pid in ids])
def test_each_pattern_loads_with_metadata(name):
    p = patterns.get(name)
    assert isinstance(p, Pattern)
    assert p.board.dtype == np.uint8 and p.board.ndim == 2
    assert set(np.unique(p.board)) <= {0, 1}
    assert p.population == POPULATION[name]
    assert p.rule == "B3/S23"
    assert p.name and p.name[0].isupper()
    assert p.category == next(c for c, ids in EXPECTED.items() if name in ids)
    assert p.source and p.source.startswith("LifeWiki https://conwaylife.com/wiki/")
    # no empty border rows/columns: the file is the bounding box
    assert p.board[0].any() and p.board[-1].any()
    assert p.board[:, 0].any() and p.board[:, -1].any()
    assert patterns.get(name) is p  # cached


def test_library_boards_are_read_only():
    with pytest.raises(ValueError):
        patterns.get("glider").board[0, 0] = 1


def test_known_shapes():
    assert patterns.get("glider").cells() == [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]
    assert (patterns.get("gosper_glider_gun").width, patterns.get("gosper_glider_gun").height) == (
        36,
        9,
    )
    assert (patterns.get("simkin_glider_gun").width, patterns.get("simkin_glider_gun").height) == (
        33,
        21,
    )
    assert (patterns.get("pulsar").width, patterns.get("pulsar").height) == (13, 13)
    assert (patterns.get("pentadecathlon").width, patterns.get("pentadecathlon").height) == (10, 3)
    assert (patterns.get("loafer").width, patterns.get("loafer").height) == (9, 9)
    assert patterns.get("eater").board.tolist() == [
        [1, 1, 0, 0],
        [1, 0, 1, 0],
        [0, 0, 1, 0],
        [0, 0, 1, 1],
    ]


def test_unknown_pattern_is_a_key_error_listing_names():
    with pytest.raises(patterns.UnknownPattern) as info:
        patterns.get("nope")
    assert isinstance(info.value, KeyError)
    assert "'nope'" in str(info.value) and "gosper_glider_gun" in str(info.value)
    with pytest.raises(KeyError):
        patterns.get("Glider")


def test_catalogue_is_json_ready():
    cat = patterns.catalogue()
    assert [c["id"] for c in cat] == patterns.names()
    json.dumps(cat)
    glider = next(c for c in cat if c["id"] == "glider")
    assert glider == {
        "id": "glider",
        "name": "Glider",
        "category": "spaceships",
        "width": 3,
        "height": 3,
        "cells": [[1, 0], [2, 1], [0, 2], [1, 2], [2, 2]],
        "source": patterns.get("glider").source,
    }
    for c in cat:
        assert len(c["cells"]) == POPULATION[c["id"]]
        assert all(0 <= x < c["width"] and 0 <= y < c["height"] for x, y in c["cells"])
    cat[0]["cells"].clear()  # callers may mutate their copy
    assert len(patterns.catalogue()[0]["cells"]) == 4


def test_data_files_round_trip_through_the_reader():
    from importlib import resources

    for name in patterns.names():
        text = resources.files("engine.life.patterns.data").joinpath(f"{name}.rle").read_text()
        assert f"#C category: {patterns.get(name).category}" in text
        assert np.array_equal(parse(text).board, patterns.get(name).board)


@pytest.mark.parametrize("name", EXPECTED["still_lifes"])
def test_still_lifes_are_still(name):
    b = centred(name, 4)
    assert np.array_equal(step(b), b)


@pytest.mark.parametrize("name", EXPECTED["oscillators"])
def test_oscillators_have_their_exact_period(name):
    b = centred(name, 8)
    period = PERIOD[name]
    cur = b
    for g in range(1, period):
        cur = step(cur)
        assert not np.array_equal(cur, b), f"{name} repeats after {g} < {period}"
    assert np.array_equal(step(cur), b)


def _bbox(board: np.ndarray) -> tuple[int, int, np.ndarray]:
    ys, xs = np.nonzero(board)
    y0, x0 = ys.min(), xs.min()
    return int(x0), int(y0), board[y0 : ys.max() + 1, x0 : xs.max() + 1]


@pytest.mark.parametrize("name", EXPECTED["spaceships"])
def test_spaceships_move_by_their_speed(name):
    period, (dx, dy) = SPACESHIP[name]
    b = centred(name, 12)
    x0, y0, shape0 = _bbox(b)
    cur = b
    for g in range(1, period):
        cur = step(cur)
        assert not np.array_equal(_bbox(cur)[2], shape0), f"{name} repeats after {g}"
    for k in range(1, 4):  # three full periods
        cur = step(cur) if k == 1 else step(cur, generations=period)
        x, y, shape = _bbox(cur)
        assert np.array_equal(shape, shape0)
        assert (x - x0, y - y0) == (k * dx, k * dy)


def test_ten_in_a_row_becomes_a_pentadecathlon():
    row = np.ones((1, 10), dtype=np.uint8)
    cur = embed(row, 40, 40, 20, 15)
    cur = step(cur, generations=30)
    seen = []
    for _ in range(15):
        seen.append(_bbox(cur)[2])
        cur = step(cur)
    pd = patterns.get("pentadecathlon").board
    assert any(s.shape == pd.shape and np.array_equal(s, pd) for s in seen)


@pytest.mark.parametrize(
    "name, cells, size", [("r_pentomino", 5, (3, 3)), ("acorn", 7, (7, 3)), ("diehard", 7, (8, 3))]
)
def test_methuselah_sizes(name, cells, size):
    p = patterns.get(name)
    assert (p.population, (p.width, p.height)) == (cells, size)


def test_thunderbird_and_rabbits_sizes():
    assert (patterns.get("thunderbird").population, patterns.get("thunderbird").board.shape) == (
        6,
        (5, 3),
    )
    assert (patterns.get("rabbits").population, patterns.get("rabbits").board.shape) == (9, (3, 7))


def test_diehard_dies_at_generation_130():
    cur = embed(patterns.get("diehard").board, 80, 80, 38, 36)
    cur = step(cur, generations=129)
    assert np.count_nonzero(cur) > 0
    assert np.count_nonzero(step(cur)) == 0


def test_thunderbird_stabilises_at_generation_243():
    cur = embed(patterns.get("thunderbird").board, 200, 200, 100, 100)
    gens = [cur]
    for _ in range(250):
        gens.append(step(gens[-1]))
    # stable from 243 on (still lifes and blinkers: period 2), not at 242
    assert all(np.array_equal(gens[t], gens[t + 2]) for t in range(243, 249))
    assert not np.array_equal(gens[242], gens[244])


def test_gosper_gun_emits_a_glider_every_30_generations():
    cur = embed(patterns.get("gosper_glider_gun").board, 140, 140, 2, 2)
    pops = []
    gun_area = []
    for t in range(331):
        if t % 30 == 0:
            pops.append(int(np.count_nonzero(cur)))
            gun_area.append(cur[:13, :40].copy())
        cur = step(cur)
    # one more glider (5 cells) every period, the gun itself unchanged
    assert pops == [36 + 5 * k for k in range(12)]
    assert all(np.array_equal(a, gun_area[3]) for a in gun_area[3:])


def test_gosper_gun_period_is_exactly_30():
    cur = embed(patterns.get("gosper_glider_gun").board, 80, 80, 2, 2)
    cur = step(cur, generations=60)
    ref = cur[:11, :38].copy()
    seen = []
    for _ in range(30):
        cur = step(cur)
        seen.append(cur[:11, :38].copy())
    assert np.array_equal(seen[-1], ref)
    assert not any(np.array_equal(s, ref) for s in seen[:-1])


def test_simkin_gun_has_period_120():
    # its gliders fly up-left: put the gun at the bottom right
    h, w = 240, 240
    gun = patterns.get("simkin_glider_gun").board
    y, x = h - gun.shape[0] - 2, w - gun.shape[1] - 2
    cur = step(embed(gun, h, w, y, x), generations=120)
    area = (slice(y - 2, h), slice(x - 2, w))
    ref = cur[area].copy()
    pop0 = int(np.count_nonzero(cur))
    boxes = {}
    for t in range(1, 121):
        cur = step(cur)
        if t in (24, 40, 60, 120):
            boxes[t] = cur[area].copy()
    assert np.array_equal(boxes[120], ref)
    for t in (24, 40, 60):  # 120 / each prime factor: not a shorter period
        assert not np.array_equal(boxes[t], ref)
    assert int(np.count_nonzero(cur)) == pop0 + 5  # one glider per period
