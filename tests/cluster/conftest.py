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
from tests.support.runner import running


@pytest.fixture(scope="package")
def cluster(tmp_path_factory) -> Iterator[RunnerProcess]:
    """A running cluster (every process up, /healthz through nginx answers)."""
    try:
        nginx_binary()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    yield from running(tmp_path_factory.mktemp("cluster") / "data", timeout_s=180, cluster=True, env=CHAOS_ENV)
