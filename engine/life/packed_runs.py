"""Running Life games kept bit-packed between ticks and advanced many at once (the packed
tick path of the engine service, docs/ARCHITECTURE.md "Ticking").

:func:`engine.life.game.tick` unpacks, steps and repacks one board per call, counts
colours on the uint8 board, and hashes every board it leaves in the stability history.
Here a running game keeps its board as the kernel's bit planes
(:class:`engine.life.kernel.PackedBoards`, 64 cells per word) from one tick to the next;
games of one size and colour set are copied into one buffer and advanced by one kernel
call per generation; the rules after each generation (DESIGN.md §3 in the order of
:func:`engine.life.game.tick`: extinction, ``max_generations``, stability) read
popcounts of the planes, never a uint8 board.

Stability is exactly the plain path's rule — after a generation the board equals one of
the previous 15 — with the plain path's fingerprints: the population first; then, for a
board of the same population, the 128-bit sha256 digest of its bit planes (masked to its
cells) for boards seen here, or the canonical digest (:func:`engine.life.stability.
board_digest` of the uint8 board, what a recorded state holds) for boards of the state
the run started from. The plain path compares boards of one call exactly and older ones
by the canonical digest: the same answer unless two different boards share a 128-bit
digest.

A run's state is built only when it is recorded (:meth:`PackedRun.state`): its board
unpacked, its players, and the stability history with canonical digests, which are
computed only for the boards that will be in it — the last 15 before the checkpoint the
caller plans (:meth:`PackedRun.plan`). A run recorded elsewhere than planned, or one that
stopped (stable board, end: rare, once per run), is rebuilt by the plain path from its
base state, ``tick(base, done)``, which gives the same state by definition.

Only ``life`` states are packed here (the campaign ticks by the plain path).
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from engine.life import game as life
from engine.life import stability
from engine.life.kernel import PackedBoards, pack, unpack
from engine.life.state import LifePlayer, LifeState

#: Boards advanced together in one buffer at most.
CHUNK = 64

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
        self.linked = torus and w % 64 == 0 and not hasattr(self._scratch(1), "_program")
        self.chunk = CHUNK
        self._free: dict[int, PackedBoards] = {}

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

    def counts(self, masked: np.ndarray) -> np.ndarray:
        """Live cells per board: (n, 5) int64, column 0 all colours, column c colour c.

        Args:
            masked: (n, P, h, nw) planes of n boards, masked to their cells.
        """
        pops = np.bitwise_count(masked).sum(axis=(2, 3), dtype=np.int64)
        out = np.zeros((masked.shape[0], 5), dtype=np.int64)
        out[:, 0] = pops[:, 0]
        if len(self.colours) == 2:
            a, b = self.colours
            out[:, b] = pops[:, 1]
            out[:, a] = pops[:, 0] - pops[:, 1]
        else:
            out[:, 1:4] = pops[:, 1:4]
            out[:, 4] = pops[:, 0] - pops[:, 1:4].sum(axis=1)
        return out

    def board(self, masked: np.ndarray) -> np.ndarray:
        """The (h, w) uint8 board (0 dead, k = colour k) of one board's masked planes
        (P, h, nw)."""
        alive = unpack(masked[0], self.w)
        if len(self.colours) == 2:
            a, b = self.colours
            out = alive * np.uint8(a)
            out += unpack(masked[1], self.w) * np.uint8(b - a)
            return out
        out = alive * np.uint8(4)
        for k in range(1, 4):
            out -= unpack(masked[k], self.w) * np.uint8(4 - k)
        return out


_SHAPES: dict[tuple, _Shape] = {}


def _shape_of(state: LifeState) -> _Shape:
    key = (state.config.height, state.config.width, state.config.torus, _colours(state))
    shape = _SHAPES.get(key)
    if shape is None:
        shape = _SHAPES[key] = _Shape(*key)
    return shape


def _digest(masked: np.ndarray) -> bytes:
    """128-bit sha256 digest of a board's masked planes (P, h, nw) (C-contiguous)."""
    return hashlib.sha256(masked).digest()[: stability.DIGEST_SIZE]


