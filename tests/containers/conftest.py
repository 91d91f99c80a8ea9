"""The container stack for tests (deploy/containers.py on testcontainers).

Run when a Docker engine answers, skipped with the reason otherwise. The images are
built first when missing or stale (deploy/images.py: no registry pull; a second run
finds them up to date in about a second). ``make test-containers`` runs only these.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")

from deploy.containers import ContainerStack, StackConfig  # noqa: E402
from deploy.images import BuildError, ImageNames, build_all, docker_answers  # noqa: E402

#: Faster than the platform's 8 generations/s so a game ends in seconds (× speed 8).
GENERATIONS_PER_SECOND = 16.0


@pytest.fixture(scope="session")
def images() -> ImageNames:
    """The image names, built (or found up to date) here; skips without Docker."""
    if not docker_answers():
        pytest.skip("no Docker engine answers (start dockerd; .ci/run does) - container tests skipped")
    try:
        return build_all()
    except BuildError as exc:
        pytest.fail(f"the images cannot be built: {exc}")


@pytest.fixture(scope="module")
def stack(images: ImageNames) -> Iterator[ContainerStack]:
    """NATS, engine, session, gateway and nginx on their own network; nginx and NATS
    published on free ports of 127.0.0.1. Removed at the end, whatever happened."""
    config = StackConfig(
        name=f"cwtest-{uuid.uuid4().hex[:8]}",
        port=0,
        generations_per_second=GENERATIONS_PER_SECOND,
        health_interval_s=1.0,
        publish_nats=True,
        extra_env={"session": {"CELLWAR_LEASE_TTL_S": "3"}},
    )
    with ContainerStack(config, images) as running:
        yield running
