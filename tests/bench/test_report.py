"""The ``make bench`` report: report.md, the two PNG plots and the run CLI, on synthetic
benchmark results (no servers, no timing: the figures are made up and only their
rendering is checked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import report, run

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _row(name: str, measured: float, ok: bool | None, **extra) -> dict:
    return {
        "name": name,
        "unit": "x/s",
        "kernel": measured,
        "reference": extra.pop("reference", None),
        "ratio": extra.pop("ratio", None),
        "target_text": ">= 10 x/s" if ok is not None else "- (info)",
        "pass": True if ok is None else ok,
        "info": ok is None,
        **extra,
    }


def _sweep(points: list[tuple[int, float]]) -> list[dict]:
    return [
        {
            "games": k,
            "requested_gps": 8.0 * k,
            "achieved_gps": achieved,
            "engine_cpu_per_tick_s": k / 1000.0,
            "ceiling_gps": k * min(8.0, 1000.0 / k),
            "kernel_gps": 25_000.0,
        }
        for k, achieved in points
    ]


def synthetic_results() -> dict[str, dict]:
    return {
        "kernel": {"rows": [_row("two colours", 12.0, True), _row("one colour", 3.0, False)]},
        "capacity": {
            "rows": [_row("games per core", 140.0, False)],
            "path": "Engine.Tick",
            "sweep": _sweep([(50, 400.0), (100, 800.0), (200, 1000.0), (300, 1000.0)]),
        },
        "roundtrip": {
            "rows": [_row("actions/s", 600.0, True, reference=1000.0, ratio=0.6)],
            "latency_ms": {
                "bare FastAPI anchor": [1.0, 1.5, 2.0, 2.5, 9.0],
                "platform, fsync on": [5.0, 7.0, 9.0, 30.0, 80.0],
            },
            "p99_target_ms": 50.0,
        },
    }


MACHINE = {
    "cpus": 2,
    "cpu_model": "test CPU",
    "platform": "test",
    "python": "3.11",
    "numpy": "2",
    "load_start": [5.0, 4.0, 3.0],
    "load_end": [1.0, 1.0, 1.0],
    "started": "t0",
    "finished": "t1",
    "quick": True,
}


def test_report_has_every_row_both_plots_and_the_load(tmp_path: Path):
    path = report.write_report(synthetic_results(), tmp_path, MACHINE)
    text = path.read_text()
    for name in ("two colours", "one colour", "games per core", "actions/s"):
        assert f"| {name} |" in text
    assert "**2 PASS, 2 FAIL, 0 info**" in text
    assert "| 0.60x |" in text
    assert "load average (1/5/15 min) at start: 5.00/4.00/3.00" in text
    assert "the machine was shared" in text
    assert "![capacity curve](capacity_curve.png)" in text
    assert "![latency CDF](latency_cdf.png)" in text
    # the bend: 100 games kept 95 % of 800 gen/s, 200 games got 1,000 of 1,600
    assert "Bend: 100 games kept it; from 200 games" in text
    for png in ("capacity_curve.png", "latency_cdf.png"):
        data = (tmp_path / png).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000
    # targets whose benchmark was not run are listed as such
    assert "| WebSocket fan-out" in text and "no (not run" in text


def test_the_header_names_the_benchmarks_that_ran_quick(tmp_path: Path):
    results = synthetic_results()
    full = {**MACHINE, "quick": False}
    assert "Run t0 .. t1.\n" in report.write_report(results, tmp_path, full).read_text()
    every = report.write_report(results, tmp_path, MACHINE).read_text()
    assert "Run t0 .. t1 (--quick: smaller sizes, figures only indicative)." in every
    # a report of several --only runs: one quick run last, the others full
    mixed = {name: {**res, "quick": name == "kernel"} for name, res in results.items()}
    text = report.write_report(mixed, tmp_path, MACHINE).read_text()
    assert "Run t0 .. t1 (kernel with --quick: smaller sizes, figures only indicative)." in text


def test_bend_is_the_first_point_below_95_percent():
    assert report.bend(_sweep([(50, 400.0), (100, 790.0)])) is None
    assert report.bend(_sweep([(50, 400.0), (100, 700.0), (200, 1600.0)])) == {
        "kept": 50,
        "lost": 100,
    }
    assert report.bend(_sweep([(50, 100.0)])) == {"kept": None, "lost": 50}
    assert report.bend([]) is None


def test_report_without_plot_data_says_what_is_missing(tmp_path: Path):
    text = report.write_report({"kernel": synthetic_results()["kernel"]}, tmp_path, {}).read_text()
    assert "_not run (benchmark `capacity`)_" in text
    assert "_not run (benchmark `roundtrip`)_" in text
    assert not (tmp_path / "capacity_curve.png").exists()


def test_run_cli_writes_json_and_report_and_survives_a_crashing_benchmark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    def crashing(quick: bool) -> dict:
        raise RuntimeError("the server did not start")

    results = synthetic_results()
    monkeypatch.setattr(
        run,
        "BENCHMARKS",
        [
            ("capacity", lambda quick: results["capacity"]),
            ("broken", crashing),
            ("roundtrip", lambda quick: results["roundtrip"]),
        ],
    )
    assert run.main(["--quick", "--out", str(tmp_path)]) == 0
    assert run.main(["--quick", "--out", str(tmp_path), "--strict"]) == 1
    broken = json.loads((tmp_path / "broken.json").read_text())
    assert broken["rows"][0]["pass"] is False
    assert "RuntimeError: the server did not start" in broken["rows"][0]["name"]
    text = (tmp_path / "report.md").read_text()
    assert "benchmark raised RuntimeError" in text
    assert (tmp_path / "capacity_curve.png").exists()
    assert (tmp_path / "latency_cdf.png").exists()
    # the report can be rebuilt from the JSON files alone
    (tmp_path / "report.md").unlink()
    assert report.main(["--dir", str(tmp_path)]) == 0
    assert "| broken |" in (tmp_path / "report.md").read_text()


def test_an_only_run_keeps_the_other_benchmarks_rows_of_their_last_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    results = synthetic_results()
    faster = {"rows": [_row("actions/s", 900.0, True, reference=1000.0, ratio=0.9)]}
    calls: list[str] = []

    def bench(name: str, result: dict):
        return lambda quick: calls.append(name) or result

    monkeypatch.setattr(
        run,
        "BENCHMARKS",
        [("kernel", bench("kernel", results["kernel"])), ("roundtrip", bench("roundtrip", results["roundtrip"]))],
    )
    assert run.main(["--quick", "--out", str(tmp_path)]) == 0
    kernel_time = json.loads((tmp_path / "kernel.json").read_text())["time"]
    monkeypatch.setattr(
        run, "BENCHMARKS", [("kernel", bench("kernel", {"rows": []})), ("roundtrip", bench("roundtrip", faster))]
    )
    (tmp_path / "stray.json").write_text("not json")
    assert run.main(["--quick", "--out", str(tmp_path), "--only", "roundtrip"]) == 0
    assert calls == ["kernel", "roundtrip", "roundtrip"]
    text = (tmp_path / "report.md").read_text()
    # the kernel's rows are the first run's, labelled with its time; roundtrip's are new
    assert f"| kernel (run {kernel_time}) | two colours |" in text
    assert "| roundtrip | actions/s | 900.0 |" in text and "| 600.0 |" not in text
    assert "the rows of kernel are those of their last runs" in text
    assert "over 2 benchmarks: kernel, roundtrip" in text


def test_only_names_the_unknown_benchmarks_and_the_known_ones(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exit_info:
        run.main(["--only", "kernel,nosuch", "--only", "other"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown benchmark nosuch, other: the benchmarks are kernel, roundtrip, actions" in err
