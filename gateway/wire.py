"""JSON answers built from the session's JSON bytes without parsing them again.

The session returns views as compact JSON bytes; wrapping them byte-wise keeps the
action round trip cheap (docs/benchmarks.md) while the answer stays the documented shape.
"""

from __future__ import annotations

import json

from fastapi.responses import Response


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
