"""One generation of the Life kernel (:mod:`engine.life.kernel`) as prepared numpy calls.

:class:`Program` holds the bit planes of N stacked boards in a layout of
:mod:`engine.life.layouts` and turns one generation into a flat list of calls
``ufunc(in1, in2, out)`` on views prepared once. The rows are cut into bands, and for
each band the alive circuit, the colour circuits and the refresh of the band's ghost
words follow one another while its rows are in cache. Most calls write into one of
their inputs: on this hardware an ``a &= b`` moves about a third less memory than
``c = a & b`` into a third array (no write-allocate of a fresh cache line), so the
circuits below are ordered to accumulate in place wherever a value dies.

Why these circuits give B3/S23 (``n`` = live neighbours, ``X`` = alive now): the row
sums ``M = L + R`` and ``S = L + X + R`` are 2-bit numbers; ``n = S[up] + M + S[down]``.
Its bit 0 and the carry out of it come from a full adder of the three low bits; the
weight-2 bits (three high bits and that carry) must hold exactly one 1 for ``n`` to be
2 or 3, and then ``next = (n0 | X)``. A colour plane's 3 x 3 count has bit 1 set exactly
when the colour holds >= 2 of a newborn's 3 parents (its centre is dead, so the count is
<= 3); its bit 0 (parity) is needed only to find the absent colour of QuadLife.
"""

from __future__ import annotations

import numpy as np

from engine.life.layouts import Layout, Op

__all__ = ["BAND_WORDS", "Program"]

#: Words per band of the stacked buffer (256 KiB per array; a band's ~12 temporaries and
#: plane slices stay in L2/L3). Measured here: best between 16K and 64K words; one
#: 1024 x 1024 board (~18,500 words) is fastest as one band, while 1,000 stacked 300 x 300
#: boards run 2.3x faster per generation in bands than streaming 17 MB arrays.
BAND_WORDS = 32768

_U64 = np.uint64
_ALL = np.array(0xFFFF_FFFF_FFFF_FFFF, dtype=_U64)
_AND, _OR, _XOR = np.bitwise_and, np.bitwise_or, np.bitwise_xor


