"""Running Life games kept bit-packed between ticks and advanced many at once (the packed
tick path of the engine service, docs/architecture/ticking.md).

:func:`engine.life.game.tick` unpacks, steps and repacks one board per call, counts
colours on the uint8 board, and hashes every board it leaves in the stability history.
Here a running game keeps its board as the kernel's bit planes
(:class:`engine.life.kernel.PackedBoards`, 64 cells per word) from one tick to the next;
games of one size and colour set are copied into one buffer and advanced by one kernel
call per generation; the rules after each generation (in the order of
:func:`engine.life.game.tick`: extinction, ``max_generations``, stability) read
popcounts of the planes, never a uint8 board.

Stability stays exactly the plain path's rule (the board equals one of the previous 15),
cheap fingerprints first, exact decision on a match: each board gets a fingerprint — its
population and a 64-bit hash of its planes, computed for a whole buffer at once — and a
board whose fingerprint differs from every previous board's is not a repeat (equal
boards have equal fingerprints). When a fingerprint matches, the plain path decides:
``tick(base, done)`` from the run's base state compares the boards exactly (and the
base's recorded history by its canonical digests, as it always does), and its state is
the run's when the board did repeat (the run stops). Boards of the base's recorded
history are known by population and canonical digest only, and are compared that way,
as the plain path does.

A run's state is built only when it is recorded (:meth:`PackedRun.state`): its board
unpacked, its players, and the stability history with canonical digests
(:func:`engine.life.stability.board_digest`), which are computed only for the boards
that will be in it — the last 15 before the checkpoint the caller plans
(:meth:`PackedRun.plan`). A run recorded elsewhere than planned, or one that stopped
(stable board, end: once per run), is the plain path's ``tick(base, done)``, which gives
the same state by definition.

Only ``life`` states are packed here (the campaign ticks by the plain path).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.life import game as life
from engine.life import slots, stability
from engine.life.kernel import PackedBoards, colour_cells, colour_counts, pack, unpack
from engine.life.run_state import RunStates
from engine.life.state import LifePlayer, LifeState

#: Boards advanced together in one buffer at most.
CHUNK = 32

_SHIFT = np.uint64(29)
_LAYOUT = {"layout": "plain"} if "layout" in inspect.signature(PackedBoards).parameters else {}


def _planes(pb: PackedBoards) -> list[np.ndarray]:
    """The current flat plane buffers of ``pb``: alive, then the colour planes."""
    program = getattr(pb, "_program", None)
    if program is not None:  # the kernel with layouts (engine.life.layouts)
        return list(program.planes)
    return [pb.alive, *pb.planes]


def _boards(pb: PackedBoards, flat: np.ndarray) -> np.ndarray:
    """(n, h + 2, s) view of one plane: every board's rows with its ghost rows and words."""
    program = getattr(pb, "_program", None)
    if program is not None:
        return program.geo.boards(flat)
    return flat[: pb.rows * pb.s].reshape(pb.n, pb.h + 2, pb.s)


def _data(pb: PackedBoards, flat: np.ndarray) -> np.ndarray:
    """(n, h, nw) view of one plane's data words, columns in ``numpy.packbits`` order."""
    program = getattr(pb, "_program", None)
    if program is not None:
        return program.geo.data(flat)
    return _boards(pb, flat)[:, 1 : pb.h + 1, 1:]


def _colours(state: LifeState) -> tuple[int, ...]:
    """The colour set of a game's planes: its players' colours (a board holds no other)."""
    return (1, 2) if state.config.players == 2 else (1, 2, 3, 4)


