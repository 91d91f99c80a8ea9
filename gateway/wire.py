"""JSON answers and frames built from the session's JSON bytes without parsing them again.

The session returns views as compact JSON bytes; wrapping them byte-wise keeps the
action round trip cheap (docs/benchmarks.md) while the answer stays the documented shape.
The game stream's command replies (gateway/ws_commands.py) are built here too, with
orjson for the parts the gateway writes itself.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import Response

from gateway.errors import UNAVAILABLE_RETRY_AFTER_S, ApiError


def _view_bytes(view: bytes) -> bytes:
    return view if view else b"null"


def seq_view_json(seq: int, view: bytes, type_: str | None = None) -> bytes:
    """``{"seq": n, "view": {...}}`` (with ``"type"`` first when given) as bytes."""
    head = b'{"type":' + orjson.dumps(type_) + b"," if type_ is not None else b"{"
    return head + b'"seq":' + str(int(seq)).encode() + b',"view":' + _view_bytes(view) + b"}"


def seq_view_response(seq: int, view: bytes, status_code: int = 200) -> Response:
    """An HTTP answer ``{"seq", "view"}``."""
    return Response(seq_view_json(seq, view), status_code=status_code, media_type="application/json")


def raw_json_response(body: bytes, status_code: int = 200) -> Response:
    """An HTTP answer whose body is already JSON bytes."""
    return Response(body or b"null", status_code=status_code, media_type="application/json")


def result_frame(command_id: str, seq: int, view: bytes) -> str:
    """The stream's reply to a command that was applied (or found applied):
    ``{"type": "result", "id": KEY, "seq": n, "view": {...}}``, the view's bytes as the
    session gave them."""
    return (
        b'{"type":"result","id":' + orjson.dumps(command_id) + b',"seq":' + str(int(seq)).encode()
        + b',"view":' + _view_bytes(view) + b"}"
    ).decode()


def valid_actions_frame(request_id: str, actions: bytes) -> str:
    """The stream's answer to a ``valid_actions`` frame: ``{"type": "valid_actions", "id":
    KEY, "actions": [...]}`` (REST's ``GET /game/{id}/valid_actions`` body with the type
    and id), the actions' JSON array as the session gave it."""
    return (b'{"type":"valid_actions","id":' + orjson.dumps(request_id) + b',"actions":' + actions + b"}").decode()


def error_frame(command_id: str | None, err: ApiError, retry_after_s: int | None = None) -> str:
    """The stream's reply to a command that was refused: ``{"type": "error", "id": KEY |
    null, "status": HTTP status, "error": {"code", "message"}}`` (+ ``"seq"`` in
    ``error`` when the error names an event; + ``"retry_after"`` seconds for 429 and 503,
    as REST's ``Retry-After``: ``retry_after_s``, else REST's 503 one,
    :data:`gateway.errors.UNAVAILABLE_RETRY_AFTER_S`)."""
    frame: dict[str, Any] = {"type": "error", "id": command_id, "status": err.status, **err.body()}
    if err.status in (429, 503):
        frame["retry_after"] = retry_after_s if retry_after_s is not None else UNAVAILABLE_RETRY_AFTER_S
    return orjson.dumps(frame).decode()
