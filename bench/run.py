"""Benchmark CLI: ``python -m bench.run [--quick] [--only NAME[,NAME...]]... [--strict]``.

Runs each registered benchmark, prints a table and writes ``.bench/<name>.json``, then
``.bench/report.md`` with every row of the run and two plots (:mod:`bench.report`); with
``--only``, report.md keeps the other benchmarks' rows from their last runs' JSON, each
labelled with its time.
Add a benchmark by appending ``(name, function)`` to :data:`BENCHMARKS`; the function
takes ``quick: bool`` and returns ``{"rows": [row, ...], ...}`` where a row has at least
``name``, ``unit``, ``kernel`` (the measured figure), ``reference`` (or None), ``ratio``
(or None), ``target_text`` and ``pass``; a row with ``"info": True`` has no target (shown
as ``info``, never fails the run). A benchmark that raises gets one FAIL row saying so,
and the run goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench import (
    actions,
    append,
    appends,
    bots,
    capacity,
    cluster,
    cluster_bots,
    envs,
    fanout,
    imports,
    kernel,
    llm,
    matchmaking,
    replay,
    replay_load,
    report,
    rl,
    roundtrip,
    verify,
)
from bench.progress import Progress

BenchFn = Callable[[bool], dict[str, Any]]

BENCHMARKS: list[tuple[str, BenchFn]] = [
    ("kernel", lambda quick: kernel.run(quick=quick)),
    ("roundtrip", lambda quick: roundtrip.run(quick=quick)),
    ("actions", lambda quick: actions.run(quick=quick)),
    ("append", lambda quick: append.run(quick=quick)),
    ("appends", lambda quick: appends.run(quick=quick)),
    ("replay", lambda quick: replay.run(quick=quick)),
    ("import", lambda quick: imports.run(quick=quick)),
    ("fanout", lambda quick: fanout.run(quick=quick)),
    ("capacity", lambda quick: capacity.run(quick=quick)),
    ("matchmaking", lambda quick: matchmaking.run(quick=quick)),
    ("rl", lambda quick: rl.run(quick=quick)),
    ("envs", lambda quick: envs.run(quick=quick)),
    ("llm", lambda quick: llm.run(quick=quick)),
    ("bots", lambda quick: bots.run(quick=quick)),
    ("verify", lambda quick: verify.run(quick=quick)),
    ("replay_load", lambda quick: replay_load.run(quick=quick)),
    ("cluster", lambda quick: cluster.run(quick=quick)),
    ("cluster_bots", lambda quick: cluster_bots.run(quick=quick)),
]


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 1e5:
        return f"{value:.3e}"
    return f"{value:,.1f}"


def print_table(name: str, rows: list[dict[str, Any]]) -> None:
    """Print one benchmark's rows as an aligned text table."""
    header = ["row", "unit", "measured", "reference", "ratio", "target", "result"]
    lines = [
        [
            r["name"],
            r["unit"],
            _fmt(r["kernel"]),
            _fmt(r.get("reference")),
            "-" if r.get("ratio") is None else f"{r['ratio']:.2f}x",
            r["target_text"],
            "info" if r.get("info") else "PASS" if r["pass"] else "FAIL",
        ]
        for r in rows
    ]
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    print(f"== {name} ==")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    print("  ".join("-" * w for w in widths))
    for line in lines:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
    print()


def machine_info() -> dict[str, Any]:
    """Cores, CPU model, platform, Python and numpy versions, load averages now."""
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "load": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def crashed_result(exc: BaseException) -> dict[str, Any]:
    """The result of a benchmark that raised: one FAIL row naming the error."""
    return {
        "rows": [
            {
                "name": f"benchmark raised {type(exc).__name__}: {str(exc)[:160]}",
                "unit": "-",
                "kernel": None,
                "reference": None,
                "ratio": None,
                "target_text": "runs to the end",
                "pass": False,
            }
        ],
        "error": repr(exc),
    }


def with_earlier(results: dict[str, dict[str, Any]], out_dir: Path) -> dict[str, dict[str, Any]]:
    """``results`` and, for each other benchmark of :data:`BENCHMARKS` whose
    ``out_dir/<name>.json`` an earlier run wrote, that result marked ``"earlier": True``,
    in :data:`BENCHMARKS` order: a ``--only`` run refreshes its own rows in report.md
    without dropping the others (the report labels them with their run's time). A file
    that does not read as a result is left out."""
    merged: dict[str, dict[str, Any]] = {}
    for name, _ in BENCHMARKS:
        if name in results:
            merged[name] = results[name]
            continue
        try:
            earlier = report.read_result(out_dir / f"{name}.json")
        except (OSError, ValueError):
            continue
        if earlier is not None:
            merged[name] = {**earlier, "earlier": True}
    return merged


def _interrupt_on_sigterm() -> None:
    """Take SIGTERM (``kill``, a CI job's timeout) as Ctrl-C: a KeyboardInterrupt, so the
    running benchmark's ``finally`` stops the servers it started. They run in sessions
    of their own (a Ctrl-C in the terminal reaches only this process), so a bench killed
    outright would leave them running."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="short smoke run")
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help="run only this benchmark (repeat it, or give names with commas): "
        + ", ".join(n for n, _ in BENCHMARKS),
    )
    parser.add_argument("--out", default=".bench", help="folder for the JSON results")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a row fails")
    args = parser.parse_args(argv)

    only = [name.strip() for value in args.only or [] for name in value.split(",") if name.strip()]
    names = [n for n, _ in BENCHMARKS]
    unknown = [name for name in only if name not in names]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}: the benchmarks are {', '.join(names)}")
    chosen = [(n, f) for n, f in BENCHMARKS if not only or n in only]
    _interrupt_on_sigterm()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    machine["load_start"] = machine.pop("load")
    machine["started"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    machine["quick"] = args.quick
    failed = False
    results: dict[str, dict[str, Any]] = {}
    with Progress([n for n, _ in chosen], out_dir, args.quick) as progress:
        for name, fn in chosen:
            progress.start(name)
            t0 = time.monotonic()
            try:
                result = fn(args.quick)
            except Exception as exc:  # noqa: BLE001 - reported as a FAIL row, the run goes on
                print(f"benchmark {name} raised {exc!r}", file=sys.stderr)
                result = crashed_result(exc)
            result["machine"] = machine_info()
            result["time"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            result["seconds"] = round(time.monotonic() - t0, 1)
            result["quick"] = args.quick
            print_table(name, result["rows"])
            path = out_dir / f"{name}.json"
            path.write_text(json.dumps(result, indent=2) + "\n")
            print(f"wrote {path}", flush=True)
            results[name] = result
            failed = failed or not all(r["pass"] for r in result["rows"])
    machine["load_end"] = machine_info()["load"]
    machine["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    if only:  # the report keeps the other benchmarks' rows of earlier runs
        results = with_earlier(results, out_dir)
    print(f"wrote {report.write_report(results, out_dir, machine)}")
    return 1 if (failed and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
