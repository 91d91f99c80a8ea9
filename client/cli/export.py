"""``cellwar export``: a game's event log through the REST API into a JSON Lines file.

Reads ``GET /game/{id}/events`` (docs/api/index.md "Games"): without a token the spectator's
log (everyone's once the game is finished; 403 ``FORBIDDEN`` while a CellWar game runs or a
Life game is in placement), with a player's token that player's filtered log (no
``state_hash``; ``cellwar verify`` refuses such a file). The request also asks for
``format=jsonl`` (docs/architecture/replay-tools.md "Log files over REST"): a server that
streams JSON Lines is read line by line, one that answers the ``{"events": [...]}`` document
(today's gateway) is read whole; both give the same file, in the exact REST shape, one event
per line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from client.logfile import LogErrorCode, LogFormatError, check_event, parse_events, write_log
from client.sdk import ApiError

#: Seconds to wait for the server (connect and between bytes).
TIMEOUT_S = 60.0
#: Content types of a JSON Lines answer.
JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/x-jsonlines")


@dataclass(frozen=True)
class ExportResult:
    """What ``export`` wrote.

    Attributes:
        events: number of events written.
        filtered: True when the events carry no ``state_hash`` (a player's filtered log).
        last_type: type of the last event (``GameFinished`` for a finished game).
    """

    events: int
    filtered: bool
    last_type: str


def _api_error(response: httpx.Response) -> ApiError:
    try:
        err = response.json()["error"]
        return ApiError(response.status_code, str(err["code"]), str(err["message"]))
    except (ValueError, KeyError, TypeError):
        return ApiError(response.status_code, "HTTP_ERROR", response.text[:500])


def fetch_events(
    base_url: str,
    game_id: str,
    *,
    token: str | None = None,
    from_seq: int = 0,
    on_bytes: Callable[[int, int | None], None] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> Iterator[dict[str, Any]]:
    """The events of ``game_id`` from the server at ``base_url``, in log order.

    Args:
        base_url: e.g. ``http://localhost:8000``.
        game_id: the game.
        token: a player token (``Authorization: Bearer``) for a player's log; None for
            the spectator's.
        from_seq: first seq (0 or 1: the whole log).
        on_bytes: called with (bytes received so far, Content-Length or None).
        transport: an httpx transport (tests).

    Raises:
        ApiError: the server answered an error (404 ``GAME_NOT_FOUND``, 403
            ``FORBIDDEN``, 401 ...).
        httpx.HTTPError: the server cannot be reached.
        LogFormatError: the answer is not a log.
    """
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    path = f"/game/{quote(game_id, safe='')}/events"
    params = {"from_seq": from_seq, "format": "jsonl"}
    with (
        httpx.Client(base_url=base_url.rstrip("/"), timeout=TIMEOUT_S, transport=transport) as http,
        http.stream("GET", path, params=params, headers=headers) as response,
    ):
        if not response.is_success:
            response.read()
            raise _api_error(response)
        length = response.headers.get("content-length")
        total = int(length) if length and length.isdigit() else None
        received = 0
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype in JSONL_TYPES:
            lineno = 0
            for line in response.iter_lines():
                lineno += 1
                received += len(line) + 1
                if on_bytes is not None:
                    on_bytes(received, total)
                if line.strip():
                    yield check_event(_loads(line, lineno), f"line {lineno}")
            return
        chunks = []
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            received += len(chunk)
            if on_bytes is not None:
                on_bytes(received, total)
        yield from parse_events(b"".join(chunks).decode("utf-8"), source="the server's answer")


def _loads(line: str, lineno: int) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise LogFormatError(LogErrorCode.NOT_JSON, f"not JSON: {exc.msg}", f"line {lineno}", "the server's answer") from None


def export_log(
    base_url: str,
    game_id: str,
    output: str,
    *,
    token: str | None = None,
    on_bytes: Callable[[int, int | None], None] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> ExportResult:
    """Write the log of ``game_id`` to ``output`` as JSON Lines (``"-"``: standard
    output). A file is written atomically: on any error nothing is left at ``output``.

    Raises:
        ApiError, httpx.HTTPError, LogFormatError: see :func:`fetch_events`.
        OSError: ``output`` cannot be written.
    """
    seen = {"filtered": False, "last": ""}

    def events() -> Iterator[dict[str, Any]]:
        for event in fetch_events(base_url, game_id, token=token, on_bytes=on_bytes, transport=transport):
            if "state_hash" not in event:
                seen["filtered"] = True
            seen["last"] = event["type"]
            yield event

    n = write_log(events(), output)
    return ExportResult(n, bool(seen["filtered"]), str(seen["last"]))
