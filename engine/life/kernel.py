"""Bit-parallel coloured Life kernel: 64 cells per uint64 word, bit-sliced neighbour counts.

Rule (DESIGN.md §3): B3/S23 on the Moore neighbourhood, all colours count as
neighbours; a survivor keeps its colour; a newborn takes the colour held by at least 2
of its 3 parents, and when all 3 differ (4 colours) the one colour of 1..4 absent among
them (the QuadLife rule). Hard edges (cells beyond the edge are dead) or a torus (both
axes wrap). :func:`engine.life.reference.step_reference` is the plain definition the
kernel is tested against.

Layout
------
Each bit plane (alive cells, or the cells of one colour) of N boards of H x W cells is
one flat, C-contiguous ``uint64`` buffer seen as ``(N, H + 2, nw + 1)`` with
``nw = ceil(W / 64)``, followed by one spare row:

* bit ``j`` of data word ``k`` (columns ``1..nw``) is cell column ``64 k + j``; the
  bits past column ``W - 1`` in the last word ("padding") are cleared every generation
  (on a torus with ``W % 64 != 0`` the padding bit just past the last cell holds a copy
  of column 0, so a right shift carries the wrapped neighbour in);
* word column 0 of each row is a ghost word: its bit 63 holds the cell left of column
  0 (0, or column ``W - 1`` on a torus) and its bit 0 the cell right of the previous
  row's last cell (used when ``W % 64 == 0``);
* rows 0 and ``H + 1`` of each board are ghost rows (0, or copies of rows ``H`` and 1
  on a torus).

With the ghosts in place every shift, horizontal and vertical, is a plain slice of the
flat buffer, so one numpy call handles all rows (and all boards) at once.

One generation of the alive plane ``X`` costs 26 whole-buffer bitwise operations:
left/right neighbours ``L = X << 1 | prev >> 63`` and ``R = X >> 1 | next << 63``
(6), the per-row 2-sum ``M = L + R`` and 3-sum ``S = L + X + R`` as bit slices (5),
then ``n = S[up] + M + S[down]`` with full adders, keeping just what B3/S23 needs:
``next = (n0 | X) & (n == 2 or 3)`` (15). A colour plane adds 18 (its 3-sum and the
bits ``count mod 4`` of the colour among the neighbours of a newborn), plus a few to
merge: a newborn's colour is the colour that has ``count >= 2``.
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["PackedBoards", "pack", "step", "step_many", "unpack"]

_U64 = np.uint64
_ONE = _U64(1)
_S63 = _U64(63)
_ALL = _U64(0xFFFF_FFFF_FFFF_FFFF)
_MAX_COLOUR = 4


def pack(bits: np.ndarray) -> np.ndarray:
    """Pack a bit plane along rows, 64 cells per word.

    Args:
        bits: (..., H, W) array, non-zero = set (bool or any integer dtype).

    Returns:
        (..., H, max(1, ceil(W / 64))) uint64: bit ``j`` of word ``k`` is column
        ``64 k + j``; the padding bits past column ``W - 1`` are 0.
    """
    a = np.asarray(bits)
    if a.dtype != np.bool_ and a.dtype != np.uint8:
        a = a != 0
    nw = max(1, -(-a.shape[-1] // 64))
    out = np.zeros((*a.shape[:-1], nw), dtype=np.uint64)
    _pack_into(out, a)
    return out


def _pack_into(words: np.ndarray, bits: np.ndarray) -> None:
    """Write ``bits`` (..., H, W) (bool or uint8, non-zero = set) into ``words``.

    ``words`` is a (..., H, nw) view of native uint64 whose last axis is contiguous;
    its padding bits are cleared.
    """
    packed = np.packbits(bits, axis=-1, bitorder="little")
    words[...] = 0
    as_bytes = words.view(np.uint8)
    as_bytes[..., : packed.shape[-1]] = packed
    if sys.byteorder == "big":  # the bytes were laid out little-endian
        words.byteswap(inplace=True)


def unpack(words: np.ndarray, width: int) -> np.ndarray:
    """Unpack words made by :func:`pack` back to cells.

    Args:
        words: (..., H, nw) uint64 with ``nw * 64 >= width``.
        width: number of cell columns W to keep.

    Returns:
        (..., H, width) uint8, 1 where the bit is set, else 0.

    Raises:
        ValueError: ``width`` does not fit in ``nw`` words.
    """
    w = np.ascontiguousarray(words, dtype="<u8")
    if width < 0 or width > w.shape[-1] * 64:
        raise ValueError(f"width {width} does not fit in {w.shape[-1]} words")
    as_bytes = w.view(np.uint8)
    return np.unpackbits(as_bytes, axis=-1, count=width, bitorder="little")


def _check_boards(boards: np.ndarray, ndim: int) -> np.ndarray:
    arr = np.asarray(boards)
    if arr.ndim != ndim:
        raise ValueError(f"board must be {ndim}-D, got shape {arr.shape}")
    if arr.dtype != np.uint8:
        if arr.dtype.kind not in "biu":
            raise ValueError(f"board must hold integers, got dtype {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() > _MAX_COLOUR):
            raise ValueError(f"cell values must be 0..{_MAX_COLOUR}")
        arr = arr.astype(np.uint8)
    elif arr.size and arr.max() > _MAX_COLOUR:
        raise ValueError(f"cell values must be 0..{_MAX_COLOUR}")
    return arr


def _check_generations(generations: int) -> int:
    g = int(generations)
    if g != generations or g < 0:
        raise ValueError(f"generations must be an integer >= 0, got {generations!r}")
    return g


class PackedBoards:
    """N same-sized coloured boards held as bit planes, advanced in place.

    Pack once, call :meth:`advance` as often as needed, unpack once with
    :meth:`to_boards`. The planes used depend on the colours present at packing time:
    one colour -> the alive plane only (plain B3/S23); two colours ``a < b`` -> alive
    plus the ``b`` plane; three or four colours -> alive plus planes for colours 1, 2, 3
    (colour 4 = alive and none of them). Births never bring in a colour outside the
    chosen set (a third colour is only born from three different parents).

    Args:
        boards: (N, H, W) uint8, 0 dead, k = colour k (1..4).
        torus: wrap both axes; otherwise hard edges (cells beyond are dead).

    Raises:
        ValueError: ``boards`` is not 3-D, or holds a value outside 0..4.
    """

    def __init__(self, boards: np.ndarray, *, torus: bool = False) -> None:
        arr = _check_boards(boards, 3)
        n, h, w = arr.shape
        if n == 0 or h == 0 or w == 0:
            raise ValueError(f"boards must be non-empty, got shape {arr.shape}")
        self.n, self.h, self.w, self.torus = n, h, w, bool(torus)
        nw = -(-w // 64)
        self.nw = nw
        s = nw + 1
        self.s = s
        rows = n * (h + 2)
        self.rows = rows
        self.b = (w - 1) % 64  # bit of the last cell in the last word
        self.partial = self.b != 63
        self.mask = _U64((1 << (self.b + 1)) - 1) if self.partial else _ALL
        self.pad_shift = _U64(self.b + 1) if self.partial else _U64(0)
        self.b_shift = _U64(self.b)

        flags = int(np.bitwise_or.reduce(np.left_shift(np.uint8(1), arr).ravel()))
        present = [c for c in range(1, _MAX_COLOUR + 1) if flags >> c & 1]
        if len(present) <= 1:
            self.colours: tuple[int, ...] = (present[0] if present else 1,)
        elif len(present) == 2:
            self.colours = (present[0], present[1])
        else:
            self.colours = (1, 2, 3, 4)

        size = (rows + 1) * s  # + one spare row read by the last right shift

        def plane(bits: np.ndarray) -> np.ndarray:
            flat = np.zeros(size, dtype=np.uint64)
            _pack_into(flat[: rows * s].reshape(n, h + 2, s)[:, 1 : h + 1, 1:], bits)
            return flat

        self.alive = plane(arr)
        self.alive_next = np.zeros(size, dtype=np.uint64)
        if len(self.colours) == 2:
            colour_planes = [arr == self.colours[1]]
        elif len(self.colours) == 4:
            colour_planes = [arr == 1, arr == 2, arr == 3]
        else:
            colour_planes = []
        self.planes = [plane(p) for p in colour_planes]
        self.planes_next = [np.zeros(size, dtype=np.uint64) for _ in self.planes]

        hsize = rows * s
        vsize = (rows - 2) * s
        self._h = [np.zeros(hsize, dtype=np.uint64) for _ in range(4)]
        self._v = [np.zeros(vsize, dtype=np.uint64) for _ in range(5)]
        # bit 1 and bit 0 of (count mod 4) per colour plane
        self._g = [np.zeros(vsize, dtype=np.uint64) for _ in self.planes]
        self._p = (
            [np.zeros(vsize, dtype=np.uint64) for _ in self.planes] if len(self.planes) == 3 else []
        )
        self._col = np.zeros(rows + 1, dtype=np.uint64)
        self._col2 = np.zeros(rows + 1, dtype=np.uint64)
        for p in [self.alive, *self.planes]:
            self._edges(p)

    # -- ghosts -------------------------------------------------------------------

    def _edges(self, flat: np.ndarray) -> None:
        """Refresh padding, ghost rows and ghost words of one plane from its data."""
        n, h, s, nw, rows = self.n, self.h, self.s, self.nw, self.rows
        grid = flat.reshape(rows + 1, s)
        boards = flat[: rows * s].reshape(n, h + 2, s)
        if self.partial:
            np.bitwise_and(grid[:rows, nw], self.mask, out=grid[:rows, nw])
        if not self.torus:
            grid[:rows, 0] = 0
            if n > 1:
                boards[:, 0, :] = 0
                boards[:, h + 1, :] = 0
            return
        boards[:, 0, 1:] = boards[:, h, 1:]
        boards[:, h + 1, 1:] = boards[:, 1, 1:]
        col, col2 = self._col[:rows], self._col2
        if self.partial:
            np.bitwise_and(grid[:rows, 1], _ONE, out=col)
            np.left_shift(col, self.pad_shift, out=col)
            np.bitwise_or(grid[:rows, nw], col, out=grid[:rows, nw])
        # bit 63: the cell left of column 0 = column W - 1 of the same row
        np.right_shift(grid[:, nw], self.b_shift, out=col2)
        np.left_shift(col2, _S63, out=grid[:, 0])
        if not self.partial:
            # bit 0: the cell right of the previous row's last cell = its column 0
            np.bitwise_and(grid[:rows, 1], _ONE, out=col)
            np.bitwise_or(grid[1:, 0], col, out=grid[1:, 0])

    # -- sums -----------------------------------------------------------------------

    def _shifts(self, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Left and right neighbour planes of ``flat`` into h[0], h[1] (rows 0..rows-1)."""
        m = self.rows * self.s
        left, right, tmp = self._h[0][1:], self._h[1][1:], self._h[2][1:]
        cur = flat[1:m]
        np.left_shift(cur, _ONE, out=left)
        np.right_shift(flat[0 : m - 1], _S63, out=tmp)
        np.bitwise_or(left, tmp, out=left)
        np.right_shift(cur, _ONE, out=right)
        np.left_shift(flat[2 : m + 1], _S63, out=tmp)
        np.bitwise_or(right, tmp, out=right)
        return left, right, tmp

    def _alive_step(self) -> None:
        """Next alive plane (B3/S23) into ``alive_next`` (data rows; ghosts not set)."""
        x, xn = self.alive, self.alive_next
        s, m = self.s, self.rows * self.s
        left, right, tmp = self._shifts(x)
        # M = L + R (m1 -> tmp, m0 -> left); S = M + X (s0 -> h3, s1 -> right)
        np.bitwise_and(left, right, out=tmp)
        np.bitwise_xor(left, right, out=left)
        cur = x[1:m]
        np.bitwise_xor(left, cur, out=self._h[3][1:])
        np.bitwise_and(left, cur, out=right)
        np.bitwise_or(right, tmp, out=right)
        m0, s1, m1, s0 = self._h
        up, mid, down = slice(0, m - 2 * s), slice(s, m - s), slice(2 * s, m)
        v1, v2, v3, v4, _ = self._v
        out = xn[mid]
        # weight 1: s0[up] + s0[down] + m0[mid] -> out (sum bit), v1 (carry)
        np.bitwise_xor(s0[up], s0[down], out=v1)
        np.bitwise_xor(v1, m0[mid], out=out)
        np.bitwise_and(s0[up], s0[down], out=v2)
        np.bitwise_and(v1, m0[mid], out=v1)
        np.bitwise_or(v1, v2, out=v1)
        # weight 2: exactly one of s1[up], s1[down], m1[mid], carry
        np.bitwise_xor(s1[up], s1[down], out=v2)
        np.bitwise_and(s1[up], s1[down], out=v3)
        np.bitwise_xor(m1[mid], v1, out=v4)
        np.bitwise_and(m1[mid], v1, out=v1)
        np.bitwise_xor(v2, v4, out=v2)
        np.bitwise_or(v3, v1, out=v3)
        np.invert(v3, out=v3)
        np.bitwise_and(v2, v3, out=v2)
        # n | alive == 3
        np.bitwise_or(out, x[mid], out=out)
        np.bitwise_and(out, v2, out=out)

    def _colour_counts(self, flat: np.ndarray, g: np.ndarray, p: np.ndarray | None) -> None:
        """Bits of (count mod 4) of ``flat`` over the 3x3 block: bit 1 -> g, bit 0 -> p.

        Used only where a cell is born, so the dead centre adds nothing.
        """
        s, m = self.s, self.rows * self.s
        left, right, tmp = self._shifts(flat)
        cur = flat[1:m]
        h0 = self._h[3][1:]
        # S = L + X + R: s0 -> h3, s1 -> right
        np.bitwise_xor(left, cur, out=tmp)
        np.bitwise_xor(tmp, right, out=h0)
        np.bitwise_and(tmp, right, out=tmp)
        np.bitwise_and(left, cur, out=right)
        np.bitwise_or(right, tmp, out=right)
        s1, s0 = self._h[1], self._h[3]
        up, mid, down = slice(0, m - 2 * s), slice(s, m - s), slice(2 * s, m)
        v1, v2 = self._v[0], self._v[1]
        np.bitwise_xor(s0[up], s0[mid], out=v1)
        np.bitwise_and(s0[up], s0[mid], out=v2)
        if p is not None:
            np.bitwise_xor(v1, s0[down], out=p)
        np.bitwise_and(v1, s0[down], out=v1)
        np.bitwise_or(v1, v2, out=v1)
        np.bitwise_xor(s1[up], s1[mid], out=g)
        np.bitwise_xor(g, s1[down], out=g)
        np.bitwise_xor(g, v1, out=g)

    # -- generations ----------------------------------------------------------------

    def advance(self, generations: int = 1) -> None:
        """Run ``generations`` generations in place.

        Raises:
            ValueError: ``generations`` is negative or not an integer.
        """
        for _ in range(_check_generations(generations)):
            self._generation()

    def _generation(self) -> None:
        self._alive_step()
        m, s = self.rows * self.s, self.s
        mid = slice(s, m - s)
        if self.planes:
            a_old, a_new = self.alive[mid], self.alive_next[mid]
            born = self._v[4]
            np.invert(a_old, out=born)
            np.bitwise_and(born, a_new, out=born)
            if len(self.planes) == 1:
                g = self._g[0]
                self._colour_counts(self.planes[0], g, None)
                c_new = self.planes_next[0][mid]
                np.bitwise_and(g, born, out=g)
                np.bitwise_and(self.planes[0][mid], a_new, out=c_new)
                np.bitwise_or(c_new, g, out=c_new)
            else:
                for plane, g, p in zip(self.planes, self._g, self._p, strict=True):
                    self._colour_counts(plane, g, p)
                tmp = self._v[0]
                for k in range(3):
                    g, pk = self._g[k], self._p[k]
                    pi, pj = self._p[(k + 1) % 3], self._p[(k + 2) % 3]
                    # all three parents differ and k is the absent colour:
                    # count_k == 0 and the two other planes count 1 each
                    np.bitwise_and(pi, pj, out=tmp)
                    np.invert(pk, out=self._v[1])
                    np.bitwise_and(tmp, self._v[1], out=tmp)
                    np.bitwise_or(tmp, g, out=tmp)
                    np.bitwise_and(tmp, born, out=tmp)
                    c_new = self.planes_next[k][mid]
                    np.bitwise_and(self.planes[k][mid], a_new, out=c_new)
                    np.bitwise_or(c_new, tmp, out=c_new)
            self.planes, self.planes_next = self.planes_next, self.planes
            for plane in self.planes:
                self._edges(plane)
        self.alive, self.alive_next = self.alive_next, self.alive
        self._edges(self.alive)

    # -- output ---------------------------------------------------------------------

    def _cells(self, flat: np.ndarray) -> np.ndarray:
        n, h, s, rows = self.n, self.h, self.s, self.rows
        data = flat[: rows * s].reshape(n, h + 2, s)[:, 1 : h + 1, 1:]
        return unpack(data, self.w)

    def to_boards(self) -> np.ndarray:
        """The current boards as a new (N, H, W) uint8 array (0 dead, k = colour k)."""
        alive = self._cells(self.alive)
        if len(self.colours) == 1:
            return alive * np.uint8(self.colours[0])
        if len(self.colours) == 2:
            a, b = self.colours
            out = alive * np.uint8(a)
            out += self._cells(self.planes[0]) * np.uint8(b - a)
            return out
        out = alive * np.uint8(4)
        for k, plane in enumerate(self.planes, start=1):
            out -= self._cells(plane) * np.uint8(4 - k)
        return out


