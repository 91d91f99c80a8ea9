"""engine.life.rle: real pattern files (tests/fixtures/patterns, see its README for
provenance), Golly/LifeWiki edge cases, malformed input, and round trips."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cellwar.v1 import board_codec
from engine.life import rle, step
from engine.life.rle import (
    MAX_SIDE,
    Pattern,
    PatternError,
    board_to_rle_body,
    canonical_rule,
    dump,
    parse,
    rle_body_to_board,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "patterns"

# file: (width, height, population, name) -- populations and sizes as LifeWiki gives them
FACTS = {
    "acorn.rle": (7, 3, 7, "Acorn"),
    "b-heptomino.rle": (4, 3, 7, "B-heptomino"),
    "beacon.rle": (4, 4, 6, "Beacon"),
    "beehive.rle": (4, 3, 6, "Beehive"),
    "blinker.rle": (3, 1, 3, "Blinker"),
    "block.rle": (2, 2, 4, "Block"),
    "boat.rle": (3, 3, 5, "Boat"),
    "bunnies.rle": (8, 4, 9, "Bunnies"),
    "century.rle": (4, 3, 6, "Century"),
    "clock.rle": (4, 4, 6, "Clock"),
    "copperhead.rle": (8, 12, 28, "Copperhead"),
    "diehard.rle": (8, 3, 7, "Die hard"),
    "edgecase-5x5-infinite-growth-oldrule.rle": (5, 5, 13, "5x5 infinite growth"),
    "edgecase-niemiec-22-13005.rle": (79, 16, 91, "22-13005.rle"),
    "edgecase-niemiec-29-1.rle": (68, 49, 59, "29-1.rle"),
    "figure-eight.rle": (6, 6, 12, "Figure eight"),
    "glider.rle": (3, 3, 5, "Glider"),
    "golly-help-r-pentomino.rle": (3, 3, 5, None),
    "gosper-glider-gun.rle": (36, 9, 36, "Gosper glider gun"),
    "herschel.rle": (3, 4, 7, "Herschel"),
    "hwss.rle": (7, 5, 13, "Heavyweight spaceship"),
    "koks-galaxy.rle": (9, 9, 28, "Kok's galaxy"),
    "lidka.rle": (9, 15, 13, "Lidka"),
    "loaf.rle": (4, 4, 7, "Loaf"),
    "lwss.rle": (5, 4, 9, "Lightweight spaceship"),
    "mwss.rle": (6, 5, 11, "Middleweight spaceship"),
    "octagon2.rle": (8, 8, 16, "Octagon 2"),
    "pi-heptomino.rle": (3, 3, 7, "Pi-heptomino"),
    "pre-pulsar.rle": (9, 3, 16, "Pre-pulsar"),
    "pulsar.rle": (13, 13, 48, "Pulsar"),
    "queen-bee-shuttle.rle": (22, 7, 20, "Queen bee shuttle"),
    "r-pentomino.rle": (3, 3, 5, "R-pentomino"),
    "rabbits.rle": (7, 3, 9, "Rabbits"),
    "simkin-glider-gun.rle": (33, 21, 36, "Simkin glider gun"),
    "switch-engine.rle": (6, 4, 8, "Switch engine"),
    "ten-in-a-row.rle": (10, 1, 10, None),
    "thunderbird.rle": (3, 5, 6, "Thunderbird"),
    "toad.rle": (4, 2, 6, "Toad"),
    "tub.rle": (3, 3, 4, "Tub"),
    "tumbler.rle": (9, 5, 16, "Tumbler"),
    "unix.rle": (8, 8, 16, "Unix"),
    "lexicon-pentadecathlon.cells": (10, 3, 12, None),
    "oeis-A179415-gen0.cells": (6, 4, 6, None),
    "golly-acorn.lif": (7, 3, 7, "Acorn"),
    "golly-rabbits.lif": (7, 3, 9, "Rabbits"),
}

# oscillators among the fixtures: (file, period)
OSCILLATORS = [
    ("koks-galaxy.rle", 8),
    ("queen-bee-shuttle.rle", 30),
    ("figure-eight.rle", 8),
    ("octagon2.rle", 5),
    ("tumbler.rle", 14),
    ("unix.rle", 6),
    ("clock.rle", 2),
]


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def embed(board: np.ndarray, margin: int) -> np.ndarray:
    h, w = board.shape
    out = np.zeros((h + 2 * margin, w + 2 * margin), dtype=np.uint8)
    out[margin : margin + h, margin : margin + w] = board
    return out


def test_every_fixture_is_covered():
    files = {p.name for p in FIXTURES.iterdir()} - {"README.md", "immigration.rule"}
    assert files == set(FACTS)


@pytest.mark.parametrize("name", sorted(FACTS))
def test_fixture_facts(name):
    width, height, population, title = FACTS[name]
    p = parse(read(name))
    assert p.board.dtype == np.uint8
    assert (p.width, p.height) == (width, height)
    assert p.board.shape == (height, width)
    assert p.population == population
    assert set(np.unique(p.board)) <= {0, 1}
    assert p.name == title
    assert p.rule == "B3/S23"
    # dumping and re-reading keeps the board exactly
    assert np.array_equal(parse(dump(p.board, name=p.name)).board, p.board)


def test_glider_cells_and_metadata():
    p = parse(read("glider.rle"))
    assert p.cells() == [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]
    assert p.author == "Richard K. Guy"
    assert p.comments[-1] == "www.conwaylife.com/wiki/index.php?title=Glider"
    assert p.offset == (0, 0) and p.format == "rle"


def test_gosper_gun_row_wrapped_mid_row():
    # "...$2o8b" + newline + "o3bob2o4bobo11b$": one row split across two lines
    p = parse(read("gosper-glider-gun.rle"))
    assert p.board[5].nonzero()[0].tolist() == [0, 1, 10, 14, 16, 17, 22, 24]
    assert p.comments[:2] == (
        "A true period 30 glider gun.",
        "The first known gun and the first known finite pattern with unbounded growth.",
    )


def test_old_style_rule_and_lowercase_rule():
    assert parse(read("edgecase-5x5-infinite-growth-oldrule.rle")).rule == "B3/S23"  # "23/3"
    assert parse(read("koks-galaxy.rle")).rule == "B3/S23"  # "23/3"
    assert parse(read("queen-bee-shuttle.rle")).rule == "B3/S23"  # "b3/s23"
    assert canonical_rule("S23/B3") == canonical_rule("B3/S23") == "B3/S23"
    assert canonical_rule("B36/S23") == "B36/S23"
    assert canonical_rule("23/36") == "B36/S23"
    assert canonical_rule("Immigration") == "Immigration"


def _without_marks(text: str) -> str:
    head, _, body = text.partition("\nx = ")
    return (
        head + "\nx = " + body.split("\n", 1)[0] + "\n" + body.split("\n", 1)[1].replace("x", "b")
    )


@pytest.mark.parametrize(
    "name, o_cells, x_cells",
    [("edgecase-niemiec-22-13005.rle", 57, 34), ("edgecase-niemiec-29-1.rle", 30, 29)],
)
def test_niemiec_marked_cells_count_as_alive(name, o_cells, x_cells):
    # Golly reads Niemiec's "x" marks like "o" (LifeWiki RLE, note on x/y/z)
    text = read(name)
    marked = parse(text)
    plain = parse(_without_marks(text))
    assert plain.population == o_cells
    assert marked.population == o_cells + x_cells
    assert plain.board.shape == marked.board.shape
    assert np.all(marked.board >= plain.board)


def test_niemiec_cells_in_place():
    p = parse(read("edgecase-niemiec-29-1.rle"))  # "51bo$49boo$bo48boo$bbo$3o22$..."
    assert p.board[0].nonzero()[0].tolist() == [51]
    assert p.board[1].nonzero()[0].tolist() == [49, 50]
    assert p.board[4].nonzero()[0].tolist() == [0, 1, 2]
    assert not p.board[5:26].any() and p.board[26].any()
    assert p.board[48].nonzero()[0].tolist() == [61, 62, 64, 65]  # "$61bxxbxx!"


def test_blank_rows_from_counted_dollar():
    # koks-galaxy row 4 is "2$" (one blank row); lidka has "8$" (seven blank rows)
    koks = parse(read("koks-galaxy.rle"))
    assert not koks.board[4].any() and koks.board[3].any() and koks.board[5].any()
    lidka = parse(read("lidka.rle"))
    assert lidka.board[3:10].sum() == 0 and lidka.board[2].any() and lidka.board[10].any()


def test_short_rows_are_padded():
    p = parse(read("golly-help-r-pentomino.rle"))  # "b2o$2o$bo!"
    assert p.board.tolist() == [[0, 1, 1], [1, 1, 0], [0, 1, 0]]
    assert p.name is None and p.comments == ()


@pytest.mark.parametrize("name, period", OSCILLATORS)
def test_fixture_oscillator_periods(name, period):
    b = embed(parse(read(name)).board, 12)
    cur = b
    for g in range(1, period):
        cur = step(cur)
        assert not np.array_equal(cur, b), f"repeats after {g}"
    assert np.array_equal(step(cur), b)


def test_plaintext_cells_files():
    pd = parse(read("lexicon-pentadecathlon.cells"))
    assert pd.format == "cells"
    assert pd.board.tolist() == [
        [0, 0, 1, 0, 0, 0, 0, 1, 0, 0],
        [1, 1, 0, 1, 1, 1, 1, 0, 1, 1],
        [0, 0, 1, 0, 0, 0, 0, 1, 0, 0],
    ]
    assert pd.comments[0].startswith("pentadecathlon, copied from Golly Help/Lexicon")
    muck = parse(read("oeis-A179415-gen0.cells"))
    assert muck.cells() == [(2, 0), (1, 1), (4, 1), (2, 2), (5, 2), (4, 3)]
    assert len(muck.comments) == 2
    named = parse("!Name: Glider\n!A comment\n.O.\n..O\nOOO\n\n")
    assert named.name == "Glider" and named.comments == ("A comment",)
    assert np.array_equal(named.board, parse(read("glider.rle")).board)
    ragged = parse("!\nO\n...O\n\n.O\n")  # rows padded, blank line = empty row
    assert ragged.board.shape == (4, 4) and not ragged.board[2].any()


def test_life_105_files_match_their_rle():
    acorn = parse(read("golly-acorn.lif"))
    assert acorn.format == "life105"
    assert np.array_equal(acorn.board, parse(read("acorn.rle")).board)
    assert acorn.comments[1] == "The most vigorously growing 7-cell methuselah pattern."
    rabbits = parse(read("golly-rabbits.lif"))
    assert np.array_equal(rabbits.board, parse(read("rabbits.rle")).board)
    assert len(rabbits.comments) == 7


def test_life_105_blocks_and_106():
    p = parse("#Life 1.05\n#R 23/36\n#P -2 -1\n*\n#P 3 1\n.*\n")
    assert p.offset == (-2, -1) and p.rule == "B36/S23"
    assert p.cells() == [(0, 0), (6, 2)]
    q = parse("#Life 1.06\n0 0\n2 1\n-1 1\n")
    assert q.format == "life106" and q.offset == (-1, 0)
    assert q.board.tolist() == [[0, 1, 0, 0], [1, 0, 0, 1]]


def test_rule_file_is_not_a_pattern():
    with pytest.raises(PatternError) as info:
        parse(read("immigration.rule"))
    assert (info.value.line, info.value.column) == (1, 1)
    assert "'@'" in str(info.value)


# --- Golly / LifeWiki details (the README of the fixtures lists them) -----------------


def test_b_dot_and_o_A_are_interchangeable():
    a = parse("x = 4, y = 2, rule = B3/S23\nbobo$.A.A!")
    assert a.board.tolist() == [[0, 1, 0, 1], [0, 1, 0, 1]]


def test_counted_dollar_and_optional_bang():
    p = parse("x = 2, y = 6\no5$bo")
    assert [a.tolist() for a in p.board.nonzero()] == [[0, 5], [0, 1]]
    assert parse("x = 3, y = 1\n3o").population == 3


def test_comments_after_bang_and_long_lines_ignored_or_read():
    p = parse("x = 3, y = 1\n" + "o" + "b" + "o!" + "this is a trailing comment $$$ 99o")
    assert p.board.tolist() == [[1, 0, 1]]
    long_line = "x = 200, y = 1\n" + "ob" * 100 + "!"
    assert parse(long_line).population == 100


def test_count_may_continue_on_the_next_line():
    # Golly keeps a pending count across a line break
    assert parse("x = 12, y = 1\n1\n2o!").population == 12


def test_header_forms():
    assert parse("x=3,y=1\n3o!").board.shape == (1, 3)
    assert parse("x = 3 , y = 1 , rule = B3/S23\n3o!").board.shape == (1, 3)
    assert parse("#r 23/3\nx = 1, y = 1\no!").rule == "B3/S23"
    assert parse("x = 1, y = 1, rule = B36/S23\no!").rule == "B36/S23"
    # Golly's bounded-grid suffix holds a comma: the rule is the rest of the line
    assert parse("x = 1, y = 1, rule = B3/S23:T10,10\no!").rule == "B3/S23:T10,10"
    p = parse("#N  Named  \n#O Someone\n#C one\n#c two\n#P -3 4\nx = 1, y = 1\no!")
    assert (p.name, p.author, p.comments, p.offset) == ("Named", "Someone", ("one", "two"), (-3, 4))
    assert parse("#R 2 5\nx = 1, y = 1\no!").offset == (2, 5)


def test_zero_header_and_no_header_size_by_content():
    p = parse("x = 0, y = 0, rule = B3/S23\nbo$2bo$3o!")
    assert p.board.shape == (3, 3) and p.population == 5
    q = parse("bo$2bo$3o!")
    assert np.array_equal(p.board, q.board)
    assert parse("x = 0, y = 0\n!").board.shape == (0, 0)
    assert parse("x = 4, y = 3\n!").board.shape == (3, 4)


def test_padding_and_trailing_dead_cells():
    # dead cells past the header width (Niemiec's "5b$") and trailing blank rows are harmless
    assert parse("x = 2, y = 2\no5b$bo3$!").board.tolist() == [[1, 0], [0, 1]]


def test_multi_state():
    p = parse("x = 4, y = 2, rule = B3/S23\n.AB$CD.X!")
    assert p.board.tolist() == [[0, 1, 2, 0], [3, 4, 0, 24]]
    assert p.board.dtype == np.uint8


# --- malformed input: PatternError with line and column -------------------------------

MALFORMED = [
    ("", 1, 1, "empty"),
    (" \n\t\n", 1, 1, "empty"),
    ("x = 3\nooo!", 1, 1, "lacks y"),
    ("x = a, y = 3\n", 1, 5, "non-negative integer"),
    ("x = -1, y = 3\n", 1, 5, "non-negative integer"),
    ("x = 3, y = 3, foo = 2\n", 1, 15, "unknown header field"),
    ("x = 3, y = 3, rule =\n", 1, 21, "rule is empty"),
    ("x = 3, y = 3 junk\n", 1, 12, "non-negative integer"),
    ("x = 99999, y = 1\n", 1, 5, "limit"),
    ("x = 3, y = 1\n3 o!", 2, 2, "whitespace between count"),
    ("x = 3, y = 1\n3\to!", 2, 2, "whitespace between count"),
    ("x = 3, y = 1\n03o!", 2, 1, "leading zero"),
    ("x = 3, y = 1\nb0o!", 2, 2, "leading zero"),
    ("x = 3, y = 1\n4o!", 2, 2, "beyond the header width"),
    ("x = 3, y = 1\nbb2o!", 2, 4, "beyond the header width"),
    ("x = 3, y = 1\no$o!", 2, 3, "beyond the header height"),
    ("x = 0, y = 0\n5000o!", 2, 1, "too big"),
    ("x = 0, y = 0\n99999999999999999999o!", 2, 1, "too big"),
    ("x = 0, y = 0\n" + "4000$\n" * 2 + "o!", 3, 5, "taller than the limit"),
    ("x = 0, y = 0\n" + "4000b" * 2 + "o!", 2, 10, "wider than the limit"),
    ("x = 3, y = 1\n3", 2, 1, "not followed by a tag"),
    ("#P 1\nx = 1, y = 1\no!", 1, 3, "bad offset"),
    ("#P a b\nx = 1, y = 1\no!", 1, 3, "bad offset"),
    ("!Name: t\n.O.\n.X.\n", 3, 2, "unknown character 'X'"),
    ("!only comments\n", 1, 1, "no rows"),
    ("#Life 1.06\n0 0\n1 x\n", 3, 1, "bad Life 1.06 line"),
    ("#Life 1.05\n#P 0 0\n.*\n.%\n", 4, 2, "unknown character '%'"),
    ("#Life 1.06\n0 0\n5000 0\n", 3, 1, "exceeds the limit"),
]


#: Refused by engine version 1's reader only: Golly skips unknown tags and reads
#: ``p``..``y`` + ``A``..``X`` as states 25..264 (tests/engine/test_rle_golly.py).
MALFORMED_V1 = [
    ("x = 3, y = 1\noo%o!", 2, 3, "unknown character '%'"),
    ("x = 2, y = 1\npAo!", 2, 1, "multi-char state"),
    ("x = 2, y = 1\nyXo!", 2, 1, "multi-char state"),
    ("x = 2, y = 1\nZo!", 2, 1, "unknown character 'Z'"),
    ("x = 2, y = 1\nco!", 2, 1, "unknown character 'c'"),
    ("#N x\n\nx = 2, y = 1\no\u00e9!", 4, 2, "unknown character"),
]


@pytest.mark.parametrize(
    "text, line, column, fragment, reader",
    [(*case, reader) for case in MALFORMED for reader in ("golly", "v1")]
    + [(*case, "v1") for case in MALFORMED_V1],
)
def test_malformed_input_raises_pattern_error(text, line, column, fragment, reader):
    with pytest.raises(PatternError) as info:
        parse(text, reader=reader)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.line, err.column) == (line, column), str(err)
    assert fragment in err.message
    assert str(err).startswith(f"line {line}, column {column}: ")


def test_non_text_input():
    with pytest.raises(PatternError):
        parse(b"x = 1, y = 1\no!")  # type: ignore[arg-type]


# --- writing -----------------------------------------------------------------------


def test_dump_two_state():
    glider = parse(read("glider.rle")).board
    text = dump(glider, name="Glider", comments=["first", "two\nlines"])
    assert text == (
        "#N Glider\n#C first\n#C two\n#C lines\nx = 3, y = 3, rule = B3/S23\nbo$2bo$3o!\n"
    )


def test_dump_keeps_size_and_blank_rows():
    b = np.zeros((5, 6), dtype=np.uint8)
    b[1, 4] = 1
    b[4, 0] = 1
    assert dump(b) == "x = 6, y = 5, rule = B3/S23\n$4bo3$o!\n"
    assert dump(np.zeros((2, 3), dtype=np.uint8), rule="B36/S23") == (
        "x = 3, y = 2, rule = B36/S23\n!\n"
    )
    assert np.array_equal(parse(dump(b)).board, b)


def test_dump_counts_beyond_the_reader_limit():
    # dump writes any size (counts above 4096 take the arithmetic path); parse refuses it
    b = np.zeros((2, 12345), dtype=np.uint8)
    b[0, -1] = 1
    b[1, 0] = 3
    assert dump(b).splitlines()[-1] == "12344.A$C!"
    with pytest.raises(PatternError, match="limit"):
        parse(dump(b))


def test_dump_multi_state_and_limits():
    b = np.array([[0, 1, 2], [24, 0, 0]], dtype=np.uint8)
    assert dump(b).splitlines()[-1] == ".AB$X!"
    with pytest.raises(ValueError):
        dump(np.array([[25]], dtype=np.uint8))
    with pytest.raises(ValueError):
        dump(np.zeros(3, dtype=np.uint8))


def test_dump_lines_at_most_70_characters():
    rng = np.random.default_rng(7)
    b = (rng.random((60, 200)) < 0.4).astype(np.uint8)
    lines = dump(b, name="random").splitlines()
    assert max(len(ln) for ln in lines) <= 70
    body = "".join(lines[2:])
    # never splits an item: every line break falls between <count><tag> items
    for ln in lines[2:-1]:
        assert ln[-1] in "bo$"
    assert np.array_equal(parse("\n".join(lines)).board, b)
    assert body.endswith("!")


def test_view_body_examples():
    b = np.array([[0, 1, 0], [0, 0, 0], [2, 0, 0]], dtype=np.uint8)
    assert board_to_rle_body(b) == ".A2$B!"
    assert board_to_rle_body(np.zeros((4, 4), dtype=np.uint8)) == "!"
    assert board_to_rle_body(np.array([[1, 1, 3, 3, 3, 0, 0, 4]], dtype=np.uint8)) == "2A3C2.D!"
    assert np.array_equal(rle_body_to_board(".A2$B!", 3, 3), b)
    assert rle_body_to_board("!", 2, 2).tolist() == [[0, 0], [0, 0]]
    wide = np.zeros((2, 300), dtype=np.uint8)
    wide[1, 299] = 4
    assert board_to_rle_body(wide) == "$299.D!"
    assert np.array_equal(rle_body_to_board("$299.D!", 300, 2), wide)


def test_view_body_errors_match_parse():
    with pytest.raises(PatternError) as info:
        rle_body_to_board("A3 A!", 5, 1)
    assert (info.value.line, info.value.column) == (1, 3)
    with pytest.raises(PatternError) as info:
        rle_body_to_board("4A!", 3, 1)
    assert (info.value.line, info.value.column) == (1, 2)
    with pytest.raises(PatternError):
        rle_body_to_board("$$$A!", 3, 3)
    with pytest.raises(PatternError):
        rle_body_to_board("", 3, 3)
    with pytest.raises(ValueError):
        rle_body_to_board("!", MAX_SIDE + 1, 1)
    # no "!" at the end is still read (the general reader takes it)
    assert rle_body_to_board("A", 1, 1).tolist() == [[1]]


def test_pattern_is_a_value():
    src = np.array([[1, 0], [0, 1]], dtype=np.uint8)
    p = Pattern(board=src, name="d")
    src[0, 0] = 0
    assert p.board[0, 0] == 1  # copied
    with pytest.raises(ValueError):
        p.board[0, 0] = 0
    q = parse(dump(p.board))
    assert p == Pattern(board=q.board, name="d")
    assert p != q  # names differ
    assert hash(p) == hash(Pattern(board=np.eye(2, dtype=np.uint8), name="d"))
    assert p.rotated(1).tolist() == [[0, 1], [1, 0]]
    assert np.array_equal(p.rotated(4), p.board)
    r = parse("x = 3, y = 2\n3o$o!")
    assert r.rotated(1).tolist() == [[1, 1], [0, 1], [0, 1]]  # clockwise
    with pytest.raises(Exception):  # noqa: B017 - frozen dataclass
        p.name = "x"  # type: ignore[misc]


# --- properties --------------------------------------------------------------------


@st.composite
def boards(draw, max_side: int = 80):
    h = draw(st.integers(1, max_side))
    w = draw(st.integers(1, max_side))
    states = draw(st.integers(1, 4))
    density = draw(st.sampled_from([0.0, 0.05, 0.3, 0.7, 1.0]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    alive = rng.random((h, w)) < density
    return (alive * rng.integers(1, states + 1, size=(h, w))).astype(np.uint8)


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(boards())
def test_dump_parse_round_trip(board):
    text = dump(board)
    assert max(len(ln) for ln in text.splitlines()) <= 70
    p = parse(text)
    assert p.board.shape == board.shape
    assert np.array_equal(p.board, board)


@FAST
@given(boards())
def test_view_body_round_trip(board):
    h, w = board.shape
    body = board_to_rle_body(board)
    assert re.fullmatch(r"[0-9.A-X$]*!", body)
    assert np.array_equal(rle_body_to_board(body, w, h), board)
    # the general reader agrees with the vectorised one
    assert np.array_equal(rle._decode_rle_lines([body], 0, w, h), board)
    assert np.array_equal(parse(f"x = {w}, y = {h}\n{body}").board, board)


@FAST
@given(boards(max_side=30), st.lists(st.integers(0, 10_000), max_size=8))
def test_line_breaks_anywhere_between_items_or_inside_counts(board, cuts):
    h, w = board.shape
    body = board_to_rle_body(board)
    for c in sorted({c % (len(body) + 1) for c in cuts}, reverse=True):
        body = body[:c] + "\n" + body[c:]
    assert np.array_equal(rle_body_to_board(body, w, h), board)
    assert np.array_equal(parse(f"x = {w}, y = {h}\n{body}").board, board)


RLE_ALPHABET = "0123456789bo.ABCXYZpqxz$! \t\n#=,-"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=RLE_ALPHABET, max_size=60), st.sampled_from(["", "x = 5, y = 4\n"]))
def test_arbitrary_text_raises_only_pattern_error(body, header):
    text = header + body
    try:
        p = parse(text)
    except PatternError as err:
        assert err.line >= 1 and err.column >= 1
        return
    assert p.board.dtype == np.uint8 and p.board.ndim == 2
    assert max(p.board.shape) <= MAX_SIDE


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.ABo$! \n", max_size=40))
def test_fast_body_decoder_the_codec_and_the_general_reader_agree(body):
    """rle_body_to_board is the board codec (its fast path only a shortcut), and on view
    texts the codec reads as the pattern reader does, but for the reader's size limits
    (the codec tolerates dead cells and blank rows past the board, whatever their count)."""

    def outcome(fn):
        try:
            return ("ok", np.asarray(fn()).reshape(5, 6).tolist())
        except (PatternError, board_codec.BoardFormatError) as err:
            return ("err", err.line, err.column, err.message)

    codec = outcome(lambda: board_codec.decode_board(body, 6, 5))
    assert outcome(lambda: rle_body_to_board(body, 6, 5)) == codec
    fast = rle._fast_body(body, 6, 5)
    if fast is not None:
        assert codec == ("ok", fast.tolist())
    lines = body.replace("\r\n", "\n").split("\n")
    general = outcome(lambda: rle._decode_rle_lines(lines, 0, 6, 5))
    if not body.strip():  # the pattern reader sizes an empty body as 0 cells
        assert codec[:3] == ("err", 1, 1)
    elif general[0] == "ok" or codec[0] == "err":
        assert codec[:3] == general[:3]
    else:
        assert "limit" in general[3]
