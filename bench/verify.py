"""``cellwar verify`` throughput (docs/replays.md: ``--workers 2`` over 1,000 logs).

- 1,000 sample logs (:mod:`bench.loggen`: half Life 32×32 games, half CellWar 8×8 bot
  games; 100 with ``--quick``) written to a temporary folder, then verified by the real
  command (``python -m client.cli verify --quiet``, a child process) with ``--workers 2``
  and with ``--workers 1``, alternated twice (best of each; once with ``--quick``); the figure is the events/s the tool prints on its total line
  (wall time from the first file opened to the last result, every hash checked).
- One 10,000-event Life game (60×60, :func:`bench.replay.build_log`; 3,000 with
  ``--quick``) verified event by event in process, beside ``engine.fold`` of the same log,
  which sums runs of ``GenerationsTicked`` and checks only the last hash (the
  ``replay`` benchmark's figure): the price of checking every hash.

The machine is shared, so wall-clock rates move with its load; the CPU cost of the
one-worker run (events per CPU second of the whole child process, start-up included)
does not. No target covers verification, so the rows are informative.
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import engine
from bench._stack import row
from bench.loggen import write_sample_logs

ROOT = Path(__file__).resolve().parents[1]
_TOTAL = re.compile(r"total: (\d+) logs?, ([\d,]+) events, ([\d,]+) hashes checked in ([\d.]+) s: ([\d,]+) events/s")


def _cli_verify(paths: list[Path], workers: int) -> dict[str, Any]:
    """Run ``cellwar verify --quiet --workers N`` on ``paths``; its total line's figures,
    and the CPU seconds of the child (exact with one worker; a pool's workers belong to
    its fork server and are not all counted)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, "-m", "client.cli", "verify", "--quiet", "--no-progress", "--workers", str(workers),
         *map(str, paths)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    m = _TOTAL.search(proc.stdout)
    if proc.returncode != 0 or not m:
        raise RuntimeError(f"cellwar verify failed ({proc.returncode}): {proc.stdout[-2000:]} {proc.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    logs, events, checked, seconds, rate = m.groups()
    return {
        "cpu_s": cpu_s,
        "logs": int(logs),
        "events": int(events.replace(",", "")),
        "checked": int(checked.replace(",", "")),
        "seconds": float(seconds),
        "events_per_s": float(rate.replace(",", "")),
        "line": m.group(0),
    }


def _one_long_game(n: int) -> dict[str, Any]:
    from bench.replay import build_log
    from client.cli.verify import verify_events

    log = build_log(n)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    events = [
        {"seq": i + 1, "type": t, "actor": a, "payload": p, "time": (start + timedelta(seconds=i + 1)).isoformat(),
         "state_hash": h, "engine_version": engine.ENGINE_VERSION}
        for i, (t, a, p, h) in enumerate(log)
    ]
    best_verify = best_fold = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        result = verify_events(events)
        best_verify = min(best_verify, time.perf_counter() - t0)
        if result.status != "OK" or result.checked != len(events):
            raise RuntimeError(f"the long game does not verify: {result.line()}")
        t0 = time.perf_counter()
        state = engine.fold(None, [(t, a, p, engine.ENGINE_VERSION) for t, a, p, _ in log])
        best_fold = min(best_fold, time.perf_counter() - t0)
        if engine.state_hash(state) != log[-1][3]:
            raise RuntimeError("engine.fold does not reproduce the last hash")
    return {"events": len(events), "verify_s": best_verify, "fold_s": best_fold}


def run(quick: bool = False) -> dict[str, Any]:
    """Rows: verify with 2 workers and 1 worker over sample logs; one long Life game."""
    n_logs = 100 if quick else 1000
    with tempfile.TemporaryDirectory(prefix="cellwar-verify-bench-") as tmp:
        t0 = time.perf_counter()
        paths = write_sample_logs(tmp, n_logs)
        generated_s = time.perf_counter() - t0
        # Alternate the two (best of each): the machine's load drifts during a run.
        two = one = None
        for _ in range(1 if quick else 2):
            runs = (_cli_verify(paths, 2), _cli_verify(paths, 1))
            two = max(two or runs[0], runs[0], key=lambda r: r["events_per_s"])
            one = max(one or runs[1], runs[1], key=lambda r: r["events_per_s"])
    long = _one_long_game(3_000 if quick else 10_000)
    rows = [
        row(
            f"cellwar verify --workers 2, {n_logs:,} logs ({two['events']:,} events)",
            "events/s", two["events_per_s"], "info (every hash checked)", None,
            reference=one["events_per_s"], ratio=two["events_per_s"] / one["events_per_s"],
            seconds=two["seconds"], logs_per_s=n_logs / two["seconds"],
        ),
        row(
            f"cellwar verify --workers 1, {n_logs:,} logs", "events/s", one["events_per_s"], "info", None,
            seconds=one["seconds"], logs_per_s=n_logs / one["seconds"],
        ),
        row(
            "cellwar verify, CPU cost (1 worker, whole process)", "events/CPU-s",
            one["events"] / one["cpu_s"], "info (independent of the machine's load)", None,
            cpu_s=one["cpu_s"],
        ),
        row(
            f"verify one {long['events']:,}-event Life game (vs engine.fold)", "events/s",
            long["events"] / long["verify_s"], "info (fold: last hash only)", None,
            reference=long["events"] / long["fold_s"], ratio=long["fold_s"] / long["verify_s"],
        ),
    ]
    return {
        "rows": rows,
        "workers_2": two,
        "workers_1": one,
        "long_game": long,
        "logs_generated_s": generated_s,
    }
