"""A player's own numbering of the events it observes (docs/architecture/contracts.md "Who
observes an event; a player's own numbering": a view's ``seq`` is the player's own
version, and a filtered log is numbered in the player's own sequence).

A player *observes* an event when the kind's ``observers`` rule names it
(:func:`engine.api.observers`): the event is public (a turn passing, a join, a removal,
a rollback, the finish, ...) or it changed what that player's view shows. The player's
version is the number of events it has observed; after each observed event it is the
``seq`` of that event in the player's filtered log. Nothing in a filtered log tells how
many events were left out: items are numbered 1..k without gaps, and a ``RolledBack``
names the player's own version at its ``to_seq``. Each item also carries ``log_seq``,
the real per-game seq, for the session only (it copies ``time`` and ``engine_version``
from that event, then strips ``log_seq`` before answering).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class OwnNumbering:
    """Numbers the events one reader observes, 1, 2, ... (its own version), and maps real
    seqs to the reader's version at that seq (for ``RolledBack.to_seq``)."""

    def __init__(self) -> None:
        #: The reader's version after the last event seen (observed or not).
        self.version = 0
        self._at: dict[int, int] = {0: 0}

    def entry(self, event: Mapping[str, Any], payload: Mapping[str, Any]) -> dict[str, Any]:
        """The next item ``{"seq", "log_seq", "type", "actor", "payload"}`` of the filtered
        log: ``event`` (with its real ``seq``) was observed, shown as ``payload``."""
        self.version += 1
        return {
            "seq": self.version,
            "log_seq": int(event.get("seq", 0)),
            "type": str(event["type"]),
            "actor": int(event.get("actor", 0)),
            "payload": dict(payload),
        }

    def passed(self, event: Mapping[str, Any]) -> None:
        """Record the reader's version after ``event`` (call for every event, in order)."""
        self._at[int(event.get("seq", 0))] = self.version

    def version_at(self, seq: int) -> int:
        """The reader's version right after real seq ``seq`` (0 before the first event)."""
        if seq in self._at:
            return self._at[seq]
        earlier = [s for s in self._at if s <= seq]
        return self._at[max(earlier)] if earlier else 0


def rolled_back_payload(payload: Mapping[str, Any], numbering: OwnNumbering) -> dict[str, Any]:
    """A ``RolledBack`` as a reader may see it: ``{"to_seq"}`` in the reader's own numbering
    (its version at the real ``to_seq``); the base64 ``state`` (the whole board) is left
    out."""
    return {"to_seq": numbering.version_at(int(payload.get("to_seq", 0)))}
