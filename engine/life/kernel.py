"""Bit-parallel coloured Life kernel: 64 cells per uint64 word, bit-sliced neighbour counts.

Rule (the Life seed's): B3/S23 on the Moore neighbourhood, all colours count as
neighbours; a survivor keeps its colour; a newborn takes the colour held by at least 2
of its 3 parents, and when all 3 differ (4 colours) the one colour of 1..4 absent among
them (the QuadLife rule). Hard edges (cells beyond the edge are dead) or a torus (both
axes wrap). :func:`engine.life.reference.step_reference` is the plain definition the
kernel is tested against.

Layouts and circuits
--------------------
Each bit plane (the alive cells, or the cells of one colour) of N boards is one flat
uint64 buffer in which every neighbour plane is a slice (or a shift of slices), so one
numpy call handles all rows of all boards (:mod:`engine.life.layouts`): the
*interleaved* layout (column ``c`` is bit ``c // nw`` of word ``c % nw``, horizontal
neighbours are the next and previous word, no shifts; dearer to pack) for long runs, the
*plain* one (``numpy.packbits`` order, 6 shifts per plane and generation; cheap to pack)
for a generation or a few. :mod:`engine.life.bitplan` prepares one generation as a list
of numpy calls: 20 for the alive plane (row sums as bit slices, then the vertical sum
with full adders, keeping only what B3/S23 needs: ``next = (n0 | X) & (n == 2 or 3)``),
16 more per colour plane of two colours (its 3 x 3 count's bit 1, which for a newborn
with 3 parents says "this colour has >= 2 of them", then the merge), run band by band
so a band's temporaries stay in the core's L2 cache.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import numpy as np

from engine.life import bitplan
from engine.life.layouts import LAYOUTS

__all__ = ["PackedBoards", "colour_cells", "colour_counts", "pack", "step", "step_many", "unpack"]

_MAX_COLOUR = 4


def pack(bits: np.ndarray) -> np.ndarray:
    """Pack a bit plane along rows, 64 cells per word (plain order, not interleaved).

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
    packed = np.packbits(a, axis=-1, bitorder="little")
    out = np.zeros((*a.shape[:-1], nw * 8), dtype=np.uint8)
    out[..., : packed.shape[-1]] = packed
    return out.view("<u8").astype(np.uint64, copy=False)


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
        layout: ``"interleaved"`` (fastest per generation, dearer to pack and unpack)
            or ``"plain"`` (cheap to pack and unpack); see :mod:`engine.life.layouts`.
        band_rows: rows of the stacked buffer processed per band (default from
            :data:`engine.life.bitplan.BAND_WORDS`). Any value >= 1 gives the same
            result; tests use small ones to cross band edges.

    Raises:
        ValueError: ``boards`` is not 3-D, is empty, holds a value outside 0..4;
            ``layout`` is unknown or ``band_rows`` < 1.
    """

    def __init__(
        self,
        boards: np.ndarray,
        *,
        torus: bool = False,
        layout: str = "interleaved",
        band_rows: int | None = None,
        _program: bitplan.Program | None = None,
        _colours_kept: tuple[int, ...] | None = None,
    ) -> None:
        arr = _check_boards(boards, 3)
        n, h, w = arr.shape
        if n == 0 or h == 0 or w == 0:
            raise ValueError(f"boards must be non-empty, got shape {arr.shape}")
        self.n, self.h, self.w, self.torus = n, h, w, bool(torus)
        self.colours = _colours_kept or _colours(arr)
        if _program is None:
            _program = _new_program(n, h, w, self.torus, layout, len(self.colours), band_rows)
        self._program = _program
        _program.load(arr, _plane_values(self.colours))

    @property
    def layout(self) -> str:
        """The layout of the planes: ``"interleaved"`` or ``"plain"``."""
        return self._program.geo.name

    def advance(self, generations: int = 1) -> None:
        """Run ``generations`` generations in place.

        Raises:
            ValueError: ``generations`` is negative or not an integer.
        """
        run = self._program.run
        for _ in range(_check_generations(generations)):
            run()

    def to_boards(self) -> np.ndarray:
        """The current boards as a new (N, H, W) uint8 array (0 dead, k = colour k)."""
        geo, planes = self._program.geo, self._program.planes
        # (N, H, 64 nw) of 0/1, padding included
        cells = colour_cells(geo.cells(planes[0]), (geo.cells(p) for p in planes[1:]), self.colours)
        if self.w == cells.shape[-1]:
            return cells
        return np.ascontiguousarray(cells[..., : self.w])


def _colours(arr: np.ndarray) -> tuple[int, ...]:
    """The colours a packing of (N, H, W) boards keeps planes for: ``(c,)`` for one
    colour (or none), ``(a, b)`` for two, ``(1, 2, 3, 4)`` for three or four."""
    one_hot = np.left_shift(np.uint8(1), arr).reshape(-1)  # bit v set for a cell of value v
    whole = one_hot.size - one_hot.size % 8
    flags = int(np.bitwise_or.reduce(one_hot[whole:], initial=0))
    if whole:  # OR-reduce 8 cells per uint64 (a uint8 reduction is ~5x slower)
        acc = int(np.bitwise_or.reduce(one_hot[:whole].view(np.uint64)))
        for shift in (32, 16, 8):
            acc |= acc >> shift
        flags |= acc & 0xFF
    present = [c for c in range(1, _MAX_COLOUR + 1) if flags >> c & 1]
    if len(present) <= 1:
        return (present[0] if present else 1,)
    if len(present) == 2:
        return (present[0], present[1])
    return (1, 2, 3, 4)


def colour_cells(
    alive: np.ndarray, planes: Iterable[np.ndarray], colours: tuple[int, ...]
) -> np.ndarray:
    """The cells (0 dead, k = colour k) of boards from their planes unpacked to 0/1 uint8
    arrays of one shape: ``alive``, then the colour planes kept for ``colours``
    (:func:`_plane_values`: none for one colour, colour ``b`` of two ``a < b``, colours
    1, 2, 3 of four; colour 4 = alive and none of them). Written into ``alive`` (the
    colour planes are overwritten too), which is returned."""
    if len(colours) == 1:
        if colours[0] != 1:
            alive *= np.uint8(colours[0])
    elif len(colours) == 2:
        a, b = colours
        if a != 1:
            alive *= np.uint8(a)
        (colour_b,) = planes
        colour_b *= np.uint8(b - a)
        alive += colour_b
    else:
        alive *= np.uint8(4)
        for k, colour_k in enumerate(planes, start=1):
            colour_k *= np.uint8(4 - k)
            alive -= colour_k
    return alive


def colour_counts(pops: np.ndarray, colours: tuple[int, ...]) -> np.ndarray:
    """Live cells per board by colour, (k, 5) int64 (column 0 all, column c colour c),
    from the live cells of each plane kept for two or four ``colours``
    (:func:`_plane_values`), (k, P)."""
    out = np.zeros((pops.shape[0], 5), dtype=np.int64)
    out[:, 0] = pops[:, 0]
    if len(colours) == 2:
        a, b = colours
        out[:, b] = pops[:, 1]
        out[:, a] = pops[:, 0] - pops[:, 1]
    else:
        out[:, 1:4] = pops[:, 1:4]
        out[:, 4] = pops[:, 0] - pops[:, 1:4].sum(axis=1)
    return out


def _plane_values(colours: tuple[int, ...]) -> list[int]:
    """What each plane holds: 0 = every live cell, c = the cells of colour c."""
    if len(colours) == 1:
        return [0]
    if len(colours) == 2:
        return [0, colours[1]]
    return [0, 1, 2, 3]


def _new_program(
    n: int, h: int, w: int, torus: bool, layout: str, n_colours: int, band_rows: int | None
) -> bitplan.Program:
    try:
        geo = LAYOUTS[layout](n, h, w, torus)
    except KeyError:
        raise ValueError(f"layout must be one of {sorted(LAYOUTS)}, got {layout!r}") from None
    return bitplan.Program(geo, 1 if n_colours == 1 else n_colours, band_rows)


#: From this many generations per call ``step``/``step_many`` use the interleaved
#: layout: below it, packing and unpacking (byte transposes) cost more than the shifts
#: it saves. Measured crossover here: ~13 generations (one 300 x 300 board) to ~30
#: (one 1024 x 1024 board of one colour).
INTERLEAVED_FROM = 20


class _ProgramCache:
    """Programs (planes, scratch and prepared calls) of recently used shapes, so that
    a one-generation ``step`` of a game-sized board does not rebuild them every call.

    Bounded by :data:`MAX_WORDS` words in all; bigger programs are not kept. A program
    is taken out while in use, so two threads never share one.
    """

    MAX_WORDS = 1 << 21  # 16 MiB

    def __init__(self) -> None:
        self._free: dict[tuple, list[bitplan.Program]] = {}
        self._lock = threading.Lock()

    def take(self, key: tuple) -> bitplan.Program:
        with self._lock:
            free = self._free.get(key)
            if free:
                return free.pop()
        return _new_program(*key)

    def give_back(self, key: tuple, program: bitplan.Program) -> None:
        if program.words > self.MAX_WORDS:
            return
        with self._lock:
            self._free.setdefault(key, []).append(program)
            self._free[key] = self._free.pop(key)  # most recently used last
            total = sum(p.words for progs in self._free.values() for p in progs)
            while total > self.MAX_WORDS:
                for p in self._free.pop(next(iter(self._free))):
                    total -= p.words


_CACHE = _ProgramCache()


def step_many(
    boards: np.ndarray,
    *,
    torus: bool = False,
    generations: int = 1,
    layout: str | None = None,
    band_rows: int | None = None,
) -> np.ndarray:
    """Advance N same-sized boards by ``generations`` generations in one vectorised run.

    Args:
        boards: (N, H, W) uint8, 0 dead, k = colour k (1..4).
        torus: wrap both axes; otherwise hard edges.
        generations: number of generations (>= 0).
        layout: see :class:`PackedBoards`; default: ``"interleaved"`` from
            :data:`INTERLEAVED_FROM` generations, else ``"plain"``.
        band_rows: see :class:`PackedBoards` (tuning and tests only).

    Returns:
        A new (N, H, W) uint8 array; the input is not modified.

    Raises:
        ValueError: ``boards`` is not 3-D, holds a value outside 0..4,
            ``generations`` is negative, or ``layout`` is unknown.
    """
    arr = _check_boards(boards, 3)
    gens = _check_generations(generations)
    if gens == 0 or arr.size == 0:
        return np.array(arr, dtype=np.uint8, copy=True)
    if layout is None:
        layout = "interleaved" if gens >= INTERLEAVED_FROM else "plain"
    n, h, w = arr.shape
    colours = _colours(arr)
    key = (n, h, w, bool(torus), layout, len(colours), band_rows)
    program = _CACHE.take(key)
    packed = PackedBoards(arr, torus=torus, _program=program, _colours_kept=colours)
    packed.advance(gens)
    out = packed.to_boards()
    _CACHE.give_back(key, program)
    return out


def step(board: np.ndarray, *, torus: bool = False, generations: int = 1) -> np.ndarray:
    """Run ``generations`` generations of coloured B3/S23 on one board (bit-parallel).

    Rule: the Life seed's (B3/S23, Moore neighbourhood, majority colour of the 3 parents,
    QuadLife's absent colour when all 3 differ, LifeWiki "QuadLife"). The board is packed
    once, 64 cells per uint64 word, advanced ``generations`` times and unpacked once.

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
