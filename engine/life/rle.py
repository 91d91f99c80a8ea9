"""Read and write Life patterns: RLE, plaintext ``.cells`` and Life 1.05/1.06 ``.lif``,
read as Golly reads them.

Formats (sources: LifeWiki "Run Length Encoded", "Plaintext", "Life 1.05", "Life 1.06";
Golly Help, "File formats" -> "Extended RLE format"; Golly's reader
``gollybase/readpattern.cpp``, functions ``loadpattern``, ``readrle``, ``isplainrle``,
``readpclife``):

* **RLE**: optional ``#`` lines (``#N`` name, ``#C``/``#c`` comments, ``#O`` author,
  ``#P``/``#R`` top-left offset ``x y``, ``#r`` rule), then the header
  ``x = m, y = n[, rule = B3/S23]`` (spaces optional), then ``<count><tag>`` items,
  ``$`` end of row (``5$`` = end the row and 4 blank rows), ``!`` end (optional at the
  end of the text; anything after it is ignored). Lines have any length and may wrap
  anywhere between items; a count may continue across a line break (Golly reads it so).
  Rows shorter than ``x`` are padded with dead cells.

* **Plaintext** (``.cells``): ``!`` comment lines (``!Name: glider`` gives the name),
  then rows of ``.`` dead and ``O`` alive (``o`` and ``*`` are accepted too); rows are
  padded to the widest.

* **Life 1.05** (``#Life 1.05``): ``#D`` description, ``#N``/``#R`` rule, ``#P x y``
  blocks of ``.``/``*`` rows. **Life 1.06** (``#Life 1.06``): one ``x y`` per live cell.
  The board is the bounding box of the live cells; :attr:`Pattern.offset` its top-left.

Golly compatibility (:func:`parse`, ``reader="golly"``, the default):

- **The RLE tag set is Golly's** (``readrle``): ``b`` and ``.`` dead; ``o`` state 1;
  ``A``..``X`` states 1..24; ``p``..``y`` followed by ``A``..``X`` states
  ``24 * (1 + prefix) + letter`` (``pA`` = 25 ... ``yO`` = 255; above 255 refused); a
  lone ``p``..``y`` state 1 (Golly: "be more forgiving" for Niemiec's marked cells, e.g.
  ``x``); every other character (``z``, ``a``, ``c``..``n``, ``Z``, punctuation) is
  skipped: it takes no cell and its count goes with it (``61z!`` has no live cell).
- **Formats are detected as Golly does**, by the first non-blank line: ``#Li`` Life
  1.05/1.06; ``#P `` Life 1.05 without its header (what WinLifeSearch puts on the
  clipboard); ``#MCell`` MCell and ``[`` macrocell are refused by name (not supported);
  ``#`` or ``x`` RLE; ``!`` plaintext; a line of only ``b``, ``o``, ``$``, digits and
  blanks with a digit or a final ``!`` is RLE without a header (``isplainrle``);
  anything else a plaintext (text) pattern.
- **States are read by the pattern's rule** (:meth:`Pattern.live`, :func:`rule_states`):
  two-state Life-like rules have state 1 alive; ``LifeHistory`` and ``<rule>History``
  (7 states) the odd states alive (1, 3, 5) and the even ones dead (2 history, 4 marked
  off, 6 boundary); ``Immigration`` and ``QuadLife`` every non-zero state. Any other
  rule (``LifeSuper``, ``Investigator``, Generations, ``WireWorld``, rule tables) and a
  state the rule does not have (``B`` in ``B3/S23``; Golly: "Cell state out of range")
  are refused with a :class:`PatternError` naming the rule. :func:`parse` itself keeps
  the states as written (``dump`` round-trips them); stamps place only ``live()`` cells.
- Where Golly silently guesses at malformed text we refuse it with a clear error:
  whitespace between a count and its tag (``3 o``), a count with a leading zero
  (``03o``, ``0o``) (LifeWiki: "It is not permitted to place whitespace in the middle
  of a <run_count><tag> item"), a plaintext row with characters other than ``.``,
  ``O``, ``o``, ``*`` (Golly's text reader would call any of them alive), a Life 1.05
  row with a character other than ``.``/``*``. A live cell outside the header's ``x``
  by ``y`` box is an error; dead cells written past the right edge and blank rows past
  the bottom are tolerated (they change nothing). A header ``x = 0, y = 0`` (or no
  header at all) sizes the board by its content. Boards larger than :data:`MAX_SIDE` on
  a side and counts above it are refused before any memory is taken.

``reader="v1"`` is the reader of engine version 1, kept so stamps recorded by version 1
fold as they were recorded: ``z`` and every lone ``p``..``y`` state 1, multi-char states
and other letters refused, a ``#P`` first line read as RLE, every non-zero state alive.

Boards are ``(h, w)`` ``uint8`` arrays: 0 dead, ``k`` = state (colour) ``k``.
Every malformed input raises :class:`PatternError` (a ``ValueError``) with 1-based
``line`` and ``column``.

The view helpers :func:`board_to_rle_body` / :func:`rle_body_to_board` are numpy fast
paths (no per-cell Python) of the views' board codec, ``cellwar.v1.board_codec`` (the one
definition of the format, docs/api/index.md "Views and `seq`"): their tag tables come
from it, and whatever the vectorised decoder does not take on (spaces, comment lines, a
state above 24, a malformed text) is decoded by the codec itself, so both read the same
texts the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from cellwar.v1 import board_codec

try:  # the view text in C (engine/life/_native.c), built by the install where it can be
    from engine.life import _native
except ImportError:  # a build without a C compiler: the vectorised encoder below
    _native = None

__all__ = [
    "MAX_SIDE",
    "MAX_STATE",
    "READERS",
    "Pattern",
    "PatternError",
    "board_to_rle_body",
    "canonical_rule",
    "dump",
    "parse",
    "rle_body_to_board",
    "rule_states",
]

MAX_SIDE = 4096
"""Largest width or height :func:`parse` accepts (guards memory)."""

MAX_STATE = board_codec.LETTER_STATES
"""Largest cell state written as one letter (``X``)."""

_LINE_MAX = 70
_MAX_COUNT_DIGITS = len(str(MAX_SIDE))


class PatternError(board_codec.BoardFormatError):
    """A pattern text that cannot be read: the board codec's error (a ``ValueError``,
    ``PatternError(message, line=1, column=1)``, written ``"line L, column C: message"``).

    Attributes:
        message: what is wrong.
        line: 1-based line of the fault.
        column: 1-based column of the fault.
    """


@dataclass(frozen=True, eq=False)
class Pattern:
    """A parsed pattern (a value: the board is a read-only copy).

    Attributes:
        board: (h, w) uint8, 0 dead, k = state k; read-only.
        name: from ``#N`` (RLE) or ``!Name:`` (plaintext), else None.
        rule: canonical ``B.../S...`` when recognised (see :func:`canonical_rule`),
            else the rule text as written; ``"B3/S23"`` when the file gives none.
        comments: ``#C``/``#c`` (RLE), ``!`` (plaintext) or ``#D`` (Life 1.0x) lines.
        author: from ``#O``, else None.
        offset: ``(x, y)`` of the top-left cell from ``#P``/``#R`` (RLE) or the
            bounding box of a Life 1.0x file; ``(0, 0)`` otherwise.
        format: ``"rle"``, ``"cells"``, ``"life105"`` or ``"life106"``.
        category: pattern-library category (``engine.life.patterns``), else None.
        source: where the pattern was published (pattern library), else None.
    """

    board: np.ndarray
    name: str | None = None
    rule: str = "B3/S23"
    comments: tuple[str, ...] = ()
    author: str | None = None
    offset: tuple[int, int] = (0, 0)
    format: str = "rle"
    category: str | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        board = np.array(self.board, dtype=np.uint8, copy=True)
        if board.ndim != 2:
            raise ValueError(f"board must be 2-D (h, w), got shape {board.shape}")
        board.setflags(write=False)
        object.__setattr__(self, "board", board)
        object.__setattr__(self, "comments", tuple(self.comments))
        object.__setattr__(self, "offset", (int(self.offset[0]), int(self.offset[1])))

    @property
    def width(self) -> int:
        """Board width (columns)."""
        return int(self.board.shape[1])

    @property
    def height(self) -> int:
        """Board height (rows)."""
        return int(self.board.shape[0])

    @property
    def population(self) -> int:
        """Number of live (non-zero) cells."""
        return int(np.count_nonzero(self.board))

    def live(self) -> np.ndarray:
        """The cells alive under the pattern's own rule, a new (h, w) bool array
        (:func:`rule_states`: e.g. in ``LifeHistory`` the odd states 1, 3, 5 are alive
        and the even ones dead; in a two-state rule only state 1).

        Raises:
            PatternError: the rule has states this game does not model, or the board
                holds a state the rule does not have (Golly: "Cell state out of range").
        """
        states, alive = rule_states(self.rule)
        top = int(self.board.max()) if self.board.size else 0
        if top >= states:
            raise PatternError(
                f"state {top} is out of range for rule {self.rule!r}, which has {states} states"
            )
        table = np.zeros(256, dtype=bool)
        table[sorted(alive)] = True
        return table[self.board]

    def cells(self) -> list[tuple[int, int]]:
        """Non-zero cells as ``(x, y)`` = (column, row), row-major order."""
        ys, xs = np.nonzero(self.board)
        return [(int(x), int(y)) for y, x in zip(ys, xs, strict=True)]

    def rotated(self, quarter_turns: int) -> np.ndarray:
        """The board after ``quarter_turns`` clockwise quarter turns; a new (h', w') uint8 array."""
        return np.ascontiguousarray(np.rot90(self.board, -(quarter_turns % 4)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pattern):
            return NotImplemented
        return (
            self.board.shape == other.board.shape
            and bool(np.array_equal(self.board, other.board))
            and self._meta() == other._meta()
        )

    def __hash__(self) -> int:
        return hash((self.board.shape, self.board.tobytes(), self._meta()))

    def _meta(self) -> tuple:
        return (
            self.name,
            self.rule,
            self.comments,
            self.author,
            self.offset,
            self.format,
            self.category,
            self.source,
        )

    def __repr__(self) -> str:
        return (
            f"Pattern(name={self.name!r}, {self.width}x{self.height}, "
            f"population={self.population}, rule={self.rule!r}, format={self.format!r})"
        )


# --------------------------------------------------------------------------- rules

_RULE_BS = re.compile(r"^\s*[Bb](\d*)\s*/?\s*[Ss](\d*)\s*$")
_RULE_SB = re.compile(r"^\s*[Ss](\d*)\s*/?\s*[Bb](\d*)\s*$")
_RULE_OLD = re.compile(r"^\s*(\d*)\s*/\s*(\d*)\s*$")


def _digits(s: str) -> str:
    return "".join(sorted(set(s)))


def canonical_rule(rule: str) -> str:
    """``"B<birth>/S<survival>"`` for a Life-like rule written as ``B3/S23``, ``b3/s23``,
    ``S23/B3`` or the old ``23/3`` (survival/birth); other text is returned stripped."""
    m = _RULE_BS.match(rule)
    if m:
        return f"B{_digits(m.group(1))}/S{_digits(m.group(2))}"
    m = _RULE_SB.match(rule)
    if m:
        return f"B{_digits(m.group(2))}/S{_digits(m.group(1))}"
    m = _RULE_OLD.match(rule)
    if m:
        return f"B{_digits(m.group(2))}/S{_digits(m.group(1))}"
    return rule.strip()


_LIFE_LIKE = re.compile(r"^[Bb][0-8a-z-]*/?[Ss][0-8a-z-]*[HV]?$")
#: Named multi-colour Life rules whose every non-zero state is a live cell of some colour
#: (Golly's ``Rules/Immigration.rule`` and ``Rules/QuadLife.rule``): name -> states.
_COLOURED_LIFE = {"immigration": 3, "quadlife": 5}
#: States of Golly's ``[R]History`` rules (``LifeHistory``, ``B36/S23History``, ...):
#: 0 dead, 1 alive, 2 history, 3 marked alive, 4 marked dead, 5 start, 6 boundary.
HISTORY_STATES = 7


def _two_state(rule: str) -> bool:
    """``rule`` (bounded-grid suffix removed) is a two-state Life-like rule."""
    return rule.lower() in ("", "life") or bool(_LIFE_LIKE.match(canonical_rule(rule)))


def rule_states(rule: str) -> tuple[int, frozenset[int]]:
    """``(number of states, live states)`` of the rules this game models (Golly's states):

    - two-state Life-like rules (``B3/S23``, ``B36/S23``, ``23/3``, ``Life``, isotropic
      ``B2n3/S23-q``, ``...H``/``...V``; a bounded-grid suffix ``:T20,20`` is ignored):
      2 states, 1 alive;
    - ``LifeHistory`` and its relatives ``<rule>History`` (Golly's superalgo): 7 states,
      the odd ones alive (1 on, 3 marked on, 5 start), the even ones dead (2 history,
      4 marked off, 6 boundary);
    - ``Immigration`` (3 states) and ``QuadLife`` (5): every non-zero state alive.

    Raises:
        PatternError: any other rule (e.g. ``LifeSuper``, ``Investigator``, Generations
            ``B2/S/C3``, ``WireWorld``, a rule table), naming it.
    """
    base = rule.split(":", 1)[0].strip()
    if _two_state(base):
        return 2, frozenset({1})
    if base.lower().endswith("history") and _two_state(base[: -len("history")]):
        return HISTORY_STATES, frozenset({1, 3, 5})
    if base.lower() in _COLOURED_LIFE:
        n = _COLOURED_LIFE[base.lower()]
        return n, frozenset(range(1, n))
    raise PatternError(
        f"rule {rule!r} has cell states this game does not model; supported: two-state "
        "Life-like rules (B3/S23, ...), LifeHistory and <rule>History, Immigration, QuadLife"
    )


# --------------------------------------------------------------------------- parsing


#: Readers of :func:`parse`: Golly's format detection and RLE tag set (the default), and
#: the reader of engine version 1 (kept so version-1 stamps fold as they were recorded).
READERS = ("golly", "v1")


def parse(text: str, *, reader: str = "golly") -> Pattern:
    """Read a pattern, detecting its format as Golly does (RLE, plaintext ``.cells``,
    Life 1.05/1.06; module docstring "Golly compatibility").

    Args:
        text: the file's text.
        reader: ``"golly"`` (default) or ``"v1"``, the reader of engine version 1: its
            own tag set (``z`` and lone ``p``..``y`` alive, multi-char states and other
            letters refused) and format detection (a ``#P`` first line is RLE).

    Returns:
        A :class:`Pattern`; its board is (h, w) uint8 with the states as written (read
        them by the pattern's rule with :meth:`Pattern.live`).

    Raises:
        PatternError: empty input, bad header, whitespace between a count and its tag, a
            count with a leading zero, a count or board too large, a state above 255, a
            live cell outside the header's box, a format that is not supported (MCell,
            macrocell), or any other malformed input.
        ValueError: an unknown ``reader``.
    """
    if reader not in READERS:
        raise ValueError(f"reader must be one of {READERS}, got {reader!r}")
    if not isinstance(text, str):
        raise PatternError(f"expected text, got {type(text).__name__}")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        raise PatternError("empty input: no pattern", 1, 1)
    if reader == "golly":
        return _parse_golly(lines, first)
    head = lines[first].strip()
    if head.startswith("#Life 1.05"):
        return _parse_life105(lines, first)
    if head.startswith("#Life 1.06"):
        return _parse_life106(lines, first)
    if head.startswith("!"):
        return _parse_cells(lines)
    for ln in lines:
        s = ln.strip()
        if not s or s.startswith("#"):
            continue
        if _is_header(s):
            return _parse_rle(lines)
        break
    body = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if (
        body
        and all(re.fullmatch(r"[.Oo*]*", ln.strip()) for ln in body)
        and not any("!" in ln or "$" in ln for ln in body)
    ):
        return _parse_cells(lines)
    return _parse_rle(lines)


def _parse_golly(lines: list[str], first: int) -> Pattern:
    """Detect the format by the first non-blank line, in Golly's order (Golly
    ``gollybase/readpattern.cpp`` ``loadpattern``)."""
    raw = lines[first]
    head = raw.strip()
    if head.startswith("#Li"):  # "#Life 1.05", "#Life 1.06" (Golly tests "#Li")
        if head.startswith("#Life 1.06"):
            return _parse_life106(lines, first)
        return _parse_life105(lines, first)
    if head.startswith("#P ") or head == "#P":  # WinLifeSearch: Life 1.05 without its header
        return _parse_life105(lines, first - 1)
    if head.startswith("#MCell"):
        raise _err_at(first, 0, "MCell files (#MCell) are not supported; use RLE")
    if head.startswith("#") or head.startswith("x"):
        return _parse_rle(lines, golly=True)
    if head.startswith("!"):
        return _parse_cells(lines)
    if head.startswith("["):
        raise _err_at(first, 0, "macrocell files ([M2]) are not supported; use RLE")
    if _is_plain_rle(head):
        return _parse_rle(lines, golly=True)
    return _parse_cells(lines)


def _is_plain_rle(line: str) -> bool:
    """Golly's guess that a first line is RLE without a header (``isplainrle``): only
    ``b``, ``o``, ``$``, digits and whitespace up to an optional final ``!``, no space
    inside a count, and either a digit or the final ``!``."""
    body, bang, rest = line.partition("!")
    if bang and rest.strip():
        return False
    if not re.fullmatch(r"[0-9bo$ \t]*", body) or re.search(r"\d\s", body) or body[-1:].isdigit():
        return False
    return bool(re.search(r"\d", body)) or bool(bang)


def _is_header(stripped: str) -> bool:
    return re.match(r"x\s*=", stripped) is not None


def _err_at(lineno: int, col: int, message: str) -> PatternError:
    return PatternError(message, lineno + 1, col + 1)


_HEADER_FIELD = re.compile(r"\s*([A-Za-z]+)\s*=\s*(.*?)\s*$")


def _parse_header(line: str, lineno: int) -> tuple[int, int, str | None]:
    """(width, height, rule or None) from ``x = m, y = n[, rule = r]``."""
    indent = len(line) - len(line.lstrip())
    parts = line[indent:].rstrip().split(",")
    values: dict[str, tuple[str, int]] = {}
    col = indent
    for k, part in enumerate(parts):
        m = _HEADER_FIELD.match(part)
        if not m:
            raise _err_at(lineno, col, f"bad header field {part.strip()!r}: expected key = value")
        key, value = m.group(1).lower(), m.group(2)
        if key not in ("x", "y", "rule"):
            raise _err_at(lineno, col + m.start(1), f"unknown header field {m.group(1)!r}")
        if key in values:
            raise _err_at(lineno, col + m.start(1), f"header field {key!r} given twice")
        if key == "rule":  # the rest of the line: Golly rules may hold commas ("B3/S23:T10,10")
            value = ",".join([part, *parts[k + 1 :]])[m.start(2) :].strip()
            values[key] = (value, col + m.start(2))
            break
        values[key] = (value, col + m.start(2))
        col += len(part) + 1
    for key in ("x", "y"):
        if key not in values:
            raise _err_at(lineno, indent, f"header lacks {key} = ...")
        value, vcol = values[key]
        if not re.fullmatch(r"\d+", value):
            raise _err_at(
                lineno, vcol, f"header {key} must be a non-negative integer, got {value!r}"
            )
        if len(value) > 9 or int(value) > MAX_SIDE:
            raise _err_at(lineno, vcol, f"header {key} = {value} exceeds the limit {MAX_SIDE}")
    rule = None
    if "rule" in values:
        rule, rcol = values["rule"]
        if not rule:
            raise _err_at(lineno, rcol, "header rule is empty")
    return int(values["x"][0]), int(values["y"][0]), rule


def _parse_offset(rest: str, lineno: int, col: int) -> tuple[int, int]:
    nums = rest.split()
    if not nums:
        return (0, 0)
    if len(nums) != 2 or not all(re.fullmatch(r"[+-]?\d{1,9}", n) for n in nums):
        raise _err_at(lineno, col, f"bad offset {rest.strip()!r}: expected two integers 'x y'")
    return int(nums[0]), int(nums[1])


def _parse_rle(lines: list[str], golly: bool = False) -> Pattern:
    name = author = rule_hash = None
    comments: list[str] = []
    offset = (0, 0)
    header: tuple[int, int, str | None] | None = None
    body_start = 0
    for i, raw in enumerate(lines):
        s = raw.strip()
        if not s:
            continue
        if s.startswith("#"):
            tag, rest = s[1:2], s[2:].strip()
            col = raw.index("#")
            if tag == "N":
                name = rest or None
            elif tag in ("C", "c"):
                comments.append(rest)
            elif tag == "O":
                author = rest or None
            elif tag in ("P", "R"):
                offset = _parse_offset(s[2:], i, col + 2)
            elif tag == "r":
                rule_hash = rest or None
            continue
        if _is_header(s):
            header = _parse_header(raw, i)
            body_start = i + 1
        else:
            body_start = i
        break
    else:
        body_start = len(lines)
    width = height = None
    rule = rule_hash
    if header is not None:
        hx, hy, hrule = header
        if hx or hy:
            width, height = hx, hy
        if hrule is not None:
            rule = hrule
    board = None
    if width is not None and height is not None:
        body = "\n".join(ln for ln in lines[body_start:] if not ln.lstrip().startswith("#"))
        board = _fast_body(body, width, height)
    if board is None:
        board = _decode_rle_lines(lines, body_start, width, height, golly)
    return Pattern(
        board=board,
        name=name,
        rule=canonical_rule(rule) if rule else "B3/S23",
        comments=tuple(comments),
        author=author,
        offset=offset,
        format="rle",
    )


_TOKEN = re.compile(r"(\d+)|([ \t\f\v]+)|(.)")
_STATE_OF = {"o": 1}
_STATE_OF.update({chr(ord("A") + k): k + 1 for k in range(MAX_STATE)})
_STATE_OF.update({c: 1 for c in "pqrstuvwxyz"})
_PREFIXES = set("pqrstuvwxy")


#: Largest cell state a board holds (Golly: 256 states, 0..255).
MAX_CELL_STATE = 255


def _golly_state(ch: str, nxt: str) -> tuple[int | None, int]:
    """Golly's RLE tag set (``readrle``): ``(state, extra characters consumed)``, state None
    for a character Golly skips. ``o`` 1; ``A``..``X`` 1..24; ``p``..``y`` followed by
    ``A``..``X`` is ``24 * (1 + prefix) + letter`` (states 25..264); a lone ``p``..``y``
    is 1 (Golly: "be more forgiving" for Niemiec's files); anything else (``z``, ``a``,
    ``c``..``n``, ``Z``, punctuation) is skipped, its count with it."""
    if ch == "o":
        return 1, 0
    if "A" <= ch <= "X":
        return ord(ch) - ord("A") + 1, 0
    if "p" <= ch <= "y":
        if "A" <= nxt <= "X":
            return 24 * (ord(ch) - ord("p") + 1) + ord(nxt) - ord("A") + 1, 1
        return 1, 0
    return None, 0


def _decode_rle_lines(
    lines: list[str], start: int, width: int | None, height: int | None, golly: bool = True
) -> np.ndarray:
    """Decode RLE items from ``lines[start:]`` into an (h, w) uint8 board.

    ``width``/``height`` None sizes the board by its content. ``golly`` False: the tag
    set of engine version 1 (unknown characters refused).
    """
    runs: list[tuple[int, int, int, int]] = []  # (row, col, n, state)
    x = y = 0
    extent_x = extent_y = 0
    pending: str | None = None
    pending_at = (0, 0)
    done = False
    for i in range(start, len(lines)):
        line = lines[i]
        if line.lstrip().startswith("#"):
            continue
        skip_to = 0
        for m in _TOKEN.finditer(line):
            col = m.start()
            if col < skip_to:  # the second letter of a multi-char state
                continue
            digits, space, ch = m.group(1), m.group(2), m.group(3)
            if digits is not None:
                if pending is None:
                    if digits[0] == "0":
                        raise _err_at(i, col, f"count {digits!r} has a leading zero")
                    pending, pending_at = digits, (i, col)
                else:
                    pending += digits
                if len(pending) > _MAX_COUNT_DIGITS or int(pending) > MAX_SIDE:
                    raise _err_at(*pending_at, f"count {pending} too big (limit {MAX_SIDE})")
                continue
            if space is not None:
                if pending is not None:
                    raise _err_at(i, col, f"whitespace between count {pending} and its tag")
                continue
            n = int(pending) if pending is not None else 1
            pending = None
            if ch == "!":
                done = True
                break
            if ch == "$":
                y += n
                x = 0
                if y > MAX_SIDE:
                    raise _err_at(i, col, f"pattern taller than the limit {MAX_SIDE}")
                continue
            if ch in "b.":
                state = 0
            elif golly:
                found, extra = _golly_state(ch, line[col + 1 : col + 2])
                if found is None:
                    continue  # Golly skips the character (and its count)
                if found > MAX_CELL_STATE:
                    raise _err_at(i, col, f"state {found} ({ch + line[col + 1]}) exceeds {MAX_CELL_STATE}")
                state, skip_to = found, col + 1 + extra
            else:
                state = _STATE_OF.get(ch, -1)
                if state < 0:
                    raise _err_at(i, col, f"unknown character {ch!r}")
                nxt = line[col + 1 : col + 2]
                if ch in _PREFIXES and "A" <= nxt <= "X":
                    raise _err_at(
                        i, col, f"multi-char state {ch + nxt!r} (state > {MAX_STATE}) not supported"
                    )
            if state:
                if width is not None and x + n > width:
                    raise _err_at(i, col, f"live cell beyond the header width x = {width}")
                if height is not None and y >= height:
                    raise _err_at(i, col, f"live cell beyond the header height y = {height}")
                runs.append((y, x, n, state))
            x += n
            if x > MAX_SIDE:
                raise _err_at(i, col, f"row wider than the limit {MAX_SIDE}")
            extent_x = max(extent_x, x)
            extent_y = max(extent_y, y + 1)
        if done:
            break
    if pending is not None:
        raise _err_at(*pending_at, f"count {pending} is not followed by a tag")
    w = extent_x if width is None else width
    h = extent_y if height is None else height
    board = np.zeros((h, w), dtype=np.uint8)
    for row, col, n, state in runs:
        board[row, col : col + n] = state
    return board


def _parse_cells(lines: list[str]) -> Pattern:
    name = None
    comments: list[str] = []
    rows: list[tuple[int, str]] = []
    for i, raw in enumerate(lines):
        line = raw.rstrip()
        if line.startswith("!"):
            text = line[1:].strip()
            if text.lower().startswith("name:"):
                name = text[5:].strip() or None
            else:
                comments.append(text)
            continue
        rows.append((i, line))
    while rows and not rows[-1][1].strip():
        rows.pop()
    while rows and not rows[0][1].strip():
        rows.pop(0)
    if not rows:
        raise PatternError("plaintext pattern has no rows", 1, 1)
    if len(rows) > MAX_SIDE:
        raise _err_at(rows[MAX_SIDE][0], 0, f"pattern taller than the limit {MAX_SIDE}")
    w = max(len(r) for _, r in rows)
    if w > MAX_SIDE:
        i, r = next((i, r) for i, r in rows if len(r) > MAX_SIDE)
        raise _err_at(i, MAX_SIDE, f"row wider than the limit {MAX_SIDE}")
    board = np.zeros((len(rows), w), dtype=np.uint8)
    for r, (i, line) in enumerate(rows):
        for c, ch in enumerate(line):
            if ch in "Oo*":
                board[r, c] = 1
            elif ch != ".":
                raise _err_at(i, c, f"unknown character {ch!r} in plaintext (use . and O)")
    return Pattern(board=board, name=name, comments=tuple(comments), format="cells")


def _board_from_cells(
    cells: list[tuple[int, int]], where: list[int]
) -> tuple[np.ndarray, tuple[int, int]]:
    """Bounding-box board of live ``(x, y)`` cells; ``where[i]`` is cell i's 0-based line."""
    if not cells:
        return np.zeros((0, 0), dtype=np.uint8), (0, 0)
    xs = np.array([c[0] for c in cells], dtype=np.int64)
    ys = np.array([c[1] for c in cells], dtype=np.int64)
    span_x = np.maximum.accumulate(xs) - np.minimum.accumulate(xs) + 1
    span_y = np.maximum.accumulate(ys) - np.minimum.accumulate(ys) + 1
    too_big = np.flatnonzero((span_x > MAX_SIDE) | (span_y > MAX_SIDE))
    if too_big.size:
        i = int(too_big[0])
        raise _err_at(
            where[i], 0, f"pattern of {span_x[i]}x{span_y[i]} exceeds the limit {MAX_SIDE}"
        )
    x0, y0 = int(xs.min()), int(ys.min())
    board = np.zeros((int(span_y[-1]), int(span_x[-1])), dtype=np.uint8)
    board[ys - y0, xs - x0] = 1
    return board, (x0, y0)


def _parse_life105(lines: list[str], first: int) -> Pattern:
    comments: list[str] = []
    rule = "B3/S23"
    cells: list[tuple[int, int]] = []
    where: list[int] = []
    bx = by = 0
    row = 0
    for i in range(first + 1, len(lines)):
        line = lines[i].rstrip()
        if not line.strip():
            continue
        if line.startswith("#"):
            tag, rest = line[1:2], line[2:].strip()
            if tag == "P":
                bx, by = _parse_offset(line[2:], i, 2)
                row = 0
            elif tag == "N":
                rule = "B3/S23"
            elif tag == "R":
                rule = canonical_rule(rest) if rest else "B3/S23"
            else:
                comments.append(rest)
            continue
        for c, ch in enumerate(line):
            if ch == "*":
                cells.append((bx + c, by + row))
                where.append(i)
            elif ch != ".":
                raise _err_at(i, c, f"unknown character {ch!r} in Life 1.05 (use . and *)")
        row += 1
        if len(cells) > MAX_SIDE * MAX_SIDE:
            raise _err_at(i, 0, "too many cells")
    board, offset = _board_from_cells(cells, where)
    name = comments[0] if comments else None
    return Pattern(
        board=board,
        name=name,
        rule=rule,
        comments=tuple(comments),
        offset=offset,
        format="life105",
    )


def _parse_life106(lines: list[str], first: int) -> Pattern:
    cells: list[tuple[int, int]] = []
    where: list[int] = []
    for i in range(first + 1, len(lines)):
        line = lines[i].strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or not all(re.fullmatch(r"[+-]?\d{1,9}", p) for p in parts):
            raise _err_at(i, 0, f"bad Life 1.06 line {line!r}: expected two integers 'x y'")
        cells.append((int(parts[0]), int(parts[1])))
        where.append(i)
        if len(cells) > MAX_SIDE * MAX_SIDE:
            raise _err_at(i, 0, "too many cells")
    board, offset = _board_from_cells(cells, where)
    return Pattern(board=board, offset=offset, format="life106")


# --------------------------------------------------------------------------- encoding

_DOLLAR, _BANG, _ZERO = ord("$"), ord("!"), ord("0")
#: Tags by state: two-state (``b``/``o``) and one-letter multi-state (``.``, ``A``..``X``),
#: the board codec's.
_CHARS_TWO = np.frombuffer(board_codec.MASK_TAGS.encode("ascii"), dtype=np.uint8)
_CHARS_MULTI = np.frombuffer(
    "".join(board_codec.state_tag(k) for k in range(MAX_STATE + 1)).encode("ascii"), dtype=np.uint8
)


def _check_board(board: np.ndarray) -> np.ndarray:
    b = np.asarray(board)
    if b.ndim != 2:
        raise ValueError(f"board must be 2-D (h, w), got shape {b.shape}")
    if b.dtype != np.uint8:
        if b.size and (b.min() < 0 or b.max() > 255):
            raise ValueError("board values must be 0..255")
        b = b.astype(np.uint8)
    return np.ascontiguousarray(b)


def _digit_table(limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Decimal digits of 0..limit, left-aligned, as ((limit+1, d) uint8, (limit+1,) int32 lengths);
    counts 0 and 1 have no digits (RLE leaves a count of 1 out)."""
    width = len(str(limit))
    table = np.zeros((limit + 1, width), dtype=np.uint8)
    lens = np.zeros(limit + 1, dtype=np.int32)
    for c in range(2, limit + 1):
        s = str(c).encode("ascii")
        table[c, : len(s)] = np.frombuffer(s, dtype=np.uint8)
        lens[c] = len(s)
    return table, lens


_DIGITS, _NDIGITS = _digit_table(MAX_SIDE)


def _count_digits(counts: np.ndarray) -> np.ndarray:
    """Number of digits written for each run count, (m,) int32 (0 and 1 -> none)."""
    top = int(counts.max()) if counts.size else 0
    if top <= MAX_SIDE:
        return _NDIGITS[counts]
    c = counts.astype(np.int64)
    nd = (c >= 2).astype(np.int32)
    p = 10
    while p <= top:
        nd += c >= p
        p *= 10
    return nd


def _digit_rows(counts: np.ndarray, nd: np.ndarray) -> np.ndarray:
    """Digits of counts (all >= 2), left-aligned, (m, max nd) uint8."""
    dmax = int(nd.max())
    if int(counts.max()) <= MAX_SIDE:
        return _DIGITS[counts, :dmax]
    c = counts.astype(np.int64)
    digits = np.zeros((c.size, dmax), dtype=np.uint8)
    for j in range(dmax):  # digit j from the left, where j < nd
        m = nd > j
        digits[m, j] = _ZERO + (c[m] // 10 ** (nd[m] - 1 - j).astype(np.int64)) % 10
    return digits


def _encode(board: np.ndarray, chars: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Run-length encode an (h, w) uint8 board, vectorised (no per-run Python).

    Returns:
        (the items as a uint8 array ending with ``!``, the end offset of every item)
        where an item is one ``<count><tag>``; lines may be broken at these offsets.
    """
    h, w = board.shape
    if board.size and int(board.max()) >= len(chars):
        raise ValueError(f"board state {int(board.max())} exceeds {len(chars) - 1}")
    flat = board.ravel()
    n = flat.size
    if n == 0 or not flat.any():
        return np.array([_BANG], dtype=np.uint8), np.array([1], dtype=np.int64)
    idx_t = np.int32 if n < 2**31 else np.int64
    change = np.empty(n, dtype=bool)
    change[0] = True
    np.not_equal(flat[1:], flat[:-1], out=change[1:])
    change[::w] = True
    starts = np.flatnonzero(change).astype(idx_t)
    lengths = np.diff(starts, append=idx_t(n))
    values = flat[starts]
    keep = values != 0
    keep |= (starts + lengths) % w != 0  # drop each row's trailing dead run
    starts, lengths, values = starts[keep], lengths[keep], values[keep]
    rows = starts // w
    gaps = np.diff(rows, prepend=idx_t(0))  # rows ended before each run: "$" or "n$"
    sep = np.flatnonzero(gaps)
    tcount = np.insert(lengths, sep, gaps[sep])
    tchar = np.insert(chars[values], sep, np.uint8(_DOLLAR))
    nd = _count_digits(tcount)
    tend = np.cumsum(nd + 1, dtype=np.int64)
    total = int(tend[-1])
    out = np.empty(total + 1, dtype=np.uint8)
    out[tend - 1] = tchar
    m = np.flatnonzero(nd)
    if m.size:
        ndm = nd[m]
        dmax = int(ndm.max())
        cols = np.arange(dmax, dtype=np.int64)
        mask = cols < ndm[:, None]
        pos = (tend[m] - 1 - ndm)[:, None] + cols
        out[pos[mask]] = _digit_rows(tcount[m], ndm)[mask]
    out[total] = _BANG
    return out, np.append(tend, total + 1)


def board_to_rle_body(board: np.ndarray) -> str:
    """The view's ``board`` text (``cellwar.v1.board_codec.encode_board``, byte for byte),
    on one line, vectorised.

    Args:
        board: (h, w) uint8, 0 dead, k = colour k (1..255).

    Returns:
        ``.`` dead, ``A`` colour 1, ``B`` colour 2, ...; each row ends with ``$`` (blank
        rows as ``n$``), trailing dead cells and blank rows are left out, ``!`` ends it
        (an empty board is ``"!"``). Decode with :func:`rle_body_to_board`. A board with
        states above 24 (two-letter tags ``pA``..``yO``) is written by the codec itself.

    Raises:
        ValueError: not 2-D, or a state outside 0..255.
    """
    b = _check_board(board)
    if _native is not None:  # the same text in one C pass (None: states above 24)
        text = _native.board_rle(np.ascontiguousarray(b), b.shape[1], b.shape[0])
        if text is not None:
            return text
    if b.size and int(b.max()) > MAX_STATE:
        return board_codec.encode_board(b.tobytes(), b.shape[1], b.shape[0])
    out, _ = _encode(b, _CHARS_MULTI)
    return out.tobytes().decode("ascii")


#: Character -> state for the vectorised decoder: the codec's one-character tags; 254 '$',
#: 253 a digit, 255 anything else (the decoder then leaves the text to the general reader).
_BODY_LUT = np.full(256, 255, dtype=np.uint8)
for _tag, _state in board_codec.SINGLE_TAGS.items():
    _BODY_LUT[ord(_tag)] = _state
_BODY_LUT[_DOLLAR] = 254
_BODY_LUT[_ZERO : _ZERO + 10] = 253
_POW10 = np.array([10**k for k in range(_MAX_COUNT_DIGITS + 1)], dtype=np.int32)


def rle_body_to_board(body: str, width: int, height: int) -> np.ndarray:
    """Decode a view's ``board`` or ``visible`` text into a (height, width) uint8 board:
    ``cellwar.v1.board_codec.decode_board`` (its format and errors), vectorised for the
    clean texts the engine writes; anything else is decoded by the codec.

    Args:
        body: items as written by :func:`board_to_rle_body` (or any text the codec
            reads: comment and header lines, spaces between items, ``pA``..``yO``).
        width: board width (columns), 0..MAX_SIDE.
        height: board height (rows), 0..MAX_SIDE.

    Returns:
        A new (height, width) uint8 array.

    Raises:
        PatternError: malformed body, or a live cell outside width x height (the
            codec's message, line and column).
        ValueError: width or height out of range.
    """
    if not (0 <= width <= MAX_SIDE and 0 <= height <= MAX_SIDE):
        raise ValueError(f"width and height must be 0..{MAX_SIDE}, got {width}x{height}")
    board = _fast_body(body, width, height)
    if board is not None:
        return board
    try:
        cells = board_codec.decode_board(body, width, height)
    except board_codec.BoardFormatError as exc:
        raise PatternError(exc.message, exc.line, exc.column) from None
    return np.frombuffer(cells, dtype=np.uint8).reshape(height, width)


def _fast_body(body: str, width: int, height: int) -> np.ndarray | None:
    """Vectorised decoder for clean bodies; None means "let the slower reader decide" (the
    board codec for :func:`rle_body_to_board`, the general reader for :func:`parse`)."""
    try:
        raw = body.encode("ascii")
    except UnicodeEncodeError:
        return None
    bang = raw.find(b"!")
    if bang < 0:
        return None
    a = np.frombuffer(raw, dtype=np.uint8, count=bang)
    if b"\n" in raw[:bang] or b"\r" in raw[:bang]:
        a = a[(a != 10) & (a != 13)]
    board = np.zeros((height, width), dtype=np.uint8)
    if a.size == 0:
        return board
    codes_all = _BODY_LUT[a]  # 255 invalid, 253 digit, 254 '$'
    isdig = codes_all == 253
    if isdig[-1]:
        return None
    sym = np.flatnonzero(~isdig).astype(np.int32)
    codes = codes_all[sym]
    if (codes == 255).any():
        return None
    ndig = np.diff(sym, prepend=np.int32(-1)) - 1
    counts = np.ones(sym.size, dtype=np.int32)
    dm = np.flatnonzero(ndig)
    if dm.size:
        nd = ndig[dm]
        dmax = int(nd.max())
        if dmax > _MAX_COUNT_DIGITS:
            return None
        s = sym[dm]
        if (a[s - nd] == _ZERO).any():
            return None
        val = np.zeros(dm.size, dtype=np.int32)
        for d in range(dmax):
            m = nd > d
            if d == 0:
                val += a[s - 1].astype(np.int32) - _ZERO
            else:
                val[m] += (a[s[m] - 1 - d].astype(np.int32) - _ZERO) * _POW10[d]
        if int(val.max()) > MAX_SIDE:
            return None
        counts[dm] = val
    is_dollar = codes == 254
    dn = np.where(is_dollar, counts, 0)
    rows = np.cumsum(dn, dtype=np.int32) - dn
    cn = counts - dn
    cum = np.cumsum(cn, dtype=np.int32)
    base = np.maximum.accumulate(np.where(is_dollar, cum, 0))
    if int(dn.sum()) > MAX_SIDE or int((cum - base).max()) > MAX_SIDE:
        return None  # the general reader reports the limit
    live = np.flatnonzero((codes > 0) & ~is_dollar)
    if live.size == 0:
        return board
    lens = cn[live]
    lcols = cum[live] - lens - base[live]
    lrows = rows[live]
    if int(lrows[-1]) >= height or int((lcols + lens).max()) > width:
        return None
    starts = lrows * width + lcols
    if int(lens.max()) == 1:
        board.ravel()[starts] = codes[live]
        return board
    total = int(lens.sum())
    idx = np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(total, dtype=np.int32)
    board.ravel()[idx] = np.repeat(codes[live], lens)
    return board


def dump(
    board: np.ndarray,
    name: str | None = None,
    rule: str = "B3/S23",
    comments: Iterable[str] = (),
) -> str:
    """Write a board as RLE (LifeWiki / Golly), lines at most 70 characters.

    Args:
        board: (h, w) uint8, 0 dead, k = state k (at most 24). Its size is kept as the
            header's ``x``/``y`` (no trimming), so ``parse(dump(b)).board == b``.
        name: written as ``#N``.
        rule: written in the header.
        comments: each written as a ``#C`` line (multi-line strings are split).

    Returns:
        ``#N``/``#C`` lines, ``x = w, y = h, rule = ...``, then the items: two-state
        ``b``/``o`` when the board only holds 0 and 1, multi-state ``.``/``A``/``B``...
        otherwise; ends with ``!`` and a newline.

    Raises:
        ValueError: not 2-D, or a state above 24.
    """
    b = _check_board(board)
    two_state = not b.size or int(b.max()) <= 1
    out, ends = _encode(b, _CHARS_TWO if two_state else _CHARS_MULTI)
    head: list[str] = []
    if name:
        head.append(f"#N {' '.join(str(name).split())}")
    for c in comments:
        for part in str(c).splitlines() or [""]:
            head.append(f"#C {part}".rstrip())
    h, w = b.shape
    head.append(f"x = {w}, y = {h}, rule = {rule}")
    data = out.tobytes().decode("ascii")
    body: list[str] = []
    pos = 0
    total = len(data)
    while total - pos > _LINE_MAX:
        j = int(np.searchsorted(ends, pos + _LINE_MAX, side="right")) - 1
        cut = int(ends[j])
        if cut <= pos:  # a single token longer than a line (cannot happen below 10**69)
            cut = int(ends[j + 1])
        body.append(data[pos:cut])
        pos = cut
    body.append(data[pos:])
    return "\n".join(head + body) + "\n"
