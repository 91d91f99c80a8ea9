"""What both clients share and that does no I/O: errors, seats, URLs, request shapes, the
retry schedule, and the reading of stream and command frames (docs/api/websocket.md)."""

from __future__ import annotations

import functools
import json
import re
import ssl
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx
from websockets.exceptions import (
    ConnectionClosed,
    ConnectionClosedError,
    InvalidMessage,
    WebSocketException,
)

#: Default timeout of one HTTP request (seconds); also the longest wait of a command's
#: answer on the stream socket before it is sent again over REST.
DEFAULT_TIMEOUT_S = 30.0

#: Games asked per lobby page (the most ``GET /games`` gives).
LOBBY_PAGE = 200

#: The stream's subprotocol; the token rides beside it as ``bearer.<token>`` so it never
#: appears in a URL (gateway/routes/stream.py).
STREAM_SUBPROTOCOL = "cellwar.v1"

#: Ticket statuses after which a ticket never changes (docs/api/index.md "Matchmaking").
FINAL_TICKET_STATUSES = frozenset({"matched", "cancelled", "expired"})

#: First wait before a retry of an unavailable server (seconds); doubled up to RETRY_MAX_WAIT_S.
RETRY_FIRST_WAIT_S = 0.25
RETRY_MAX_WAIT_S = 2.0

#: Transport errors of a server that is restarting: nothing listens, or it closed the
#: connection under the request.
_RESTARTING = (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError)

#: What the command sockets and the async :meth:`wait_for_match` treat as "no socket
#: here": nothing listens, a proxy without WebSocket, a refused handshake, a timeout (an
#: OSError).
_NO_SOCKET = (OSError, WebSocketException)

#: ``on_retry(reason, wait_s)``: told before each wait of a retry.
RetryHook = Callable[[str, float], None]

#: Close codes of a stream socket that a restart or a fault ended, not the stream's end
#: (RFC 6455 section 7.4 and the IANA WebSocket close code registry): 1001 going away,
#: 1006 closed without a close frame (the server died, the network cut), 1011 a server
#: error, 1012 the service restarting, 1013 try again later; and 4503 (a backend of the
#: gateway unavailable, docs/api/websocket.md "Close codes"). Such a stream is opened
#: again while the client's ``retry_unavailable_s`` lasts, else it raises
#: ``ApiError(503, "UNAVAILABLE")``: never a silent end that reads as a final one.
REOPEN_CLOSE_CODES = frozenset({1001, 1006, 1011, 1012, 1013, 1014, 4503})
#: Closes that end a stream cleanly: 1000, and 1005 (a close frame without a code).
CLEAN_CLOSE_CODES = frozenset({1000, 1005})
#: A 1008 close's reason starts with the machine code of a limit (docs/api/websocket.md
#: "Close codes"): its HTTP status.
POLICY_STATUS = {"RATE_LIMITED": 429, "PAYLOAD_TOO_LARGE": 413}
#: Seconds one opening of a stream socket may take at most (less while a fault's retry
#: budget has less left).
OPEN_TIMEOUT_S = 30.0
#: ... and at least this long (a handshake on a loaded machine takes more than a few
#: milliseconds; a budget is overrun by at most this much).
OPEN_TIMEOUT_MIN_S = 1.0

