"""Pattern files read as Golly reads them (docs/architecture/rules.md "Pattern files";
engine/life/rle.py "Golly compatibility"; source: Golly ``gollybase/readpattern.cpp``
``readrle``, ``isplainrle``, ``loadpattern``, ``readpclife``): the RLE tag set, format
detection, and cell states read by the pattern's own rule. Engine version 1's reader stays
for its logs (``reader="v1"``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import engine
from engine.life import rle
from engine.life.rle import PatternError, parse, rule_states

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "patterns"
LIBRARY_DIR = Path(engine.__file__).resolve().parent / "life" / "patterns" / "data"


# =========================================================================== the tag set


def test_z_is_skipped_not_alive():
    """The issue's case: Golly reads ``61z!`` as nothing; version 1 read 61 live cells."""
    text = "x = 0, y = 0, rule = B3/S23\n61z!"
    assert parse(text).population == 0
    assert parse(text, reader="v1").population == 61


@pytest.mark.parametrize(
    "body, row",
    [
        ("o", [1]),
        ("A", [1]),
        ("X", [24]),
        ("3B", [2, 2, 2]),
        ("bpbqbybx", [0, 1, 0, 1, 0, 1, 0, 1]),  # p..y alone: state 1 (Niemiec's marks)
        ("pA", [25]),  # p..y + A..X: 24 * (1 + prefix) + letter
        ("2pB", [26, 26]),
        ("qX", [72]),
        ("yO", [255]),
        ("oz3o", [1, 1, 1, 1]),  # z is skipped: it takes no cell
        ("o5z2o", [1, 1, 1]),  # ... and its count goes with it
        ("oao%oZo", [1, 1, 1, 1]),  # a, c..n, Z, punctuation: skipped
        ("o\u00e9o", [1, 1]),
        ("2b.o", [0, 0, 0, 1]),
        ("pbo", [1, 0, 1]),  # p followed by a non-state letter: state 1, b read on
    ],
)
def test_golly_tag_set(body, row):
    board = parse(f"x = 0, y = 0\n{body}!").board
    assert board.tolist() == [row]


def test_a_state_above_255_is_refused():
    with pytest.raises(PatternError) as err:
        parse("x = 2, y = 1\nyPo!")
    assert "state 256" in err.value.message and (err.value.line, err.value.column) == (2, 1)


def test_niemiec_files_read_the_same_by_both_readers():
    for name in ("edgecase-niemiec-22-13005.rle", "edgecase-niemiec-29-1.rle"):
        text = (FIXTURES / name).read_text()
        assert np.array_equal(parse(text).board, parse(text, reader="v1").board)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.rle")) + sorted(FIXTURES.glob("*.cells"))
                         + sorted(FIXTURES.glob("*.lif")), ids=lambda p: p.name)
def test_real_files_read_the_same_by_both_readers(path):
    text = path.read_text()
    golly, old = parse(text), parse(text, reader="v1")
    assert np.array_equal(golly.board, old.board) and golly.rule == old.rule
    assert golly.live().sum() == golly.population  # all two-state Life patterns


def test_library_patterns_read_the_same_by_both_readers():
    for path in sorted(Path(LIBRARY_DIR).glob("*.rle")):
        text = path.read_text()
        assert np.array_equal(parse(text).board, parse(text, reader="v1").board), path.name


# =========================================================================== detection


def test_winlifesearch_text_starting_with_p_is_life_105():
    """The issue's case: ``#P 0 0`` without the ``#Life 1.05`` line (WinLifeSearch's
    clipboard) is Life 1.05 (Golly: ``line[0] == '#' && line[1] == 'P' && line[2] == ' '``)."""
    text = "#P 0 0\n.*.\n..*\n***\n"
    p = parse(text)
    assert p.format == "life105" and p.board.tolist() == [[0, 1, 0], [0, 0, 1], [1, 1, 1]]
    with_header = parse("#Life 1.05\n" + text)
    assert np.array_equal(p.board, with_header.board)
    two_blocks = parse("#P -1 -1\n**\n#P 3 0\n*\n")
    assert two_blocks.offset == (-1, -1) and two_blocks.cells() == [(0, 0), (1, 0), (4, 1)]
    with pytest.raises(PatternError):
        parse(text, reader="v1")  # version 1 read it as RLE: '*' unknown


@pytest.mark.parametrize(
    "text, fmt",
    [
        ("#Life 1.06\n0 0\n1 0\n", "life106"),
        ("#Life 1.05\n#P 0 0\n**\n", "life105"),
        ("#N glider\nx = 3, y = 3\nbo$2bo$3o!", "rle"),
        ("x = 3, y = 3\nbo$2bo$3o!", "rle"),
        ("bo$2bo$3o!", "rle"),  # Golly's isplainrle: b, o, $, digits, a final '!'
        ("3o", "rle"),  # ... a digit is enough
        ("!Name: blinker\nOOO\n", "cells"),
        ("..O\n.O.\n", "cells"),  # a text pattern
        ("ooo\n", "cells"),  # no digit and no '!': a text pattern (o is alive there too)
    ],
)
def test_format_detection_follows_golly(text, fmt):
    assert parse(text).format == fmt


