"""cellwar.v1.board_codec, the views' board codec: its format (docstring examples, the
two-letter states, what the decoder tolerates and refuses), that the engine's encoders
write exactly its texts (the numpy one of Life boards, the fog's of masks, byte for byte
against the encoder the fog had before the codec), and that it needs the standard
library only."""

from __future__ import annotations

import ast
import random
import subprocess
import sys
from itertools import groupby
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from cellwar.v1 import board_codec
from cellwar.v1.board_codec import (
    BoardFormatError,
    decode_board,
    decode_mask,
    decode_rows,
    encode_board,
    encode_mask,
    state_tag,
)
from engine.cellwar import fog
from engine.life import rle
from engine.life.rle import board_to_rle_body, rle_body_to_board
from tests.engine import cellwarkit, lifekit

ROOT = Path(__file__).resolve().parents[2]
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_docstring_examples():
    assert encode_board([0, 1, 0, 0, 0, 0, 2, 0, 0], 3, 3) == ".A2$B!"
    assert decode_rows(".A2$B!", 3, 3) == [[0, 1, 0], [0, 0, 0], [2, 0, 0]]
    assert encode_mask(0b0011_0110, 4, 2) == "b2ob$2o2b!"
    assert decode_mask("b2ob$2o2b!", 4, 2) == 0b0011_0110
    assert encode_board(bytes(16), 4, 4) == "!"
    assert encode_board(bytes(0), 0, 0) == "!"
    assert encode_mask(0, 3, 0) == "!"
    assert encode_board([1, 1, 3, 3, 3, 0, 0, 4], 8, 1) == "2A3C2.D!"
    wide = bytearray(600)
    wide[599] = 4
    assert encode_board(wide, 300, 2) == "$299.D!"
    assert encode_board([0, 0, 0, 5, 0, 0, 0, 0, 6], 3, 3) == "$E$2.F!"
    assert encode_board([0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 6], 3, 4) == "$E2$2.F!"


def test_two_letter_states_are_gollys():
    assert [state_tag(s) for s in (0, 1, 24, 25, 48, 49, 72, 73, 255)] == [
        ".", "A", "X", "pA", "pX", "qA", "qX", "rA", "yO",
    ]  # fmt: skip
    cells = list(range(256))
    text = encode_board(cells, 16, 16)
    assert list(decode_board(text, 16, 16)) == cells
    assert list(decode_board("pAyO2qB!", 4, 1)) == [25, 255, 50, 50]
    with pytest.raises(ValueError, match="outside 0..255"):
        state_tag(256)


def test_decoder_reads_rle_bodies_as_lifewiki_writes_them():
    b = [[0, 1, 1, 0], [0, 0, 0, 0], [2, 0, 0, 0]]
    assert decode_rows("#C a comment\nx = 4, y = 3, rule = B3/S23\n.2A$\n#C again\n$B!", 4, 3) == b
    assert decode_rows(".2A$$B", 4, 3) == b  # "!" is optional at the end
    assert decode_rows(".2A$$B! anything 9z after the end", 4, 3) == b
    assert decode_rows(". 2A $ $ B !", 4, 3) == b  # blanks between items
    assert decode_rows(".2A\r\n$$B!", 4, 3) == b  # CRLF
    assert decode_rows("$1\n2b!", 4, 3) == [[0] * 4] * 3  # a count across a line break
    assert decode_rows(".bo$3o!", 4, 3) == [[0, 0, 1, 0], [1, 1, 1, 0], [0, 0, 0, 0]]
    # dead cells past the right edge and rows past the bottom change nothing
    assert decode_rows("A9.$B4000$!", 4, 3) == [[1, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 0]]


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("", 1, 1, "empty board text"),
        ("  \n", 1, 1, "empty board text"),
        ("#C only a comment", 1, 1, "empty board text"),
        ("A3 A!", 1, 3, "whitespace between count 3 and its tag"),
        ("03A!", 1, 1, "count '03' has a leading zero"),
        ("0$A!", 1, 1, "count '0' has a leading zero"),
        ("A$\n2", 2, 1, "count 2 is not followed by a tag"),
        ("5000$!", 1, 1, "count 5000 too big (limit 4096)"),
        ("4A!", 1, 2, "live cell past the right edge (column 3, width 3)"),
        ("$$$A!", 1, 4, "live cell below the board (row 3, height 3)"),
        ("A\nz!", 2, 1, "unknown character 'z'"),
        ("pZ!", 1, 1, "'p' must be followed by a letter A..X"),
        ("yP!", 1, 1, "state 256 (yP) is above 255"),
    ],
)
def test_decoder_errors_name_the_fault_and_its_place(text, line, column, message):
    with pytest.raises(BoardFormatError) as info:
        decode_board(text, 3, 3)
    assert (info.value.line, info.value.column) == (line, column)
    assert info.value.message.startswith(message)
    assert str(info.value).startswith(f"line {line}, column {column}: ")
    assert isinstance(info.value, ValueError)


