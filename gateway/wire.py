"""JSON answers built from the session's JSON bytes without parsing them again.

The session returns views as compact JSON bytes; wrapping them byte-wise keeps the
action round trip cheap (DESIGN §8) while the answer stays the documented shape.
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

from fastapi.responses import Response

from cellwar.v1 import events_pb2


def _view_bytes(view: bytes) -> bytes:
    return view if view else b"null"


def seq_view_json(seq: int, view: bytes, type_: str | None = None) -> bytes:
    """``{"seq": n, "view": {...}}`` (with ``"type"`` first when given) as bytes."""
    head = b'{"type":' + json.dumps(type_).encode() + b"," if type_ is not None else b"{"
    return head + b'"seq":' + str(int(seq)).encode() + b',"view":' + _view_bytes(view) + b"}"


def seq_view_response(seq: int, view: bytes, status_code: int = 200) -> Response:
    """An HTTP answer ``{"seq", "view"}``."""
    return Response(seq_view_json(seq, view), status_code=status_code, media_type="application/json")


def raw_json_response(body: bytes, status_code: int = 200) -> Response:
    """An HTTP answer whose body is already JSON bytes."""
    return Response(body or b"null", status_code=status_code, media_type="application/json")


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