class _Shape:
    """Boards of one size, edge rule and colour set: their scratch buffers and masks.

    Args:
        h, w: rows and columns; torus: wrap both axes; colours: (1, 2) or (1, 2, 3, 4).
    """

    def __init__(self, h: int, w: int, torus: bool, colours: tuple[int, ...]) -> None:
        self.h, self.w, self.torus, self.colours = h, w, torus, colours
        self.mask = pack(np.ones((h, w), dtype=np.uint8))  # (h, nw): the bits of cells
        self.nw = self.mask.shape[-1]
        self.probe = np.zeros((h, w), dtype=np.uint8)
        for k, colour in enumerate(colours):  # forces the planes of every colour
            self.probe[0, 2 * k] = colour
        # On the one-ghost-word layout (no ``_program``), a torus of a width of whole words
        # keeps in bit 0 of each row's ghost word a bit of the row before it, across
        # boards: refresh those after boards are copied in.
        scratch = self._scratch(1)
        self.linked = torus and w % 64 == 0 and not hasattr(scratch, "_program")
        self.s = _boards(scratch, _planes(scratch)[0]).shape[-1]  # words per row, ghosts incl.
        # the cells' bits over a whole board region (ghost rows and words: 0)
        self.region_mask = np.zeros((h + 2, self.s), dtype=np.uint64)
        self.region_mask[1 : h + 1, 1 : self.nw + 1] = self.mask
        self.region_mask = self.region_mask.reshape(-1)
        self.chunk = CHUNK
        self._free: dict[int, PackedBoards] = {}
        self._keys: np.ndarray | None = None

    def _scratch(self, n: int) -> PackedBoards:
        boards = np.zeros((n + 1, self.h, self.w), dtype=np.uint8)
        boards[n] = self.probe
        return PackedBoards(boards[: n + 1], torus=self.torus, **_LAYOUT)

    def buffer(self, n: int) -> PackedBoards:
        """A scratch buffer of at least ``n`` boards (a power of two, + the probe board,
        never read), reused; boards past ``n`` are to be cleared by the caller."""
        size = 1 << max(n - 1, 0).bit_length()
        pb = self._free.get(size)
        if pb is None:
            pb = self._free[size] = self._scratch(size)
        return pb

    def region(self, board: np.ndarray) -> np.ndarray:
        """The planes of one (h, w) uint8 board with their ghosts: (P, h + 2, s) uint64."""
        pb = PackedBoards(np.stack([board, self.probe]), torus=self.torus, **_LAYOUT)
        return np.stack([_boards(pb, p)[0] for p in _planes(pb)])

    def data(self, masked: np.ndarray) -> np.ndarray:
        """The (..., P, h, nw) data words of masked board regions (..., P, (h + 2) s)."""
        regions = masked.reshape(*masked.shape[:-1], self.h + 2, self.s)
        return regions[..., 1 : self.h + 1, 1 : self.nw + 1]

    def counts(self, masked: np.ndarray) -> np.ndarray:
        """Live cells per board: (n, 5) int64, column 0 all colours, column c colour c.

        Args:
            masked: (n, P, (h + 2) s) board regions of n boards, masked to their cells.
        """
        return colour_counts(np.bitwise_count(masked).sum(axis=2, dtype=np.int64), self.colours)

    def boards(self, masked: np.ndarray) -> np.ndarray:
        """The (..., h, w) uint8 boards (0 dead, k = colour k), C-contiguous, of masked
        board regions (..., P, (h + 2) s)."""
        data = self.data(masked)
        colours = (unpack(data[..., k, :, :], self.w) for k in range(1, data.shape[-3]))
        return colour_cells(unpack(data[..., 0, :, :], self.w), colours, self.colours)

    def fingerprints(self, masked: np.ndarray) -> np.ndarray:
        """A 64-bit hash of each board's masked regions (n, P, (h + 2) s): a sum of the
        words, each mixed (xorshift) and multiplied by its own odd key, mod 2**64.
        Equal boards, equal hashes; unequal boards rarely collide (a collision only
        costs a plain-path check)."""
        words = masked.reshape(masked.shape[0], -1)
        mixed = np.right_shift(words, _SHIFT)
        np.bitwise_xor(mixed, words, out=mixed)
        np.multiply(mixed, self.keys(words.shape[1]), out=mixed)
        return mixed.sum(axis=1, dtype=np.uint64)

    def keys(self, n: int) -> np.ndarray:
        """``n`` odd 64-bit keys (fixed: the same in every process)."""
        if self._keys is None or self._keys.shape[0] != n:
            rng = np.random.default_rng(0x5EED_C311)
            self._keys = rng.integers(0, 2**63, size=n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        return self._keys


_SHAPES: dict[tuple, _Shape] = {}


def _shape_of(state: LifeState) -> _Shape:
    key = (state.config.height, state.config.width, state.config.torus, _colours(state))
    shape = _SHAPES.get(key)
    if shape is None:
        shape = _SHAPES[key] = _Shape(*key)
    return shape


def _digests(shape: _Shape, masked: np.ndarray, rules: str) -> list[bytes]:
    """The stability digests under ``rules`` of boards given by their masked regions
    (k, P, (h + 2) s): version 3 hashes the planes' data words
    (:func:`engine.life.stability.planes_digest`), never unpacking a board; the planes
    of all k boards are made in a few whole-array operations, then hashed one board each."""
    if not stability.digests_planes(rules):
        return [stability.board_digest(board) for board in shape.boards(masked)]
    # the colour sets of a packed run (_colours): (1, 2) or (1, 2, 3, 4)
    return stability.stack_digests(shape.data(masked))  # (k, P, h, nw)


class PackedRun(RunStates):
    """One running Life game between two recorded states, bit-packed (its states:
    :class:`engine.life.run_state.RunStates`).

    Args:
        state: the recorded state the run starts from (running, under the current
            rules); nothing run yet.

    Attributes:
        done: generations run since ``state``; generation: the generation reached;
        running: False once the game stopped (stable board, finished).
    """

    def __init__(self, state: LifeState) -> None:
        if state.kind != "life" or state.phase != "running":
            raise ValueError("a packed run needs a running life state")
        self.template = state
        self.shape = _shape_of(state)
        self.region = self.shape.region(state.grid)
        self.done = 0
        self.generation = state.generation
        self.players: tuple[LifePlayer, ...] = state.players
        self.running = True
        self.record_at = 0
        self._final: LifeState | None = None
        # [population, canonical digest or None, fingerprint or None], oldest first
        self.history: list[list] = [[pop, dig, None] for pop, dig in state.history][-stability.HISTORY :]
        masked = self._masked()[None]
        self.pop = int(self.shape.counts(masked)[0, 0])
        self.fp: int | None = int(self.shape.fingerprints(masked)[0])
        self.canon: bytes | None = None

    # ------------------------------------------------------------------ plans

    def plan(self, checkpoint: int) -> None:
        """The caller records the run once ``done`` reaches ``checkpoint`` (0 = no plan):
        the canonical digests of the boards that will be in its stability history are
        computed as they pass."""
        self.record_at = checkpoint

    def _needs_canon(self) -> bool:
        """The current board will be in the history of the planned checkpoint."""
        return (
            self.canon is None
            and bool(self.record_at)
            and self.done >= self.record_at - stability.HISTORY
        )

    def rebase(self, state: LifeState) -> None:
        """The run was recorded as ``state`` (its board and history are this run's):
        count again from there."""
        self.template = state
        self.done = 0

    # ------------------------------------------------------------------ states

    def _history(self) -> tuple[tuple[int, bytes], ...] | None:
        recent = self.history[-stability.HISTORY :]
        if not all(e[1] is not None for e in recent):
            return None
        return tuple((e[0], e[1]) for e in recent)

    def _masked(self) -> np.ndarray:
        """(P, (h + 2) s) the run's planes masked to its cells."""
        return np.bitwise_and(
            self.region.reshape(self.region.shape[0], -1), self.shape.region_mask
        )

    def _board(self) -> np.ndarray:
        """The (h, w) uint8 board now."""
        return self.shape.boards(self._masked())

    # ------------------------------------------------------------------ rules

    def _push(self) -> None:
        """The current board becomes the newest previous board (before a generation)."""
        self.history.append([self.pop, self.canon, self.fp])
        if len(self.history) > stability.HISTORY:
            del self.history[0]

    def _after(self, counts: np.ndarray, fp: int, masked: np.ndarray) -> None:
        """The rules after one generation (:func:`engine.life.game.tick`'s order):
        extinction, ``max_generations``, stability; ``masked``: the board's masked
        region (P, (h + 2) s). Marks the run stopped when one of them ends the run."""
        self.done += 1
        self.generation += 1
        self.players, alive = life.extinction_counts(self.players, counts)
        if alive <= 1:
            self.running = False
            return
        if self.generation >= self.template.config.max_generations:
            self.running = False
            return
        pop = int(counts[0])
        canon = None
        for old_pop, old_canon, old_fp in self.history:
            if old_pop != pop:
                continue
            if old_fp is None:  # a board of the base's history: its canonical digest
                if canon is None:
                    canon = _digests(self.shape, masked[None], self.template.rules)[0]
                if canon == old_canon:
                    self.running = False
                    return
            elif old_fp == fp:  # the same fingerprint: the plain path decides
                final = life.tick(self.template, self.done)
                if final.phase != "running":
                    self.running, self._final = False, final
                    return
        self.pop, self.fp, self.canon = pop, fp, canon


def advance(runs: Sequence[tuple[PackedRun, int]]) -> list[int]:
    """Advance each run by up to its generations, many at once: runs of one shape and one
    number of generations share kernel calls (:data:`CHUNK` boards per buffer). A run
    stops where the rules stop it. Returns the generations each ran."""
    ran = [0] * len(runs)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, (run, n) in enumerate(runs):
        if n > 0 and run.running:
            groups.setdefault((id(run.shape), n), []).append(i)
    for (_, n), indices in groups.items():
        shape = runs[indices[0]][0].shape
        for start in range(0, len(indices), shape.chunk):
            chunk = indices[start : start + shape.chunk]
            before = [runs[i][0].done for i in chunk]
            _advance_chunk(shape, [runs[i][0] for i in chunk], n)
            for i, b in zip(chunk, before, strict=True):
                ran[i] = runs[i][0].done - b
    return ran


def _masked(shape: _Shape, pb: PackedBoards, planes: list[np.ndarray], out: np.ndarray) -> None:
    """The first ``len(out)`` boards' regions masked to their cells, into ``out``
    (k, P, (h + 2) s)."""
    k = out.shape[0]
    for p, flat in enumerate(planes):
        regions = _boards(pb, flat)[:k].reshape(k, -1)
        np.bitwise_and(regions, shape.region_mask, out=out[:, p])


def _advance_chunk(shape: _Shape, runs: list[PackedRun], n: int) -> None:
    """``n`` generations of up to :data:`CHUNK` runs of one shape in one buffer."""
    k = len(runs)
    pb = shape.buffer(k)
    planes = _planes(pb)
    size = pb.n - 1  # the last board is the probe
    for p, flat in enumerate(planes):
        view = _boards(pb, flat)
        for i, run in enumerate(runs):
            view[i] = run.region[p]
        if size > k:
            view[k:size] = 0  # empty boards stay empty
        if shape.linked:
            _relink(pb, flat)
    masked = np.empty((k, len(planes), (shape.h + 2) * shape.s), dtype=np.uint64)
    fresh = False
    for _ in range(n):
        live = [i for i, run in enumerate(runs) if run.running]
        if not live:
            break
        need = [i for i in live if runs[i]._needs_canon()]
        if need:  # canonical digests of the boards the planned record will list
            if not fresh:
                _masked(shape, pb, planes, masked)
            for rules in {runs[i].template.rules for i in need}:
                some = [i for i in need if runs[i].template.rules == rules]
                for i, digest in zip(some, _digests(shape, masked[some], rules), strict=True):
                    runs[i].canon = digest
        for i in live:
            runs[i]._push()
        pb.advance(1)
        planes = _planes(pb)
        _masked(shape, pb, planes, masked)
        fresh = True
        counts = shape.counts(masked)
        fps = shape.fingerprints(masked)
        for i in live:
            runs[i]._after(counts[i], int(fps[i]), masked[i])
    for p, flat in enumerate(planes):
        view = _boards(pb, flat)
        for i, run in enumerate(runs):
            run.region[p] = view[i]


def _relink(pb: PackedBoards, flat: np.ndarray) -> None:
    """Bit 0 of each row's ghost word = bit 0 of the previous row's first word (the
    one-ghost-word layout on a torus of whole words), as that layout's edge refresh sets
    it."""
    grid = flat.reshape(pb.rows + 1, pb.s)
    col = np.bitwise_and(grid[: pb.rows, 1], np.uint64(1))
    np.bitwise_and(grid[1:, 0], ~np.uint64(1), out=grid[1:, 0])
    np.bitwise_or(grid[1:, 0], col, out=grid[1:, 0])


class PackedLifeKind:
    """The run kind of :mod:`services.engine.runs` for running ``life`` states: hard-edged
    games in the slots of a shared pool (:mod:`engine.life.slots`, one kernel call per
    generation for all of them), torus games as :class:`PackedRun` chunks.

    Args:
        slotted: hard-edged games go to slot pools (False: every game a PackedRun).
    """

    def __init__(self, slotted: bool = True) -> None:
        self.slotted = slotted

    def accepts(self, state: Any) -> bool:
        """Running ``life`` states (not the campaign's)."""
        return isinstance(state, LifeState) and state.kind == "life" and state.phase == "running"

    def start(self, state: Any) -> PackedRun | slots.SlotRun:
        """The packed run of ``state``."""
        if self.slotted and not state.config.torus:
            return slots.SlotRun(state)
        return PackedRun(state)

    def advance_planned(
        self, runs: Sequence[Any], generations: Sequence[int], checkpoints: Sequence[int]
    ) -> tuple[list[int], list[int], list[bool]]:
        """See :class:`services.engine.runs.RunKind`: slot runs by
        :func:`engine.life.slots.advance_planned`, the others by :func:`advance`."""
        k = len(runs)
        ran, generation, running = [0] * k, [0] * k, [False] * k
        slotted = [i for i, run in enumerate(runs) if isinstance(run, slots.SlotRun)]
        if slotted:
            results = slots.advance_planned(
                [runs[i] for i in slotted],
                [generations[i] for i in slotted],
                [checkpoints[i] for i in slotted],
            )
            for i, r, g, on in zip(slotted, *results, strict=True):
                ran[i], generation[i], running[i] = r, g, on
        if len(slotted) < k:
            chunked = [i for i, run in enumerate(runs) if not isinstance(run, slots.SlotRun)]
            for i in chunked:
                if checkpoints[i]:
                    runs[i].plan(checkpoints[i])
            moved = advance([(runs[i], generations[i]) for i in chunked])
            for i, r in zip(chunked, moved, strict=True):
                ran[i], generation[i], running[i] = r, runs[i].generation, runs[i].running
        return ran, generation, running

    def release(self, run: Any) -> None:
        """A slot run gives its slot back; a PackedRun owns its planes."""
        if isinstance(run, slots.SlotRun):
            run.release()
