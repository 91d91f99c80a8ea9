"""Python SDK of the CellWar REST + WebSocket API (docs/api/), on httpx and websockets.

Two clients with the same methods: :class:`AsyncCellWarClient` (asyncio; bots, RL
environments) and :class:`CellWarClient` (plain blocking calls; notebooks, scripts).
Every error answer of the server raises :class:`ApiError` with the HTTP status and the
machine code (``OUT_OF_ZONE``, ``NOT_YOUR_TURN``, ...).

Example::

    async with AsyncCellWarClient("http://localhost:8000") as api:
        game_id = await api.create_game("life", {"width": 60, "height": 60, "budget": 100})
        seat = await api.join(game_id, "alice")
        await api.place(game_id, seat.token, [(3, 4), (4, 4), (5, 4)])
        await api.end_turn(game_id, seat.token)
        async for message in api.stream(game_id, seat.token):
            print(message["type"], message["view"]["generation"])

The SDK never imports the engine: it speaks only the public API.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx
import websockets
import websockets.sync.client
from websockets.exceptions import ConnectionClosed

#: Default timeout of one HTTP request (seconds).
DEFAULT_TIMEOUT_S = 30.0



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


def _raise_for_error(response: httpx.Response) -> None:
    if response.is_success:
        return
    seq = None
    try:
        err = response.json()["error"]
        code, message = str(err["code"]), str(err["message"])
        seq = err.get("seq") if isinstance(err.get("seq"), int) else None
    except (ValueError, KeyError, TypeError):
        # not this API's error body (a proxy, another server): say what the answer was
        code = "HTTP_ERROR"
        message = response.text.strip()[:500] or response.reason_phrase or "an answer with no body"
    raise ApiError(response.status_code, code, message, seq)


#: First wait before a retry of an unavailable server (seconds); doubled up to RETRY_MAX_WAIT_S.
RETRY_FIRST_WAIT_S = 0.25
RETRY_MAX_WAIT_S = 2.0
#: Transport errors of a server that is restarting: nothing listens, or it closed the
#: connection under the request.
_RESTARTING = (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError)

#: ``on_retry(reason, wait_s)``: told before each wait of a retry.
RetryHook = Callable[[str, float], None]


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


def _post_headers(token: str | None, idempotency_key: str | None) -> dict[str, str]:
    headers = _auth(token)
    headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
    return headers


def _cells(cells: Iterable[Sequence[int]]) -> list[list[int]]:
    return [[int(c[0]), int(c[1])] for c in cells]


def stream_url(base_url: str, game_id: str, token: str | None) -> str:
    """The WebSocket URL of a game's stream (``ws://`` or ``wss://``)."""
    parts = urlsplit(base_url)
    scheme = "wss" if parts.scheme == "https" else "ws"
    path = parts.path.rstrip("/") + f"/game/{quote(game_id, safe='')}/stream"
    query = f"token={quote(token, safe='')}" if token else ""
    return urlunsplit((scheme, parts.netloc, path, query, ""))


#: Games asked per lobby page (the most ``GET /games`` gives).
LOBBY_PAGE = 200

#: The stream's subprotocol; the token rides beside it as ``bearer.<token>`` so it never
#: appears in a URL (gateway/routes/stream.py).
STREAM_SUBPROTOCOL = "cellwar.v1"


def stream_subprotocols(token: str | None) -> list[str]:
    """The subprotocols to offer on a game's stream: ``cellwar.v1`` and, with a token,
    ``bearer.<token>``."""
    return [STREAM_SUBPROTOCOL, f"bearer.{token}"] if token else [STREAM_SUBPROTOCOL]


def spectate_url(base_url: str, game_id: str, delay_s: float | None = None) -> str:
    """The WebSocket URL of a delayed spectator's stream (``?spectate=1&delay_s=N``)."""
    url = stream_url(base_url, game_id, None)
    query = "spectate=1" + (f"&delay_s={delay_s:g}" if delay_s is not None else "")
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _closed_error(exc: ConnectionClosed, last_error: dict[str, Any] | None) -> ApiError | None:
    """The ApiError of a stream closed with a 4xxx code, else None (a clean close)."""
    rcvd = exc.rcvd
    code = rcvd.code if rcvd is not None else None
    if code is not None and 4000 <= code < 5000:
        err = (last_error or {}).get("error") or {}
        return ApiError(code - 4000, str(err.get("code", rcvd.reason or "ERROR")), str(err.get("message", "")))
    return None


