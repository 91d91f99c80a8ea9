"""Running hard-edged Life games side by side in one bit-packed pool, advanced by one
kernel call per generation for all of them (the batched tick of the engine's run cache,
docs/architecture/ticking.md).

Layout. Games of one size and colour set live in *slots* of a :class:`SlotPool`: each
slot is ``nwb`` words wide (``ceil(w / 64)``, one more when ``w`` is a multiple of 64),
``m`` slots sit side by side in a *strip* (a row of ``m * nwb`` words in the kernel's
plain layout, :mod:`engine.life.layouts`), and strips are stacked with the kernel's ghost
rows between them. The bits past column ``w - 1`` of a slot are its *guard band*: the
kernel treats a strip as one wide hard-edged board, and after each band of rows the
guard bits are cleared (one strided AND per plane and band, :class:`Strips`), so a slot's
cells see dead cells beyond its last column, exactly as a hard edge. Nothing is copied
per tick: a slot stays in the pool while its game runs.

Rules after each generation, for every slot at once (numpy over the pool): live cells
per plane (popcounts) give the colours' counts, hence extinction; ``max_generations``;
stability as the plain path decides it (the board equals one of the previous 15) with
fingerprints first: each board's population and a 64-bit keyed sum of its words
(``sum(word * key) mod 2**64``, one ``einsum``); a board whose fingerprint differs from
every previous board's is no repeat. Slots where something happens (a count reached 0,
the last generation, a fingerprint or a recorded population matched) are handed to the
per-game code, which decides exactly as :class:`engine.life.packed_runs.PackedRun` does
(a fingerprint match is settled by the plain path's ``tick(base, done)``). The
canonical digests of the boards a planned record lists (the 15 before the checkpoint)
are sha256 of the slot's words (:func:`engine.life.stability.planes_digest`).

A call that advances only some of a pool's games: when they are at least half of the
pool, the pool advances in place and the others' slots are saved and restored around
each generation; otherwise the games named are copied into a scratch pool and back.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from engine.life import game as life
from engine.life import stability
from engine.life.bitplan import Program
from engine.life.kernel import _plane_values, colour_cells, colour_counts, pack, unpack
from engine.life.layouts import Op, Plain, _const
from engine.life.run_state import RunStates
from engine.life.state import LifePlayer, LifeState

try:  # the native kernel (engine/life/_native.c), built by the install where it can be
    from engine.life import _native
except ImportError:  # a build without a C compiler: the numpy circuits
    _native = None

__all__ = ["NATIVE", "SlotPool", "SlotRun", "advance", "advance_planned", "pool_of", "use_kernel"]

#: Whether new pools run the native kernel (where it is built); :func:`use_kernel`.
NATIVE = _native is not None


def use_kernel(name: str) -> str:
    """Make pools made from now on run the ``"native"`` kernel (where it is built) or the
    ``"numpy"`` circuits (the same rule); returns the kernel they will run."""
    global NATIVE
    NATIVE = name == "native" and _native is not None
    return "native" if NATIVE else "numpy"

H = stability.HISTORY
#: Words per strip the pool aims at (slots per strip = this // slot width, >= 1).
STRIP_WORDS = 128
#: Kinds of a history entry: none, a board of the base's recorded history (population and
#: canonical digest known, no fingerprint), a board this run made (fingerprint known).
EMPTY, RECORDED, SEEN = 0, 1, 2

_AND = np.bitwise_and
#: The per-slot arrays of a :class:`SlotPool` (one row per slot).
SLOT_ARRAYS = (
    "pop",
    "fp",
    "canon",
    "hpop",
    "hfp",
    "hcanon",
    "hkind",
    "done",
    "gen",
    "limit",
    "record_at",
    "out",
    "running",
)


class Strips(Plain):
    """The plain layout of ``n`` strips of ``m`` slots of ``nwb`` words, whose guard bits
    (columns ``w ..`` of each slot) are cleared with the edge refresh of every band.

    Args:
        n: strips; h: rows; w: a slot's columns; nwb: words per slot; m: slots per strip.
    """

    def __init__(self, n: int, h: int, w: int, nwb: int, m: int) -> None:
        super().__init__(n, h, m * nwb * 64, False)
        self.slot_w, self.nwb, self.m = w, nwb, m
        b = w - (nwb - 1) * 64  # a slot's cells in its last word (0: a guard word)
        self.last_mask = _const((1 << b) - 1) if b > 0 else _const(0)

    def edge_ops(self, plane: np.ndarray, r0: int, r1: int, tmp: np.ndarray) -> list[Op]:
        ops = super().edge_ops(plane, r0, r1, tmp)
        g = self.grid(plane)[r0:r1]
        last = g[:, self.nwb : 1 + self.m * self.nwb : self.nwb]  # each slot's last word
        return [*ops, (_AND, last, self.last_mask, last)]


def _count(a: np.ndarray, b: object, out: np.ndarray) -> None:
    np.bitwise_count(a, out=out)


def _rows_u32(a: np.ndarray, b: object, out: np.ndarray) -> None:
    np.add.reduce(a, axis=0, dtype=np.uint32, out=out)


def _rows_u64(a: np.ndarray, b: object, out: np.ndarray) -> None:
    np.add.reduce(a, axis=0, dtype=np.uint64, out=out)


class MeasuredProgram(Program):
    """A kernel program over :class:`Strips` whose bands are its strips, and which
    measures each new strip while it is in cache: per plane, strip and word column, the
    live cells (:attr:`column_counts`, (P, n, m nwb) uint32) and the sum down the
    column of its words (:attr:`column_sums`, (P, n, m nwb) uint64), for the alive
    plane of each word XOR its key (the key of a word depends on its row and word in
    the slot, not on the slot).

    Args:
        geo: the strips; n_planes: 2 or 4; word_keys: (P, h, nwb) uint64.
    """

    def __init__(self, geo: Strips, n_planes: int, word_keys: np.ndarray) -> None:
        # bands of h + 2 rows from row 1: band k is strip k's data rows (+ ghost rows);
        # not evened out (with two strips even bands would be h + 1 rows, and the
        # second band would start at the ghost row above strip 1)
        super().__init__(geo, n_planes, geo.h + 2, even=False)
        mn = geo.m * geo.nwb
        self._keys = np.ascontiguousarray(np.tile(word_keys, (1, 1, geo.m)))  # (1, h, m nwb)
        self.column_counts = np.zeros((n_planes, geo.n, mn), dtype=np.uint32)
        self.column_sums = np.zeros((n_planes, geo.n, mn), dtype=np.uint64)
        self._bits = np.empty((geo.h, mn), dtype=np.uint8)
        self._mixed = np.empty((geo.h, mn), dtype=np.uint64)
        #: Slots (strip -> slots in the strip) whose new board the next :meth:`run`
        #: digests while its strip is in cache (two-plane pools), and the digests made.
        self.digest_slots: dict[int, list[int]] = {}
        self.digests: dict[int, bytes] = {}
        self._nw = -(-geo.slot_w // 64)

    def _digest_strip(self, k: int, rows: list[np.ndarray], _: object) -> None:
        """Digest the new boards of strip ``k``'s slots listed in :attr:`digest_slots`."""
        _digest_slots(self.geo, self.digest_slots.get(k), rows, self.digests)  # type: ignore[arg-type]

    def _band_done(self, k: int, dst: list[np.ndarray], r0: int, r1: int) -> list[Op]:
        """Measure strip ``k`` (band ``k``, rows from ``r0``) of the new planes ``dst``,
        and digest the slots of :attr:`digest_slots` in it."""
        geo: Strips = self.geo  # type: ignore[assignment]
        h, mn = geo.h, geo.m * geo.nwb
        ops: list[Op] = []
        for p, plane in enumerate(dst):
            data = geo.grid(plane)[r0 : r0 + h, 1 : 1 + mn]
            ops += [
                (_count, data, None, self._bits),
                (_rows_u32, self._bits, None, self.column_counts[p, k]),
            ]
            if p == 0:  # the alive plane's words keyed: a shifted shape changes its sums
                ops += [
                    (np.bitwise_xor, data, self._keys[0], self._mixed),
                    (_rows_u64, self._mixed, None, self.column_sums[0, k]),
                ]
            else:  # a colour plane's own sums tell colourings of one shape apart
                ops.append((_rows_u64, data, None, self.column_sums[p, k]))
        if len(dst) == 2:
            ops.append((self._digest_strip, k, [geo.grid(p)[r0 : r0 + h] for p in dst], None))
        return ops


