"""Sample event logs for ``cellwar verify`` (the ``verify`` benchmark and tests/cli).

Each log is one deterministic game played in process through :func:`engine.decide` and
:func:`engine.decide_tick`, written in the exact REST shape of ``GET /game/{id}/events``
(``seq``, ``type``, ``actor``, ``payload``, ``time`` (fake: one second per seq),
``state_hash``, ``engine_version``). Seeds alternate between two kinds:

- even seeds: Life, 32×32, 2 players; each places a random soup of 40 cells in its half
  (in actions of 5 cells), then the game runs in ``GenerationsTicked`` of 1..4
  generations until it finishes or 160 generations have run (a stable board's redraw
  rounds are passed with "ready", which ends the game);
- odd seeds: CellWar, 8×8, 2 players, seeded random legal moves for up to 24 rounds.

numpy's seeded ``default_rng`` only; the same seed always gives the same file.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

import engine
from client.logfile import write_log

START_TIME = datetime(2025, 1, 1, tzinfo=UTC)


class _Game:
    def __init__(self) -> None:
        self.state: Any = None
        self.events: list[dict[str, Any]] = []

    def record(self, drafts_state: tuple[list[engine.EventDraft], Any]) -> None:
        drafts, self.state = drafts_state
        for d in drafts:
            seq = len(self.events) + 1
            self.events.append(
                {
                    "seq": seq,
                    "type": d.type,
                    "actor": d.actor,
                    "payload": d.payload,
                    "time": (START_TIME + timedelta(seconds=seq)).isoformat(),
                    "state_hash": d.state_hash,
                    "engine_version": engine.ENGINE_VERSION,
                }
            )

    def cmd(self, command: str, actor: int = 0, payload: dict[str, Any] | None = None) -> None:
        self.record(engine.decide(self.state, command, actor, payload or {}))


def life_log(seed: int, *, size: int = 32, cells: int = 40, max_generations: int = 160) -> list[dict[str, Any]]:
    """A Life game's log (see the module docstring); about 60..100 events."""
    rng = np.random.default_rng(seed)
    g = _Game()
    g.cmd("create", 0, {"kind": "life", "config": {"width": size, "height": size, "budget": cells}})
    g.cmd("join", 0, {"name": "p1"})
    g.cmd("join", 0, {"name": "p2"})
    half = size // 2
    for pid, x0 in ((1, 0), (2, half)):
        flat = rng.choice(half * size, size=cells, replace=False)
        placed = [[int(x0 + f % half), int(f // half)] for f in flat]
        for i in range(0, cells, 5):
            g.cmd("action", pid, {"type": "place", "cells": placed[i : i + 5]})
        g.cmd("end_turn", pid)
    while not engine.summary(g.state).finished:
        s = engine.summary(g.state)
        if s.phase == "redraw":
            for pid in (1, 2):
                if not engine.summary(g.state).finished:
                    try:
                        g.cmd("end_turn", pid)
                    except engine.GameError:
                        pass  # out, or ready already
            continue
        if s.generation >= max_generations:
            break
        g.record(engine.decide_tick(g.state, int(rng.integers(1, 5))))
    return g.events


def cellwar_log(seed: int, *, size: int = 8, rounds: int = 24) -> list[dict[str, Any]]:
    """A CellWar game of seeded random legal moves (see the module docstring)."""
    rng = np.random.default_rng(seed)
    g = _Game()
    g.cmd("create", 0, {"kind": "cellwar", "config": {"width": size, "height": size, "players": 2}})
    g.cmd("join", 0, {"name": "p1"})
    g.cmd("join", 0, {"name": "p2"})
    while not engine.summary(g.state).finished and g.state.round <= rounds:
        pid = engine.summary(g.state).turn
        actions = engine.get_valid_actions(g.state, pid)
        if not actions:
            g.cmd("end_turn", pid)
            continue
        unit = actions[0]["unit_id"]  # the engine's order: act with the first unit that can
        mine = [a for a in actions if a["unit_id"] == unit]
        pick = mine[int(rng.integers(len(mine)))]
        g.cmd("action", pid, {"unit_id": pick["unit_id"], "dx": pick["dx"], "dy": pick["dy"]})
    return g.events


def sample_log(seed: int) -> list[dict[str, Any]]:
    """The sample log of ``seed``: Life for even seeds, CellWar for odd ones."""
    return life_log(seed) if seed % 2 == 0 else cellwar_log(seed)


def write_sample_logs(folder: str | Path, n: int, *, first_seed: int = 0) -> list[Path]:
    """Write ``n`` sample logs ``sample-<seed>.jsonl`` into ``folder``; returns the paths."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for seed in range(first_seed, first_seed + n):
        path = out / f"sample-{seed:04d}.jsonl"
        write_log(sample_log(seed), path)
        paths.append(path)
    return paths
