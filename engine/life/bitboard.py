"""One Life board as Python integers: a bit plane per int, each generation ~60 big-integer
operations (the plain tick and the fold of one game, docs/architecture/ticking.md "Replay from snapshots").

:mod:`engine.life.kernel` advances many boards per numpy call; one board of a game's own
tick or of a replay pays numpy's fixed cost per call (~1 µs) for each of the ~60 calls of
a generation, whatever its size: ~60 µs per generation of a 60 x 60 board. A Python int
holds a whole plane (a 60 x 60 board is ~4,000 bits), and one ``&``, ``|``, ``^`` or shift
over it is a single C loop: the same circuit costs ~3 µs per generation here, ~50 µs for
a 300 x 300 board (numpy's one-board step: ~200 µs).

Rule: the Life seed's, as :func:`engine.life.reference.step_reference` defines it (B3/S23,
Moore neighbourhood, all colours count; a survivor keeps its colour; a newborn takes the
colour at least 2 of its 3 parents have, and when all 3 differ the one colour of 1..4
absent among them); hard edges or a torus. Tested against the reference.

Layout: bit ``(r + 1) * S + (c + 1)`` is cell ``(r, c)``, ``S = W + 2``: each row has a
pad bit on either side and the board a ghost row above and below. Between generations
the pads and ghost rows are 0 (every plane is masked to the cells); on a torus they are
filled with the wrapped cells before a generation. Planes: the live cells, then for two
colours ``a < b`` the cells of ``b``, for more the cells of 1, 2 and 3 (4 = the rest),
as the kernel keeps them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.life import stability
from engine.life.kernel import pack

#: Planes of a board: (alive, colour planes...) as ints.
Planes = tuple[int, ...]


class Bitboard:
    """Boards of one size, edge rule and colour set as Python ints.

    Args:
        h, w: rows and columns (>= 1).
        torus: wrap both axes; otherwise hard edges (cells beyond are dead).
        colours: the colours a board may hold: one ``(c,)``, two ``(a, b)`` or
            ``(1, 2, 3, 4)`` (births never bring in a colour outside the set).
    """

    def __init__(self, h: int, w: int, torus: bool, colours: Sequence[int]) -> None:
        self.h, self.w, self.torus = h, w, bool(torus)
        self.colours = tuple(colours)
        if len(self.colours) not in (1, 2, 4):
            raise ValueError(f"colours must be one, two or (1, 2, 3, 4), got {self.colours}")
        s = self.s = w + 2
        self.size = (h + 2) * s
        row = ((1 << w) - 1) << 1  # a row's cells, pads excluded
        valid = 0
        for r in range(1, h + 1):
            valid |= row << (r * s)
        self.valid = valid
        first_col = last_col = 0
        for r in range(1, h + 1):
            first_col |= 1 << (r * s + 1)
            last_col |= 1 << (r * s + w)
        self._first_col, self._last_col = first_col, last_col
        full_row = (1 << s) - 1
        self._first_row = full_row << s  # row 1 with its pads
        self._last_row = full_row << (h * s)  # row h with its pads
        self._nbytes = (self.size + 7) // 8

    # ------------------------------------------------------------------ conversion

    def _to_int(self, bits: np.ndarray) -> int:
        padded = np.zeros((self.h + 2, self.s), dtype=np.uint8)
        padded[1 : self.h + 1, 1 : self.w + 1] = bits
        return int.from_bytes(np.packbits(padded, axis=None, bitorder="little").tobytes(), "little")

    def _bits(self, plane: int) -> np.ndarray:
        raw = np.frombuffer(plane.to_bytes(self._nbytes, "little"), dtype=np.uint8)
        bits = np.unpackbits(raw, bitorder="little", count=self.size)
        return bits.reshape(self.h + 2, self.s)[1 : self.h + 1, 1 : self.w + 1]

    def load(self, board: np.ndarray) -> Planes:
        """The planes of an (h, w) uint8 board (0 dead, k = colour k, colours of the set)."""
        alive = self._to_int(board != 0)
        if len(self.colours) == 1:
            return (alive,)
        if len(self.colours) == 2:
            return (alive, self._to_int(board == self.colours[1]))
        return (alive, *(self._to_int(board == k) for k in (1, 2, 3)))

    def board(self, planes: Planes) -> np.ndarray:
        """The (h, w) uint8 board of ``planes`` (a new C-contiguous array)."""
        alive = self._bits(planes[0])
        if len(self.colours) == 1:
            return alive * np.uint8(self.colours[0])
        if len(self.colours) == 2:
            a, b = self.colours
            out = alive * np.uint8(a)
            out += self._bits(planes[1]) * np.uint8(b - a)
            return out
        out = alive * np.uint8(4)
        for k, plane in enumerate(planes[1:], start=1):
            out -= self._bits(plane) * np.uint8(4 - k)
        return out

    def cells(self, planes: Planes) -> dict[int, int]:
        """Each colour of the set -> the plane of its cells (an int of this layout)."""
        alive = planes[0]
        if len(self.colours) == 1:
            return {self.colours[0]: alive}
        if len(self.colours) == 2:
            a, b = self.colours
            return {a: alive & ~planes[1], b: planes[1]}
        p1, p2, p3 = planes[1:]
        return {1: p1, 2: p2, 3: p3, 4: alive & ~(p1 | p2 | p3)}

    def digest(self, planes: Planes, rules: str) -> bytes:
        """The stability digest of the board under engine version ``rules``
        (:func:`engine.life.stability.life_digest`, without the uint8 board for version 3)."""
        if not stability.digests_planes(rules):
            return stability.board_digest(self.board(planes))
        canonical = stability.canonical_planes(self.cells(planes), planes[0])
        return stability.planes_digest([pack(self._bits(p)) for p in canonical])

    def counts(self, planes: Planes) -> list[int]:
        """Live cells: ``[all, colour 1, 2, 3, 4]``."""
        pop = planes[0].bit_count()
        out = [pop, 0, 0, 0, 0]
        if len(self.colours) == 1:
            out[self.colours[0]] = pop
        elif len(self.colours) == 2:
            b = planes[1].bit_count()
            out[self.colours[1]] = b
            out[self.colours[0]] = pop - b
        else:
            c = [p.bit_count() for p in planes[1:]]
            out[1:4] = c
            out[4] = pop - sum(c)
        return out

    # ------------------------------------------------------------------ generations

    def _wrap(self, x: int) -> int:
        """``x`` with its pads and ghost rows holding the wrapped cells (torus)."""
        x |= (x & self._last_col) >> self.w  # left pad = the row's last cell
        x |= (x & self._first_col) << self.w  # right pad = the row's first cell
        shift = self.h * self.s
        return x | (x & self._last_row) >> shift | (x & self._first_row) << shift

    def step(self, planes: Planes) -> Planes:
        """``planes`` one generation later (module docstring: the rule)."""
        s = self.s
        x = planes[0]
        if self.torus:
            x = self._wrap(x)
        left, right = x << 1, x >> 1
        m0, m1 = left ^ right, left & right  # row pair sum (left + right)
        s0 = m0 ^ x
        s1 = m1 | (m0 & x)  # row triple sum (left + x + right)
        u0, d0, u1, d1 = s0 << s, s0 >> s, s1 << s, s1 >> s  # the rows above and below
        a = u0 ^ d0
        n0 = a ^ m0  # weight 1 of the 8-neighbour count
        c1 = (u0 & d0) | (a & m0)
        b = u1 ^ d1
        e = m1 ^ c1
        # weight 2 set exactly once and nothing at weight 4: the count is 2 or 3
        two_or_three = (b ^ e) & ~((u1 & d1) | (m1 & c1) | (b & e))
        alive = (n0 | x) & two_or_three & self.valid
        if len(planes) == 1:
            return (alive,)
        born = alive & ~x
        if len(planes) == 2:
            g, _ = self._pair_bits(planes[1])
            return (alive, (planes[1] & alive) | (g & born))
        bits = [self._pair_bits(p) for p in planes[1:]]
        out = [alive]
        for k in range(3):
            g, pk = bits[k]
            pi, pj = bits[(k + 1) % 3][1], bits[(k + 2) % 3][1]
            # at least 2 parents of colour k, or all three differ and k is the absent one
            newborn = born & (g | (pi & pj & ~pk))
            out.append((planes[k + 1] & alive) | newborn)
        return tuple(out)

    def _pair_bits(self, plane: int) -> tuple[int, int]:
        """Bits 1 and 0 of the count of ``plane`` over each cell's 3 x 3 block (exact for
        counts up to 3: a newborn has 3 parents and is dead itself)."""
        s = self.s
        p = self._wrap(plane) if self.torus else plane
        left, right = p << 1, p >> 1
        q0 = left ^ p ^ right
        q1 = (left & p) | (right & (left ^ p))
        u0, d0 = q0 << s, q0 >> s
        bit0 = u0 ^ q0 ^ d0
        carry = (u0 & q0) | (d0 & (u0 ^ q0))
        bit1 = (q1 << s) ^ q1 ^ (q1 >> s) ^ carry
        return bit1, bit0


_SHAPES: dict[tuple, Bitboard] = {}


def bitboard(h: int, w: int, torus: bool, colours: Sequence[int]) -> Bitboard:
    """The (cached) :class:`Bitboard` of one size, edge rule and colour set."""
    key = (h, w, bool(torus), tuple(colours))
    bb = _SHAPES.get(key)
    if bb is None:
        if len(_SHAPES) > 64:
            _SHAPES.clear()
        bb = _SHAPES[key] = Bitboard(*key)
    return bb


def colours_of(board: np.ndarray) -> tuple[int, ...]:
    """The colour set of a board (as :class:`engine.life.kernel.PackedBoards` picks it):
    ``(c,)`` for one colour (or none: ``(1,)``), ``(a, b)`` for two, else ``(1, 2, 3, 4)``."""
    present = [c for c in range(1, 5) if (board == c).any()]
    if len(present) <= 1:
        return (present[0] if present else 1,)
    if len(present) == 2:
        return (present[0], present[1])
    return (1, 2, 3, 4)