def _digest_slots(
    geo: Strips, slots: list[int] | None, rows: list[np.ndarray], digests: dict[int, bytes]
) -> None:
    """Digest the boards of ``slots`` (all of one strip, whose rows of each plane are
    ``rows``) into ``digests``: sha256 of the alive and colour planes' words,
    :func:`engine.life.stability.planes_digest`."""
    if not slots:
        return
    m, nwb, nw = geo.m, geo.nwb, -(-geo.slot_w // 64)
    for slot in slots:
        a = 1 + (slot % m) * nwb
        digests[slot] = stability.planes_digest([row[:, a : a + nw] for row in rows])


class NativeProgram:
    """The planes of a pool's strips advanced in place by the native kernel
    (``engine/life/_native.c``: one C pass per strip computes the next generation, clears
    the guard bits and measures every slot; no second set of planes, half the memory of
    the numpy program's double buffer), with :class:`MeasuredProgram`'s interface:
    :attr:`planes`, :meth:`run`, :attr:`digest_slots` and :attr:`digests`, and the
    measures of the last generation as :attr:`counts` ((slots, P) int64 live cells per
    plane) and :attr:`fps` ((slots,) uint64 fingerprints).

    Args:
        geo: the strips; n_planes: 2 or 4; word_keys: (1, h, nwb) uint64;
        column_keys: (P, nwb) uint64.
    """

    def __init__(self, geo: Strips, n_planes: int, word_keys: np.ndarray, column_keys: np.ndarray) -> None:
        assert _native is not None
        self.geo = geo
        self.planes = [geo.new_plane() for _ in range(n_planes)]  # advanced in place
        self._col = np.empty(geo.rows, dtype=np.uint64)
        self._keys = np.ascontiguousarray(np.tile(word_keys[0], (1, geo.m)))  # (h, m nwb)
        self._column_keys = np.ascontiguousarray(column_keys, dtype=np.uint64)
        self._mask = int(geo.last_mask)
        self.counts = np.zeros((geo.n * geo.m, n_planes), dtype=np.int64)
        self.fps = np.zeros(geo.n * geo.m, dtype=np.uint64)
        self.digest_slots: dict[int, list[int]] = {}
        self.digests: dict[int, bytes] = {}
        #: Strips the last :meth:`run` advanced.
        self.strips_run = 0

    def run(self, measure: bool = True, strips: int | None = None) -> None:
        """One generation, in place (a strip's rows are replaced as they are made), measured
        unless ``measure`` is false, and the digests of :attr:`digest_slots` (the kernel's
        SHA-256 over the slots' canonical planes, :func:`engine.life.stability.planes_digest`).
        With ``strips`` only the first ``strips`` strips are advanced and measured (the
        others hold no running game: their boards and measures are left as they are)."""
        geo = self.geo
        n = geo.n if strips is None else max(0, min(strips, geo.n))
        planes = tuple(self.planes)
        counts, fps = self.counts, self.fps
        if n < geo.n:  # the planes' first n strips are the Strips layout of n strips
            size = n * (geo.h + 2) * (geo.m * geo.nwb + 2) + 2
            planes = tuple(p[:size] for p in planes)
            counts, fps = counts[: n * geo.m], fps[: n * geo.m]
        slots = digests = None
        if self.digest_slots:  # digested in C while their strip is in cache
            slots = np.array(sorted(s for strip in self.digest_slots.values() for s in strip), dtype=np.int64)
            digests = np.empty((slots.size, stability.DIGEST_SIZE), dtype=np.uint8)
        _native.generation(  # type: ignore[union-attr]
            planes, planes, n, geo.h, geo.m, geo.nwb, self._mask, self._keys,
            self._column_keys, counts, fps, measure, slots, digests, geo.slot_w,
        )
        self.strips_run = n
        if digests is not None:
            raw = digests.tobytes()
            size = stability.DIGEST_SIZE
            self.digests.update(
                (slot, raw[i * size : (i + 1) * size]) for i, slot in enumerate(slots.tolist())
            )

    def words(self, slots: Sequence[int] | np.ndarray) -> np.ndarray:
        """A copy of the slots' words now: (k, P, h, nwb) uint64."""
        geo = self.geo
        idx = np.ascontiguousarray(slots, dtype=np.int64)
        out = np.empty((idx.size, len(self.planes), geo.h, geo.nwb), dtype=np.uint64)
        _native.gather(tuple(self.planes), geo.n, geo.h, geo.m, geo.nwb, idx, out)  # type: ignore[union-attr]
        return out


def _geometry(w: int) -> tuple[int, int]:
    """(words per slot, slots per strip) of boards ``w`` columns wide."""
    nwb = -(-w // 64) + (1 if w % 64 == 0 else 0)
    return nwb, max(1, STRIP_WORDS // nwb)


def _keys(shape: tuple[int, ...]) -> np.ndarray:
    """Fixed odd 64-bit keys of the given shape (the same in every process)."""
    rng = np.random.default_rng(0x5107_C311)
    return rng.integers(0, 2**63, size=shape, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


class SlotPool:
    """Hard-edged boards of one size and colour set in slots (module docstring).

    Per-slot state lives in arrays indexed by slot: ``pop``/``fp``/``canon`` of the board
    now, ``hpop``/``hfp``/``hcanon``/``hkind`` of the previous 15 (oldest first, column
    14 the newest), ``done``, ``gen`` (generation), ``limit`` (``max_generations``),
    ``record_at`` (planned checkpoint, 0 none), ``out`` (per colour 1..4: that player is
    out or absent).

    Args:
        h, w: rows and columns; colours: (1, 2) or (1, 2, 3, 4).
    """

    def __init__(
        self, h: int, w: int, colours: tuple[int, ...], strips: int = 0, *, native: bool | None = None
    ) -> None:
        self.h, self.w, self.colours = h, w, colours
        self.native = NATIVE if native is None else native and _native is not None
        self.nw = -(-w // 64)  # the words :func:`engine.life.kernel.pack` gives a row
        self.nwb, self.m = _geometry(w)
        self.n_planes = 2 if len(colours) == 2 else 4
        self.word_keys = _keys((1, h, self.nwb))
        self.column_keys = _keys((self.n_planes, self.nwb))[..., ::-1].copy()
        self.strips = 0
        self.program: MeasuredProgram | NativeProgram | None = None
        self.free: list[int] = []
        self.runs: dict[int, SlotRun] = {}
        self._scratch: dict[int, SlotPool] = {}
        self.busy = False
        self.pending: list[int] = []
        self._arrays(0)
        if strips:
            self._resize(strips)

    # ------------------------------------------------------------------ storage

    def _arrays(self, size: int) -> None:
        old = getattr(self, "pop", None)
        n = 0 if old is None else old.shape[0]

        kept = min(n, size)

        def grown(name: str, shape: tuple[int, ...], dtype, fill=0) -> np.ndarray:
            a = np.full((size, *shape), fill, dtype=dtype)
            if kept:
                a[:kept] = getattr(self, name)[:kept]
            return a

        self.pop = grown("pop", (), np.int64)
        self.fp = grown("fp", (), np.uint64)
        self.canon = grown("canon", (), object, b"")
        self.hpop = grown("hpop", (H,), np.int64, -1)
        self.hfp = grown("hfp", (H,), np.uint64)
        self.hcanon = grown("hcanon", (H,), object, b"")
        self.hkind = grown("hkind", (H,), np.int8, EMPTY)
        self.done = grown("done", (), np.int64)
        self.gen = grown("gen", (), np.int64)
        self.limit = grown("limit", (), np.int64)
        self.record_at = grown("record_at", (), np.int64)
        self.out = grown("out", (5,), bool, True)
        self.running = grown("running", (), bool, False)

    def _resize(self, strips: int) -> None:
        """Room for ``strips`` strips: more (the planes copied over, the new strips empty)
        or fewer (the strips past them hold no game: cut off, their memory given back)."""
        geo = Strips(strips, self.h, self.w, self.nwb, self.m)
        program: MeasuredProgram | NativeProgram
        if self.native:
            program = NativeProgram(geo, self.n_planes, self.word_keys, self.column_keys)
        else:
            program = MeasuredProgram(geo, self.n_planes, self.word_keys)
        if self.program is not None:  # the first strips of a layout are a layout of them
            for new, old in zip(program.planes, self.program.planes, strict=True):
                k = min(new.size, old.size) - 1
                new[:k] = old[:k]  # whole strips (then zeros, growing)
        for plane in program.planes:
            for f, a, b, out in geo.refresh_ops(plane, program._col):
                f(a, b, out)
        old_size, size = self.size, strips * self.m
        self.program, self.strips = program, strips
        self._arrays(size)
        if size >= old_size:
            self.free.extend(range(old_size, size))  # above every slot held: a heap
        else:
            self.free = [slot for slot in self.free if slot < size]
            heapq.heapify(self.free)

    @property
    def size(self) -> int:
        """Slots held (free or not)."""
        return self.strips * self.m

    def data(self, p: int) -> np.ndarray:
        """(strips, h, m, nwb) view of plane ``p``'s data words now."""
        assert self.program is not None
        b = self.program.geo.boards(self.program.planes[p])
        return b[:, 1 : self.h + 1, 1 : 1 + self.m * self.nwb].reshape(
            self.strips, self.h, self.m, self.nwb
        )

    def words(self, slots: np.ndarray | Sequence[int]) -> np.ndarray:
        """A copy of the slots' words: (k, P, h, nwb)."""
        if isinstance(self.program, NativeProgram):
            return self.program.words(slots)
        idx = [int(x) for x in slots]
        out = np.empty((len(idx), self.n_planes, self.h, self.nwb), dtype=np.uint64)
        m = self.m
        for p in range(self.n_planes):
            data, dst = self.data(p), out[:, p]
            for j, slot in enumerate(idx):  # a strided block each (faster than a fancy gather)
                dst[j] = data[slot // m, :, slot % m]
        return out

    def put_words(self, slots: np.ndarray | Sequence[int], words: np.ndarray) -> None:
        """Write (k, P, h, nwb) words into the slots."""
        idx = np.asarray(slots, dtype=np.int64)
        si, sj = idx // self.m, idx % self.m
        for p in range(self.n_planes):
            self.data(p)[si, :, sj, :] = words[:, p]

    def board_words(self, board: np.ndarray) -> np.ndarray:
        """The (P, h, nwb) words of an (h, w) uint8 board (planes: alive, then colour b of
        two colours ``a < b``, or colours 1, 2, 3)."""
        out = np.zeros((self.n_planes, self.h, self.nwb), dtype=np.uint64)
        for p, v in enumerate(_plane_values(self.colours)):
            out[p, :, : self.nw] = pack(board != 0 if v == 0 else board == v)
        return out

    def board(self, words: np.ndarray) -> np.ndarray:
        """The (h, w) uint8 board of one slot's (P, h, nwb) words."""
        if self.native:
            out = np.empty((self.h, self.w), dtype=np.uint8)
            _native.cells(np.ascontiguousarray(words), self.h, self.w, self.nwb, self.colours, out)  # type: ignore[union-attr]
            return out
        colours = (unpack(words[k], self.w) for k in range(1, self.n_planes))
        return colour_cells(unpack(words[0], self.w), colours, self.colours)

    def take(self) -> int:
        """The lowest free slot (all its words 0): games gather in the first strips, and
        the kernel advances only the strips up to the last one holding a running game."""
        if not self.free:
            self._resize(self.strips + max(1, self.strips // 4))
        return heapq.heappop(self.free)

    def strips_used(self) -> int:
        """Strips up to the last one holding a game (a run, parked runs aside)."""
        return max(self.runs, default=-1) // self.m + 1

    def compact(self) -> int:
        """After a peak of games: move the runs of slots past the strips their number
        needs (with a quarter's slack) into the lowest free slots, as :meth:`park` and
        :meth:`unpark` do, so the kernel no longer sweeps the strips they leave; then,
        when at most half the strips are used, cut the pool down to the used ones and a
        quarter more (their memory given back; a pool grows by a quarter when full). Not
        while the pool is advancing. Returns the runs moved."""
        if self.busy:
            return 0
        moved = 0
        need = -(-len(self.runs) // self.m)
        used = self.strips_used()
        if used > need + max(1, need // 4):
            for slot in sorted((s for s in self.runs if s >= need * self.m), reverse=True):
                run = self.runs[slot]
                run.park()
                run.unpark()
                moved += 1
            used = self.strips_used()
        if self.strips > 1 and used <= self.strips // 2:
            self._resize(max(1, used + max(1, used // 4)))
        return moved

    def park(self, slot: int) -> dict:
        """Take the run of ``slot`` out of the pool (it is not being advanced): its words
        and per-slot values, to :meth:`unpark` later; the slot is given back."""
        saved = {}
        for name in SLOT_ARRAYS:
            value = getattr(self, name)[slot]
            saved[name] = value.copy() if isinstance(value, np.ndarray) else value
        saved["words"] = self.words([slot])[0]
        self._free(slot)
        return saved

    def unpark(self, saved: dict) -> int:
        """A slot holding a parked run again (its words and values); returns it."""
        slot = self.take()
        for name in SLOT_ARRAYS:
            getattr(self, name)[slot] = saved[name]
        self.put_words([slot], saved["words"][None])
        return slot

    def give_back(self, slot: int) -> None:
        """The slot is free again (its words cleared: empty boards stay empty). While the
        pool is advancing (another thread), the slot is given back when it is done."""
        if self.busy:
            self.pending.append(slot)
            return
        self._free(slot)

    def _free(self, slot: int) -> None:
        self.runs.pop(slot, None)
        self.running[slot] = False
        self.put_words([slot], np.zeros((1, self.n_planes, self.h, self.nwb), dtype=np.uint64))
        heapq.heappush(self.free, slot)

    # ------------------------------------------------------------------ measures

    def measure(self) -> tuple[np.ndarray, np.ndarray]:
        """Live cells per slot and plane (size, P) int64, and each slot's fingerprint
        (size,) uint64, of the boards the last kernel generation made (from what its
        program measured): the fingerprint sums, over planes and the slot's word
        columns, the column's sum of words (alive plane: each XOR its key) times the
        column's odd key (mod 2**64). A word that differs changes its column's sum, so
        boards that differ in one word never collide; a collision only costs a
        plain-path check."""
        if isinstance(self.program, NativeProgram):
            return self.program.counts, self.program.fps
        assert isinstance(self.program, MeasuredProgram)
        n, m, nwb, planes = self.strips, self.m, self.nwb, self.n_planes
        cc = self.program.column_counts.reshape(planes, n, m, nwb)
        counts = cc.sum(axis=3, dtype=np.int64).reshape(planes, -1).T
        cs = self.program.column_sums.reshape(planes, n, m, nwb)
        fp = np.einsum("pnmw,pw->nm", cs, self.column_keys).reshape(-1)
        return counts, fp

    def fingerprint(self, words: np.ndarray) -> int:
        """The fingerprint of one slot's (P, h, nwb) words (as :meth:`measure` has it)."""
        keyed = words.copy()
        keyed[0] ^= self.word_keys[0]
        columns = keyed.sum(axis=1, dtype=np.uint64)  # (P, nwb)
        return int(np.einsum("pw,pw->", columns, self.column_keys))

    def digests(self, slots: Sequence[int]) -> list[bytes]:
        """Canonical stability digests (version 3+, :func:`engine.life.stability.planes_digest`:
        sha256 of the canonical planes' words, one after the other) of the slots' boards
        now."""
        return stability.stack_digests(self.words(slots)[..., : self.nw])  # (k, P, h, nw)


_POOLS: dict[tuple, SlotPool] = {}


def pool_of(state: LifeState) -> SlotPool:
    """The pool of a hard-edged running Life state's size and colour set."""
    colours = (1, 2) if state.config.players == 2 else (1, 2, 3, 4)
    key = (state.config.height, state.config.width, colours)
    pool = _POOLS.get(key)
    if pool is None:
        pool = _POOLS[key] = SlotPool(*key)
    return pool


class SlotRun(RunStates):
    """One running hard-edged Life game between two recorded states, in a pool slot
    (the interface of :class:`engine.life.packed_runs.PackedRun`, its states
    :class:`engine.life.run_state.RunStates`).

    Args:
        state: the recorded state the run starts from (running, current rules, hard
            edges); nothing run yet.
        pool: the pool to take a slot of (default: the shared one of its shape).
    """

    def __init__(self, state: LifeState, pool: SlotPool | None = None) -> None:
        if state.kind != "life" or state.phase != "running" or state.config.torus:
            raise ValueError("a slot run needs a running hard-edged life state")
        self.template = state
        self.pool = pool = pool or pool_of(state)
        self.slot = s = pool.take()
        pool.runs[s] = self
        self.players: tuple[LifePlayer, ...] = state.players
        self._final: LifeState | None = None
        words = pool.board_words(state.grid)
        pool.put_words([s], words[None])
        pool.pop[s] = np.bitwise_count(words[0]).sum(dtype=np.int64)  # the alive plane
        pool.fp[s] = pool.fingerprint(words)
        pool.canon[s] = b""
        hist = state.history[-H:]
        pool.hpop[s], pool.hfp[s], pool.hcanon[s], pool.hkind[s] = -1, 0, b"", EMPTY
        for k, (p, digest) in enumerate(hist, start=H - len(hist)):
            pool.hpop[s, k], pool.hcanon[s, k], pool.hkind[s, k] = p, digest, RECORDED
        pool.done[s], pool.gen[s] = 0, state.generation
        pool.limit[s], pool.record_at[s] = state.config.max_generations, 0
        pool.out[s] = True
        for p in state.players:
            pool.out[s, p.id] = p.out
        pool.running[s] = True
        self.released = False
        self.parked: dict | None = None

    # ------------------------------------------------------------------ the Run protocol

    def _value(self, name: str):
        return self.parked[name] if self.parked is not None else getattr(self.pool, name)[self.slot]

    @property
    def done(self) -> int:
        return int(self._value("done"))

    @property
    def generation(self) -> int:
        return int(self._value("gen"))

    @property
    def running(self) -> bool:
        return bool(self._value("running"))

    def plan(self, checkpoint: int) -> None:
        """The caller records the run once ``done`` reaches ``checkpoint`` (0 = no plan)."""
        self.unpark()
        self.pool.record_at[self.slot] = checkpoint

    def rebase(self, state: LifeState) -> None:
        """The run was recorded as ``state``: count again from there."""
        self.unpark()
        self.template = state
        self.pool.done[self.slot] = 0

    def release(self) -> None:
        """Give the slot back (the run left the cache)."""
        if not self.released:
            self.released = True
            if self.parked is None:
                self.pool.give_back(self.slot)
            self.parked = None

    def park(self) -> None:
        """Leave the pool while not advanced (:meth:`SlotPool.park`)."""
        if self.parked is None and not self.released:
            self.parked = self.pool.park(self.slot)
            self.slot = -1

    def unpark(self) -> None:
        """Back in a slot of the pool, as it was when parked."""
        if self.parked is not None:
            saved, self.parked = self.parked, None
            self.slot = self.pool.unpark(saved)
            self.pool.runs[self.slot] = self

    def _board(self) -> np.ndarray:
        return self.pool.board(self.pool.words([self.slot])[0])

    def _board_bytes(self) -> bytes:
        pool = self.pool
        if not pool.native:
            return self._board().tobytes()
        words = pool.words([self.slot])[0]
        return _native.cells(words, pool.h, pool.w, pool.nwb, pool.colours)  # type: ignore[union-attr]

    def _history(self) -> tuple[tuple[int, bytes], ...] | None:
        pool, s = self.pool, self.slot
        kinds = pool.hkind[s]
        if not all(pool.hcanon[s][kinds != EMPTY]):
            return None
        return tuple(
            (int(pool.hpop[s, k]), bytes(pool.hcanon[s, k])) for k in range(H) if kinds[k] != EMPTY
        )

    def state(self) -> LifeState:
        """The game now (:meth:`engine.life.run_state.RunStates.state`), back in a slot."""
        self.unpark()
        return super().state()

    def view_state(self) -> LifeState:
        """The game now for views (:meth:`engine.life.run_state.RunStates.view_state`),
        back in a slot."""
        self.unpark()
        return super().view_state()

    # ------------------------------------------------------------------ rules (rare path)

    def after(self, counts: np.ndarray, fp: int) -> None:
        """The rules after one generation for a flagged slot (``done`` and the generation
        already counted, the previous board pushed): extinction, ``max_generations``,
        stability, in :func:`engine.life.game.tick`'s order. ``counts``: (5,) live cells."""
        pool, s = self.pool, self.slot
        players, alive = life.extinction_counts(self.players, counts)
        if players is not self.players:
            self.players = players
            for p in players:
                pool.out[s, p.id] = p.out
        if alive <= 1 or pool.gen[s] >= pool.limit[s]:
            pool.running[s] = False
            return
        pop = int(counts[0])
        canon = None
        for k in range(H):
            kind = pool.hkind[s, k]
            if kind == EMPTY or pool.hpop[s, k] != pop:
                continue
            if kind == RECORDED:
                if canon is None:
                    canon = pool.digests([s])[0]
                if canon == bytes(pool.hcanon[s, k]):
                    pool.running[s] = False
                    return
            elif int(pool.hfp[s, k]) == fp:  # the same fingerprint: the plain path decides
                final = life.tick(self.template, int(pool.done[s]))
                if final.phase != "running":
                    pool.running[s], self._final = False, final
                    return
        if canon is not None:
            pool.canon[s] = canon


def advance(runs: Sequence[tuple[SlotRun, int]]) -> list[int]:
    """Advance each run by up to its generations; runs of one pool share one kernel call
    per generation. A run stops where the rules stop it. Returns the generations each ran."""
    ran, _, _ = advance_planned([r for r, _ in runs], [n for _, n in runs], [0] * len(runs))
    return ran


def advance_planned(
    runs: Sequence[SlotRun], generations: Sequence[int], checkpoints: Sequence[int]
) -> tuple[list[int], list[int], list[bool]]:
    """Plan each run's checkpoint (:meth:`SlotRun.plan`; 0 keeps its plan), then advance
    it by up to its generations, as :func:`advance` does, with the per-run work done for
    each pool at once. Returns, per run: the generations it ran, the generation it
    reached, and whether it is still running."""
    k = len(runs)
    ran, generation, running = [0] * k, [0] * k, [False] * k
    by_pool: dict[int, list[int]] = {}
    for i, run in enumerate(runs):
        if run.parked is not None:
            run.unpark()
        by_pool.setdefault(id(run.pool), []).append(i)
    for indices in by_pool.values():
        pool = runs[indices[0]].pool
        pool.compact()  # before the slots are read: a run may move
        n = len(indices)
        slot_of = np.fromiter((runs[i].slot for i in indices), dtype=np.int64, count=n)
        gens = np.fromiter((generations[i] for i in indices), dtype=np.int64, count=n)
        plans = np.fromiter((checkpoints[i] for i in indices), dtype=np.int64, count=n)
        planned = plans != 0
        pool.record_at[slot_of[planned]] = plans[planned]
        before = pool.done[slot_of]  # a copy (fancy indexing)
        moving = (gens > 0) & pool.running[slot_of]
        if moving.any():
            _advance_pool(pool, slot_of[moving], gens[moving])
        # the runs not moved may have been parked while the others advanced
        values = zip(
            (pool.done[slot_of] - before).tolist(),
            pool.gen[slot_of].tolist(),
            pool.running[slot_of].tolist(),
            strict=True,
        )
        for i, (r, g, on) in zip(indices, values, strict=True):
            run = runs[i]
            if run.parked is None:
                ran[i], generation[i], running[i] = r, g, on
            else:
                ran[i], generation[i], running[i] = 0, run.generation, run.running
    return ran, generation, running


def _advance_pool(pool: SlotPool, slots: np.ndarray, gens: np.ndarray) -> None:
    """Advance ``slots`` of ``pool`` by up to ``gens`` generations each (see the module
    docstring for slots advanced in place or in a scratch pool)."""
    pool.busy = True
    try:
        if 2 * len(slots) < int(pool.running.sum()):
            _advance_scratch(pool, slots, gens)
            return
        # the pool's other running games leave it until they are advanced again (they
        # would otherwise be saved and restored around every generation)
        idle = pool.running.copy()
        idle[slots] = False
        for slot in np.flatnonzero(idle):
            run = pool.runs.get(int(slot))
            if run is None:  # no run holds it any more
                pool.running[slot] = False
            else:
                run.park()
        _generations(pool, slots, gens)
    finally:
        pool.busy = False
        while pool.pending:
            pool.give_back(pool.pending.pop())


def _advance_scratch(pool: SlotPool, slots: np.ndarray, gens: np.ndarray) -> None:
    """Copy the slots into a scratch pool of their own, advance them there, copy back."""
    k = len(slots)
    strips = 1 << max(-(-k // pool.m) - 1, 0).bit_length()
    scratch = pool._scratch.get(strips)
    if scratch is None:
        scratch = pool._scratch[strips] = SlotPool(pool.h, pool.w, pool.colours, strips)
    local = np.arange(k, dtype=np.int64)
    for name in SLOT_ARRAYS:
        getattr(scratch, name)[local] = getattr(pool, name)[slots]
    scratch.put_words(local, pool.words(slots))
    runs = [pool.runs[int(s)] for s in slots]
    for j, run in enumerate(runs):
        scratch.runs[j] = run
        run.pool, run.slot = scratch, j
    try:
        _generations(scratch, local, gens)
    finally:
        for name in SLOT_ARRAYS:
            getattr(pool, name)[slots] = getattr(scratch, name)[local]
        pool.put_words(slots, scratch.words(local))
        scratch.put_words(local, np.zeros((k, pool.n_planes, pool.h, pool.nwb), dtype=np.uint64))
        scratch.running[local] = False
        scratch.runs.clear()
        for s, run in zip(slots, runs, strict=True):
            run.pool, run.slot = pool, int(s)


def _generations(pool: SlotPool, slots: np.ndarray, gens: np.ndarray) -> None:
    """Up to ``gens`` generations of each of ``slots`` of ``pool``, one kernel call per
    generation for those still running and not yet through theirs."""
    for g in range(1, int(gens.max()) + 1):
        active = slots[(gens >= g) & pool.running[slots]]
        if active.size == 0:
            break
        _generation(pool, active)


def _generation(pool: SlotPool, active: np.ndarray) -> None:
    """One generation of the ``active`` slots (running ones) of ``pool``: the kernel over
    the whole pool (other slots holding boards saved and restored), then the rules."""
    assert pool.program is not None
    # canonical digests of the boards the planned record will list
    ra, done = pool.record_at[active], pool.done[active]
    need = active[(ra > 0) & (done >= ra - H) & (pool.canon[active] == b"")]
    if need.size:
        pool.canon[need] = pool.digests(need)
    # the board now becomes the newest previous board
    for name, now in (("hpop", "pop"), ("hfp", "fp"), ("hcanon", "canon")):
        h = getattr(pool, name)
        h[active, :-1] = h[active, 1:]
        h[active, -1] = getattr(pool, now)[active]
    pool.hkind[active, :-1] = pool.hkind[active, 1:]
    pool.hkind[active, -1] = SEEN
    # boards that must not move this generation
    held = pool.running.copy()
    held[active] = False
    keep = np.flatnonzero(held)
    saved = pool.words(keep) if keep.size else None
    # the new boards the planned records will list are digested in the kernel's band loop
    program = pool.program
    program.digest_slots.clear()
    program.digests.clear()
    if pool.n_planes == 2:  # (record_at and done as read above)
        for slot in active[(ra > 0) & (done + 1 >= ra - H)]:
            program.digest_slots.setdefault(int(slot) // pool.m, []).append(int(slot))
    if isinstance(program, NativeProgram):  # the strips past the last running game stay
        program.run(strips=int(max(active.max(), keep.max(initial=-1))) // pool.m + 1)
    else:
        program.run()
    if saved is not None:
        pool.put_words(keep, saved)
    counts, fp = pool.measure()
    counts, fp = counts[active], fp[active]
    pool.done[active] += 1
    pool.gen[active] += 1
    cc = colour_counts(counts, pool.colours)
    extinct = ((cc[:, 1:] == 0) & ~pool.out[active, 1:]).any(axis=1)
    last = pool.gen[active] >= pool.limit[active]
    hp, hk = pool.hpop[active], pool.hkind[active]
    same_pop = (hp == cc[:, :1]) & (hk != EMPTY)
    match = same_pop & ((hk == RECORDED) | (pool.hfp[active] == fp[:, None]))
    flagged = extinct | last | match.any(axis=1)
    pool.pop[active] = cc[:, 0]
    pool.fp[active] = fp
    pool.canon[active] = b""
    if program.digests:
        made = np.fromiter(program.digests, dtype=np.int64, count=len(program.digests))
        pool.canon[made] = list(program.digests.values())
    for j in np.flatnonzero(flagged):
        s = int(active[j])
        pool.runs[s].after(cc[j], int(fp[j]))
