"""The one gateway module that maps errors to HTTP: gRPC status → HTTP status + JSON body.

Every error leaves the gateway as ``{"error": {"code": "OUT_OF_ZONE", "message": "…"}}``.
The machine code travels unchanged from the engine through the session's trailing
metadata (``cellwar-error-code``, read by :func:`services.common.errors.error_from_rpc`);
this module only picks the HTTP status (table: docs/api/errors.md, generated from these tables):

=====================  ====
gRPC status            HTTP
=====================  ====
INVALID_ARGUMENT       422  (only IDEMPOTENCY_KEY_REUSED; other codes 409: see below)
FAILED_PRECONDITION    409
NOT_FOUND              404
UNAUTHENTICATED        401
PERMISSION_DENIED      403
ABORTED                409
RESOURCE_EXHAUSTED     429
UNAVAILABLE            503  (also an unreachable session, a deadline that ran out)
anything else          500
=====================  ====

The request is checked against the OpenAPI schema before any service is called (422
``MALFORMED``), so an INVALID_ARGUMENT from a service is about a request that fits the
schema and is refused by the rules (cross-field config checks, an action of another
game kind, a replay beyond the last event): it is answered 409 with its code kept, and
422 means exactly "does not fit the published schema" (docs/api/index.md "Errors";
checked with schemathesis).

:func:`install_error_handlers` registers the handlers on an app: :class:`ApiError`,
gRPC errors, FastAPI's request validation errors (422 ``MALFORMED``) and Starlette's
``HTTPException`` (unknown route, wrong method, 413 from gateway/limits.py; its 400 for
a body that does not parse becomes 422 ``MALFORMED``).
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import Any

import grpc
import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from services.common.errors import error_from_rpc, error_seq_from_rpc, said_by_service

log = structlog.get_logger("gateway.errors")

class Code(StrEnum):
    """Machine codes the gateway itself answers (the others come from the services)."""

    UNAUTHORIZED = "UNAUTHORIZED"
    TOKEN_EXPIRED = "TOKEN_EXPIRED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    MALFORMED = "MALFORMED"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    REQUEST_TIMEOUT = "REQUEST_TIMEOUT"
    RATE_LIMITED = "RATE_LIMITED"
    BUSY = "BUSY"
    SEQ_OUT_OF_RANGE = "SEQ_OUT_OF_RANGE"
    #: A game stream frame whose ``type`` is not a command the server knows (``action``,
    #: ``end_turn``; docs/api/websocket.md): nothing is applied, the socket stays open (422).
    UNKNOWN_FRAME_TYPE = "UNKNOWN_FRAME_TYPE"
    UNAVAILABLE = "UNAVAILABLE"
    INTERNAL = "INTERNAL"
    # bot seats, answered by the bot runner through the gateway (docs/bot-seats.md)
    #: The bot runner plays as many bot seats as it may (``CELLWAR_BOTS_MAX_SEATS``; 429).
    BOT_SEATS_FULL = "BOT_SEATS_FULL"
    #: A bot policy the runner cannot play now: ``llm`` without a model server (409).
    BOT_POLICY_UNAVAILABLE = "BOT_POLICY_UNAVAILABLE"
    #: A bot policy that does not play this kind of game: ``trained`` in Life (409).
    POLICY_NOT_FOR_KIND = "POLICY_NOT_FOR_KIND"


#: HTTP status of each gRPC status code (docs/api/errors.md).
HTTP_STATUS_BY_GRPC: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.INVALID_ARGUMENT: 422,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 503,
}

#: Machine code of an HTTP error raised by the framework itself (no route, wrong method).
_CODE_BY_HTTP_STATUS: dict[int, str] = {
    400: "MALFORMED",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    408: "REQUEST_TIMEOUT",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    422: "MALFORMED",
    429: "RATE_LIMITED",
    503: "UNAVAILABLE",
}

#: Codes of INVALID_ARGUMENT that stay 422: an Idempotency-Key sent again with another
#: body (as the IETF Idempotency-Key draft answers it).
SCHEMA_STATUS_CODES = frozenset({"IDEMPOTENCY_KEY_REUSED"})

#: WebSocket close code of an error: 4000 + the HTTP status (4401, 4403, 4404, 4503, ...).
WS_CLOSE_BASE = 4000


class ApiError(Exception):
    """An error answered as HTTP ``status`` + ``{"error": {"code", "message"}}``.

    Attributes:
        status: HTTP status code (401, 403, 404, 409, 422, 429, 503, 500).
        code: machine code, e.g. ``"UNAUTHORIZED"``, ``"OUT_OF_ZONE"``.
        message: a sentence for a person.
        seq: the event the error is about (an imported log's first bad seq), or None.
    """

    def __init__(self, status: int, code: str, message: str, seq: int | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.seq = seq

    def body(self) -> dict[str, Any]:
        """The JSON error body ``{"error": {"code", "message"}}`` (+ ``"seq"`` when the
        error is about one event)."""
        body = error_body(self.code, self.message)
        if self.seq is not None:
            body["error"]["seq"] = self.seq
        return body

    @property
    def ws_close_code(self) -> int:
        """WebSocket close code of this error: 4000 + HTTP status (e.g. 4401, 4404)."""
        return WS_CLOSE_BASE + self.status


def error_body(code: str, message: str) -> dict[str, Any]:
    """The JSON error body of every gateway error."""
    return {"error": {"code": code, "message": message}}


def from_rpc_error(exc: grpc.RpcError) -> ApiError:
    """The :class:`ApiError` of a failed gRPC call (status → HTTP, code from metadata).

    A gRPC error without trailing metadata (e.g. the session is unreachable) gets the
    code derived from its status (``UNAVAILABLE`` → 503 ``"UNAVAILABLE"``).
    """
    status_code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
    seq = None
    if isinstance(exc, grpc.aio.AioRpcError):
        code, message = error_from_rpc(exc)
        seq = error_seq_from_rpc(exc)
    else:  # a sync-API RpcError: same information through the Call interface
        code, message = "INTERNAL", str(exc)
    http = HTTP_STATUS_BY_GRPC.get(status_code, 500)
    if status_code == grpc.StatusCode.INVALID_ARGUMENT and code not in SCHEMA_STATUS_CODES:
        # The gateway checked the request against its OpenAPI schema before the call, so
        # what a service refuses now fits the schema: the rules refuse it (409), e.g. a
        # CellWar unit off this board (INVALID_CONFIG). The code is kept.
        http = 409
    if http == 503 and code not in ("UNAVAILABLE", "RATE_LIMITED"):
        code = "UNAVAILABLE"
    if http == 503 and not said_by_service(exc):
        # gRPC's own text of a transport failure names the service's address and the
        # socket error: the operator's to read (logged), not a client's. A 503 the
        # session said itself keeps its message (it names what is unavailable).
        log.info("session_unreachable", grpc_status=status_code.name, detail=message)
        message = SESSION_UNREACHABLE
    return ApiError(http, code, message, seq)


#: The message of a 503 for a session call gRPC failed (unreachable, no answer in time).
SESSION_UNREACHABLE = "the session service is unavailable: it cannot be reached or did not answer in time"


def summarise_validation_errors(errors: list[dict[str, Any]], limit: int = 5) -> str:
    """One readable line from pydantic's error list, e.g. ``body.cells: Field required``."""
    parts = []
    for err in errors[:limit]:
        if err.get("type") == "json_invalid":  # loc ("body", character): not a field
            parts.append(_not_json(err))
            continue
        loc = ".".join(str(p) for p in err.get("loc", ()) if p not in ("function-after",))
        msg = str(err.get("msg", "invalid")) + _got(err)
        parts.append(f"{loc}: {msg}" if loc else msg)
    more = len(errors) - limit
    if more > 0:
        parts.append(f"(+{more} more)")
    return "; ".join(parts) or "the request does not fit the schema"


#: Longest shown input of a refused value (characters of its repr).
_GOT_CHARS = 60


def _not_json(err: dict[str, Any]) -> str:
    """``body: not valid JSON (Expecting value at character 0)``: FastAPI's decode error,
    whose location is the body and the character where the decoder stopped."""
    loc = tuple(err.get("loc", ()))
    where = f" at character {loc[1]}" if len(loc) > 1 and isinstance(loc[1], int) else ""
    reason = str((err.get("ctx") or {}).get("error", "")).strip()
    detail = f"{reason}{where}".strip()
    return f"{loc[0] if loc else 'body'}: not valid JSON" + (f" ({detail})" if detail else "")


#: What an action body that is neither shape was, in its refusal (the discriminator's
#: error, gateway/schemas.py ``ActionBody``).
_SHAPES = {type(None): "null", list: "an array", str: "a string", int: "a number", float: "a number"}


def _got_action(value: Any) -> str:
    if isinstance(value, dict):
        if "type" in value:
            return f" (got type {_clip(json.dumps(value['type'], default=str))})"
        return " (got an object with neither)"
    if isinstance(value, bool):
        return " (got a boolean)"
    return f" (got {_SHAPES.get(type(value), type(value).__name__)})"


def _got(err: dict[str, Any]) -> str:
    """`` (got 1000000000000)``: the refused value when it is a plain scalar, shown as
    sent (numbers in full up to :data:`_GOT_CHARS` characters); for an action body that
    is neither shape, its ``type`` or what it was."""
    value = err.get("input")
    if err.get("type") == "invalid_action":
        return _got_action(value)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return ""
    return f" (got {_clip(repr(value))})"


def _clip(text: str) -> str:
    """``text`` cut to :data:`_GOT_CHARS` characters (the last one ``…`` when cut)."""
    return text if len(text) <= _GOT_CHARS else text[: _GOT_CHARS - 1] + "…"


#: ``Retry-After`` of a 503 ``UNAVAILABLE`` (seconds): a fault is retryable, never final
#: (a paused node, a quorum loss, a write still in flight; docs/faults.md).
UNAVAILABLE_RETRY_AFTER_S = 1


def _retry_after(status: int) -> dict[str, str] | None:
    return {"Retry-After": str(UNAVAILABLE_RETRY_AFTER_S)} if status == 503 else None


async def _api_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return JSONResponse(exc.body(), status_code=exc.status, headers=_retry_after(exc.status))


async def _rpc_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, grpc.RpcError)
    err = from_rpc_error(exc)
    if err.status >= 500:
        log.warning("session_call_failed", code=err.code, status=err.status, message=err.message)
    return JSONResponse(err.body(), status_code=err.status, headers=_retry_after(err.status))