class _Requests:
    """Request shapes shared by both clients: (method, path, kwargs) per operation."""

    @staticmethod
    def create(
        kind: str, config: dict[str, Any] | None, key: str | None, profile_token: str | None = None
    ) -> tuple[str, str, dict]:
        headers = _post_headers(None, key)
        if profile_token:
            headers["X-Profile-Token"] = profile_token
        return "POST", "/game/create", {"json": {"kind": kind, "config": dict(config or {})}, "headers": headers}

    @staticmethod
    def create_profile(name: str) -> tuple[str, str, dict]:
        return "POST", "/profiles", {"json": {"name": name}}

    @staticmethod
    def fork(game_id: str, seq: int, token: str | None, key: str | None) -> tuple[str, str, dict]:
        return "POST", f"/game/{game_id}/fork", {"json": {"seq": seq}, "headers": _post_headers(token, key)}

    @staticmethod
    def import_log(
        log: str | bytes | Sequence[dict[str, Any]],
        origin_game_id: str | None,
        origin_file: str | None,
        key: str | None,
    ) -> tuple[str, str, dict]:
        params = {k: v for k, v in (("origin_game_id", origin_game_id), ("origin_file", origin_file)) if v}
        headers = _post_headers(None, key)
        if isinstance(log, str | bytes):
            headers["Content-Type"] = "application/x-ndjson"
            content = log.encode() if isinstance(log, str) else log
            return "POST", "/games/import", {"content": content, "headers": headers, "params": params}
        return "POST", "/games/import", {"json": {"events": list(log)}, "headers": headers, "params": params}

    @staticmethod
    def spectator_state(game_id: str, delay_s: float | None) -> tuple[str, str, dict]:
        params: dict[str, Any] = {"spectate": 1}
        if delay_s is not None:
            params["delay_s"] = delay_s
        return "GET", f"/game/{game_id}/state", {"params": params}

    @staticmethod
    def join(game_id: str, name: str, key: str | None, profile_token: str | None = None) -> tuple[str, str, dict]:
        headers = _post_headers(None, key)
        if profile_token:
            headers["X-Profile-Token"] = profile_token
        return "POST", f"/game/{game_id}/join", {"json": {"name": name}, "headers": headers}

    @staticmethod
    def action(game_id: str, token: str, action: dict[str, Any], key: str | None) -> tuple[str, str, dict]:
        return "POST", f"/game/{game_id}/action", {"json": action, "headers": _post_headers(token, key)}

    @staticmethod
    def command(game_id: str, token: str, name: str, key: str | None) -> tuple[str, str, dict]:
        return "POST", f"/game/{game_id}/{name}", {"headers": _post_headers(token, key)}

    @staticmethod
    def create_ticket(
        kind: str,
        players: int,
        name: str,
        config: dict[str, Any] | None,
        profile_token: str | None,
        key: str | None,
    ) -> tuple[str, str, dict]:
        headers = _post_headers(None, key)
        if profile_token:
            headers["X-Profile-Token"] = profile_token
        body = {"kind": kind, "players": players, "name": name, "config": dict(config or {})}
        return "POST", "/matchmaking/tickets", {"json": body, "headers": headers}


#: Ticket statuses after which a ticket never changes (docs/api/index.md "Matchmaking").
FINAL_TICKET_STATUSES = frozenset({"matched", "cancelled", "expired"})


def ticket_stream_url(base_url: str, ticket_id: str, token: str | None) -> str:
    """The WebSocket URL of a matchmaking ticket's stream (``ws://`` or ``wss://``); with
    ``token`` it is in the query (old style; the SDK itself offers it as a subprotocol)."""
    parts = urlsplit(base_url)
    scheme = "wss" if parts.scheme == "https" else "ws"
    path = parts.path.rstrip("/") + f"/matchmaking/tickets/{quote(ticket_id, safe='')}/stream"
    query = f"token={quote(token, safe='')}" if token else ""
    return urlunsplit((scheme, parts.netloc, path, query, ""))


def _seat_of(ticket: dict[str, Any]) -> Seat:
    """The seat of a ticket that ended; raises ApiError when it ended without a match."""
    if ticket.get("status") == "matched" and ticket.get("match"):
        m = ticket["match"]
        return Seat(str(m["game_id"]), int(m["player_id"]), str(m["player_token"]))
    status = str(ticket.get("status", "")).upper()
    raise ApiError(409, f"TICKET_{status}", f"the ticket ended {ticket.get('status')}: {ticket.get('reason') or ''}")


