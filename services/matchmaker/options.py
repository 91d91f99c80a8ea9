"""Tuning of one matchmaker instance (:class:`MatchmakerOptions`), read by every module
of the service layer."""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, replace

from services.common.settings import Settings
from services.matchmaker import domain


@dataclass(frozen=True)
class MatchmakerOptions:
    """Tuning of one matchmaker instance.

    Attributes:
        interval_s: pause between two matching steps (seconds).
        ticket_ttl_s: a ticket expires after searching this long (seconds; 300 by default).
        claim_timeout_s: a claim this old (seconds) whose forming instance has not
            finished is recovered by any instance.
        concurrency: matches this instance forms at once.
        instance_id: written into claims (who formed a match); default host-pid-random.
    """

    interval_s: float = 0.1
    ticket_ttl_s: float = domain.TICKET_TTL_S
    claim_timeout_s: float = 10.0
    concurrency: int = 32
    instance_id: str = ""

    @classmethod
    def from_settings(cls, settings: Settings) -> MatchmakerOptions:
        """The options of ``settings`` (``matchmaker_interval_s``, ``ticket_ttl_s``,
        ``match_claim_timeout_s``, ``matchmaker_concurrency``)."""
        return cls(
            interval_s=settings.matchmaker_interval_s,
            ticket_ttl_s=settings.ticket_ttl_s,
            claim_timeout_s=settings.match_claim_timeout_s,
            concurrency=settings.matchmaker_concurrency,
        )

    def with_instance_id(self) -> MatchmakerOptions:
        """These options with an instance id (``host-pid-random`` when none was given)."""
        if self.instance_id:
            return self
        return replace(self, instance_id=f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}")
