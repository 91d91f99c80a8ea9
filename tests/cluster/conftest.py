"""One ``make run-cluster`` for the tests of this folder: ``python -m deploy.run --cluster``
as a subprocess with its own data folder and free port bases (deploy/harness.py), the
settings of the chaos run (rate limits off, short leases). Skipped, with the install
hint, when nginx is missing (.ci/run installs it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deploy.chaos import CHAOS_ENV
from deploy.harness import RunnerProcess
from deploy.nginx import nginx_binary


@pytest.fixture(scope="package")
def cluster(tmp_path_factory) -> Iterator[RunnerProcess]:
    """A running cluster (every process up, /healthz through nginx answers)."""
    try:
        nginx_binary()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    run = RunnerProcess(tmp_path_factory.mktemp("cluster") / "data", cluster=True, env=CHAOS_ENV)
    run.start()
    try:
        run.wait_up(timeout_s=180)
        yield run
    finally:
        code = run.stop()  # raises when a process outlives the runner
        assert code == 0, run.log_tail()
