"""``python -m deploy.run`` for a test module or package: started, waited up, and
stopped with no process left behind and a 0 exit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from deploy.harness import RunnerProcess


def running(data_dir: Path, *, timeout_s: float, **options: Any) -> Iterator[RunnerProcess]:
    """Yield a :class:`RunnerProcess` on ``data_dir`` (``options``: its keyword arguments)
    once every process is up within ``timeout_s``; a fixture body (``yield from``)."""
    run = RunnerProcess(data_dir, **options)
    run.start()
    try:
        run.wait_up(timeout_s=timeout_s)
        yield run
    finally:
        code = run.stop()  # raises when a child outlives the runner
        assert code == 0, run.log_tail()
