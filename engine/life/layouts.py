"""How the Life kernel lays N stacked H x W boards out in uint64 bit planes.

Both layouts hold a bit plane (alive cells, or the cells of one colour) of all N boards
in one flat, C-contiguous uint64 buffer of ``N (H + 2)`` rows of ``s = nw + 2`` words,
``nw = ceil(W / 64)``: row ``[GL, w_0 .. w_{nw-1}, GR]``, where the ghost words ``GL``
and ``GR`` supply the left neighbours of ``w_0`` and the right neighbours of
``w_{nw-1}``, and each board has a ghost row above and below (0 with hard edges; on a
torus copies of its rows H and 1). One spare word at each end lets the slices one word
before and after every row exist. Word ``q`` of row ``r`` is element ``1 + r * s + q``.
So every neighbour plane is a slice or a shift of slices of the same buffer, and one
numpy call handles all rows of all boards.

* :class:`Interleaved` (the fast one for long runs): cell column ``c`` is bit
  ``c // nw`` of word ``c % nw``. The left and right neighbours of a cell are the same
  bit of the previous and next word, so neighbour planes are plain slices, no shifts.
  ``GL = w_{nw-1} << 1`` and ``GR = w_0 >> 1`` (with the wrapped bit on a torus). Packing
  and unpacking transpose bytes (~0.3 ns per cell here).
* :class:`Plain`: column ``c`` is bit ``c % 64`` of word ``c // 64``, as
  :func:`numpy.packbits` lays it out, so packing and unpacking are cheap; neighbour
  planes cost 6 shifts per plane and generation (``L = X << 1 | prev >> 63``, ...).
  ``GL`` bit 63 holds the cell left of column 0, ``GR`` bit 0 the cell right of column
  ``64 nw - 1``; when W is not a multiple of 64 the first padding bit holds the cell
  right of column W - 1 (0, or column 0 on a torus).

Padding (columns W .. 64 nw - 1) never reaches a real cell except through the one
position just past column W - 1, which the edge refresh sets every generation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["Interleaved", "Layout", "Plain", "Op", "LAYOUTS"]

_U64 = np.uint64
_MASK64 = 0xFFFF_FFFF_FFFF_FFFF
_ZERO = np.array(0, dtype=_U64)
_ONE = np.array(1, dtype=_U64)
_S63 = np.array(63, dtype=_U64)

_AND, _OR = np.bitwise_and, np.bitwise_or
_SHL, _SHR = np.left_shift, np.right_shift

#: One prepared numpy call: ``ufunc(in1, in2, out)``.
Op = tuple[Callable[..., np.ndarray], np.ndarray, np.ndarray, np.ndarray]


def _const(value: int) -> np.ndarray:
    """A 0-d uint64 operand (cheaper per call than a numpy scalar)."""
    return np.array(value & _MASK64, dtype=_U64)


class Layout:
    """Sizes shared by both layouts, and what each must provide.

    Args:
        n, h, w: boards, rows and columns per board (all >= 1).
        torus: wrap both axes, or hard edges (cells beyond the edge are dead).

    Attributes:
        nw: data words per row; ``s = nw + 2`` words per row; ``rows = n (h + 2)``;
        ``size``: words of a plane; ``scratch``: band-sized buffers that
        :meth:`neighbours` needs.
    """

    name = ""
    scratch = 0

    def __init__(self, n: int, h: int, w: int, torus: bool) -> None:
        self.n, self.h, self.w, self.torus = n, h, w, torus
        self.nw = nw = -(-w // 64)
        self.s = nw + 2
        self.rows = n * (h + 2)
        self.size = self.rows * self.s + 2

    def new_plane(self) -> np.ndarray:
        """A zeroed plane: (size,) uint64."""
        return np.zeros(self.size, dtype=_U64)

    def grid(self, plane: np.ndarray) -> np.ndarray:
        """(rows, s) view of a plane (row r, word q)."""
        return plane[1 : 1 + self.rows * self.s].reshape(self.rows, self.s)

    def boards(self, plane: np.ndarray) -> np.ndarray:
        """(n, h + 2, s) view of a plane (board, row incl. ghost rows, word)."""
        return plane[1 : 1 + self.rows * self.s].reshape(self.n, self.h + 2, self.s)

    def data(self, plane: np.ndarray) -> np.ndarray:
        """(n, h, nw) view of a plane's data words."""
        return self.boards(plane)[:, 1 : self.h + 1, 1 : self.nw + 1]

    # -- cells --------------------------------------------------------------------

    def load(self, planes: list[np.ndarray], boards: np.ndarray, values: list[int]) -> None:
        """Write the data words of ``planes`` from (n, h, w) uint8 ``boards``: plane i
        gets the cells equal to ``values[i]``, or every live cell for 0. Ghosts are not
        set (see :meth:`refresh_ops`)."""
        raise NotImplementedError

    def cells(self, plane: np.ndarray) -> np.ndarray:
        """A plane's cells in column order, padding included: a new (n, h, 64 nw)
        uint8 array of 0 and 1 (columns >= w are padding)."""
        raise NotImplementedError

    # -- neighbours and ghosts ------------------------------------------------------

    def neighbours(
        self, plane: np.ndarray, start: int, length: int, scratch: list[np.ndarray]
    ) -> tuple[list[Op], np.ndarray, np.ndarray, np.ndarray]:
        """Calls and views giving the left-neighbour, centre and right-neighbour
        planes of words ``[start, start + length)`` of ``plane``."""
        raise NotImplementedError

    def edge_ops(self, plane: np.ndarray, r0: int, r1: int, tmp: np.ndarray) -> list[Op]:
        """Calls that set the padding position and the ghost words GL, GR of rows
        ``[r0, r1)`` from their data words. ``tmp``: scratch of >= ``r1 - r0`` words."""
        raise NotImplementedError

    def ghost_row_ops(self, plane: np.ndarray) -> list[Op]:
        """Calls that set every board's ghost rows (after the ghost words of its data
        rows): copies of rows h and 1 on a torus, else 0."""
        b = self.boards(plane)
        h = self.h
        if self.torus:
            return [(_OR, b[:, h, :], _ZERO, b[:, 0, :]), (_OR, b[:, 1, :], _ZERO, b[:, h + 1, :])]
        return [
            (_AND, b[:, 0, :], _ZERO, b[:, 0, :]),
            (_AND, b[:, h + 1, :], _ZERO, b[:, h + 1, :]),
        ]

    def refresh_ops(self, plane: np.ndarray, tmp: np.ndarray) -> list[Op]:
        """Calls that set every ghost of a plane from its data words (after
        :meth:`load`). ``tmp``: scratch of >= ``rows`` words."""
        return self.edge_ops(plane, 0, self.rows, tmp) + self.ghost_row_ops(plane)