class AsyncCellWarClient:
    """Asynchronous client of one CellWar server.

    Args:
        base_url: e.g. ``"http://localhost:8000"``.
        timeout: seconds per HTTP request.
        transport: an httpx transport (e.g. ``httpx.ASGITransport(app)`` in tests).
        retry_unavailable_s: for how long (seconds) a call safe to repeat (a GET, or a
            POST with its Idempotency-Key) is tried again while the server is unavailable
            (503, or nothing listening: a restart); 0 (default) = fail at once.
        on_retry: ``on_retry(reason, wait_s)``, told before each wait of a retry.

    Use as ``async with AsyncCellWarClient(url) as api: ...`` or call :meth:`aclose`.
    All methods raise :class:`ApiError` on an error answer and ``httpx.HTTPError`` when
    the server cannot be reached.
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        transport: httpx.AsyncBaseTransport | None = None,
        retry_unavailable_s: float = 0.0,
        on_retry: RetryHook | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout, transport=transport)
        self.retry_unavailable_s = retry_unavailable_s
        self.on_retry = on_retry

    async def __aenter__(self) -> AsyncCellWarClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._http.aclose()

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        retries = _Retries(self.retry_unavailable_s, method, kwargs, self.on_retry)
        while True:
            try:
                response = await self._http.request(method, path, **kwargs)
            except _RESTARTING as exc:
                wait = retries.after_error(exc)
            else:
                wait = retries.after(response)
                if wait is None:
                    return response.json()
            await asyncio.sleep(wait)

    # -- lobby and seats

    async def create_game(
        self,
        kind: str = "life",
        config: dict[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
        profile_token: str | None = None,
    ) -> str:
        """Create a game; returns its id. ``config`` per kind (docs/api/index.md), defaults filled
        by the server (Life: 60×60, 2 players, budget 100). ``profile_token`` (campaign):
        the level counts for that profile; ApiError 409 ``LEVEL_LOCKED`` if not unlocked."""
        method, path, kw = _Requests.create(kind, config, idempotency_key, profile_token)
        return (await self._call(method, path, **kw))["game_id"]

    async def create_campaign(
        self, level: int = 1, profile_token: str | None = None, *, idempotency_key: str | None = None
    ) -> str:
        """Start campaign level ``level`` (1..103), for a profile when ``profile_token`` is
        given. Raises ApiError 409 ``LEVEL_LOCKED`` for a level the profile has not reached."""
        return await self.create_game(
            "campaign", {"level": level}, idempotency_key=idempotency_key, profile_token=profile_token
        )

    # -- library and campaign profiles

    async def patterns(self) -> dict[str, Any]:
        """The stamp library: ``{"categories": {category: [ids]}, "patterns": [{"id", "name",
        "category", "width", "height", "cells"}]}``."""
        return await self._call("GET", "/patterns")

    async def levels(self, profile_token: str | None = None) -> list[dict[str, Any]]:
        """The campaign levels (``number, name, hint, width, height, zone, budget,
        hopeless``); with ``profile_token`` also ``unlocked`` and ``best`` each."""
        return (await self._call("GET", "/campaign/levels", headers=_auth(profile_token)))["levels"]

    async def create_profile(self, name: str = "") -> dict[str, Any]:
        """A new campaign profile: ``{"profile_id", "profile_token"}`` (keep the token)."""
        method, path, kw = _Requests.create_profile(name)
        return await self._call(method, path, **kw)

    async def profile(self, profile_token: str) -> dict[str, Any]:
        """Campaign progress: ``{"profile_id", "name", "unlocked", "best"}``."""
        return await self._call("GET", "/profile", headers=_auth(profile_token))

    async def join(
        self,
        game_id: str,
        name: str,
        *,
        idempotency_key: str | None = None,
        profile_token: str | None = None,
    ) -> Seat:
        """Take the next free seat of ``game_id``. Raises ApiError 409 ``GAME_FULL``.
        ``profile_token``: in a rated game (config ``"rated": true``), the profile whose
        rating the seat counts for."""
        method, path, kw = _Requests.join(game_id, name, idempotency_key, profile_token)
        data = await self._call(method, path, **kw)
        return Seat(game_id, int(data["player_id"]), str(data["player_token"]))

    async def games(self) -> list[dict[str, Any]]:
        """The lobby: open and running games (``game_id, kind, phase, players_joined, ...``),
        every page of ``GET /games`` (oldest first)."""
        games: list[dict[str, Any]] = []
        params: dict[str, Any] = {"limit": LOBBY_PAGE}
        while True:
            page = await self._call("GET", "/games", params=params)
            games.extend(page["games"])
            if not page.get("next_cursor"):
                return games
            params = {"limit": LOBBY_PAGE, "cursor": page["next_cursor"]}

    # -- reading

    async def state(self, game_id: str, token: str) -> dict[str, Any]:
        """The player's view (docs/api/index.md "Views and `seq`")."""
        return await self._call("GET", f"/game/{game_id}/state", headers=_auth(token))

    async def events(self, game_id: str, token: str | None = None, from_seq: int = 0) -> list[dict[str, Any]]:
        """The event log from ``from_seq`` (``seq, type, actor, payload, time, state_hash,
        engine_version`` each). Without a token: only once the game is finished."""
        data = await self._call("GET", f"/game/{game_id}/events", params={"from_seq": from_seq}, headers=_auth(token))
        return data["events"]

    async def replay(self, game_id: str, seq: int, token: str | None = None) -> dict[str, Any]:
        """``{"seq", "view"}``: the game as it was right after event ``seq``."""
        return await self._call("GET", f"/game/{game_id}/replay", params={"seq": seq}, headers=_auth(token))

    async def valid_actions(self, game_id: str, token: str, unit_id: int | None = None) -> list[dict[str, Any]]:
        """CellWar: legal ``{unit_id, dx, dy, kind}`` of one unit (or all of yours)."""
        params = {"unit_id": unit_id} if unit_id is not None else {}
        data = await self._call("GET", f"/game/{game_id}/valid_actions", params=params, headers=_auth(token))
        return data["actions"]

    async def health(self) -> dict[str, Any]:
        """``/readyz``: raises ApiError 503 when the backend is not ready."""
        return await self._call("GET", "/readyz")

    # -- commands (each returns {"seq", "view"})

    async def act(
        self, game_id: str, token: str, action: dict[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Send any action object of the contract; returns ``{"seq", "view"}``."""
        method, path, kw = _Requests.action(game_id, token, action, idempotency_key)
        return await self._call(method, path, **kw)

    async def end_turn(self, game_id: str, token: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """End your drawing turn (Life placement) or say ready (redraw); CellWar: end turn."""
        method, path, kw = _Requests.command(game_id, token, "end_turn", idempotency_key)
        return await self._call(method, path, **kw)

    async def leave(self, game_id: str, token: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """Leave the game (you and your cells/units are removed)."""
        method, path, kw = _Requests.command(game_id, token, "leave", idempotency_key)
        return await self._call(method, path, **kw)

    async def place(self, game_id: str, token: str, cells: Iterable[Sequence[int]], **kw: Any) -> dict[str, Any]:
        """Place cells ``[(x, y), ...]`` (all or nothing: OUT_OF_ZONE / BUDGET_EXCEEDED)."""
        return await self.act(game_id, token, {"type": "place", "cells": _cells(cells)}, **kw)

    async def erase(self, game_id: str, token: str, cells: Iterable[Sequence[int]], **kw: Any) -> dict[str, Any]:
        """Erase own cells ``[(x, y), ...]``."""
        return await self.act(game_id, token, {"type": "erase", "cells": _cells(cells)}, **kw)

    async def stamp(
        self,
        game_id: str,
        token: str,
        x: int,
        y: int,
        pattern: str | None = None,
        *,
        rle: str | None = None,
        rotation: int = 0,
        **kw: Any,
    ) -> dict[str, Any]:
        """Stamp a library pattern (``"glider"``) or RLE text with its top-left at (x, y).

        Raises:
            TypeError: ``x``/``y`` not integers, or neither/both of ``pattern`` and ``rle``.
            ApiError: the server refused the stamp.
        """
        action = _stamp_action(x, y, pattern, rle, rotation)
        return await self.act(game_id, token, action, **kw)

    async def speed(self, game_id: str, token: str, multiplier: int, **kw: Any) -> dict[str, Any]:
        """Set the simulation speed multiplier (1, 2, 4 or 8 × 8 generations/s)."""
        return await self.act(game_id, token, {"type": "speed", "multiplier": multiplier}, **kw)

    async def simple(self, game_id: str, token: str, type_: str, **kw: Any) -> dict[str, Any]:
        """An action without arguments: ``reset_turn``, ``pause``, ``resume``,
        ``propose_finish``, ``resign``, ``restart``."""
        return await self.act(game_id, token, {"type": type_}, **kw)

    async def move(self, game_id: str, token: str, unit_id: int, dx: int, dy: int, **kw: Any) -> dict[str, Any]:
        """CellWar: unit ``unit_id`` acts toward (dx, dy), each in -1..1."""
        return await self.act(game_id, token, {"unit_id": unit_id, "dx": dx, "dy": dy}, **kw)

    # -- matchmaking (docs/matchmaking.md)

    async def create_ticket(
        self,
        kind: str = "life",
        players: int = 2,
        name: str = "player",
        config: dict[str, Any] | None = None,
        *,
        profile_token: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Ask for a match: ``{"ticket_id", "ticket_token"}``. ``config`` is partial (a
        field another ticket sets differently keeps you apart); ``profile_token`` rates
        the game for that profile (ApiError 409 ``ALREADY_QUEUED`` when it already
        searches in this queue)."""
        method, path, kw = _Requests.create_ticket(kind, players, name, config, profile_token, idempotency_key)
        return await self._call(method, path, **kw)

    async def ticket(self, ticket_id: str, ticket_token: str) -> dict[str, Any]:
        """The ticket: ``{"status", "wait_s", "queue", ..., "match"?: {"game_id",
        "player_id", "player_token"}}``."""
        return await self._call("GET", f"/matchmaking/tickets/{ticket_id}", headers=_auth(ticket_token))

    async def cancel_ticket(self, ticket_id: str, ticket_token: str) -> dict[str, Any]:
        """Cancel a searching ticket (ApiError 409 ``ALREADY_MATCHED`` when too late)."""
        return await self._call("DELETE", f"/matchmaking/tickets/{ticket_id}", headers=_auth(ticket_token))

    async def watch_ticket(self, ticket_id: str, ticket_token: str) -> AsyncIterator[dict[str, Any]]:
        """The ticket now and at each status change (``{"type": "ticket", ...}``); ends
        after a final status. Raises ApiError for a stream closed with an error."""
        url = ticket_stream_url(self.base_url, ticket_id, None)
        last_error: dict[str, Any] | None = None
        async with websockets.connect(
            url, open_timeout=30, subprotocols=stream_subprotocols(ticket_token)
        ) as ws:
            try:
                async for raw in ws:
                    message = json.loads(raw)
                    if message.get("type") == "error":
                        last_error = message
                        continue
                    yield message
                    if message.get("status") in FINAL_TICKET_STATUSES:
                        return
            except ConnectionClosed as exc:
                err = _closed_error(exc, last_error)
                if err is not None:
                    raise err from None
                return

    async def wait_for_match(
        self, ticket_id: str, ticket_token: str, *, timeout: float = 330.0, poll_s: float = 0.25
    ) -> Seat:
        """Wait until the ticket ends (its stream, else polling every ``poll_s`` seconds)
        and return the matched seat.

        Raises:
            ApiError: the ticket ended without a match (code ``TICKET_CANCELLED`` /
                ``TICKET_EXPIRED``), or the server refused.
            TimeoutError: still searching after ``timeout`` seconds.
        """
        async def by_stream() -> dict[str, Any] | None:
            last = None
            async for message in self.watch_ticket(ticket_id, ticket_token):
                last = message
            return last

        async def by_polling() -> dict[str, Any]:
            while True:
                t = await self.ticket(ticket_id, ticket_token)
                if t.get("status") in FINAL_TICKET_STATUSES:
                    return t
                await asyncio.sleep(poll_s)

        async def wait() -> dict[str, Any]:
            try:
                last = await by_stream()
                if last is not None and last.get("status") in FINAL_TICKET_STATUSES:
                    return last
            except (OSError, websockets.WebSocketException, ApiError):
                pass  # fall back to polling (a proxy without WebSocket, a dropped stream)
            return await by_polling()

        return _seat_of(await asyncio.wait_for(wait(), timeout))

    async def find_match(
        self,
        kind: str = "life",
        players: int = 2,
        name: str = "player",
        config: dict[str, Any] | None = None,
        *,
        profile_token: str | None = None,
        timeout: float = 330.0,
    ) -> Seat:
        """Queue a ticket and wait for its seat (:meth:`create_ticket` +
        :meth:`wait_for_match`); the ticket is cancelled when the wait fails."""
        created = await self.create_ticket(kind, players, name, config, profile_token=profile_token)
        try:
            return await self.wait_for_match(created["ticket_id"], created["ticket_token"], timeout=timeout)
        except Exception:
            try:
                await self.cancel_ticket(created["ticket_id"], created["ticket_token"])
            except Exception:  # noqa: BLE001 - the original error matters
                pass
            raise

    async def queues(self) -> list[dict[str, Any]]:
        """Queue statistics: ``[{"queue", "kind", "players", "waiting", "in_games",
        "matches_last_minute", "median_wait_s", "p90_wait_s"}]``."""
        return (await self._call("GET", "/matchmaking/queues"))["queues"]

    async def leaderboard(self, kind: str = "life", players: int = 2) -> list[dict[str, Any]]:
        """The top 100 of a queue: ``[{"profile_id", "name", "rating", "games"}]``."""
        data = await self._call("GET", "/leaderboard", params={"kind": kind, "players": players})
        return data["entries"]

    # -- replay tools (docs/replays.md)

    async def fork(
        self, game_id: str, seq: int, token: str | None = None, *, idempotency_key: str | None = None
    ) -> str:
        """A new game starting in the state right after event ``seq`` of ``game_id``, every
        seat free; returns its id. Anyone may fork a finished game; a running one only its
        players (``token``). Raises ApiError 403 ``FORBIDDEN``, 422 ``MALFORMED``."""
        method, path, kw = _Requests.fork(game_id, seq, token, idempotency_key)
        return (await self._call(method, path, **kw))["game_id"]

    async def import_log(
        self,
        log: str | bytes | Sequence[dict[str, Any]],
        *,
        origin_game_id: str | None = None,
        origin_file: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Create a game from a log (JSON Lines text, or a list of event objects):
        ``{"game_id", "events", "finished"}``. Raises ApiError 422 ``LOG_MISMATCH`` with
        ``seq`` (the first event the rules do not reproduce); nothing is written then."""
        method, path, kw = _Requests.import_log(log, origin_game_id, origin_file, idempotency_key)
        return await self._call(method, path, **kw)

    async def events_jsonl(
        self, game_id: str, token: str | None = None, from_seq: int = 0
    ) -> AsyncIterator[dict[str, Any]]:
        """The event log streamed as JSON Lines (``?format=jsonl``), one event at a time."""
        params = {"from_seq": from_seq, "format": "jsonl"}
        async with self._http.stream("GET", f"/game/{game_id}/events", params=params, headers=_auth(token)) as r:
            if not r.is_success:
                await r.aread()
                _raise_for_error(r)
            async for line in r.aiter_lines():
                if line.strip():
                    yield json.loads(line)

    async def spectator_state(self, game_id: str, delay_s: float | None = None) -> dict[str, Any]:
        """``{"seq", "view"}`` of the game as it was ``delay_s`` seconds ago (no token;
        default: the least the game allows, 10 s for a running CellWar game created with
        ``"spectators": "live"``). Raises ApiError 409 ``NOT_YET_VISIBLE`` while no event
        is that old, 409 ``SPECTATORS_AFTER_END`` for a running CellWar game without live
        spectators (docs/spectators.md)."""
        method, path, kw = _Requests.spectator_state(game_id, delay_s)
        return await self._call(method, path, **kw)

    async def spectate(self, game_id: str, delay_s: float | None = None) -> AsyncIterator[dict[str, Any]]:
        """A delayed spectator's stream: ``{"type": "view" | "finished", "seq", "view"}``
        of the game as it was ``delay_s`` seconds ago; ends after ``finished``.

        Raises:
            ApiError: the server closed the stream with an error.
        """
        async for message in self._messages(spectate_url(self.base_url, game_id, delay_s)):
            yield message

    # -- stream

    async def stream(self, game_id: str, token: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """Messages of the game's WebSocket stream: ``{"type": "view" | "finished", "seq",
        "view"}``; ends after ``finished`` (or when the server closes cleanly).

        Raises:
            ApiError: the server closed the stream with an error (4401 → status 401, ...).
        """
        # the token as the subprotocol bearer.<token>, never in the URL (it would reach logs)
        url = stream_url(self.base_url, game_id, None)
        async for message in self._messages(url, stream_subprotocols(token)):
            yield message

    async def _messages(
        self, url: str, subprotocols: list[str] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """The JSON messages of a stream WebSocket until ``finished`` or a clean close."""
        last_error: dict[str, Any] | None = None
        async with websockets.connect(
            url, max_size=None, open_timeout=30, subprotocols=subprotocols or [STREAM_SUBPROTOCOL]
        ) as ws:
            try:
                async for raw in ws:
                    message = json.loads(raw)
                    if message.get("type") == "error":
                        last_error = message
                        continue
                    yield message
                    if message.get("type") == "finished":
                        return
            except ConnectionClosed as exc:
                err = _closed_error(exc, last_error)
                if err is not None:
                    raise err from None
                return
            if ws.close_code is not None and 4000 <= ws.close_code < 5000:
                err = (last_error or {}).get("error") or {}
                raise ApiError(ws.close_code - 4000, str(err.get("code", "ERROR")), str(err.get("message", "")))


class CellWarClient:
    """Blocking client with the same methods as :class:`AsyncCellWarClient`.

    Args:
        base_url: e.g. ``"http://localhost:8000"``.
        timeout: seconds per HTTP request.
        transport: an httpx transport (tests).
        retry_unavailable_s, on_retry: as :class:`AsyncCellWarClient`.
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
        retry_unavailable_s: float = 0.0,
        on_retry: RetryHook | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout, transport=transport)
        self.retry_unavailable_s = retry_unavailable_s
        self.on_retry = on_retry

    def __enter__(self) -> CellWarClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        retries = _Retries(self.retry_unavailable_s, method, kwargs, self.on_retry)
        while True:
            try:
                response = self._http.request(method, path, **kwargs)
            except _RESTARTING as exc:
                wait = retries.after_error(exc)
            else:
                wait = retries.after(response)
                if wait is None:
                    return response.json()
            time.sleep(wait)

    def create_game(
        self,
        kind: str = "life",
        config: dict[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
        profile_token: str | None = None,
    ) -> str:
        """Create a game; returns its id (``profile_token``: campaign progress)."""
        method, path, kw = _Requests.create(kind, config, idempotency_key, profile_token)
        return self._call(method, path, **kw)["game_id"]

    def create_campaign(
        self, level: int = 1, profile_token: str | None = None, *, idempotency_key: str | None = None
    ) -> str:
        """Start campaign level ``level``, for a profile when ``profile_token`` is given."""
        return self.create_game(
            "campaign", {"level": level}, idempotency_key=idempotency_key, profile_token=profile_token
        )

    def patterns(self) -> dict[str, Any]:
        """The stamp library ``{"categories", "patterns"}``."""
        return self._call("GET", "/patterns")

    def levels(self, profile_token: str | None = None) -> list[dict[str, Any]]:
        """The campaign levels (with ``unlocked``/``best`` when a profile token is given)."""
        return self._call("GET", "/campaign/levels", headers=_auth(profile_token))["levels"]

    def create_profile(self, name: str = "") -> dict[str, Any]:
        """A new campaign profile: ``{"profile_id", "profile_token"}``."""
        method, path, kw = _Requests.create_profile(name)
        return self._call(method, path, **kw)

    def profile(self, profile_token: str) -> dict[str, Any]:
        """Campaign progress: ``{"profile_id", "name", "unlocked", "best"}``."""
        return self._call("GET", "/profile", headers=_auth(profile_token))

    def join(
        self,
        game_id: str,
        name: str,
        *,
        idempotency_key: str | None = None,
        profile_token: str | None = None,
    ) -> Seat:
        """Take the next free seat of ``game_id`` (``profile_token``: a rated game's
        profile for the seat)."""
        method, path, kw = _Requests.join(game_id, name, idempotency_key, profile_token)
        data = self._call(method, path, **kw)
        return Seat(game_id, int(data["player_id"]), str(data["player_token"]))

    def games(self) -> list[dict[str, Any]]:
        """The lobby: every page of ``GET /games``."""
        games: list[dict[str, Any]] = []
        params: dict[str, Any] = {"limit": LOBBY_PAGE}
        while True:
            page = self._call("GET", "/games", params=params)
            games.extend(page["games"])
            if not page.get("next_cursor"):
                return games
            params = {"limit": LOBBY_PAGE, "cursor": page["next_cursor"]}

    def state(self, game_id: str, token: str) -> dict[str, Any]:
        """The player's view."""
        return self._call("GET", f"/game/{game_id}/state", headers=_auth(token))

    def events(self, game_id: str, token: str | None = None, from_seq: int = 0) -> list[dict[str, Any]]:
        """The event log from ``from_seq``."""
        return self._call("GET", f"/game/{game_id}/events", params={"from_seq": from_seq}, headers=_auth(token))[
            "events"
        ]

    def replay(self, game_id: str, seq: int, token: str | None = None) -> dict[str, Any]:
        """``{"seq", "view"}`` right after event ``seq``."""
        return self._call("GET", f"/game/{game_id}/replay", params={"seq": seq}, headers=_auth(token))

    def valid_actions(self, game_id: str, token: str, unit_id: int | None = None) -> list[dict[str, Any]]:
        """CellWar: legal moves of a unit (or all of yours)."""
        params = {"unit_id": unit_id} if unit_id is not None else {}
        return self._call("GET", f"/game/{game_id}/valid_actions", params=params, headers=_auth(token))["actions"]

    def act(
        self, game_id: str, token: str, action: dict[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Send any action object; returns ``{"seq", "view"}``."""
        method, path, kw = _Requests.action(game_id, token, action, idempotency_key)
        return self._call(method, path, **kw)

    def end_turn(self, game_id: str, token: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """End your turn / say ready."""
        method, path, kw = _Requests.command(game_id, token, "end_turn", idempotency_key)
        return self._call(method, path, **kw)

    def leave(self, game_id: str, token: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """Leave the game."""
        method, path, kw = _Requests.command(game_id, token, "leave", idempotency_key)
        return self._call(method, path, **kw)

    def place(self, game_id: str, token: str, cells: Iterable[Sequence[int]], **kw: Any) -> dict[str, Any]:
        """Place cells ``[(x, y), ...]``."""
        return self.act(game_id, token, {"type": "place", "cells": _cells(cells)}, **kw)

    def erase(self, game_id: str, token: str, cells: Iterable[Sequence[int]], **kw: Any) -> dict[str, Any]:
        """Erase own cells."""
        return self.act(game_id, token, {"type": "erase", "cells": _cells(cells)}, **kw)

    def stamp(
        self,
        game_id: str,
        token: str,
        x: int,
        y: int,
        pattern: str | None = None,
        *,
        rle: str | None = None,
        rotation: int = 0,
        **kw: Any,
    ) -> dict[str, Any]:
        """Stamp a library pattern or RLE text with its top-left at (x, y).

        Raises:
            TypeError: ``x``/``y`` not integers, or neither/both of ``pattern`` and ``rle``.
            ApiError: the server refused the stamp.
        """
        action = _stamp_action(x, y, pattern, rle, rotation)
        return self.act(game_id, token, action, **kw)

    def simple(self, game_id: str, token: str, type_: str, **kw: Any) -> dict[str, Any]:
        """An action without arguments (``pause``, ``resume``, ``resign``, ...)."""
        return self.act(game_id, token, {"type": type_}, **kw)

    def speed(self, game_id: str, token: str, multiplier: int, **kw: Any) -> dict[str, Any]:
        """Set the speed multiplier (1, 2, 4, 8)."""
        return self.act(game_id, token, {"type": "speed", "multiplier": multiplier}, **kw)

    def move(self, game_id: str, token: str, unit_id: int, dx: int, dy: int, **kw: Any) -> dict[str, Any]:
        """CellWar: unit ``unit_id`` acts toward (dx, dy)."""
        return self.act(game_id, token, {"unit_id": unit_id, "dx": dx, "dy": dy}, **kw)

    # -- matchmaking (docs/matchmaking.md)

    def create_ticket(
        self,
        kind: str = "life",
        players: int = 2,
        name: str = "player",
        config: dict[str, Any] | None = None,
        *,
        profile_token: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Ask for a match: ``{"ticket_id", "ticket_token"}``."""
        method, path, kw = _Requests.create_ticket(kind, players, name, config, profile_token, idempotency_key)
        return self._call(method, path, **kw)

    def ticket(self, ticket_id: str, ticket_token: str) -> dict[str, Any]:
        """The ticket (``status``, ``wait_s``, ``queue``, ``match``?)."""
        return self._call("GET", f"/matchmaking/tickets/{ticket_id}", headers=_auth(ticket_token))

    def cancel_ticket(self, ticket_id: str, ticket_token: str) -> dict[str, Any]:
        """Cancel a searching ticket."""
        return self._call("DELETE", f"/matchmaking/tickets/{ticket_id}", headers=_auth(ticket_token))

    def wait_for_match(
        self, ticket_id: str, ticket_token: str, *, timeout: float = 330.0, poll_s: float = 0.25
    ) -> Seat:
        """Poll the ticket until it ends; the matched seat.

        Raises:
            ApiError: ended without a match (``TICKET_CANCELLED`` / ``TICKET_EXPIRED``).
            TimeoutError: still searching after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            t = self.ticket(ticket_id, ticket_token)
            if t.get("status") in FINAL_TICKET_STATUSES:
                return _seat_of(t)
            if time.monotonic() > deadline:
                raise TimeoutError(f"ticket {ticket_id} still searching after {timeout} s")
            time.sleep(poll_s)

    def queues(self) -> list[dict[str, Any]]:
        """Queue statistics (see :meth:`AsyncCellWarClient.queues`)."""
        return self._call("GET", "/matchmaking/queues")["queues"]

    def leaderboard(self, kind: str = "life", players: int = 2) -> list[dict[str, Any]]:
        """The top 100 of a queue."""
        return self._call("GET", "/leaderboard", params={"kind": kind, "players": players})["entries"]

    def fork(self, game_id: str, seq: int, token: str | None = None, *, idempotency_key: str | None = None) -> str:
        """A fork of ``game_id`` at event ``seq``; returns its id (see the async client)."""
        method, path, kw = _Requests.fork(game_id, seq, token, idempotency_key)
        return self._call(method, path, **kw)["game_id"]

    def import_log(
        self,
        log: str | bytes | Sequence[dict[str, Any]],
        *,
        origin_game_id: str | None = None,
        origin_file: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Create a game from a log: ``{"game_id", "events", "finished"}`` (see the async client)."""
        method, path, kw = _Requests.import_log(log, origin_game_id, origin_file, idempotency_key)
        return self._call(method, path, **kw)

    def events_jsonl(self, game_id: str, token: str | None = None, from_seq: int = 0) -> Iterator[dict[str, Any]]:
        """The event log streamed as JSON Lines, one event at a time."""
        params = {"from_seq": from_seq, "format": "jsonl"}
        with self._http.stream("GET", f"/game/{game_id}/events", params=params, headers=_auth(token)) as r:
            if not r.is_success:
                r.read()
                _raise_for_error(r)
            for line in r.iter_lines():
                if line.strip():
                    yield json.loads(line)

    def spectator_state(self, game_id: str, delay_s: float | None = None) -> dict[str, Any]:
        """``{"seq", "view"}`` of the game as it was ``delay_s`` seconds ago (no token)."""
        method, path, kw = _Requests.spectator_state(game_id, delay_s)
        return self._call(method, path, **kw)

    def stream(self, game_id: str, token: str | None = None) -> Iterator[dict[str, Any]]:
        """Blocking iterator over the stream's messages; ends after ``finished``.

        Raises:
            ApiError: the server closed the stream with an error code (4401, 4404, ...).
        """
        url = stream_url(self.base_url, game_id, None)  # the token as a subprotocol
        last_error: dict[str, Any] | None = None
        with websockets.sync.client.connect(
            url, max_size=None, open_timeout=30, subprotocols=stream_subprotocols(token)
        ) as ws:
            try:
                for raw in ws:
                    message = json.loads(raw)
                    if message.get("type") == "error":
                        last_error = message
                        continue
                    yield message
                    if message.get("type") == "finished":
                        return
            except ConnectionClosed as exc:
                err = _closed_error(exc, last_error)
                if err is not None:
                    raise err from None
                return
            if ws.close_code is not None and 4000 <= ws.close_code < 5000:
                err = (last_error or {}).get("error") or {}
                raise ApiError(ws.close_code - 4000, str(err.get("code", "ERROR")), str(err.get("message", "")))
