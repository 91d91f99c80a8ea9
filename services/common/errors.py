"""The one place that maps machine error codes to gRPC status codes and back.

A machine code (``OUT_OF_ZONE``, ``GAME_NOT_FOUND``, ...) travels unchanged from the
engine (``engine.GameError.code``) through gRPC (status + trailing metadata key
``cellwar-error-code``) to HTTP (``gateway/errors.py``). Table: docs/api/errors.md.
"""

from __future__ import annotations

from typing import NoReturn

import grpc

from cellwar.v1.codes import ErrorCode

#: Trailing metadata key that carries the machine code.
ERROR_CODE_KEY = "cellwar-error-code"
#: Trailing metadata key with which the engine service names its rules version.
ENGINE_VERSION_KEY = "cellwar-engine-version"
#: Trailing metadata key with the seq of the event an error is about (an imported log
#: refused with ``LOG_MISMATCH``); the gateway adds it to the error body as ``seq``.
ERROR_SEQ_KEY = "cellwar-error-seq"

#: Codes whose status is not the default FAILED_PRECONDITION (a rule refusing a command).
_STATUS: dict[str, grpc.StatusCode] = {
    ErrorCode.MALFORMED: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.INVALID_CONFIG: grpc.StatusCode.INVALID_ARGUMENT,
    # An Idempotency-Key sent again with a different body (422, as Stripe answers).
    ErrorCode.IDEMPOTENCY_KEY_REUSED: grpc.StatusCode.INVALID_ARGUMENT,
    # An imported log the rules do not reproduce, or written by an unknown engine (422).
    ErrorCode.LOG_MISMATCH: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.UNKNOWN_ENGINE_VERSION: grpc.StatusCode.INVALID_ARGUMENT,
    # "spectators": "live" in a rated game's config (docs/spectators.md).
    ErrorCode.LIVE_SPECTATORS_RATED: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.GAME_NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    ErrorCode.PROFILE_NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    # Matchmaking (services/matchmaker): an unknown ticket id.
    ErrorCode.TICKET_NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    ErrorCode.UNAUTHORIZED: grpc.StatusCode.UNAUTHENTICATED,
    ErrorCode.FORBIDDEN: grpc.StatusCode.PERMISSION_DENIED,
    ErrorCode.CONFLICT: grpc.StatusCode.ABORTED,
    ErrorCode.RATE_LIMITED: grpc.StatusCode.RESOURCE_EXHAUSTED,
    ErrorCode.UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
    # A stored log the rules cannot fold (a bug or an engine version change).
    ErrorCode.GAME_BROKEN: grpc.StatusCode.INTERNAL,
    ErrorCode.INTERNAL: grpc.StatusCode.INTERNAL,
}

#: Fallback code when a status arrives without the metadata (e.g. from grpc itself).
_CODE_BY_STATUS: dict[grpc.StatusCode, str] = {
    grpc.StatusCode.INVALID_ARGUMENT: ErrorCode.MALFORMED,
    grpc.StatusCode.NOT_FOUND: ErrorCode.GAME_NOT_FOUND,
    grpc.StatusCode.UNAUTHENTICATED: ErrorCode.UNAUTHORIZED,
    grpc.StatusCode.PERMISSION_DENIED: ErrorCode.FORBIDDEN,
    grpc.StatusCode.ABORTED: ErrorCode.CONFLICT,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ErrorCode.RATE_LIMITED,
    grpc.StatusCode.UNAVAILABLE: ErrorCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED: ErrorCode.UNAVAILABLE,
    grpc.StatusCode.CANCELLED: ErrorCode.UNAVAILABLE,
    grpc.StatusCode.FAILED_PRECONDITION: ErrorCode.INVALID_ACTION,
}


class ServiceError(Exception):
    """A command refused or failed inside a service, with its machine code.

    Attributes:
        code: machine code (see the module table), e.g. ``"GAME_NOT_FOUND"``.
        message: a sentence for a person.
        seq: the event the error is about (an imported log's first bad seq), or None.
    """

    def __init__(self, code: str, message: str, seq: int | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.seq = seq


def status_for(code: str) -> grpc.StatusCode:
    """gRPC status of a machine code; rule codes not in the table are FAILED_PRECONDITION."""
    return _STATUS.get(code, grpc.StatusCode.FAILED_PRECONDITION)


async def abort(
    context: grpc.aio.ServicerContext, code: str, message: str, seq: int | None = None
) -> NoReturn:
    """Abort the current RPC with the status of ``code`` and the code in trailing metadata
    (and ``seq``, when the error is about one event, under :data:`ERROR_SEQ_KEY`).

    Raises:
        grpc.aio.AbortError: always (that is how grpc.aio ends the RPC).
    """
    metadata: tuple[tuple[str, str], ...] = ((ERROR_CODE_KEY, str(code)),)
    if seq is not None:
        metadata += ((ERROR_SEQ_KEY, str(int(seq))),)
    context.set_trailing_metadata(metadata)
    await context.abort(status_for(code), message)


def error_seq_from_rpc(exc: grpc.aio.AioRpcError) -> int | None:
    """The event seq a failed call's error is about (:data:`ERROR_SEQ_KEY`), or None."""
    for key, value in exc.trailing_metadata() or ():
        if key == ERROR_SEQ_KEY:
            try:
                return int(value)
            except (TypeError, ValueError):
                return None
    return None


def error_from_rpc(exc: grpc.aio.AioRpcError) -> tuple[str, str]:
    """``(code, message)`` of a failed call: the ``cellwar-error-code`` trailing metadata,
    else a code derived from the status (UNAVAILABLE → ``"UNAVAILABLE"``, ...)."""
    for key, value in exc.trailing_metadata() or ():
        if key == ERROR_CODE_KEY:
            return str(value), exc.details() or ""
    return _CODE_BY_STATUS.get(exc.code(), ErrorCode.INTERNAL), exc.details() or str(exc.code())


def said_by_service(exc: grpc.RpcError) -> bool:
    """Whether the called service answered the call itself (its error code in the
    trailing metadata), not gRPC for it: unreachable, a deadline that ran out, a broken
    stream. gRPC's own text names addresses and socket errors, which are for the
    operator's log, not for clients."""
    if not isinstance(exc, grpc.aio.AioRpcError):
        return False
    return any(key == ERROR_CODE_KEY for key, _ in exc.trailing_metadata() or ())
