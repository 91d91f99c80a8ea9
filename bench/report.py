"""The ``make bench`` report: ``.bench/report.md`` with every row, and two plots.

:func:`write_report` is called by :mod:`bench.run` with the results of the benchmarks it
ran (``{name: result}``, the dicts also written to ``.bench/<name>.json``) and the
machine's description; ``python -m bench.report [--dir .bench]`` rebuilds the report
from the JSON files of a folder (each benchmark then keeps the time of its own run).

Plots (matplotlib, PNG; skipped with a note when matplotlib is not installed -
``pip install -e '.[bench]'``):

* ``capacity_curve.png``: achieved generations/s against the number of hosted games
  (``capacity`` result's ``sweep``), beside the requested rate (8 per game) and the
  one-core ceiling from the engine's CPU time per tick; the bend is where the achieved
  rate falls below 95 % of the requested one;
* ``latency_cdf.png``: the latency CDF of the REST action round trip against the bare
  FastAPI anchor (``roundtrip`` result's ``latency_ms``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["TARGETS", "write_report", "bend", "main"]

#: The performance targets (docs/benchmarks.md) and the benchmarks whose rows measure them.
TARGETS: list[tuple[str, list[str]]] = [
    ("Life kernel, 2 colours: >= 6e9 cell-updates/s, >= 40x numpy uint8", ["kernel"]),
    ("Life kernel, one colour: >= 10e9 cell-updates/s", ["kernel"]),
    ("Life tick at game size, 300x300: >= 5,000 generations/s", ["kernel"]),
    ("hosted capacity: >= 5,000 games per engine core, >= 0.5x the kernel bound", ["capacity"]),
    ("REST action round trip: p99 <= 50 ms (its share of bare FastAPI: info, the hop floor bounds it)", ["roundtrip"]),
    ("event append: vs a raw JetStream publish loop (fsync always)", ["append"]),
    ("replay: >= 50,000 events/s; GET /replay <= 20 ms median", ["replay", "replay_load"]),
    ("AI environment: >= 5,000 steps/s (scalar env); batched envs >= 200,000 / 20,000 agent-steps/s", ["envs", "rl"]),
    ("commands over the socket: <= 1 ms CPU or <= 0.3x REST; >= 1,500/s or >= 5x REST; REST vs the hop floor", ["actions"]),
    ("durable appends: 256 in flight >= 10x one, >= 0.8x the best raw loop", ["appends"]),
    ("WebSocket fan-out: 500 viewers, lag p99 <= 100 ms", ["fanout"]),
    ("matchmaking: 10,000 tickets <= 1 s; 1,000 end to end", ["matchmaking"]),
    ("scale-out (make run-cluster): per-process CPU", ["cluster"]),
    ("bot games on make run-cluster: 100 games, WebSocket commands p99 <= 250 ms", ["cluster_bots"]),
]

#: Share of the requested generation rate a hosted game must keep (docs/benchmarks.md).
KEEP_RATE = 0.95


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        v = float(value)
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 10):
            return f"{v:.3g}"
        return f"{v:,.1f}" if abs(v) < 1e3 else f"{v:,.0f}"
    return str(value)


def _result(row: dict[str, Any]) -> str:
    if row.get("info"):
        return "info"
    return "PASS" if row.get("pass") else "**FAIL**"


def bend(sweep: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The bend of a capacity sweep: the largest number of games that kept >=
    :data:`KEEP_RATE` of the requested rate, and the first that did not (None when
    every point kept it, or the sweep is empty)."""
    kept = [p for p in sweep if p["achieved_gps"] >= KEEP_RATE * p["requested_gps"]]
    lost = [p for p in sweep if p["achieved_gps"] < KEEP_RATE * p["requested_gps"]]
    if not sweep or not lost:
        return None
    first_lost = min(lost, key=lambda p: p["games"])
    last_kept = max(
        (p for p in kept if p["games"] < first_lost["games"]),
        default=None,
        key=lambda p: p["games"],
    )
    return {"kept": last_kept["games"] if last_kept else None, "lost": first_lost["games"]}