#: Stream frames a command socket keeps for its reader (the oldest are dropped first;
#: ``finished`` is always kept, being the last).
MESSAGES_KEPT = 256


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS context every client of this process checks servers with: httpx's default
    (``httpx.create_ssl_context()``: certifi's CA bundle, or ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR`` as set when it is first asked for), built once. httpx builds one
    for each client it makes, ~30 ms of CPU each while OpenSSL 3 parses the bundle
    (encode/httpx#3627, encode/httpx#3473), which a program opening a client per game or
    per environment paid each time."""
    return httpx.create_ssl_context()


class ApiError(Exception):
    """An error answer of the CellWar API.

    Attributes:
        status: HTTP status (401, 403, 404, 409, 422, 429, 503, ...), or the WebSocket
            close code minus 4000 for a stream closed with an error.
        code: machine code, e.g. ``"OUT_OF_ZONE"``, ``"UNAUTHORIZED"``.
        message: the server's explanation.
        seq: the event the error is about (an imported log's first bad seq), or None.
    """

    def __init__(self, status: int, code: str, message: str, seq: int | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.seq = seq


@dataclass(frozen=True)
class Seat:
    """A joined player: keep ``token``, it is the seat.

    Attributes:
        game_id: the game.
        player_id: seat number (from 1); also the player's colour in Life.
        token: the signed player token (``Authorization: Bearer <token>``).
    """

    game_id: str
    player_id: int
    token: str


def _error_of(status: int, body: Any) -> ApiError:
    """The ApiError of ``{"error": {"code", "message", "seq"?}}``.

    Raises:
        KeyError, TypeError: ``body`` is not this API's error body.
    """
    err = body["error"]
    seq = err.get("seq")
    return ApiError(status, str(err["code"]), str(err["message"]), seq if isinstance(seq, int) else None)


def _raise_for_error(response: httpx.Response) -> None:
    """Raises the :class:`ApiError` of an error answer (``HTTP_ERROR`` when its body is not
    this API's: a proxy, another server); nothing for a success."""
    if response.is_success:
        return
    try:
        raise _error_of(response.status_code, response.json())
    except (ValueError, KeyError, TypeError):
        message = response.text.strip()[:500] or response.reason_phrase or "an answer with no body"
    raise ApiError(response.status_code, "HTTP_ERROR", message)


class _Retries:
    """Waits of one call's retries while the server is unavailable (a 503 answer, or a
    restarting server), for at most ``budget_s`` seconds; only for calls safe to repeat
    (GET, or a POST with its Idempotency-Key: the server applies it once)."""

    def __init__(self, budget_s: float, method: str, kwargs: dict[str, Any], on_retry: RetryHook | None) -> None:
        headers = kwargs.get("headers") or {}
        safe = method in ("GET", "HEAD") or "Idempotency-Key" in headers
        self.deadline = time.monotonic() + budget_s if safe and budget_s > 0 else None
        self.wait = RETRY_FIRST_WAIT_S
        self.on_retry = on_retry

    def after(self, response: httpx.Response) -> float | None:
        """None for an answer to return; the wait before the next try of a 503.

        Raises:
            ApiError: an error answer not to be retried (or the last 503).
        """
        reason = _unavailable(response)
        wait = self.next_wait(reason) if reason else None
        if wait is None:
            _raise_for_error(response)
        return wait

    def after_error(self, exc: Exception) -> float:
        """The wait before the next try after a transport error; re-raises ``exc`` when
        the call must fail now."""
        wait = self.next_wait(f"{type(exc).__name__}: {exc}")
        if wait is None:
            raise exc
        return wait

    def left(self) -> float | None:
        """Seconds left of the budget (None without one)."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def next_wait(self, reason: str) -> float | None:
        """Seconds to wait before the next try, None when the call must fail now."""
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            return None
        wait = min(self.wait, left)
        self.wait = min(self.wait * 2, RETRY_MAX_WAIT_S)
        if self.on_retry is not None:
            self.on_retry(reason, wait)
        return wait


def _unavailable(response: httpx.Response) -> str | None:
    """Why ``response`` is worth a retry (a 503), else None."""
    if response.status_code != 503:
        return None
    try:
        return f"503 {response.json()['error']['code']}"
    except (ValueError, KeyError, TypeError):
        return "503"


def _auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _post_headers(token: str | None, idempotency_key: str | None, profile_token: str | None = None) -> dict[str, str]:
    headers = _auth(token)
    headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
    if profile_token:
        headers["X-Profile-Token"] = profile_token
    return headers


def _cells(cells: Iterable[Sequence[int]]) -> list[list[int]]:
    return [[int(c[0]), int(c[1])] for c in cells]


def _stamp_action(x: Any, y: Any, pattern: str | None, rle: str | None, rotation: int) -> dict[str, Any]:
    """The JSON body of a stamp, checked here so a swapped argument fails at once
    (``stamp(game_id, token, x, y, pattern)``: coordinates first)."""
    if isinstance(x, bool) or not isinstance(x, int) or isinstance(y, bool) or not isinstance(y, int):
        raise TypeError(f"stamp(game_id, token, x, y, pattern): x and y must be ints, got {x!r}, {y!r}")
    if (pattern is None) == (rle is None):
        raise TypeError("stamp needs exactly one of pattern (a library id) or rle (RLE text)")
    action: dict[str, Any] = {"type": "stamp", "x": x, "y": y, "rotation": rotation}
    if rle is not None:
        action["rle"] = rle
    else:
        action["pattern"] = pattern
    return action


def _ws_url(base_url: str, path: str, query: str) -> str:
    parts = urlsplit(base_url)
    scheme = "wss" if parts.scheme == "https" else "ws"
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/") + path, query, ""))


def stream_url(base_url: str, game_id: str, token: str | None) -> str:
    """The WebSocket URL of a game's stream (``ws://`` or ``wss://``)."""
    query = f"token={quote(token, safe='')}" if token else ""
    return _ws_url(base_url, f"/game/{quote(game_id, safe='')}/stream", query)


def stream_subprotocols(token: str | None) -> list[str]:
    """The subprotocols to offer on a game's stream: ``cellwar.v1`` and, with a token,
    ``bearer.<token>``."""
    return [STREAM_SUBPROTOCOL, f"bearer.{token}"] if token else [STREAM_SUBPROTOCOL]


def spectate_url(base_url: str, game_id: str, delay_s: float | None = None) -> str:
    """The WebSocket URL of a delayed spectator's stream (``?spectate=1&delay_s=N``)."""
    query = "spectate=1" + (f"&delay_s={delay_s:g}" if delay_s is not None else "")
    return _ws_url(base_url, f"/game/{quote(game_id, safe='')}/stream", query)


def ticket_stream_url(base_url: str, ticket_id: str, token: str | None) -> str:
    """The WebSocket URL of a matchmaking ticket's stream (``ws://`` or ``wss://``); with
    ``token`` it is in the query (old style; the SDK itself offers it as a subprotocol)."""
    query = f"token={quote(token, safe='')}" if token else ""
    return _ws_url(base_url, f"/matchmaking/tickets/{quote(ticket_id, safe='')}/stream", query)


def _seat_of(ticket: dict[str, Any]) -> Seat:
    """The seat of a ticket that ended; raises ApiError when it ended without a match."""
    if ticket.get("status") == "matched" and ticket.get("match"):
        m = ticket["match"]
        return Seat(str(m["game_id"]), int(m["player_id"]), str(m["player_token"]))
    status = str(ticket.get("status", "")).upper()
    raise ApiError(409, f"TICKET_{status}", f"the ticket ended {ticket.get('status')}: {ticket.get('reason') or ''}")


def _jsonl_request(game_id: str, token: str | None, from_seq: int) -> tuple[str, str, dict[str, Any]]:
    """``(method, path, kwargs)`` of the event log as JSON Lines."""
    params = {"from_seq": from_seq, "format": "jsonl"}
    return "GET", f"/game/{game_id}/events", {"params": params, "headers": _auth(token)}


def _ws_options(subprotocols: list[str] | None, open_timeout: float = OPEN_TIMEOUT_S) -> dict[str, Any]:
    """``websockets`` connect options of every stream socket (either client)."""
    return {"max_size": None, "open_timeout": open_timeout, "subprotocols": subprotocols or [STREAM_SUBPROTOCOL]}


class _Frames:
    """Reads the JSON frames of a stream socket: an ``error`` frame is kept as the
    explanation of the close that follows it; a frame for which ``is_last(frame)`` holds
    ends the stream (``finished``; a ticket's final status)."""

    def __init__(self, is_last: Callable[[dict[str, Any]], bool]) -> None:
        self.is_last = is_last
        self.last_error: dict[str, Any] | None = None
        self.done = False

    def read(self, raw: str | bytes) -> dict[str, Any] | None:
        """The message to deliver, None for an error frame."""
        message = json.loads(raw)
        if message.get("type") == "error":
            self.last_error = message
            return None
        self.done = self.is_last(message)
        return message

    def close_error(self, code: int | None, reason: str | None = None) -> ApiError | None:
        """The ApiError of a socket's close, None for a clean one (:data:`CLEAN_CLOSE_CODES`,
        or no close seen). 4xxx: status ``code - 4000`` with the error frame's code and
        message (else the reason when it is a machine code); :data:`REOPEN_CLOSE_CODES`:
        503 ``UNAVAILABLE``; 1008: the limit's status (:data:`POLICY_STATUS`, else 400)
        and code; any other: 502 ``STREAM_CLOSED`` (never a silent end)."""
        if code is None or code in CLEAN_CLOSE_CODES:
            return None
        why = f"the stream closed with code {code}" + (f" ({reason})" if reason else "")
        if 4000 <= code < 5000:
            err = (self.last_error or {}).get("error") or {}
            status = code - 4000
            fallback = reason if reason and _MACHINE_CODE.fullmatch(reason) else _CODE_BY_STATUS.get(status, "ERROR")
            return ApiError(status, str(err.get("code", fallback)), str(err.get("message", why)))
        if code in REOPEN_CLOSE_CODES:
            return ApiError(503, "UNAVAILABLE", why + ": the server is restarting or unreachable")
        if code == 1008:
            limit = (reason or "").split(":", 1)[0].strip()
            return ApiError(POLICY_STATUS.get(limit, 400), limit or "POLICY_VIOLATION", why)
        return ApiError(502, "STREAM_CLOSED", why)

    def closed(self, exc: ConnectionClosed) -> None:
        """Raises the ApiError of the close ``exc`` reports, if it is one (a connection
        lost without a close frame is 1006)."""
        rcvd = exc.rcvd
        if rcvd is not None:
            code, reason = rcvd.code, rcvd.reason
        else:
            code, reason = (1006, None) if isinstance(exc, ConnectionClosedError) else (None, None)
        err = self.close_error(code, reason)
        if err is not None:
            raise err from None


class _Reopening(_Frames):
    """The frames of a stream opened again after a close a restart or a fault caused
    (:data:`REOPEN_CLOSE_CODES`), or a failed opening (nothing listening, a proxy's
    502/503/504), while ``budget_s`` lasts (the client's ``retry_unavailable_s``; each
    wait told to ``on_retry``). The budget runs from the fault's first close or failed
    opening; a socket that then stays open :data:`STREAM_STABLE_S` ends the fault (a
    server that accepts and closes at once does not get a fresh budget each time). Both
    clients' stream loops ask it what to do: :meth:`opened` after a socket opened,
    :meth:`read` each frame, then :meth:`after_close` or :meth:`not_opened`, which give
    the seconds to wait before opening again."""

    def __init__(self, is_last: Callable[[dict[str, Any]], bool], budget_s: float, on_retry: RetryHook | None) -> None:
        super().__init__(is_last)
        self.budget_s, self.on_retry = budget_s, on_retry
        self._retries: _Retries | None = None  # the budget of the fault going on
        self._opened_at: float | None = None  # when the last socket opened

    def opened(self) -> None:
        """A socket is open (its frames come next)."""
        self._opened_at = time.monotonic()

    def open_timeout(self) -> float:
        """Seconds the next opening may take: :data:`OPEN_TIMEOUT_S`, or what is left of
        the fault's budget when less, but at least :data:`OPEN_TIMEOUT_MIN_S` (a server
        that accepts and never answers does not hold a retry far past its budget)."""
        left = self._retries.left() if self._retries is not None else None
        return OPEN_TIMEOUT_S if left is None else max(OPEN_TIMEOUT_MIN_S, min(OPEN_TIMEOUT_S, left))

    def after_close(self, code: int | None, reason: str | None) -> float | None:
        """After the socket closed with ``code``: None when the stream ended (a clean
        close), else the seconds to wait before opening it again.

        Raises:
            ApiError: an error close (4xxx), or a fault past the budget (503).
        """
        if self._opened_at is not None and time.monotonic() - self._opened_at >= STREAM_STABLE_S:
            self._retries = None  # open long enough: the fault before is over
        err = self.close_error(code, reason)
        if err is None:
            return None
        wait = self._next_wait(f"stream closed {code}") if err.status == 503 else None
        if wait is None:
            raise err
        return wait

    def not_opened(self, exc: Exception) -> float:
        """After the socket could not be opened: the seconds to wait before trying again.

        Raises:
            Exception: ``exc`` when it is not a restart's (:func:`_restarting`), or past
                the budget on the first opening; past the budget after a close,
                ApiError 503.
        """
        if not _restarting(exc):
            raise exc
        wait = self._next_wait(f"stream not opened: {type(exc).__name__}: {exc}")
        if wait is not None:
            return wait
        if self._opened_at is None:
            raise exc
        raise ApiError(503, "UNAVAILABLE", f"the stream could not be opened again: {exc}") from exc

    def _next_wait(self, reason: str) -> float | None:
        """The fault's next wait (its budget started at its first one), None when spent."""
        if self._retries is None:
            self._retries = _Retries(self.budget_s, "GET", {}, self.on_retry)
        wait = self._retries.next_wait(reason)
        if wait is not None:
            self.last_error = None
        return wait


#: Seconds a reopened stream socket stays open before its fault counts as over (a later
#: close gets a fresh retry budget).
STREAM_STABLE_S = 5.0


#: A close reason that is a machine code (``UNAVAILABLE``), not a sentence.
_MACHINE_CODE = re.compile(r"[A-Z][A-Z0-9_]*")
#: The machine code of a 4xxx close without an error frame or a code as its reason.
_CODE_BY_STATUS = {401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND", 409: "CONFLICT", 422: "MALFORMED",
                   429: "RATE_LIMITED", 503: "UNAVAILABLE"}


def _restarting(exc: Exception) -> bool:
    """Whether a failed opening of a stream socket looks like a restart: nothing listens,
    the connection broke or timed out (an OSError), it closed before an HTTP answer, or a
    proxy answered 502, 503 or 504."""
    if isinstance(exc, OSError | InvalidMessage):  # InvalidMessage: closed before answering
        return True
    response = getattr(exc, "response", None)  # websockets' InvalidStatus
    return getattr(response, "status_code", None) in (502, 503, 504)


def _finished(message: dict[str, Any]) -> bool:
    return message.get("type") == "finished"


def _ticket_final(message: dict[str, Any]) -> bool:
    return message.get("status") in FINAL_TICKET_STATUSES


class _Fallback:
    """A command's answer that says: send it again over REST (same key; the server applies
    it once): the socket closed, said nothing within the timeout, answered 503, or found
    the frame too large (REST takes larger bodies)."""


FALLBACK = _Fallback()

#: Largest command frame sent over the socket (bytes; the gateway's default
#: ``CELLWAR_WS_MAX_MESSAGE_BYTES``); a larger command goes over REST.
COMMAND_FRAME_BYTES = 4096

#: Statuses of an error frame after which the command goes over REST instead.
_FALL_BACK_ON = frozenset({413, 503})


class _CommandFrames(_Frames):
    """The frames of a command socket (docs/api/websocket.md): builds ``action`` /
    ``end_turn`` / ``valid_actions`` frames; sorts what arrives into answers of commands
    (``result`` / ``valid_actions`` / ``error`` with an ``id``) and messages of the
    stream."""

    def __init__(self) -> None:
        super().__init__(_finished)
        #: (seq, view) of the newest view told as a stream message; and the view messages
        #: results stand for, not yet taken (:meth:`take_views`).
        self._last_view: tuple[int, Any] | None = None
        self._views: list[dict[str, Any]] = []

    def take_views(self) -> list[dict[str, Any]]:
        """The stream messages the results read since the last call stand for: the server
        does not send a command's view frame again on the socket whose ``result`` carried
        it (docs/api/websocket.md), so the stream's readers get it from here, once (a view
        frame that comes anyway, before the result, is not repeated)."""
        views, self._views = self._views, []
        return views

    def _seen(self, seq: Any, view: Any) -> bool:
        """Whether ``(seq, view)`` is the view told last; else it is now."""
        if self._last_view == (seq, view):
            return True
        self._last_view = (seq, view)
        return False

    @staticmethod
    def command(key: str, action: dict[str, Any] | None) -> str:
        """The frame of a command: an action (``action`` given) or the end of the turn."""
        frame: dict[str, Any] = {"type": "end_turn", "id": key}
        if action is not None:
            frame = {"type": "action", "id": key, "action": action}
        return json.dumps(frame, separators=(",", ":"))

    @staticmethod
    def valid_actions(key: str, unit_id: int | None) -> str:
        """The frame asking the legal moves of ``unit_id`` (None: every unit of the seat's)."""
        return json.dumps({"type": "valid_actions", "id": key, "unit_id": unit_id}, separators=(",", ":"))

    def sort(self, raw: str | bytes, oldest: str | None) -> tuple[str | None, Any]:
        """``(id, answer)`` of a command's answer: ``{"seq", "view"}``, the list of a
        ``valid_actions`` answer, an :class:`ApiError`, or :data:`FALLBACK`;
        ``(None, message)`` of a stream message; ``(None, None)`` of an error frame
        before a close. An error frame of a command
        whose ``id`` the server could not read (``"id": null``, e.g. 413) answers
        ``oldest``, the first command still waiting (the server answers in order)."""
        message = json.loads(raw)
        kind, key = message.get("type"), message.get("id")
        if kind == "result" and key is not None:
            seq, view = message["seq"], message["view"]
            if view is not None and not self._seen(seq, view):
                self._views.append({"type": "view", "seq": seq, "view": view})
            return str(key), {"seq": seq, "view": view}
        if kind == "valid_actions" and key is not None:
            return str(key), message["actions"]
        if kind == "view" and self._seen(message.get("seq"), message.get("view")):
            return None, None  # a result told it already
        if kind == "error" and "status" in message and (key is not None or oldest is not None):
            status = int(message["status"])
            try:
                answer: Any = FALLBACK if status in _FALL_BACK_ON else _error_of(status, message)
            except (KeyError, TypeError):
                answer = ApiError(status, "HTTP_ERROR", json.dumps(message)[:500])
            return (oldest if key is None else str(key)), answer
        if kind == "error":
            self.last_error = message
            return None, None
        self.done = _finished(message)
        return None, message
