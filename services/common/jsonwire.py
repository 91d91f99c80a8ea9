"""The JSON the session writes and reads: compact, key-sorted bytes, and event payloads.

One place, so views, payloads and command digests are byte-for-byte the same however
they were produced (a command digest compares bytes).
"""

from __future__ import annotations

import json
from typing import Any

from cellwar.v1 import events_pb2


def dumps(value: Any) -> bytes:
    """Compact, key-sorted UTF-8 JSON bytes."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()


def event_payload(event: events_pb2.Event) -> dict:
    """The JSON object in ``event.payload``; ``{}`` when it is empty, not JSON or not an
    object (the session never fails on a payload it only peeks into)."""
    try:
        data = json.loads(event.payload or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
