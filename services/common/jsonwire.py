"""The JSON the session writes and reads: compact, key-sorted bytes, and event payloads.

One place, so views, payloads and command digests are byte-for-byte the same however
they were produced (a command digest compares bytes).
"""

from __future__ import annotations

import json
import re
from datetime import UTC
from typing import Any

import orjson

from cellwar.v1 import events_pb2

#: Deepest nesting of lists/objects an event read from outside (an imported or verified
#: log) may have: recorded events nest a few levels; a deeper one is refused before
#: anything recurses into it.
MAX_EVENT_DEPTH = 32

#: A recorded ``state_hash``: the sha256 of the canonical state, 64 lowercase hex
#: characters (``fullmatch`` it). The gateway's import and the log tools check it alike.
STATE_HASH = re.compile(r"[0-9a-f]{64}")

#: What a JSON number too long for Python's int (``sys.get_int_max_str_digits``, 4,300
#: digits) is called: ``json.loads`` raises a plain ValueError for it, not a decode error.
LONG_NUMBER = "a number of more than 4,300 digits"

#: The fields of a ``{"events": [...], "origin"?: {...}}`` log document.
LOG_DOCUMENT_FIELDS = frozenset({"events", "origin"})


def unknown_log_fields(doc: dict[str, Any]) -> str | None:
    """Why a log document ``doc`` is refused for fields it may not have (the gateway's
    import and the log tools refuse alike), or None."""
    unknown = sorted(set(doc) - LOG_DOCUMENT_FIELDS)
    return f"unknown fields in the log document: {unknown} (it has events and origin)" if unknown else None


#: An ``Idempotency-Key`` header: 1..200 printable ASCII characters without spaces (the
#: gateway's check, which the command-line tools make before sending one).
IDEMPOTENCY_KEY_PATTERN = r"^[\x21-\x7e]{1,200}$"


def nested_deeper(value: Any, limit: int = MAX_EVENT_DEPTH) -> bool:
    """Whether JSON value ``value`` nests lists/objects deeper than ``limit`` levels
    (iterative: a hostile value cannot exhaust the stack here)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def dumps(value: Any) -> bytes:
    """Compact, key-sorted UTF-8 JSON bytes."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()


def view_dumps(value: Any) -> bytes:
    """A view as JSON on the hot path: compact, key-sorted, UTF-8 (orjson, several times
    json's speed; text as UTF-8, not ``\\u`` escapes, so not :func:`dumps`' bytes: a
    view is shown, never hashed). The engine renders views with it and the session
    merges its own keys in (services/session/domain/game.py ``merge_view``)."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def event_payload(event: events_pb2.Event) -> dict:
    """The JSON object in ``event.payload``; ``{}`` when it is empty, not JSON or not an
    object (the session never fails on a payload it only peeks into)."""
    try:
        data = json.loads(event.payload or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def event_json(event: events_pb2.Event) -> dict[str, Any]:
    """One event as the REST log shows it: ``seq, type, actor, payload`` (parsed JSON),
    ``time`` (ISO 8601, UTC), ``state_hash``, ``engine_version``. ``state_hash`` is left
    out when the session sent none (a fog-filtered CellWar log: a hash would leak)."""
    out = {
        "seq": event.seq,
        "type": event.type,
        "actor": event.actor,
        "payload": json.loads(event.payload) if event.payload else {},
        "time": event.time.ToDatetime(tzinfo=UTC).isoformat(),
        "state_hash": event.state_hash,
        "engine_version": event.engine_version,
    }
    if not event.state_hash:
        del out["state_hash"]
    return out
