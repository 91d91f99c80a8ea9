"""The states of a packed Life run (the ``Run`` protocol of :mod:`services.engine.runs`),
built one way for :class:`engine.life.packed_runs.PackedRun` and
:class:`engine.life.slots.SlotRun`: exactly ``tick(base, done)``
(docs/architecture/ticking.md "Ticking").
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.life import game as life
from engine.life.state import LifePlayer, LifeState


class RunStates:
    """:meth:`state` and :meth:`view_state` of a run, from what a run class holds:
    ``template`` (the recorded state it started from), ``done`` (generations since),
    ``running``, ``generation``, ``players`` (as the rules left them), ``_final`` (the
    plain path's state of a stopped run, once made), :meth:`_board` and :meth:`_history`.
    """

    template: LifeState
    done: int
    running: bool
    generation: int
    players: tuple[LifePlayer, ...]
    _final: LifeState | None

    def _board(self) -> np.ndarray:
        """The (h, w) uint8 board now."""
        raise NotImplementedError

    def _board_bytes(self) -> bytes:
        """The board now as a state holds it (``_board().tobytes()``; a run class may make
        the bytes directly)."""
        return self._board().tobytes()

    def _history(self) -> tuple[tuple[int, bytes], ...] | None:
        """The stability history now, ``(population, canonical digest)`` oldest first, or
        None when a digest of it is not known (a record elsewhere than planned)."""
        raise NotImplementedError

    def state(self) -> LifeState:
        """The game now, exactly as ``tick(base, done)`` gives it: built from the planes
        when the canonical history is complete (a planned checkpoint), else by the plain
        path from the base (a stopped run, an unplanned record)."""
        done = self.done
        if not done:
            return self.template
        if not self.running:
            if self._final is None:
                self._final = life.tick(self.template, done)
            return self._final
        history = self._history()
        if history is None:
            return life.tick(self.template, done)
        return replace(
            self.template,
            board=self._board_bytes(),
            generation=self.generation,
            history=history,
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
            board=self._board_bytes(),
            generation=self.generation,
            players=self.players,
        )
