"""The error answers each route declares in the OpenAPI document (every status the
server answers is documented, with the error model and its headers; docs/api/openapi.md).

:func:`errors` builds a route's ``responses=`` from HTTP statuses; each entry carries
:class:`gateway.schemas.ErrorOut` and, for 429 and 503, the ``Retry-After`` header.
"""

from __future__ import annotations

from typing import Any

from gateway.schemas import ErrorOut

#: What each error status means, as the OpenAPI document says it.
DESCRIPTIONS: dict[int, str] = {
    401: "Missing, garbled or forged token (UNAUTHORIZED), or a player token older than "
    "CELLWAR_TOKEN_MAX_AGE_S (TOKEN_EXPIRED)",
    403: "A token of another game (FORBIDDEN), or a log/replay not readable yet by this caller, "
    "or /metrics without the operator's CELLWAR_METRICS_TOKEN",
    404: "Unknown game or profile (GAME_NOT_FOUND, PROFILE_NOT_FOUND)",
    409: "The request fits the schema but the rules refuse it: NOT_YOUR_TURN, OUT_OF_ZONE, "
    "GAME_FULL, INVALID_CONFIG (e.g. a unit off this board), SEQ_OUT_OF_RANGE, ...",
    413: "The body is larger than CELLWAR_MAX_BODY_BYTES (PAYLOAD_TOO_LARGE)",
    422: "The request does not fit the schema (MALFORMED), or an Idempotency-Key sent again "
    "with another body (IDEMPOTENCY_KEY_REUSED)",
    429: "Rate limited (RATE_LIMITED): this client's creates, joins, commands or reads; "
    "Retry-After says when to try again",
    503: "A backend is down (UNAVAILABLE), or too many replay/event reads at once (BUSY, "
    "with Retry-After)",
}

_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again (429 always; 503 BUSY)",
        "schema": {"type": "integer", "minimum": 1},
    }
}


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route answering these error statuses, e.g. ``errors(401, 404)``.

    Raises:
        KeyError: a status without a description in :data:`DESCRIPTIONS`.
    """
    out: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        entry: dict[str, Any] = {"model": ErrorOut, "description": DESCRIPTIONS[status]}
        if status in (429, 503):
            entry["headers"] = _RETRY_AFTER
        out[status] = entry
    return out