def test_mask_decoder_refuses_colours_and_sizes_are_checked():
    with pytest.raises(BoardFormatError, match="state 1 .A. is above 0"):
        decode_board("A!", 2, 2, max_state=0)
    with pytest.raises(BoardFormatError, match=r"line 1, column 2: state 2 \(B\) is above 1"):
        decode_mask("oB!", 2, 2)
    for call in (
        lambda: decode_board("!", 4097, 1),
        lambda: encode_board(b"", -1, 0),
        lambda: encode_mask(0, 1, 4097),
    ):
        with pytest.raises(ValueError, match="width and height must be 0..4096"):
            call()
    with pytest.raises(ValueError, match="3 cells given for a 2x2 board"):
        encode_board([0, 1, 0], 2, 2)
    with pytest.raises(ValueError, match="cells must be states 0..255"):
        encode_board([0, 256, 0, 0], 2, 2)
    with pytest.raises(ValueError, match="non-negative"):
        encode_mask(-1, 2, 2)


@settings(max_examples=600, deadline=None)
@given(
    st.text(alphabet="0123456789.boABX$!pq \n", max_size=50), st.integers(0, 7), st.integers(0, 6)
)
def test_the_fast_decoder_and_the_careful_one_agree(text, width, height):
    """The fast path (one-letter items only) gives up or gives the careful reader's cells."""
    fast = board_codec._decode_clean(text, width, height, board_codec.MAX_STATE)
    if fast is not None:
        assert board_codec._decode_careful(text, width, height, board_codec.MAX_STATE) == fast
    mask = board_codec._decode_clean(text, width, height, 1)
    if mask is not None:
        assert board_codec._decode_careful(text, width, height, 1) == mask


# --- the engine writes the codec's texts ------------------------------------------


