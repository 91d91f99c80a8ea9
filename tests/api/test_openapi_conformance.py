"""schemathesis over the gateway's own OpenAPI document, on the real stack
(docs/api/openapi.md): the coverage, fuzzing and stateful phases with every built-in check,
and 0 server errors and 0 conformance failures.

The stack and the gateway run on their own event loop in a daemon thread (schemathesis
calls are blocking). Player tokens come from :class:`SeatOneAuth`: it signs, with the
test gateway's secret, a token of seat 1 of the game named in the request's path, so
generated requests reach the rules (a random game id gets 404; the stateful phase
follows the links create → join → state/action/... of a real game). The gateway's own
limits are off here (other tests check them), so fuzzing is not answered 429.

Bounded for a loaded 2-core machine: :data:`MAX_EXAMPLES` examples per operation and
phase, :data:`STATEFUL_STEPS` stateful steps.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from gateway.app import create_app
from gateway.tokens import TokenSigner
from services.common.settings import Settings
from tests.api.conftest import TEST_SECRET
from tests.support.nats import NatsProcess
from tests.support.threaded import ThreadedStack

pytestmark = pytest.mark.integration

#: Hypothesis examples per operation in the fuzzing phase.
MAX_EXAMPLES = 30
#: Hypothesis examples (scenarios) of the stateful phase, and steps per scenario.
STATEFUL_EXAMPLES = 25
STATEFUL_STEPS = 6


@pytest.fixture(scope="module")
def nats_url(tmp_path_factory) -> Iterator[str]:
    """A NATS of this module's own: the fuzzed tickets it leaves searching (a config that
    sets nothing is compatible with any ticket of its queue) must not be matched with the
    tickets of later matchmaking tests."""
    with NatsProcess(tmp_path_factory.mktemp("nats-openapi")) as proc:
        yield proc.url


@pytest.fixture(scope="module")
def live_gateway(nats_url: str) -> Iterator[str]:
    """Base URL of a gateway in front of a real stack, served from another thread."""
    server = ThreadedStack(
        nats_url,
        generations_per_second=400.0,
        gateway={
            "secret": TEST_SECRET,
            "rate_limit_per_s": 0,
            "create_limit_per_min": 0,
            "join_limit_per_min": 0,
            "read_limit_per_s": 0,
            "read_concurrency": 0,
            "read_global_per_s": 0,
            "log_level": "warning",
        },
        name="openapi-live-gateway",
        # POST /game/{id}/bots reaches a real bot runner (docs/bot-seats.md); its bots
        # give up a game that stays open after 30 s.
        bots={"max_seats": 4, "wait_s": 30.0},
    )
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


_SIGNER = TokenSigner(TEST_SECRET)


class SeatOneAuth:
    """schemathesis auth: a token of seat 1 of the game in the request's path (signed
    with the test gateway's secret), so requests pass the token check and meet the
    rules; none for requests without a game. The token is made when the request is
    (the stateful phase fills the path from a link after ``get``)."""

    def get(self, case, context) -> str:  # noqa: ANN001 - schemathesis' signature
        return "seat-1"

    def set(self, case, data, context) -> None:  # noqa: ANN001
        game_id = (case.path_parameters or {}).get("game_id")
        if not isinstance(game_id, str) or not game_id:
            return
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {_SIGNER.issue(game_id, 1)}"


def _openapi_document() -> dict:
    """The document the gateway serves at /openapi.json (the same app, not served)."""
    return create_app(Settings(secret=TEST_SECRET, web_dir="/nonexistent")).openapi()


#: Built at import (schemathesis' lazy ``from_fixture`` does not work with pytest 9); the
#: requests go to :func:`live_gateway` through ``base_url``.
schema = schemathesis.openapi.from_dict(_openapi_document())
schema.auth(refresh_interval=None)(SeatOneAuth)


def test_the_run_has_the_coverage_fuzzing_and_stateful_phases():
    phases = schema.config.phases
    assert phases.coverage.enabled and phases.fuzzing.enabled and phases.stateful.enabled


def _fresh_idempotency_key(case) -> None:  # noqa: ANN001
    """A generated well-formed ``Idempotency-Key`` becomes a uuid4: a key reused with
    another body is refused by design (422 ``IDEMPOTENCY_KEY_REUSED``, tested in
    test_hardening.py), and fuzzing draws the same short keys again and again."""
    headers = case.headers or {}
    key = headers.get("Idempotency-Key")
    if isinstance(key, str) and 1 <= len(key) <= 200 and key.isascii() and key.isprintable() and " " not in key:
        headers["Idempotency-Key"] = f"{key[:100]}-{uuid.uuid4().hex}"


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_every_operation_conforms_to_its_schema(case, live_gateway):
    """Examples, coverage and fuzzing of each operation: every response conforms (status,
    headers, body) and no request is answered 5xx."""
    _fresh_idempotency_key(case)
    case.call_and_validate(base_url=live_gateway, timeout=30)


def _answered(metrics: str, method: str, route: str, statuses: tuple[str, ...]) -> float:
    """How many ``method route`` requests the gateway answered with one of ``statuses``
    (from its Prometheus counter)."""
    total = 0.0
    for status in statuses:
        match = re.search(
            rf'cellwar_http_requests_total{{method="{method}",route="{re.escape(route)}",'
            rf'status="{status}"}} ([0-9.e+]+)',
            metrics,
        )
        total += float(match.group(1)) if match else 0.0
    return total


def test_stateful_sequences_conform(live_gateway):
    """The stateful phase: create → join → act/end turn/state/events/replay sequences
    through the links inferred from the schema, every response checked; the sequences
    really reach the rules of games they created."""
    schema.config.update(base_url=live_gateway)

    # Fork and import (tag "replay") answer a game id too, so every one of their calls is
    # a link source that thins out the create → join sequences counted below; they are
    # checked by the fuzzing phase above and left out of this one.
    class Machine(schema.exclude(tag="replay").as_state_machine()):
        def before_call(self, case) -> None:  # noqa: ANN001
            _fresh_idempotency_key(case)

    Machine.run(
        settings=settings(
            max_examples=STATEFUL_EXAMPLES,
            stateful_step_count=STATEFUL_STEPS,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
            # the same sequences every run: with random ones, a run now and then tried a
            # join only a few times, each with a generated (refused) token, and the count
            # of joins below was 0
            derandomize=True,
        )
    )
    metrics = httpx.get(f"{live_gateway}/metrics", timeout=30).text
    assert _answered(metrics, "POST", "/game/create", ("201",)) > 0
    assert _answered(metrics, "POST", "/game/{game_id}/join", ("200",)) > 0
    reached_rules = sum(
        _answered(metrics, method, route, ("200", "409"))
        for method, route in (
            ("POST", "/game/{game_id}/action"),
            ("POST", "/game/{game_id}/end_turn"),
            ("POST", "/game/{game_id}/leave"),
            ("GET", "/game/{game_id}/state"),
            ("GET", "/game/{game_id}/valid_actions"),
        )
    )
    assert reached_rules > 0