class Interleaved(Layout):
    """Column ``c`` is bit ``c // nw`` of data word ``c % nw`` (see the module doc)."""

    name = "interleaved"

    def __init__(self, n: int, h: int, w: int, torus: bool) -> None:
        super().__init__(n, h, w, torus)
        nw = self.nw
        self.partial = w < 64 * nw
        self.k_w, self.j_w = w % nw, w // nw  # column W, just past the last cell
        self.k_last, self.j_last = (w - 1) % nw, (w - 1) // nw  # column W - 1

    def load(self, planes: list[np.ndarray], boards: np.ndarray, values: list[int]) -> None:
        n, h, w, nw = self.n, self.h, self.w, self.nw
        a = boards
        if w < 64 * nw:
            a = np.zeros((n, h, 64 * nw), dtype=np.uint8)
            a[..., :w] = boards
        # [board, row, k, j] = column j * nw + k: one byte transpose for all planes
        inter = np.ascontiguousarray(a.reshape(n, h, 64, nw).swapaxes(2, 3))
        for plane, value in zip(planes, values, strict=True):
            bits = inter if value == 0 else inter == value
            packed = np.packbits(bits, axis=-1, bitorder="little")  # (n, h, nw, 8)
            self.data(plane)[...] = packed.view("<u8")[..., 0]

    def cells(self, plane: np.ndarray) -> np.ndarray:
        n, h, nw = self.n, self.h, self.nw
        words = np.ascontiguousarray(self.data(plane), dtype="<u8")
        # bit i of byte b of word k is column (8 b + i) nw + k: unpacking the bytes along
        # b gives the columns in order, as a (64, nw) matrix per row
        by = words.view(np.uint8).reshape(n, h, nw, 8).transpose(0, 1, 3, 2)
        bits = np.unpackbits(by, axis=2, bitorder="little")  # (n, h, 64, nw)
        return bits.reshape(n, h, 64 * nw)

    def neighbours(
        self, plane: np.ndarray, start: int, length: int, scratch: list[np.ndarray]
    ) -> tuple[list[Op], np.ndarray, np.ndarray, np.ndarray]:
        left = plane[start - 1 : start - 1 + length]
        right = plane[start + 1 : start + 1 + length]
        return [], left, plane[start : start + length], right

    def edge_ops(self, plane: np.ndarray, r0: int, r1: int, tmp: np.ndarray) -> list[Op]:
        nw = self.nw
        g = self.grid(plane)[r0:r1]
        t = tmp[: r1 - r0]
        col = [g[:, q] for q in range(self.s)]
        ops: list[Op] = []
        if self.partial:  # column W: 0, or on a torus a copy of column 0
            cw = col[1 + self.k_w]
            if self.torus:
                ops += [(_AND, col[1], _ONE, t), (_SHL, t, _const(self.j_w), t)]
            ops.append((_AND, cw, _const(~(1 << self.j_w)), cw))
            if self.torus:
                ops.append((_OR, cw, t, cw))
        # GL: the left neighbours of word 0 = the last word's bits one column up.
        ops.append((_SHL, col[nw], _ONE, col[0]))
        if self.torus:
            ops.append((_SHR, col[1 + self.k_last], _const(self.j_last), t))
            if self.j_last != 63:
                ops.append((_AND, t, _ONE, t))
            ops.append((_OR, col[0], t, col[0]))
        # GR: the right neighbours of the last word = word 0's bits one column down.
        ops.append((_SHR, col[1], _ONE, col[nw + 1]))
        if self.torus and not self.partial:
            ops += [(_SHL, col[1], _S63, t), (_OR, col[nw + 1], t, col[nw + 1])]
        return ops


