"""The bench's progress lines: one at each start, then one per beat, with the time left
estimated from the last run of the same kind."""

from __future__ import annotations

import io
import json
import time

from bench.progress import Progress, last_seconds


def write(out, name: str, seconds: float, quick: bool) -> None:
    (out / f"{name}.json").write_text(json.dumps({"rows": [], "seconds": seconds, "quick": quick}))


def test_the_estimate_is_the_last_run_of_the_same_kind(tmp_path):
    write(tmp_path, "capacity", 141.4, quick=True)
    (tmp_path / "broken.json").write_text("{not json")
    assert last_seconds(tmp_path, "capacity", quick=True) == 141.4
    assert last_seconds(tmp_path, "capacity", quick=False) is None  # a full run: no estimate
    assert last_seconds(tmp_path, "broken", quick=True) is None
    assert last_seconds(tmp_path, "never", quick=True) is None


def test_lines_say_what_runs_and_what_is_left(tmp_path):
    write(tmp_path, "kernel", 120, quick=False)
    write(tmp_path, "capacity", 600, quick=False)
    out = io.StringIO()
    with Progress(["kernel", "capacity", "cluster"], tmp_path, False, stream=out, every_s=0.05) as p:
        p.start("kernel")
        time.sleep(0.2)
        p.start("capacity")
    lines = out.getvalue().splitlines()
    assert lines[0] == (
        "bench: kernel (1 of 3) started, its last run took 2:00; "
        "the run: about 12:00 left + 1 benchmark(s) never run here"
    )
    beats = [line for line in lines if line.startswith("bench: kernel (1 of 3) running 0:00")]
    assert beats and all(b.endswith("about 2:00 left; the run: about 12:00 left + 1 benchmark(s) never run here") for b in beats)
    assert lines[-1] == (
        "bench: capacity (2 of 3) started, its last run took 10:00; "
        "the run: about 10:00 left + 1 benchmark(s) never run here"
    )


def test_a_benchmark_never_run_here_gives_the_time_spent_only(tmp_path):
    out = io.StringIO()
    with Progress(["cluster"], tmp_path, True, stream=out, every_s=0.05) as p:
        p.start("cluster")
        time.sleep(0.12)
    lines = out.getvalue().splitlines()
    assert lines[0] == "bench: cluster (1 of 1) started, no earlier run to estimate it from"
    assert lines[1] == "bench: cluster (1 of 1) running 0:00"
