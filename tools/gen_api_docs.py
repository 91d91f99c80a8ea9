"""The generated parts of the docs site's API reference: the OpenAPI document of the
gateway (docs/api/openapi.json) and the error-code table (docs/api/errors.md).

- ``openapi_json()``: ``gateway.app.create_app(...).openapi()``, the document the
  gateway serves at ``/openapi.json`` (no service is contacted to build it).
- ``render_errors()``: one row per machine code of ``cellwar.v1.codes.ErrorCode`` (the
  engine's and the services' codes) and ``gateway.errors.Code`` (the gateway's own), with
  the gRPC status (``services/common/errors.py``) and the HTTP status
  (``gateway/errors.py``) computed by the same tables the code uses.

Run ``python tools/gen_api_docs.py OUT_DIR`` to write both files; ``make docs`` runs it
through the mkdocs hook (tools/docs_hooks.py) on every build.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for entry in (ROOT, ROOT / "proto"):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

import grpc  # noqa: E402

from cellwar.v1.codes import ErrorCode  # noqa: E402
from gateway import errors as gw_errors  # noqa: E402
from services.common import errors as svc_errors  # noqa: E402

#: What each code means to a client (a code missing here still gets its row).
MEANINGS: dict[str, str] = {
    "MALFORMED": "the request does not fit the schema (not JSON, unknown field, a value "
    "out of range, stamp text that is not RLE, a cursor no page gave)",
    "INVALID_CONFIG": "a game config the rules refuse (e.g. a CellWar unit off the board)",
    "IDEMPOTENCY_KEY_REUSED": "an `Idempotency-Key` sent again with another body",
    "OUT_OF_ZONE": "a cell outside the player's drawing zone",
    "BUDGET_EXCEEDED": "more new cells than the budget left",
    "NOT_YOUR_TURN": "another player is drawing or moving",
    "WRONG_PHASE": "the action does not fit the game's phase (e.g. drawing while it runs)",
    "GAME_FULL": "every seat is taken",
    "GAME_FINISHED": "the game is over",
    "INVALID_ACTION": "a rule refuses the action",
    "NO_CHANGE": "the command would change nothing (placing on an own live cell, erasing "
    "an empty cell, a speed already set; engine version 2+)",
    "UNIT_ALREADY_ACTED": "this CellWar unit has acted this turn",
    "UNITS_NOT_DONE": "a CellWar factory that can still act has not (end of turn refused)",
    "UNKNOWN_PLAYER": "no such player in this game",
    "LEVEL_LOCKED": "a campaign level above the profile's `unlocked`",
    "ALREADY_QUEUED": "this profile already has a ticket searching in this queue",
    "ALREADY_MATCHED": "the ticket is being matched and can no longer be cancelled",
    "GAME_NOT_FOUND": "no game with this id",
    "PROFILE_NOT_FOUND": "a profile token whose profile is gone",
    "TICKET_NOT_FOUND": "no matchmaking ticket with this id",
    "UNAUTHORIZED": "the token is missing, bad, or dated in the future",
    "TOKEN_EXPIRED": "a player token older than `CELLWAR_TOKEN_MAX_AGE_S` (renew it with "
    "`POST /game/{id}/token` while it is valid, else join again)",
    "FORBIDDEN": "a token of another game, or a log that is private while the game runs",
    "NOT_FOUND": "no such route",
    "METHOD_NOT_ALLOWED": "the route exists with other methods (named in `Allow`)",
    "CONFLICT": "the session lost an append race five times in a row; retry",
    "RATE_LIMITED": "a rate limit; wait `Retry-After` seconds",
    "PAYLOAD_TOO_LARGE": "a body above `CELLWAR_MAX_BODY_BYTES`",
    "REQUEST_TIMEOUT": "a body not fully arrived within `CELLWAR_BODY_READ_TIMEOUT_S` of "
    "the request's start (docs/security.md)",
    "BUSY": "too many replay or log reads at once; retry after `Retry-After` (1..3 s)",
    "SEQ_OUT_OF_RANGE": "a replay or fork `seq` beyond the game's last event",
    "UNAVAILABLE": "a backend is down or restarting; retry after `Retry-After` with the "
    "same `Idempotency-Key`",
    "GAME_BROKEN": "a stored log the rules cannot fold (a bug or an engine version change)",
    "INTERNAL": "a bug; the gateway's log has the details",
    "LOG_MISMATCH": "an imported log whose re-decided events differ from the recorded "
    "ones; `error.seq` names the first bad event",
    "UNKNOWN_ENGINE_VERSION": "an imported log written by an engine version this engine "
    "does not know",
    "NOT_YET_VISIBLE": "a delayed spectator asked for a game none of whose events is old "
    "enough yet",
    "UNKNOWN_FRAME_TYPE": "a game stream frame whose `type` is not `action` or `end_turn` "
    "(nothing applied; the socket stays open)",
}

#: HTTP status of the codes the gateway answers itself, beyond its table of framework
#: errors (``gateway.errors._CODE_BY_HTTP_STATUS``).
GATEWAY_HTTP_EXTRA: dict[str, int] = {
    "TOKEN_EXPIRED": 401,
    "MALFORMED": 422,
    "BUSY": 503,
    "SEQ_OUT_OF_RANGE": 409,
    "INTERNAL": 500,
    "BOT_SEATS_FULL": 429,
    "BOT_POLICY_UNAVAILABLE": 409,
    "POLICY_NOT_FOR_KIND": 409,
    "UNKNOWN_FRAME_TYPE": 422,
}


def gateway_http() -> dict[str, int]:
    """HTTP status of each code the gateway answers itself."""
    table = {code: status for status, code in gw_errors._CODE_BY_HTTP_STATUS.items()
             if status != 400}
    table.update(GATEWAY_HTTP_EXTRA)
    return table


def source_comments(path: Path) -> dict[str, str]:
    """``#:`` comments above the members of the enums in ``path``, by member name."""
    comments: dict[str, str] = {}
    pending: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if text.startswith("#:"):
            pending.append(text[2:].strip())
            continue
        name, sep, _ = text.partition(" = ")
        if sep and name.isupper() and pending:
            comments[name] = " ".join(pending)
        pending = []
    return comments


