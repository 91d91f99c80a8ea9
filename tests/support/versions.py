"""Each player's view version as the engine's envelope computes it for a whole log
(engine/envelope.py): the number of events that player observed. A view's ``seq``, a Watch
frame's ``seq`` and a command reply's ``seq`` are that version (docs/api/index.md "Views and
`seq`")."""

from __future__ import annotations

import json
from typing import Any

from engine import envelope
from engine.envelope import Envelope


def _item(event: Any) -> tuple:
    if isinstance(event, dict):
        return (
            event["seq"],
            event["type"],
            event["actor"],
            event["payload"],
            event.get("engine_version") or None,
        )
    return (
        event.seq,
        event.type,
        event.actor,
        json.loads(event.payload or b"{}"),
        event.engine_version or None,
    )


def versions(events: list) -> tuple[int, ...]:
    """Versions after ``events`` (a whole log from ``GameCreated``: REST JSON dicts or
    ``cellwar.v1.Event`` messages), index = player id, 0 = the spectator."""
    _, env = envelope.fold(None, Envelope(), [_item(e) for e in events])
    return env.versions