class PackedRun:
    """One running Life game between two recorded states, bit-packed.

    Args:
        state: the recorded state the run starts from (running, under the current
            rules); nothing run yet.

    Attributes:
        done: generations run since ``state``; generation: the generation reached;
        running: False once the game stopped (stable board, finished) — then
        :meth:`state` is rebuilt by the plain path.
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
        # [population, canonical digest or None, packed digest or None], oldest first
        self.history: list[list] = [[pop, dig, None] for pop, dig in state.history][-stability.HISTORY :]
        masked = np.bitwise_and(self._data(), self.shape.mask)
        self.pop = int(self.shape.counts(masked[None])[0, 0])
        self.pdig: bytes | None = _digest(masked)
        self.canon: bytes | None = None
        self._base_board = state.board

    # ------------------------------------------------------------------ plans

    def plan(self, checkpoint: int) -> None:
        """The caller records the run once ``done`` reaches ``checkpoint`` (0 = no plan):
        the canonical digests of the boards that will be in its stability history are
        computed as they pass."""
        self.record_at = checkpoint

    def _needs_canon(self) -> bool:
        """The current board will be in the history of the planned checkpoint."""
        return bool(self.record_at) and self.done >= self.record_at - stability.HISTORY

    def rebase(self, state: LifeState) -> None:
        """The run was recorded as ``state`` (its board and history are this run's):
        count again from there."""
        self.template = state
        self.done = 0
        self._base_board = state.board

    # ------------------------------------------------------------------ states

    def _complete_history(self) -> bool:
        return all(e[1] is not None for e in self.history[-stability.HISTORY :])

    def state(self) -> LifeState:
        """The game now, exactly as ``tick(base, done)`` gives it: built from the planes
        when the canonical history is complete (a planned checkpoint), else by the plain
        path from the base (a stopped run, an unplanned record)."""
        if not self.done:
            return self.template
        if not self.running or not self._complete_history():
            return life.tick(self.template, self.done)
        return replace(
            self.template,
            board=self._board().tobytes(),
            generation=self.generation,
            history=tuple((e[0], e[1]) for e in self.history[-stability.HISTORY :]),
            players=self.players,
        )

    def view_state(self) -> LifeState:
        """The game now for views (board, generation, players; the history is the
        base's: views never show it)."""
        if not self.running:
            return self.state()
        if not self.done:
            return self.template
        return replace(
            self.template,
            board=self._board().tobytes(),
            generation=self.generation,
            players=self.players,
        )

    def _data(self) -> np.ndarray:
        """(P, h, nw) data words of the run's planes."""
        return self.region[:, 1 : self.shape.h + 1, 1 : self.shape.nw + 1]

    def _board(self) -> np.ndarray:
        """The (h, w) uint8 board now."""
        return self.shape.board(np.bitwise_and(self._data(), self.shape.mask))

    # ------------------------------------------------------------------ rules

    def _push(self, board_bytes: bytes | None) -> None:
        """The current board becomes the newest previous board (before a generation)."""
        if self._needs_canon() and self.canon is None and board_bytes is not None:
            self.canon = hashlib.sha256(board_bytes).digest()[: stability.DIGEST_SIZE]
        self.history.append([self.pop, self.canon, self.pdig])
        del self.history[: -stability.HISTORY]

    def _after(self, counts: np.ndarray, masked: np.ndarray, shape: _Shape) -> None:
        """The rules after one generation (:func:`engine.life.game.tick`'s order):
        extinction, ``max_generations``, stability. Marks the run stopped when one ends
        the run."""
        self.done += 1
        self.generation += 1
        gone = [p.id for p in self.players if not p.out and counts[p.id] == 0]
        if gone:
            self.players = tuple(replace(p, out=True) if p.id in gone else p for p in self.players)
        if sum(1 for p in self.players if not p.out) <= 1:
            self.running = False
            return
        if self.generation >= self.template.config.max_generations:
            self.running = False
            return
        pop = int(counts[0])
        pdig = _digest(masked)
        canon = None
        for old_pop, old_canon, old_pdig in self.history:
            if old_pop != pop:
                continue
            if old_pdig is not None:
                same = old_pdig == pdig
            else:
                if canon is None:
                    canon = stability.board_digest(shape.board(masked))
                same = old_canon == canon
            if same:
                self.running = False
                return
        self.pop, self.pdig, self.canon = pop, pdig, canon


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
    masked = np.empty((k, len(planes), shape.h, shape.nw), dtype=np.uint64)
    for _ in range(n):
        live = [i for i, run in enumerate(runs) if run.running]
        if not live:
            break
        for i in live:
            run = runs[i]
            if run._needs_canon() and run.canon is None:
                if run.done == 0:
                    board_bytes = run._base_board
                else:
                    board_bytes = np.ascontiguousarray(
                        shape.board(np.bitwise_and(_data_one(pb, planes, i), shape.mask))
                    ).tobytes()
                run._push(board_bytes)
            else:
                run._push(None)
        pb.advance(1)
        planes = _planes(pb)
        for p, flat in enumerate(planes):
            np.bitwise_and(_data(pb, flat)[:k], shape.mask, out=masked[:, p])
        counts = shape.counts(masked)
        for i in live:
            runs[i]._after(counts[i], masked[i], shape)
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


def _data_one(pb: PackedBoards, planes: list[np.ndarray], i: int) -> np.ndarray:
    """(P, h, nw) data words of board ``i`` of ``pb``."""
    return np.stack([_data(pb, flat)[i] for flat in planes])


class PackedLifeKind:
    """The run kind of :mod:`services.engine.runs` for running ``life`` states."""

    def accepts(self, state: Any) -> bool:
        """Running ``life`` states (not the campaign's)."""
        return isinstance(state, LifeState) and state.kind == "life" and state.phase == "running"

    def start(self, state: Any) -> PackedRun:
        """The packed run of ``state``."""
        return PackedRun(state)

    def advance(self, runs: Sequence[tuple[Any, int]]) -> list[int]:
        """See :func:`advance`."""
        return advance(runs)

    def release(self, run: Any) -> None:
        """Nothing to give back (a run owns its planes)."""
        return None
