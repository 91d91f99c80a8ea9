"""Progress of a ``make bench`` run on standard error: a line when a benchmark starts and
one every :data:`EVERY_S` seconds while it runs, with the time left estimated from the
benchmark's last run of the same kind (``--quick`` or not: the ``seconds`` of its
``.bench/<name>.json``).

A benchmark never run here before has no estimate: its lines give the time spent only,
and the whole run's estimate counts the benchmarks that have one.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

#: Seconds between two progress lines of a running benchmark.
EVERY_S = 15.0


def last_seconds(out_dir: Path, name: str, quick: bool) -> float | None:
    """Seconds the last run of benchmark ``name`` took, read from ``out_dir/<name>.json``
    when that run was of the same kind (``quick``); None when there is none."""
    try:
        result = json.loads((out_dir / f"{name}.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(result, dict) or bool(result.get("quick")) != quick:
        return None
    seconds = result.get("seconds")
    return float(seconds) if isinstance(seconds, int | float) and seconds > 0 else None


def _clock(seconds: float) -> str:
    seconds = max(round(seconds), 0)
    return f"{seconds // 60}:{seconds % 60:02d}"


class Progress:
    """``with Progress(names, out_dir, quick) as p: p.start(name) ...``: prints where the
    run is (see the module docstring).

    Args:
        names: the benchmarks of the run, in order.
        out_dir: the folder of the earlier runs' JSON (the estimates).
        quick: whether this is a ``--quick`` run.
        stream: where the lines go (standard error).
        every_s: seconds between two lines of a running benchmark.
    """

    def __init__(
        self,
        names: Sequence[str],
        out_dir: Path,
        quick: bool,
        stream: TextIO | None = None,
        every_s: float = EVERY_S,
    ) -> None:
        self._names = list(names)
        self._expected = {n: last_seconds(out_dir, n, quick) for n in self._names}
        self._stream = stream or sys.stderr
        self._every_s = every_s
        self._current: str | None = None
        self._started = 0.0
        self._done: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="bench-progress", daemon=True)

    def __enter__(self) -> Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def start(self, name: str) -> None:
        """Benchmark ``name`` starts now (the one before it, if any, finished)."""
        if self._current is not None:
            self._done.add(self._current)
        self._current, self._started = name, time.monotonic()
        self._say(started=True)

    def _left(self, elapsed: float) -> tuple[float | None, float]:
        """(this benchmark's seconds left or None, the run's seconds left by estimate)."""
        mine = self._expected.get(self._current or "")
        this_left = None if mine is None else max(mine - elapsed, 0.0)
        rest = sum(
            s or 0.0 for n, s in self._expected.items() if n not in self._done and n != self._current
        )
        return this_left, (this_left or 0.0) + rest

    def _say(self, *, started: bool = False) -> None:
        name = self._current
        if name is None:
            return
        elapsed = time.monotonic() - self._started
        this_left, run_left = self._left(elapsed)
        k = self._names.index(name) + 1 if name in self._names else 0
        head = f"bench: {name} ({k} of {len(self._names)})"
        if started:
            mine = self._expected.get(name)
            body = (
                f"started, its last run took {_clock(mine)}"
                if mine is not None
                else "started, no earlier run to estimate it from"
            )
        else:
            body = f"running {_clock(elapsed)}"
            if this_left is not None:
                body += f", about {_clock(this_left)} left" if this_left > 0 else ", past its last run's time"
        unknown = sum(1 for n, s in self._expected.items() if s is None and n not in self._done)
        whole = f"; the run: about {_clock(run_left)} left" if run_left and len(self._names) > 1 else ""
        if whole and unknown:
            whole += f" + {unknown} benchmark(s) never run here"
        print(f"{head} {body}{whole}", file=self._stream, flush=True)

    def _beat(self) -> None:
        while not self._stop.wait(self._every_s):
            self._say()
