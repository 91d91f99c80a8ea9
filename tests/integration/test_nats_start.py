"""Reaching NATS at start (services/common/natsconn.py): a deadline that holds, a
refusal no retry mends said at once, and the entry points' one-line error and exit 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from services.common import natsconn
from services.common.natsconn import NatsUnavailable
from services.session.adapters import kv
from tests.support.nats import free_port

ROOT = Path(__file__).resolve().parents[2]


async def test_connect_gives_up_at_its_deadline_and_says_why():
    url = f"nats://127.0.0.1:{free_port()}"  # nothing listens there
    started = time.monotonic()
    with pytest.raises(NatsUnavailable) as err:
        await natsconn.connect(url, name="test", deadline_s=1.0)
    waited = time.monotonic() - started
    assert 0.9 <= waited < 10.0
    message = str(err.value)
    assert message.startswith(f"no NATS server at {url} answered within 1 s (last error: ")
    assert "[Errno 111]" in message  # ECONNREFUSED, however the loop words it
    assert "CELLWAR_NATS_URL" in message


async def test_a_replica_count_one_server_cannot_hold_is_refused_at_once(nats_url):
    nc = await natsconn.connect(nats_url, name="test", deadline_s=10.0)
    try:
        js = nc.jetstream()
        name = f"T_{uuid.uuid4().hex[:8].upper()}"
        started = time.monotonic()
        with pytest.raises(NatsUnavailable) as err:
            await natsconn.retrying(name, lambda: kv.ensure_bucket(js, name, replicas=3), 60.0)
        assert time.monotonic() - started < 10.0  # not the 60 s deadline
        assert "replicas > 1 not supported in non-clustered mode (err_code 10074)" in str(err.value)
        assert "CELLWAR_STREAM_REPLICAS" in str(err.value)
        assert all(info.config.name != f"KV_{name}" for info in await js.streams_info())
    finally:
        await nc.close()


@pytest.mark.parametrize("service", ["session", "matchmaker"])
def test_a_service_without_nats_logs_one_error_and_exits_1(service):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CELLWAR_")}
    env.update(
        PYTHONPATH=str(ROOT),
        CELLWAR_NATS_URL=f"nats://127.0.0.1:{free_port()}",
        CELLWAR_NATS_CONNECT_TIMEOUT_S="1",
        CELLWAR_SESSION_ADDR=f"127.0.0.1:{free_port()}",
        CELLWAR_MATCHMAKER_ADDR=f"127.0.0.1:{free_port()}",
        CELLWAR_LOG_FORMAT="json",
    )
    done = subprocess.run(
        [sys.executable, "-m", f"services.{service}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    errors = [line for line in lines if line["level"] == "error"]
    assert [e["event"] for e in errors] == ["nats_unavailable"]
    assert "answered within 1 s" in errors[0]["error"]
    assert "Traceback" not in done.stderr