def _plot_capacity(result: dict[str, Any], path: Path) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweep = sorted(result["sweep"], key=lambda p: p["games"])
    games = [p["games"] for p in sweep]
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=110)
    ax.plot(games, [p["requested_gps"] for p in sweep], "k--", lw=1, label="requested (8 per game)")
    ax.plot(
        games,
        [p["achieved_gps"] for p in sweep],
        "o-",
        color="tab:blue",
        label=f"achieved, paced at 8 Hz via {result.get('path', '?')}",
    )
    if all(p.get("kernel_gps") for p in sweep):
        ax.plot(
            games,
            [p["kernel_gps"] for p in sweep],
            "-",
            color="grey",
            lw=0.8,
            label="kernel alone: what one core's step_many could run",
        )
    if all(p.get("ceiling_gps") for p in sweep):
        ax.plot(
            games,
            [p["ceiling_gps"] for p in sweep],
            ":",
            color="tab:orange",
            label="one engine core's ceiling (engine CPU per tick)",
        )
    b = bend(sweep)
    if b is not None:
        ax.axvline(b["lost"], color="tab:red", lw=0.8)
        ax.annotate(
            f"bends: < {KEEP_RATE:.0%} from {b['lost']} games",
            (b["lost"], min(p["achieved_gps"] for p in sweep)),
            xytext=(4, 8),
            textcoords="offset points",
            color="tab:red",
            fontsize=8,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(games, [str(g) for g in games])
    ax.minorticks_off()
    ax.set_xlabel("hosted 300x300 games (log scale)")
    ax.set_ylabel("generations / s, all games (log scale)")
    ax.set_title("Hosted capacity (one engine process)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path.name


def _plot_latency(result: dict[str, Any], path: Path) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=110)
    for label, samples in result["latency_ms"].items():
        xs = sorted(samples)
        if not xs:
            continue
        ys = [(i + 1) / len(xs) for i in range(len(xs))]
        ax.step(xs, ys, where="post", label=f"{label} (n={len(xs)})")
    target = result.get("p99_target_ms")
    if target:
        ax.axvline(target, color="tab:red", lw=0.8, ls="--")
        ax.axhline(0.99, color="grey", lw=0.6, ls=":")
        ax.annotate(
            f"p99 target {target:g} ms",
            (target, 0.02),
            xytext=(4, 0),
            textcoords="offset points",
            color="tab:red",
            fontsize=8,
        )
    ax.set_xscale("log")
    ax.set_ylim(0.0, 1.005)
    ax.set_xlabel("latency of POST /game/{id}/action (ms, log scale)")
    ax.set_ylabel("share of actions <= x")
    ax.set_title("REST action round trip against the bare FastAPI anchor")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path.name


def _have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _plots(results: dict[str, dict[str, Any]], out_dir: Path) -> tuple[list[str], list[str]]:
    """Draw the plots the results allow; returns (markdown lines, notes)."""
    lines: list[str] = []
    notes: list[str] = []
    draw = _have_matplotlib()
    if not draw:
        notes.append("plots skipped: matplotlib is not installed (pip install -e '.[bench]')")
    capacity = results.get("capacity", {})
    lines.append("## Capacity curve: achieved generations/s against hosted games")
    lines.append("")
    if capacity.get("sweep"):
        if draw:
            name = _plot_capacity(capacity, out_dir / "capacity_curve.png")
            lines.append(f"![capacity curve]({name})")
            lines.append("")
        b = bend(capacity["sweep"])
        if b is None:
            lines.append(f"Every point kept >= {KEEP_RATE:.0%} of its requested rate.")
        else:
            kept = f"{b['kept']} games kept it" if b["kept"] else "no point kept it"
            lines.append(
                f"Bend: {kept}; from {b['lost']} games the achieved rate is below "
                f"{KEEP_RATE:.0%} of the requested 8 generations/s per game."
            )
        lines.append("")
        lines.append(
            "| games | requested gen/s | achieved gen/s | share | engine CPU/tick (s) "
            "| one-core ceiling gen/s | kernel only gen/s |"
        )
        lines.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for p in sorted(capacity["sweep"], key=lambda p: p["games"]):
            share = p["achieved_gps"] / p["requested_gps"] if p["requested_gps"] else 0.0
            lines.append(
                f"| {p['games']} | {_fmt(p['requested_gps'])} | {_fmt(p['achieved_gps'])} | "
                f"{share:.0%} | {_fmt(p.get('engine_cpu_per_tick_s'))} | "
                f"{_fmt(p.get('ceiling_gps'))} | {_fmt(p.get('kernel_gps'))} |"
            )
    else:
        lines.append("_not run (benchmark `capacity`)_")
    lines.append("")
    roundtrip = results.get("roundtrip", {})
    lines.append("## Latency CDF of REST actions against the bare anchor")
    lines.append("")
    if roundtrip.get("latency_ms"):
        if draw:
            name = _plot_latency(roundtrip, out_dir / "latency_cdf.png")
            lines.append(f"![latency CDF]({name})")
            lines.append("")
        lines.append("| series | actions | p50 ms | p90 ms | p99 ms | max ms |")
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: |")
        for label, samples in roundtrip["latency_ms"].items():
            xs = sorted(samples)
            if not xs:
                lines.append(f"| {label} | 0 | - | - | - | - |")
                continue

            def q(f: float, xs: list[float] = xs) -> float:
                return xs[min(len(xs) - 1, int(f * len(xs)))]

            lines.append(
                f"| {label} | {len(xs)} | {_fmt(q(0.5))} | {_fmt(q(0.9))} | "
                f"{_fmt(q(0.99))} | {_fmt(xs[-1])} |"
            )
    else:
        lines.append("_not run (benchmark `roundtrip`)_")
    lines.append("")
    return lines, notes


def _machine_lines(machine: dict[str, Any]) -> list[str]:
    load0, load1 = machine.get("load_start"), machine.get("load_end")
    cpus = machine.get("cpus")
    lines = [
        f"- machine: {cpus} cores ({machine.get('cpu_model', '?')}), {machine.get('platform', '?')}",
        f"- Python {machine.get('python', '?')}, numpy {machine.get('numpy', '?')}",
    ]
    if load0 is not None:
        fmt = "/".join(f"{x:.2f}" for x in load0)
        lines.append(f"- load average (1/5/15 min) at start: {fmt}")
    if load1 is not None:
        fmt = "/".join(f"{x:.2f}" for x in load1)
        lines.append(f"- load average (1/5/15 min) at end: {fmt}")
    loads = [x[0] for x in (load0, load1) if x is not None]
    if cpus and loads and max(loads) > cpus:
        lines.append(
            f"- **the machine was shared**: a 1-minute load above {cpus} means other processes "
            "competed for the cores; rates below are lower (and latencies higher) than on a "
            "quiet machine. The kernel rows divide by CPU time, which load disturbs less."
        )
    return lines


def _quick_note(results: dict[str, dict[str, Any]], machine: dict[str, Any]) -> str:
    """The header's word on ``--quick``: the whole report's when every benchmark in it
    ran quick (or, for results without the flag, the run did), else the benchmarks that
    did (rows of earlier runs can mix both)."""
    quick = [name for name, res in results.items() if res.get("quick", machine.get("quick"))]
    if not quick:
        return ""
    if len(quick) == len(results):
        return " (--quick: smaller sizes, figures only indicative)"
    return f" ({', '.join(quick)} with --quick: smaller sizes, figures only indicative)"


def write_report(
    results: dict[str, dict[str, Any]], out_dir: Path, machine: dict[str, Any]
) -> Path:
    """Write ``out_dir/report.md`` (and the plots) for ``results``.

    Args:
        results: benchmark name -> its result (``{"rows": [...], ...}``, optionally a
            ``"time"``); rows as described in :mod:`bench.run`.
        out_dir: the folder (created if missing).
        machine: cpus, cpu_model, platform, python, numpy, load_start/load_end (the
            three load averages), started/finished (times), quick.

    Returns:
        The path of report.md.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = [(name, r) for name, res in results.items() for r in res.get("rows", [])]
    counts = {
        k: sum(1 for _, r in rows if _result(r).strip("*") == k) for k in ("PASS", "FAIL", "info")
    }
    lines = ["# CellWar benchmark report (`make bench`)", ""]
    started, finished = machine.get("started", "?"), machine.get("finished", "?")
    quick = _quick_note(results, machine)
    lines.append(f"Run {started} .. {finished}{quick}.")
    lines.append("")
    lines += _machine_lines(machine)
    lines.append("")
    lines.append(
        f"**{counts['PASS']} PASS, {counts['FAIL']} FAIL, {counts['info']} info** "
        f"over {len(results)} benchmarks: {', '.join(results) or 'none'}."
    )
    earlier = [name for name, res in results.items() if res.get("earlier")]
    if earlier:
        lines.append("")
        lines.append(
            f"This run measured {', '.join(n for n in results if n not in earlier) or 'none'}; "
            f"the rows of {', '.join(earlier)} are those of their last runs (`--only` left "
            "them out), each labelled with its time."
        )
    lines.append("")
    lines.append("## Rows")
    lines.append("")
    lines.append(
        "Each figure is measured beside its anchor in the same run; ratio = measured / anchor."
    )
    lines.append("")
    lines.append("| benchmark | row | measured | unit | anchor | ratio | target | result |")
    lines.append("| --- | --- | ---: | --- | ---: | ---: | --- | --- |")
    label = {
        name: f"{name} (run {res.get('time', '?')})" if res.get("earlier") else name
        for name, res in results.items()
    }
    for name, r in rows:
        ratio = r.get("ratio")
        lines.append(
            f"| {label[name]} | {str(r['name']).strip()} | {_fmt(r.get('kernel'))} | {r.get('unit', '')} | "
            f"{_fmt(r.get('reference'))} | {'-' if ratio is None else f'{ratio:.2f}x'} | "
            f"{r.get('target_text', '')} | {_result(r)} |"
        )
    lines.append("")
    plot_lines, notes = _plots(results, out_dir)
    lines += plot_lines
    lines.append("## Targets and the rows that measure them")
    lines.append("")
    lines.append("| target | benchmarks | in this report |")
    lines.append("| --- | --- | --- |")
    for target, names in TARGETS:
        present = [n for n in names if n in results]
        lines.append(
            f"| {target} | {', '.join(f'`{n}`' for n in names)} | "
            f"{'yes' if present else 'no (not run, or no such benchmark yet)'} |"
        )
    lines.append("")
    times = [
        f"`{n}` {res['time']}" + (f" ({res['seconds']:g} s)" if res.get("seconds") else "")
        for n, res in results.items()
        if res.get("time")
    ]
    if times:
        lines.append("Benchmarks finished at (duration): " + ", ".join(times) + ".")
        lines.append("")
    for note in notes:
        lines.append(f"_{note}_")
        lines.append("")
    path = out_dir / "report.md"
    path.write_text("\n".join(lines))
    return path


def read_result(path: Path) -> dict[str, Any] | None:
    """The benchmark result a ``<name>.json`` holds (``{"rows": [...], ...}``), or None for
    JSON of another shape. Raises OSError (unreadable) or ValueError (not JSON)."""
    data = json.loads(path.read_text())
    return data if isinstance(data, dict) and isinstance(data.get("rows"), list) else None


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.report [--dir .bench]``: rebuild report.md from the JSON files."""
    parser = argparse.ArgumentParser(prog="python -m bench.report", description=main.__doc__)
    parser.add_argument("--dir", default=".bench", help="folder of the <name>.json results")
    args = parser.parse_args(argv)
    out_dir = Path(args.dir)
    results: dict[str, dict[str, Any]] = {}
    machine: dict[str, Any] = {}
    for path in sorted(out_dir.glob("*.json")):
        data = read_result(path)
        if data is not None:
            results[path.stem] = data
            machine = data.get("machine", machine)
    if not results:
        print(f"no results in {out_dir}", file=sys.stderr)
        return 1
    print(f"wrote {write_report(results, out_dir, machine)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