class Program:
    """The planes of N stacked boards and one generation of them as a list of numpy
    calls, for both directions of the double buffer.

    :attr:`planes` hold the boards now (``[alive]``, ``[alive, colour b]`` or
    ``[alive, c1, c2, c3]``); :meth:`run` computes the next generation into the spare
    set and swaps the two. :attr:`words` counts the uint64 words held.

    Args:
        geo: the layout (:class:`engine.life.layouts.Interleaved` or ``Plain``).
        n_planes: 1, 2 or 4.
        band_rows: rows per band (default from :data:`BAND_WORDS`).
        even: spread the rows evenly over the bands (the bands needed for
            ``band_rows``, each of about the same size); false: every band but the last
            exactly ``band_rows`` rows from row 1 (a caller whose bands must start at
            given rows, :class:`engine.life.slots.MeasuredProgram`).

    Raises:
        ValueError: ``n_planes`` is not 1, 2 or 4, or ``band_rows`` < 1.
    """

    def __init__(
        self, geo: Layout, n_planes: int, band_rows: int | None = None, *, even: bool = True
    ) -> None:
        if n_planes not in (1, 2, 4):
            raise ValueError(f"n_planes must be 1, 2 or 4, got {n_planes}")
        if band_rows is None:
            band_rows = max(1, BAND_WORDS // geo.s)
        if band_rows < 1:
            raise ValueError(f"band_rows must be >= 1, got {band_rows}")
        interior = geo.rows - 2  # rows 1 .. rows - 2; the outer ghost rows are never computed
        if even:
            bands = -(-interior // band_rows)
            band_rows = -(-interior // bands)
        self.geo = geo
        self.bands = [
            (r0, min(r0 + band_rows, geo.rows - 1)) for r0 in range(1, geo.rows - 1, band_rows)
        ]
        self.planes = [geo.new_plane() for _ in range(n_planes)]
        self.spare = [geo.new_plane() for _ in range(n_planes)]
        s = geo.s
        hsize, vsize = (band_rows + 2) * s, band_rows * s
        self._h = [np.empty(hsize, dtype=_U64) for _ in range(4 + geo.scratch)]
        n_v = 4 if n_planes <= 2 else 12
        self._v = [np.empty(vsize, dtype=_U64) for _ in range(n_v)]
        self._col = np.empty(geo.rows, dtype=_U64)
        self.words = sum(b.size for b in [*self.planes, *self.spare, *self._h, *self._v, self._col])
        self._ops: list[list[Op] | None] = [None, None]
        self._refresh: dict[int, list[Op]] = {}
        self._parity = 0

    def load(self, boards: np.ndarray, values: list[int]) -> None:
        """Set :attr:`planes` from (n, h, w) uint8 ``boards``: plane i holds the cells
        equal to ``values[i]`` (0: every live cell). Every ghost is refreshed."""
        self.geo.load(self.planes, boards, values)
        for plane in self.planes:
            ops = self._refresh.get(id(plane))
            if ops is None:
                ops = self._refresh[id(plane)] = self.geo.refresh_ops(plane, self._col)
            for f, a, c, out in ops:
                f(a, c, out)

    def run(self) -> None:
        """Compute the next generation into the spare planes, then swap the two sets."""
        ops = self._ops[self._parity]
        if ops is None:
            ops = self._ops[self._parity] = self._build(self.planes, self.spare)
        for f, a, b, out in ops:
            f(a, b, out)
        self.planes, self.spare = self.spare, self.planes
        self._parity ^= 1

    # -- circuits -----------------------------------------------------------------

    def _build(self, src: list[np.ndarray], dst: list[np.ndarray]) -> list[Op]:
        ops: list[Op] = []
        for k, (r0, r1) in enumerate(self.bands):
            ops += self._alive(src[0], dst[0], r0, r1)
            if len(src) == 2:
                ops += self._two_colours(src, dst, r0, r1)
            elif len(src) == 4:
                ops += self._four_colours(src, dst, r0, r1)
            for plane in dst:
                ops += self.geo.edge_ops(plane, r0, r1, self._col)
            ops += self._band_done(k, dst, r0, r1)
        if self.geo.torus or self.geo.n > 1:  # else rows 0 and h + 1 are never written
            for plane in dst:
                ops += self.geo.ghost_row_ops(plane)
        return ops

    def _band_done(self, k: int, dst: list[np.ndarray], r0: int, r1: int) -> list[Op]:
        """Calls to run once band ``k`` (rows [r0, r1)) of the new planes ``dst`` is
        computed, its ghost words refreshed, while it is in cache (none here; a subclass
        measures the band, :class:`engine.life.slots.MeasuredProgram`)."""
        return []

    def _windows(self, r0: int, r1: int) -> tuple[int, int, int, int]:
        """(first word, length) of the horizontal window (rows r0 - 1 .. r1) and of the
        vertical window (rows r0 .. r1 - 1) of a band."""
        s = self.geo.s
        return 1 + (r0 - 1) * s, (r1 - r0 + 2) * s, 1 + r0 * s, (r1 - r0) * s

    def _neighbours(
        self, plane: np.ndarray, r0: int, r1: int
    ) -> tuple[list[Op], np.ndarray, np.ndarray, np.ndarray]:
        """Calls and views for the left, centre and right planes of a band's
        horizontal window (rows r0 - 1 .. r1)."""
        hb, hl, _, _ = self._windows(r0, r1)
        return self.geo.neighbours(plane, hb, hl, self._h[4:])

    def _alive(self, x: np.ndarray, y: np.ndarray, r0: int, r1: int) -> list[Op]:
        """B3/S23 of the alive plane ``x`` into ``y`` for rows [r0, r1): 20 calls (8 of
        them writing a buffer that is not one of their inputs) after the neighbours."""
        s = self.geo.s
        _, hl, vb, m = self._windows(r0, r1)
        ops, left, centre, right = self._neighbours(x, r0, r1)
        m0, m1, s0, s1 = (b[:hl] for b in self._h[:4])
        up, mid, down = slice(0, m), slice(s, s + m), slice(2 * s, 2 * s + m)
        a, b, c = s0[up], s0[down], m0[mid]  # weight 1
        d, e, f = s1[up], s1[down], m1[mid]  # weight 2
        k, p, q = (v[:m] for v in self._v[:3])
        return (
            ops
            + [
                # row sums M = L + R (m0, m1) and S = L + X + R (s0, s1)
                (_XOR, left, right, m0),
                (_AND, left, right, m1),
                (_AND, m0, centre, s1),
                (_OR, s1, m1, s1),
                (_XOR, m0, centre, s0),
                # weight 1: a + b + c -> n0 (in c) and carry k = a ^ ((a ^ b) & (a ^ c))
                (_XOR, c, a, c),
                (_XOR, a, b, k),
                (_AND, k, c, k),
                (_XOR, k, a, k),
                (_XOR, c, b, c),
                # weight 2: exactly one of d, e, f, k
                (_XOR, d, e, p),
                (_XOR, p, f, p),
                (_AND, f, k, f),
                (_XOR, p, k, p),  # parity of the four
                (_AND, d, e, q),
                (_OR, q, f, q),  # some pair of them is set
                (_AND, q, p, q),
                (_XOR, p, q, p),  # odd and no pair: exactly one
                # next = (n0 | X) & (n is 2 or 3)
                (_OR, c, x[vb : vb + m], c),
                (_AND, c, p, y[vb : vb + m]),
            ]
        )

    def _colour_count(
        self, plane: np.ndarray, r0: int, r1: int, g: np.ndarray, par: np.ndarray | None
    ) -> list[Op]:
        """Bit 1 (into ``g``) and, if ``par`` is given, bit 0 of the 3 x 3 count of
        ``plane`` for rows [r0, r1): 12 calls (13 with the parity)."""
        s = self.geo.s
        _, hl, _, m = self._windows(r0, r1)
        ops, left, centre, right = self._neighbours(plane, r0, r1)
        t, s1, s0 = (b[:hl] for b in self._h[:3])
        up, mid, down = slice(0, m), slice(s, s + m), slice(2 * s, 2 * s + m)
        v = self._v[3][:m]
        ops += [
            # row sum S = L + X + R: s0 = L ^ R ^ X, s1 = L & R | (L ^ R) & X
            (_XOR, left, right, t),
            (_AND, left, right, s1),
            (_XOR, t, centre, s0),
            (_AND, t, centre, t),
            (_OR, s1, t, s1),
            # carry of the three low bits, then bit 1 = it ^ the three high bits
            (_XOR, s0[up], s0[mid], v),
            (_AND, s0[up], s0[mid], g),
        ]
        if par is not None:
            ops.append((_XOR, v, s0[down], par))
        ops += [
            (_AND, v, s0[down], v),
            (_OR, g, v, g),
            (_XOR, g, s1[up], g),
            (_XOR, g, s1[mid], g),
            (_XOR, g, s1[down], g),
        ]
        return ops

    def _two_colours(
        self, src: list[np.ndarray], dst: list[np.ndarray], r0: int, r1: int
    ) -> list[Op]:
        """The ``b`` plane of two colours ``a < b``: 16 calls. A survivor keeps its
        colour, a newborn is ``b`` when ``b`` has >= 2 of its parents:
        ``next_b = next_alive & (X ? b : count_b >= 2)``."""
        _, _, vb, m = self._windows(r0, r1)
        g = self._v[0][:m]
        ops = self._colour_count(src[1], r0, r1, g, None)
        xm, alive_next = src[0][vb : vb + m], dst[0][vb : vb + m]
        ops += [
            (_OR, g, xm, g),
            (_XOR, g, xm, g),  # g & ~X
            (_OR, g, src[1][vb : vb + m], g),  # X ? b : g (the b plane lies within X)
            (_AND, g, alive_next, dst[1][vb : vb + m]),
        ]
        return ops

    def _four_colours(
        self, src: list[np.ndarray], dst: list[np.ndarray], r0: int, r1: int
    ) -> list[Op]:
        """Planes of colours 1, 2, 3 (colour 4 = alive and none): majority colour of a
        newborn's parents, or the absent one when colours ``i, j`` and 4 each hold one
        parent (count parities ``p_i & p_j & ~p_k``)."""
        _, _, vb, m = self._windows(r0, r1)
        v = [a[:m] for a in self._v]
        gs, ps = v[4:7], v[7:10]
        born, all3, t = v[10], v[11], v[0]
        ops: list[Op] = []
        for k in range(3):
            ops += self._colour_count(src[1 + k], r0, r1, gs[k], ps[k])
        xm, alive_next = src[0][vb : vb + m], dst[0][vb : vb + m]
        ops += [
            (_XOR, xm, _ALL, born),
            (_AND, born, alive_next, born),
            (_AND, ps[0], ps[1], all3),
            (_AND, all3, ps[2], all3),
        ]
        for k in range(3):
            i, j = (k + 1) % 3, (k + 2) % 3
            cm, z = src[1 + k][vb : vb + m], dst[1 + k][vb : vb + m]
            ops += [
                (_AND, ps[i], ps[j], t),
                (_XOR, t, all3, t),  # p_i & p_j & ~p_k
                (_OR, t, gs[k], t),
                (_AND, t, born, t),
                (_AND, cm, alive_next, z),
                (_OR, z, t, z),
            ]
        return ops