async def _validation_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    return JSONResponse(
        error_body("MALFORMED", summarise_validation_errors(errors)), status_code=422
    )


def _unparsed(cause: BaseException | None) -> str:
    """The message of a body FastAPI could not parse (``cause``: what its JSON decoding
    raised); a number longer than Python's 4300-digit limit for ``int`` is named."""
    if isinstance(cause, ValueError) and "integer string conversion" in str(cause):
        return f"body: a number has more than {sys.get_int_max_str_digits()} digits"
    return "the request body could not be parsed (JSON in UTF-8, not nested too deeply)"


async def _http_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400:
        # FastAPI's "error parsing the body" (not UTF-8, nested too deep, ...): a body
        # that does not parse is MALFORMED, answered 422 like one that does not fit.
        return JSONResponse(error_body("MALFORMED", _unparsed(exc.__cause__)), status_code=422)
    code = _CODE_BY_HTTP_STATUS.get(exc.status_code, "INTERNAL" if exc.status_code >= 500 else "ERROR")
    message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    return JSONResponse(
        error_body(code, message), status_code=exc.status_code, headers=getattr(exc, "headers", None)
    )


async def _unexpected_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled_error", error=repr(exc))
    return JSONResponse(error_body("INTERNAL", "internal error"), status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    """Register every error handler on ``app`` so all errors share one JSON shape."""
    app.add_exception_handler(ApiError, _api_error_handler)
    app.add_exception_handler(grpc.RpcError, _rpc_error_handler)
    app.add_exception_handler(RequestValidationError, _validation_error_handler)
    app.add_exception_handler(StarletteHTTPException, _http_error_handler)
    app.add_exception_handler(Exception, _unexpected_error_handler)