class Plain(Layout):
    """Column ``c`` is bit ``c % 64`` of data word ``c // 64`` (see the module doc)."""

    name = "plain"
    scratch = 3

    def __init__(self, n: int, h: int, w: int, torus: bool) -> None:
        super().__init__(n, h, w, torus)
        self.b = (w - 1) % 64  # bit of column W - 1 in the last word
        self.partial = self.b != 63

    def load(self, planes: list[np.ndarray], boards: np.ndarray, values: list[int]) -> None:
        nbytes = -(-self.w // 8)
        for plane, value in zip(planes, values, strict=True):
            bits = boards if value == 0 else boards == value
            packed = np.packbits(bits, axis=-1, bitorder="little")  # (n, h, nbytes)
            # the bytes past column W - 1 keep old bits: the refresh masks them
            self.data(plane).view(np.uint8)[..., :nbytes] = packed

    def cells(self, plane: np.ndarray) -> np.ndarray:
        words = np.ascontiguousarray(self.data(plane), dtype="<u8")
        return np.unpackbits(words.view(np.uint8), axis=-1, bitorder="little")

    def neighbours(
        self, plane: np.ndarray, start: int, length: int, scratch: list[np.ndarray]
    ) -> tuple[list[Op], np.ndarray, np.ndarray, np.ndarray]:
        left, right, t = (b[:length] for b in scratch[:3])
        prev = plane[start - 1 : start - 1 + length]
        centre = plane[start : start + length]
        nxt = plane[start + 1 : start + 1 + length]
        ops: list[Op] = [
            (_SHL, centre, _ONE, left),
            (_SHR, prev, _S63, t),
            (_OR, left, t, left),
            (_SHR, centre, _ONE, right),
            (_SHL, nxt, _S63, t),
            (_OR, right, t, right),
        ]
        return ops, left, centre, right

    def edge_ops(self, plane: np.ndarray, r0: int, r1: int, tmp: np.ndarray) -> list[Op]:
        nw, b = self.nw, self.b
        g = self.grid(plane)[r0:r1]
        t = tmp[: r1 - r0]
        gl, first, last, gr = g[:, 0], g[:, 1], g[:, nw], g[:, nw + 1]
        ops: list[Op] = []
        if self.partial:  # padding 0; on a torus the bit past column W - 1 = column 0
            ops.append((_AND, last, _const((1 << (b + 1)) - 1), last))
            if self.torus:
                ops += [(_AND, first, _ONE, t), (_SHL, t, _const(b + 1), t), (_OR, last, t, last)]
        if self.torus:  # GL bit 63: column W - 1; GR bit 0: column 0 (when W = 64 nw)
            ops += [(_SHR, last, _const(b), t), (_SHL, t, _S63, gl)]
            if not self.partial:
                ops.append((_AND, first, _ONE, gr))
        else:
            ops.append((_AND, gl, _ZERO, gl))
            if not self.partial:
                ops.append((_AND, gr, _ZERO, gr))
        return ops


#: The layouts by name.
LAYOUTS: dict[str, type[Layout]] = {"interleaved": Interleaved, "plain": Plain}