def step_many(boards: np.ndarray, *, torus: bool = False, generations: int = 1) -> np.ndarray:
    """Advance N same-sized boards by ``generations`` generations in one vectorised run.

    Args:
        boards: (N, H, W) uint8, 0 dead, k = colour k (1..4).
        torus: wrap both axes; otherwise hard edges.
        generations: number of generations (>= 0).

    Returns:
        A new (N, H, W) uint8 array; the input is not modified.

    Raises:
        ValueError: ``boards`` is not 3-D, holds a value outside 0..4, or
            ``generations`` is negative.
    """
    arr = _check_boards(boards, 3)
    gens = _check_generations(generations)
    if gens == 0 or arr.size == 0:
        return np.array(arr, dtype=np.uint8, copy=True)
    packed = PackedBoards(arr, torus=torus)
    packed.advance(gens)
    return packed.to_boards()


def step(board: np.ndarray, *, torus: bool = False, generations: int = 1) -> np.ndarray:
    """Run ``generations`` generations of coloured B3/S23 on one board (bit-parallel).

    Rule: DESIGN.md §3 (B3/S23, Moore neighbourhood, majority colour of the 3 parents,
    QuadLife absent colour when all 3 differ). The board is packed once, 64 cells per
    uint64 word, advanced ``generations`` times and unpacked once.

    Args:
        board: (H, W) uint8, 0 dead, k = colour k (1..4); any H, W >= 1.
        torus: wrap both axes; otherwise hard edges (cells beyond the edge are dead).
        generations: number of generations (>= 0).

    Returns:
        A new (H, W) uint8 array; the input is not modified.

    Raises:
        ValueError: ``board`` is not 2-D, holds a value outside 0..4, or
            ``generations`` is negative.
    """
    arr = _check_boards(board, 2)
    return step_many(arr[None], torus=torus, generations=generations)[0]