@pytest.mark.parametrize("text, fragment", [("#MCell\n#L A!", "MCell"), ("[M2] (golly 2.0)\n#R B3/S23\n", "macrocell")])
def test_formats_golly_reads_but_we_do_not_are_refused_by_name(text, fragment):
    with pytest.raises(PatternError) as err:
        parse(text)
    assert fragment in err.value.message


# =========================================================================== states by rule


def test_life_history_even_states_are_dead():
    """The issue's case: ``rule = LifeHistory`` with ``A3BA!`` has 2 live cells (``B`` is
    state 2, history: dead); version 1 placed 5."""
    p = parse("x = 5, y = 1, rule = LifeHistory\nA3BA!")
    assert p.board.tolist() == [[1, 2, 2, 2, 1]]
    assert p.live().tolist() == [[True, False, False, False, True]]
    six = parse("x = 6, y = 1, rule = LifeHistory\nABCDEF!")
    assert six.live().tolist() == [[True, False, True, False, True, False]]  # odd states live


@pytest.mark.parametrize("rule", ["LifeHistory", "B3/S23History", "B36/S23History", "lifehistory"])
def test_history_relatives(rule):
    assert rule_states(rule) == (7, frozenset({1, 3, 5}))


@pytest.mark.parametrize(
    "rule, states, alive",
    [
        ("B3/S23", 2, {1}),
        ("23/3", 2, {1}),
        ("B36/S23", 2, {1}),
        ("Life", 2, {1}),
        ("B3/S23:T20,20", 2, {1}),
        ("B2n3/S23-q", 2, {1}),
        ("Immigration", 3, {1, 2}),
        ("QuadLife", 5, {1, 2, 3, 4}),
    ],
)
def test_modelled_rules(rule, states, alive):
    assert rule_states(rule) == (states, frozenset(alive))


@pytest.mark.parametrize("rule", ["WireWorld", "LifeSuper", "B3/S23Super", "LifeInvestigator", "B2/S/C3", "/2/3",
                                  "JvN29", "Langtons-Ant"])
def test_rules_not_modelled_are_refused_naming_the_rule(rule):
    p = parse(f"x = 2, y = 1, rule = {rule}\nAB!")
    with pytest.raises(PatternError) as err:
        p.live()
    assert repr(rule) in err.value.message


def test_a_state_the_rule_does_not_have_is_refused():
    with pytest.raises(PatternError) as err:
        parse("x = 2, y = 1, rule = B3/S23\nAB!").live()
    assert "state 2 is out of range for rule 'B3/S23'" in err.value.message
    with pytest.raises(PatternError):
        parse("x = 2, y = 1, rule = LifeHistory\nAH!").live()  # LifeHistory has states 0..6


# =========================================================================== stamps


def _life(version=None):
    state = engine.new_game(engine.config_from_dict("life", {"width": 20, "height": 10, "budget": 99}),
                            engine_version=version)
    for name in ("a", "b"):
        state = engine.add_player(state, name)
    return state


def stamp(state, text):
    return engine.apply_action(state, 1, {"type": "stamp", "rle": text, "x": 0, "y": 0})


def test_a_stamp_places_only_the_cells_its_rule_calls_alive():
    text = "x = 5, y = 1, rule = LifeHistory\nA3BA!"
    assert int((stamp(_life(), text).grid == 1).sum()) == 2
    assert int((stamp(_life("1"), text).grid == 1).sum()) == 5  # what version 1 recorded


@pytest.mark.parametrize(
    "text, code",
    [
        ("x = 2, y = 1, rule = WireWorld\nAB!", "MALFORMED"),
        ("x = 2, y = 1, rule = B3/S23\nAB!", "MALFORMED"),
        ("x = 0, y = 0, rule = B3/S23\n61z!", "NO_CHANGE"),  # no live cell: nothing to place
    ],
)
def test_a_stamp_refused_by_its_rule(text, code):
    state = _life()
    with pytest.raises(engine.GameError) as err:
        stamp(state, text)
    assert err.value.code == code, err.value
    if code == "MALFORMED":
        assert "rule" in err.value.message


def test_a_version_1_stamp_keeps_its_old_reading():
    """A stamp recorded by version 1 folds as it was recorded: ``z`` alive."""
    assert int((stamp(_life("1"), "x = 0, y = 0\n3z!").grid == 1).sum()) == 3
    with pytest.raises(engine.GameError):
        stamp(_life(), "x = 0, y = 0\n3z!")  # now: no live cell (NO_CHANGE)


def test_reader_must_be_known():
    with pytest.raises(ValueError):
        rle.parse("o!", reader="xlife")