@st.composite
def boards(draw, max_side: int = 40, states: int = 24):
    h = draw(st.integers(0, max_side))
    w = draw(st.integers(0, max_side))
    top = draw(st.integers(1, states))
    density = draw(st.sampled_from([0.0, 0.02, 0.3, 0.7, 1.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    alive = rng.random((h, w)) < density
    return (alive * rng.integers(1, top + 1, size=(h, w))).astype(np.uint8)


@FAST
@given(boards())
def test_the_engines_vectorised_board_encoder_writes_the_codecs_text(board):
    h, w = board.shape
    text = encode_board(board.tobytes(), w, h)
    assert board_to_rle_body(board) == text
    assert bytes(decode_board(text, w, h)) == board.tobytes()
    assert board_codec._decode_clean(text, w, h, 255) == board_codec._decode_careful(
        text, w, h, 255
    )
    assert np.array_equal(rle_body_to_board(text, w, h), board)


@FAST
@given(boards())
def test_the_numpy_board_encoder_writes_the_codecs_text_too(board):
    """The encoder without the native module (an install without a C compiler): the
    same text as the codec (and as the native one, the test above)."""
    h, w = board.shape
    native, rle._native = rle._native, None
    try:
        assert board_to_rle_body(board) == encode_board(board.tobytes(), w, h)
    finally:
        rle._native = native


@FAST
@given(boards(max_side=20, states=255))
def test_two_letter_boards_round_trip_through_engine_and_codec(board):
    h, w = board.shape
    text = encode_board(board.tobytes(), w, h)
    assert board_to_rle_body(board) == text
    assert np.array_equal(rle_body_to_board(text, w, h), board)


def _mask_to_rle_before_the_codec(mask: int, width: int, height: int) -> str:
    """engine.cellwar.fog.mask_to_rle as it was written before the codec (reference)."""
    row_mask = (1 << width) - 1
    rows = []
    for y in range(height):
        bits = format(mask >> (y * width) & row_mask, f"0{width}b")[::-1]
        runs = []
        for ch, group in groupby(bits):
            n = len(list(group))
            runs.append(f"{n if n > 1 else ''}{'o' if ch == '1' else 'b'}")
        rows.append("".join(runs))
    return "$".join(rows) + "!"


def test_the_fog_writes_the_same_visible_texts_as_before_the_codec():
    rng = random.Random(7)
    cases = [(0, 4, 4), ((1 << 16) - 1, 4, 4), (1, 1, 1), (0, 1, 1), (1 << 4095, 64, 64)]
    for _ in range(400):
        w, h = rng.randint(1, 64), rng.randint(1, 64)
        density = rng.choice([0.0, 0.1, 0.5, 0.9, 1.0])
        mask = sum(1 << i for i in range(w * h) if rng.random() < density)
        cases.append((mask, w, h))
    cases.append((rng.getrandbits(200) | 1 << 300, 10, 10))  # bits past the board ignored
    for mask, w, h in cases:
        text = encode_mask(mask, w, h)
        assert text == _mask_to_rle_before_the_codec(mask, w, h)
        assert fog.mask_to_rle(mask, w, h) == text
        assert decode_mask(text, w, h) == mask & ((1 << (w * h)) - 1)
        assert board_codec._decode_clean(text, w, h, 1) == board_codec._decode_careful(
            text, w, h, 1
        )
        assert fog.rle_to_mask(text, w, h) == decode_mask(text, w, h)
        cells = decode_board(text, w, h)
        assert [i for i, c in enumerate(cells) if c] == [i for i in range(w * h) if mask >> i & 1]


def test_engine_views_are_the_codecs_texts():
    state = lifekit.start(width=12, height=10, players=2)
    state = lifekit.act(state, 1, "place", cells=[[1, 1], [2, 1], [3, 1], [0, 4]])
    view = engine.get_visible_state(state, 1)  # a placement is hidden from the others
    assert engine.get_visible_state(state, 2)["board"] == "!"
    rows = decode_rows(view["board"], 12, 10)
    assert [(x, y, c) for y, row in enumerate(rows) for x, c in enumerate(row) if c] == [
        (1, 1, 1), (2, 1, 1), (3, 1, 1), (0, 4, 1),
    ]  # fmt: skip
    assert (
        view["board"] == encode_board(bytes(v for row in rows for v in row), 12, 10) == "$.3A3$A!"
    )

    state = cellwarkit.start([(1, "infantry", 1, 1), (2, "infantry", 6, 6)], width=8, height=8)
    for pid in (1, 2, None):
        view = engine.get_visible_state(state, pid)
        mask = fog.visible_mask(state, pid)
        assert decode_mask(view["visible"], 8, 8) == mask
        assert view["visible"] == encode_mask(mask, 8, 8)


# --- standard library only --------------------------------------------------------


def test_the_codec_imports_the_standard_library_only():
    tree = ast.parse(Path(board_codec.__file__).read_text("utf-8"))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
    code = (
        "import sys\n"
        "from cellwar.v1 import board_codec\n"
        "assert board_codec.decode_rows('A$.B!', 2, 2) == [[1, 0], [0, 2]]\n"
        "print(sorted(m for m in ('numpy', 'engine', 'client') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
