"""The decision about a match being formed: ``m.<match_id>`` in ``MATCH_TICKETS``,
``committed`` (with the whole match) or ``aborted``, written once with ``create``, so
whoever writes it first decides for ever (services/matchmaker/service.py, step 4b).

Both the forming of a match (it commits) and a cancel or a recovery (they abort a match
not yet decided) go through :meth:`Decisions.decide`.
"""

from __future__ import annotations

from typing import Any

from services.common.errors import ServiceError
from services.matchmaker.domain import MatchErrorCode
from services.matchmaker.store import (
    MAX_ATTEMPTS,
    Conflict,
    EventSink,
    KvStore,
    MatchEvent,
    decision_key,
)


class DecisionState:
    """Values of ``state`` in a match decision ``m.<match_id>``."""

    COMMITTED = "committed"
    ABORTED = "aborted"


class Decisions:
    """Write-once decisions of matches.

    Args:
        tickets: the ``MATCH_TICKETS`` bucket.
        events: the audit trail (``MatchAborted``).
    """

    def __init__(self, tickets: KvStore, events: EventSink) -> None:
        self.tickets = tickets
        self.events = events

    async def get(self, match_id: str) -> dict[str, Any] | None:
        """The decision of ``match_id`` (None: not decided). Raises ServiceError UNAVAILABLE."""
        existing = await self.tickets.get(decision_key(match_id))
        return existing[0] if existing else None

    async def decide(self, match_id: str, state: str, body: dict[str, Any]) -> dict[str, Any]:
        """Write the decision of ``match_id`` once (``create``): ``{**body, "state",
        "match_id"}``. Returns the decision that holds (ours, or the one written first).

        Raises:
            ServiceError: ``CONFLICT`` (no decision could be written nor read),
                ``UNAVAILABLE``.
        """
        key = decision_key(match_id)
        for _ in range(MAX_ATTEMPTS):
            value = {**body, "state": state, "match_id": match_id}
            try:
                await self.tickets.create(key, value)
                if state == DecisionState.ABORTED:
                    self.events.publish(MatchEvent.MATCH_ABORTED, {"match_id": match_id}, f"ma-{match_id}")
                return value
            except Conflict:
                existing = await self.tickets.get(key)
                if existing is not None:
                    return existing[0]
        raise ServiceError(MatchErrorCode.CONFLICT, f"match {match_id}: no decision could be read")
