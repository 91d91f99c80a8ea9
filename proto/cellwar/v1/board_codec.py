"""The board codec of the views: how a game view writes its board, colours and fog as text.

The one definition of the format, with the standard library only (importing it imports
nothing but :mod:`re`; ``cellwar/__init__.py`` and ``cellwar/v1/__init__.py`` are empty),
so that every reader of views uses it: the engine (``engine.life.rle``, whose numpy fast
paths are built from the tables here, and ``engine.cellwar.fog``), the Python client and
its bots (``client.bots.life.decode_board``: no numpy needed) and the RL observation
(``client.rl.observation``, which must not import ``engine``). The browser's decoder
(``client/web/js/rle.js``) is tested against this module's outputs
(tests/client/test_rle_js.py).

Source of the format: LifeWiki "Run Length Encoded" and Golly Help, "File formats" ->
"Extended RLE format" (the multi-state tags), as used by the views of docs/api/index.md
"Views and `seq`". Only the body is written: no ``#`` lines and no ``x = m, y = n``
header (the view gives ``width`` and ``height``).

**Cells** are row-major: cell ``(x, y)`` (column, row) is index ``y * width + x`` of a
``width * height`` sequence of states 0..255 (0 dead, ``k`` = state ``k``: in the
views, colour ``k`` of player ``k``). **Masks** are Python ints: bit ``y * width + x``
set = the cell is in the mask (``engine.cellwar.fog``).

Two texts of a view use it:

* ``board`` (Life, campaign), written by :func:`encode_board`: ``.`` dead, ``A`` state 1,
  ``B`` state 2, ..., ``X`` state 24, then Golly's two-letter states ``pA``..``pX``
  25..48, ``qA`` 49, ..., ``yO`` 255 (``24 * (1 + prefix) + letter``). Each row is its
  runs ``<count><tag>`` (a count of 1 left out) without its trailing dead cells; ``$``
  ends a row and ``n$`` ends it and ``n - 1`` blank rows after it; trailing blank rows
  are left out; ``!`` ends the board. An all-dead board is ``"!"``. Example: the 3x3
  board ``[[0, 1, 0], [0, 0, 0], [2, 0, 0]]`` is ``".A2$B!"``.
* ``visible`` (CellWar's fog of war), written by :func:`encode_mask`: the two-state
  tags ``o`` in the mask (visible), ``b`` not (fogged); every row written in full (its
  trailing ``b`` run too), rows joined by ``$``, ``!`` at the end. Example: the 4x2 mask
  ``0b0011_0110`` is ``"b2ob$2o2b!"``.

Decoding (:func:`decode_board`, :func:`decode_rows`, :func:`decode_mask`) reads both
texts and any RLE body with these tags:

- ``.`` and ``b`` dead, ``o`` state 1, ``A``..``X`` 1..24, ``pA``..``yO`` 25..255;
  ``$`` end of row; ``!`` end of the board (optional; text after it is ignored).
- A count is decimal, 1..:data:`MAX_SIDE`, without a leading zero, and comes right
  before its tag (LifeWiki: "It is not permitted to place whitespace in the middle of a
  <run_count><tag> item").
- Line breaks (LF, CR or CRLF) may come anywhere between items and inside a count
  (Golly reads a count across a line break); spaces and tabs between items. Lines whose
  first non-blank character is ``#`` (RLE comments) are skipped, and so is an RLE header
  line ``x = m, y = n, ...`` before the first item (its size is not checked: the caller
  gives ``width`` and ``height``).
- Rows shorter than ``width`` are padded with dead cells; dead cells written past the
  right edge and rows skipped past the bottom are tolerated (they change nothing); a
  live cell outside ``width`` x ``height`` is an error.

Every malformed text raises :class:`BoardFormatError` (a ``ValueError``) naming the
fault and its 1-based ``line`` and ``column``; a size out of 0..:data:`MAX_SIDE` or
cells of the wrong length raise ``ValueError``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "DEAD_TAG",
    "LETTER_STATES",
    "MASK_TAGS",
    "MAX_SIDE",
    "MAX_STATE",
    "SINGLE_TAGS",
    "BoardFormatError",
    "decode_board",
    "decode_mask",
    "decode_rows",
    "encode_board",
    "encode_mask",
    "state_tag",
]

MAX_SIDE = 4096
"""Largest width or height (cells), and the largest run count a text may hold."""

MAX_STATE = 255
"""Largest cell state (Golly: 256 states, the last written ``yO``)."""

LETTER_STATES = 24
"""States written as one letter: ``A`` (1) .. ``X`` (24); above, two letters."""

DEAD_TAG = "."
"""The tag :func:`encode_board` writes for dead cells (``b`` reads as dead too)."""

MASK_TAGS = "bo"
"""The two-state tags of masks (:func:`encode_mask`): ``b`` unset, ``o`` set."""

SINGLE_TAGS: dict[str, int] = {".": 0, "b": 0, "o": 1}
SINGLE_TAGS.update({chr(ord("A") + k): k + 1 for k in range(LETTER_STATES)})
"""Every one-character cell tag -> its state (``.``/``b`` 0, ``o`` 1, ``A``..``X`` 1..24)."""

_PREFIX_FIRST, _PREFIX_LAST = "p", "y"


def state_tag(state: int) -> str:
    """The tag :func:`encode_board` writes for ``state``: ``.`` for 0, ``A``..``X`` for
    1..24, ``pA``..``yO`` for 25..255 (Golly's extended RLE).

    Raises:
        ValueError: ``state`` outside 0..255.
    """
    if not 0 <= state <= MAX_STATE:
        raise ValueError(f"cell state {state} is outside 0..{MAX_STATE}")
    if state == 0:
        return DEAD_TAG
    if state <= LETTER_STATES:
        return chr(ord("A") + state - 1)
    prefix, letter = divmod(state - LETTER_STATES - 1, LETTER_STATES)
    return chr(ord(_PREFIX_FIRST) + prefix) + chr(ord("A") + letter)


_TAGS = tuple(state_tag(s) for s in range(MAX_STATE + 1))


class BoardFormatError(ValueError):
    """A board text that cannot be decoded.

    Attributes:
        message: what is wrong.
        line: 1-based line of the fault.
        column: 1-based column of the fault.
    """

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        self.message = message
        self.line = line
        self.column = column
        super().__init__(f"line {line}, column {column}: {message}")


def _check_size(width: int, height: int) -> None:
    if not (0 <= width <= MAX_SIDE and 0 <= height <= MAX_SIDE):
        raise ValueError(f"width and height must be 0..{MAX_SIDE}, got {width}x{height}")


# --------------------------------------------------------------------------- encoding

_RUN = re.compile(rb"(.)\1*", re.DOTALL)
_BITS = re.compile(r"0+|1+")


def encode_board(cells: bytes | bytearray | Iterable[int], width: int, height: int) -> str:
    """The ``board`` text of a view (module docstring), on one line.

    Args:
        cells: ``width * height`` states 0..255, row-major (cell (x, y) at
            ``y * width + x``): bytes, a bytearray or ints.
        width: columns, 0..MAX_SIDE.
        height: rows, 0..MAX_SIDE.

    Returns:
        The text, ending with ``!`` (``"!"`` for an all-dead board). Decode it with
        :func:`decode_board`.

    Raises:
        ValueError: a size out of range, ``cells`` not ``width * height`` long, or a
            state outside 0..255.
    """
    _check_size(width, height)
    try:
        data = bytes(cells)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"cells must be states 0..{MAX_STATE}: {exc}") from None
    if len(data) != width * height:
        raise ValueError(f"{len(data)} cells given for a {width}x{height} board ({width * height})")
    out: list[str] = []
    last = 0  # the row of the last written run: rows ended since then are owed as "n$"
    for y in range(height):
        row = data[y * width : (y + 1) * width].rstrip(b"\x00")
        if not row:
            continue
        ends = y - last
        if ends:
            out.append(f"{ends}$" if ends > 1 else "$")
        last = y
        for m in _RUN.finditer(row):
            n = m.end() - m.start()
            tag = _TAGS[row[m.start()]]
            out.append(f"{n}{tag}" if n > 1 else tag)
    out.append("!")
    return "".join(out)


def encode_mask(mask: int, width: int, height: int) -> str:
    """The ``visible`` text of a CellWar view (module docstring): ``o`` in ``mask``,
    ``b`` not, every row in full, rows joined by ``$``, ``!`` at the end.

    Args:
        mask: bit ``y * width + x`` set = cell (x, y) in the mask; bits past
            ``width * height`` are ignored.
        width: columns, 0..MAX_SIDE.
        height: rows, 0..MAX_SIDE.

    Raises:
        ValueError: a size out of range or a negative mask.
    """
    _check_size(width, height)
    if mask < 0:
        raise ValueError("a mask is a non-negative int")
    total = width * height
    bits = format(mask & ((1 << total) - 1), f"0{total}b")[::-1] if total else ""  # x = 0 first
    rows = []
    for y in range(height):
        runs = []
        for m in _BITS.finditer(bits, y * width, (y + 1) * width):
            n = m.end() - m.start()
            tag = MASK_TAGS[bits[m.start()] == "1"]
            runs.append(f"{n}{tag}" if n > 1 else tag)
        rows.append("".join(runs))
    return "$".join(rows) + "!"


# --------------------------------------------------------------------------- decoding

#: One item piece of a line: a count's digits, blanks, a two-letter state, or any other
#: single character.
_TOKEN = re.compile(r"(\d+)|([ \t\f\v]+)|([p-y][A-X]|.)")
_LINE_BREAK = re.compile(r"\r\n?|\n")
_HEADER = re.compile(r"\s*x\s*=")


#: A clean body, as the encoders write it: one-letter items only, counts of at most four
#: digits without a leading zero.
_CLEAN_BODY = re.compile(r"(?:(?:[1-9][0-9]{0,3}+)?+[.boA-X$])*+")
_ONE_LETTER_TAG = re.compile(r"([.boA-X$])")
_DEAD_TAGS = ".b"
#: One-letter tag -> its state, as bytes.translate table.
_TAG_BYTES = bytes.maketrans("".join(SINGLE_TAGS).encode("ascii"), bytes(SINGLE_TAGS.values()))


def _decode_clean(text: str, width: int, height: int, max_state: int) -> bytearray | None:
    """The common case, fast (no per-cell Python): a text of one-letter items only up to
    its ``!``, as the encoders write it, and every live cell on the board. The runs are
    split from their counts, expanded to one tag per cell (``$`` per row end), rows
    padded and translated to states. None for anything else (or runs far past the
    board): :func:`_decode_careful` then decodes it or names the fault; both give the
    same cells (tests/engine/test_board_codec.py)."""
    body, bang, _rest = text.partition("!")
    if not bang or not _CLEAN_BODY.fullmatch(body):
        return None
    parts = _ONE_LETTER_TAG.split(body)  # count, tag, count, tag, ..., "" (counts may be "")
    counts = [int(c) if c else 1 for c in parts[0:-1:2]]
    if counts and (max(counts) > MAX_SIDE or sum(counts) > (width + 1) * (height + 1)):
        return None  # the careful reader refuses the count or counts the long dead runs
    rows = "".join(map(str.__mul__, parts[1::2], counts)).split("$")
    if len(rows) > height:
        if "".join(rows[height:]).strip(_DEAD_TAGS):
            return None  # a live cell below the board
        del rows[height:]
    padded = []
    for row in rows:
        if len(row) > width:
            if row[width:].strip(_DEAD_TAGS):
                return None  # a live cell past the right edge
            row = row[:width]
        padded.append(row.ljust(width, DEAD_TAG))
    padded.append(DEAD_TAG * (width * (height - len(rows))))
    cells = bytearray("".join(padded).encode("ascii").translate(_TAG_BYTES))
    if max_state < LETTER_STATES and cells and max(cells) > max_state:
        return None
    return cells


def decode_board(text: str, width: int, height: int, *, max_state: int = MAX_STATE) -> bytearray:
    """Decode a ``board`` or ``visible`` text (or any RLE body with the module's tags).

    Args:
        text: the text (module docstring "Decoding").
        width: columns, 0..MAX_SIDE.
        height: rows, 0..MAX_SIDE.
        max_state: the largest state the text may hold (1 for a two-state mask).

    Returns:
        A new ``bytearray`` of ``width * height`` states, row-major (cell (x, y) at
        ``y * width + x``).

    Raises:
        BoardFormatError: an empty text (an all-dead board is ``"!"``), an unknown
            character, a count with a leading zero, above MAX_SIDE, followed by
            whitespace or by no tag, a state above ``max_state``, or a live cell outside
            ``width`` x ``height``.
        ValueError: a size out of range.
    """
    _check_size(width, height)
    cells = _decode_clean(text, width, height, max_state)
    if cells is None:
        cells = _decode_careful(text, width, height, max_state)
    return cells


def _decode_careful(text: str, width: int, height: int, max_state: int) -> bytearray:
    """:func:`decode_board` item by item, for every text: comments, header, blanks, line
    breaks, two-letter states, and the faults (with their line and column)."""
    cells = bytearray(width * height)
    x = y = 0
    pending: str | None = None  # the digits of a count waiting for its tag
    pending_at = (0, 0)
    seen = False  # an item (or a count) was read: a header line is no longer skipped
    done = False
    for i, line in enumerate(_LINE_BREAK.split(text)):
        stripped = line.lstrip()
        if stripped.startswith("#") or (not seen and pending is None and _HEADER.match(line)):
            continue
        for m in _TOKEN.finditer(line):
            col = m.start()
            digits, space, tag = m.groups()
            if digits is not None:
                if pending is None:
                    if digits[0] == "0":
                        raise BoardFormatError(
                            f"count {digits!r} has a leading zero", i + 1, col + 1
                        )
                    pending, pending_at = digits, (i + 1, col + 1)
                else:
                    pending += digits
                if len(pending) > len(str(MAX_SIDE)) or int(pending) > MAX_SIDE:
                    raise BoardFormatError(
                        f"count {pending} too big (limit {MAX_SIDE})", *pending_at
                    )
                seen = True
                continue
            if space is not None:
                if pending is not None:
                    raise BoardFormatError(
                        f"whitespace between count {pending} and its tag", i + 1, col + 1
                    )
                continue
            seen = True
            n = int(pending) if pending is not None else 1
            pending = None
            if tag == "!":
                done = True
                break
            if tag == "$":
                y += n
                x = 0
                continue
            state = SINGLE_TAGS.get(tag)
            if state is None:
                if len(tag) == 2:
                    state = (
                        LETTER_STATES * (ord(tag[0]) - ord(_PREFIX_FIRST) + 1)
                        + ord(tag[1])
                        - ord("A")
                        + 1
                    )
                    if state > MAX_STATE:
                        raise BoardFormatError(
                            f"state {state} ({tag}) is above {MAX_STATE}", i + 1, col + 1
                        )
                elif _PREFIX_FIRST <= tag <= _PREFIX_LAST:
                    raise BoardFormatError(
                        f"{tag!r} must be followed by a letter A..X (states 25..{MAX_STATE})",
                        i + 1,
                        col + 1,
                    )
                else:
                    raise BoardFormatError(f"unknown character {tag!r}", i + 1, col + 1)
            if state:
                if state > max_state:
                    raise BoardFormatError(
                        f"state {state} ({tag}) is above {max_state}", i + 1, col + 1
                    )
                if y >= height:
                    raise BoardFormatError(
                        f"live cell below the board (row {y}, height {height})", i + 1, col + 1
                    )
                if x + n > width:
                    raise BoardFormatError(
                        f"live cell past the right edge (column {x + n - 1}, width {width})",
                        i + 1,
                        col + 1,
                    )
                start = y * width + x
                cells[start : start + n] = bytes((state,)) * n
            x += n
        if done:
            break
    if pending is not None and not done:
        raise BoardFormatError(f"count {pending} is not followed by a tag", *pending_at)
    if not seen:
        raise BoardFormatError("empty board text (an all-dead board is written '!')", 1, 1)
    return cells


def decode_rows(text: str, width: int, height: int) -> list[list[int]]:
    """:func:`decode_board` as ``height`` lists of ``width`` ints (``rows[y][x]``).

    Raises:
        BoardFormatError, ValueError: as :func:`decode_board`.
    """
    cells = decode_board(text, width, height)
    return [list(cells[y * width : (y + 1) * width]) for y in range(height)]


_BIT_CHARS = bytes.maketrans(b"\x00\x01", b"01")


def decode_mask(text: str, width: int, height: int) -> int:
    """Decode a two-state ``visible`` text (:func:`encode_mask`) into a mask: bit
    ``y * width + x`` set where the cell is ``o`` (state 1).

    Raises:
        BoardFormatError: as :func:`decode_board`, and for a state above 1.
        ValueError: a size out of range.
    """
    cells = decode_board(text, width, height, max_state=1)
    return int(bytes(cells[::-1]).translate(_BIT_CHARS), 2) if cells else 0