def openapi_document() -> dict:
    """The gateway's OpenAPI document, as served at ``/openapi.json``."""
    from gateway.app import create_app
    from services.common.settings import Settings

    settings = Settings(secret="docs-" + "x" * 40, web_dir="/nonexistent")
    return create_app(settings).openapi()


def openapi_json() -> str:
    """:func:`openapi_document` as indented JSON (keys in the app's order)."""
    return json.dumps(openapi_document(), indent=2, ensure_ascii=False) + "\n"


def grpc_status(code: str) -> grpc.StatusCode:
    """The gRPC status a service answers ``code`` with (services/common/errors.py)."""
    return svc_errors._STATUS.get(code, grpc.StatusCode.FAILED_PRECONDITION)


def http_status(code: str) -> int:
    """The HTTP status the gateway answers a service's ``code`` with (gateway/errors.py
    ``from_rpc_error``)."""
    status = grpc_status(code)
    http = gw_errors.HTTP_STATUS_BY_GRPC.get(status, 500)
    if status == grpc.StatusCode.INVALID_ARGUMENT and code not in gw_errors.SCHEMA_STATUS_CODES:
        http = 409
    return http


def error_rows() -> list[tuple[str, str, str, str, str]]:
    """``(code, source, gRPC status, HTTP status, meaning)`` for every machine code."""
    rows = []
    gateway_codes = {c.value for c in gw_errors.Code}
    service_codes = {c.value for c in ErrorCode}
    own = gateway_http()
    comments = source_comments(ROOT / "proto" / "cellwar" / "v1" / "codes.py")
    comments.update(source_comments(ROOT / "gateway" / "errors.py"))
    for code in sorted(service_codes | gateway_codes):
        by_service = code in service_codes and (
            code not in gateway_codes or code in svc_errors._STATUS
        )
        if by_service:
            grpc_text = grpc_status(code).name
            http = str(http_status(code))
            if code in gateway_codes and own.get(code, int(http)) != int(http):
                http = f"{own[code]} (gateway); {http} from a service"
            source = "services" + (" + gateway" if code in gateway_codes else "")
        else:
            grpc_text = "—"
            http = str(own.get(code, 500))
            source = "gateway"
        meaning = MEANINGS.get(code) or comments.get(code) or "—"
        rows.append((code, source, grpc_text, http, meaning))
    return rows


def render_errors() -> str:
    """The Markdown page of the error codes."""
    lines = [
        "# Error codes",
        "",
        "<!-- Generated by tools/gen_api_docs.py from cellwar.v1.codes.ErrorCode and",
        "     gateway.errors.Code on every `make docs`; do not edit. -->",
        "",
        "Every error leaves the gateway as",
        '`{"error": {"code": "OUT_OF_ZONE", "message": "…"}}` (plus `"seq"` when it is',
        "about one event of an imported log). The machine code travels unchanged: the",
        "engine raises `engine.GameError(code)`, a service answers a gRPC status with the",
        "trailing metadata `cellwar-error-code: <CODE>` (`services/common/errors.py`), and",
        "the gateway picks the HTTP status (`gateway/errors.py`). On a WebSocket an error",
        'of the socket is one `{"type": "error", "error": {...}}` frame, then the close code',
        "4000 + the HTTP status (4401, 4403, 4404, 4503); a refused command frame of the game",
        'stream is one `{"type": "error", "id", "status", "error": {...}}` frame with REST\'s',
        "status and code, and the socket stays open ([WebSocket protocol](websocket.md#commands)).",
        "",
        "422 means exactly \"does not fit the OpenAPI schema\": the gateway checks every",
        "request against the schema before calling a service, so a service's",
        "`INVALID_ARGUMENT` about a request that fitted it is answered 409 with its code",
        "kept — except `IDEMPOTENCY_KEY_REUSED`, which stays 422. 503 always carries",
        "`Retry-After`: retry it (with the same `Idempotency-Key`), it is never final.",
        "",
        "| code | from | gRPC status | HTTP | meaning |",
        "| --- | --- | --- | --- | --- |",
    ]
    for code, source, grpc_text, http, meaning in error_rows():
        lines.append(f"| `{code}` | {source} | {grpc_text} | {http} | {meaning} |")
    lines.append("")
    return "\n".join(lines)


def _write(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Write ``openapi.json`` and ``errors.md`` into ``argv[0]`` (default docs/api)."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else ROOT / "docs" / "api"
    _write(out / "openapi.json", openapi_json())
    _write(out / "errors.md", render_errors())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
