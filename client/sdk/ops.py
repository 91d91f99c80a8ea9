"""Every REST operation of the SDK, written once for both clients.

An operation is a generator: it yields steps ``(method name, args, kwargs)``, a call of
that method of the client (``_call`` for one HTTP request with its retries, ``_sleep``,
or another operation), and gets back its result (or has its exception thrown in); what it
returns is the operation's result. :func:`install` turns each into a blocking method
(:class:`client.sdk.CellWarClient`) or a coroutine method
(:class:`client.sdk.AsyncCellWarClient`) with the same name, signature and docstring.
"""

from __future__ import annotations

import collections
import functools
import time
import uuid
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any

from client.sdk.core import (
    COMMAND_FRAME_BYTES,
    FALLBACK,
    FINAL_TICKET_STATUSES,
    LOBBY_PAGE,
    MESSAGES_KEPT,
    ApiError,
    Seat,
    _auth,
    _cells,
    _CommandFrames,
    _post_headers,
    _seat_of,
    _stamp_action,
)

#: One step of an operation: ``(client method name, args, kwargs)``.
Step = tuple[str, tuple[Any, ...], dict[str, Any]]
Steps = Generator[Step, Any, Any]


def _call(method: str, path: str, **kwargs: Any) -> Step:
    """The step of one HTTP request (JSON answer back)."""
    return "_call", (method, path), kwargs


def _get(path: str, token: str | None = None, **kwargs: Any) -> Step:
    return _call("GET", path, headers=_auth(token), **kwargs)


def _post(path: str, token: str | None, key: str | None, profile_token: str | None = None, **kwargs: Any) -> Step:
    """A POST with its Idempotency-Key (``key``, else a fresh uuid4): safe to retry."""
    return _call("POST", path, headers=_post_headers(token, key, profile_token), **kwargs)


def _do(name: str, *args: Any, **kwargs: Any) -> Step:
    """The step of another method of the client (an override of it counts)."""
    return name, args, kwargs


class Operations:
    """The operations (generators; see the module). Each is annotated with the result
    type of the method it becomes; each client class gets them through :func:`install`."""

    # -- lobby and seats

    def create_game(
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
        body = {"kind": kind, "config": dict(config or {})}
        return (yield _post("/game/create", None, idempotency_key, profile_token, json=body))["game_id"]

    def create_campaign(
        self, level: int = 1, profile_token: str | None = None, *, idempotency_key: str | None = None
    ) -> str:
        """Start campaign level ``level`` (1..103), for a profile when ``profile_token`` is
        given. Raises ApiError 409 ``LEVEL_LOCKED`` for a level the profile has not reached."""
        kw = {"idempotency_key": idempotency_key, "profile_token": profile_token}
        return (yield _do("create_game", "campaign", {"level": level}, **kw))

    def join(
        self,
        game_id: str,
        name: str,
        *,
        idempotency_key: str | None = None,
        profile_token: str | None = None,
    ) -> Seat:
        """Take the next free seat of ``game_id`` (a :class:`Seat`). Raises ApiError 409
        ``GAME_FULL``. ``profile_token``: in a rated game (config ``"rated": true``), the
        profile whose rating the seat counts for."""
        data = yield _post(f"/game/{game_id}/join", None, idempotency_key, profile_token, json={"name": name})
        return Seat(game_id, int(data["player_id"]), str(data["player_token"]))

    def games(self) -> list[dict[str, Any]]:
        """The lobby: open and running games (``game_id, kind, phase, players_joined, ...``),
        every page of ``GET /games`` (oldest first)."""
        games: list[dict[str, Any]] = []
        params: dict[str, Any] = {"limit": LOBBY_PAGE}
        while True:
            page = yield _get("/games", params=params)
            games.extend(page["games"])
            if not page.get("next_cursor"):
                return games
            params = {"limit": LOBBY_PAGE, "cursor": page["next_cursor"]}

    # -- library and campaign profiles

    def patterns(self) -> dict[str, Any]:
        """The stamp library: ``{"categories": {category: [ids]}, "patterns": [{"id", "name",
        "category", "width", "height", "cells"}]}``."""
        return (yield _call("GET", "/patterns"))

    def levels(self, profile_token: str | None = None) -> list[dict[str, Any]]:
        """The campaign levels (``number, name, hint, width, height, zone, budget,
        hopeless``); with ``profile_token`` also ``unlocked`` and ``best`` each."""
        return (yield _get("/campaign/levels", profile_token))["levels"]

    def create_profile(self, name: str = "") -> dict[str, Any]:
        """A new campaign profile: ``{"profile_id", "profile_token"}`` (keep the token)."""
        return (yield _call("POST", "/profiles", json={"name": name}))

    def profile(self, profile_token: str) -> dict[str, Any]:
        """Campaign progress: ``{"profile_id", "name", "unlocked", "best"}``."""
        return (yield _get("/profile", profile_token))

    # -- reading

    def state(self, game_id: str, token: str) -> dict[str, Any]:
        """The player's view (docs/api/index.md "Views and `seq`")."""
        return (yield _get(f"/game/{game_id}/state", token))

    def events(self, game_id: str, token: str | None = None, from_seq: int = 0) -> list[dict[str, Any]]:
        """The event log from ``from_seq`` (``seq, type, actor, payload, time, state_hash,
        engine_version`` each). Without a token: only once the game is finished."""
        return (yield _get(f"/game/{game_id}/events", token, params={"from_seq": from_seq}))["events"]

    def replay(self, game_id: str, seq: int, token: str | None = None) -> dict[str, Any]:
        """``{"seq", "view"}``: the game as it was right after event ``seq``."""
        return (yield _get(f"/game/{game_id}/replay", token, params={"seq": seq}))

    def valid_actions(self, game_id: str, token: str, unit_id: int | None = None) -> list[dict[str, Any]]:
        """CellWar: legal ``{unit_id, dx, dy, kind}`` of one unit (or all of yours)."""
        params = {"unit_id": unit_id} if unit_id is not None else {}
        return (yield _get(f"/game/{game_id}/valid_actions", token, params=params))["actions"]

    def health(self) -> dict[str, Any]:
        """``/readyz``: raises ApiError 503 when the backend is not ready."""
        return (yield _call("GET", "/readyz"))

    def spectator_state(self, game_id: str, delay_s: float | None = None) -> dict[str, Any]:
        """``{"seq", "view"}`` of the game as it was ``delay_s`` seconds ago (no token;
        default: the least the game allows, 10 s for a running CellWar game created with
        ``"spectators": "live"``). Raises ApiError 409 ``NOT_YET_VISIBLE`` while no event
        is that old, 409 ``SPECTATORS_AFTER_END`` for a running CellWar game without live
        spectators (docs/spectators.md)."""
        params: dict[str, Any] = {"spectate": 1}
        if delay_s is not None:
            params["delay_s"] = delay_s
        return (yield _call("GET", f"/game/{game_id}/state", params=params))

    # -- commands (each returns {"seq", "view"})

    def act(
        self, game_id: str, token: str, action: dict[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Send any action object of the contract; returns ``{"seq", "view"}``."""
        return (yield _post(f"/game/{game_id}/action", token, idempotency_key, json=action))

    def end_turn(self, game_id: str, token: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """End your drawing turn (Life placement) or say ready (redraw); CellWar: end turn."""
        return (yield _post(f"/game/{game_id}/end_turn", token, idempotency_key))

    def leave(self, game_id: str, token: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """Leave the game (you and your cells/units are removed)."""
        return (yield _post(f"/game/{game_id}/leave", token, idempotency_key))

    def place(self, game_id: str, token: str, cells: Iterable[Sequence[int]], **kw: Any) -> dict[str, Any]:
        """Place cells ``[(x, y), ...]`` (all or nothing: OUT_OF_ZONE / BUDGET_EXCEEDED)."""
        return (yield _do("act", game_id, token, {"type": "place", "cells": _cells(cells)}, **kw))

    def erase(self, game_id: str, token: str, cells: Iterable[Sequence[int]], **kw: Any) -> dict[str, Any]:
        """Erase own cells ``[(x, y), ...]``."""
        return (yield _do("act", game_id, token, {"type": "erase", "cells": _cells(cells)}, **kw))

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
        """Stamp a library pattern (``"glider"``) or RLE text with its top-left at (x, y).

        Raises:
            TypeError: ``x``/``y`` not integers, or neither/both of ``pattern`` and ``rle``.
            ApiError: the server refused the stamp.
        """
        action = _stamp_action(x, y, pattern, rle, rotation)
        return (yield _do("act", game_id, token, action, **kw))

    def speed(self, game_id: str, token: str, multiplier: int, **kw: Any) -> dict[str, Any]:
        """Set the simulation speed multiplier (1, 2, 4 or 8 × 8 generations/s)."""
        return (yield _do("act", game_id, token, {"type": "speed", "multiplier": multiplier}, **kw))

    def simple(self, game_id: str, token: str, type_: str, **kw: Any) -> dict[str, Any]:
        """An action without arguments: ``reset_turn``, ``pause``, ``resume``,
        ``propose_finish``, ``resign``, ``restart``."""
        return (yield _do("act", game_id, token, {"type": type_}, **kw))

    def move(self, game_id: str, token: str, unit_id: int, dx: int, dy: int, **kw: Any) -> dict[str, Any]:
        """CellWar: unit ``unit_id`` acts toward (dx, dy), each in -1..1."""
        return (yield _do("act", game_id, token, {"unit_id": unit_id, "dx": dx, "dy": dy}, **kw))

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
        """Ask for a match: ``{"ticket_id", "ticket_token"}``. ``config`` is partial (a
        field another ticket sets differently keeps you apart); ``profile_token`` rates
        the game for that profile (ApiError 409 ``ALREADY_QUEUED`` when it already
        searches in this queue)."""
        body = {"kind": kind, "players": players, "name": name, "config": dict(config or {})}
        return (yield _post("/matchmaking/tickets", None, idempotency_key, profile_token, json=body))

    def ticket(self, ticket_id: str, ticket_token: str) -> dict[str, Any]:
        """The ticket: ``{"status", "wait_s", "queue", ..., "match"?: {"game_id",
        "player_id", "player_token"}}``."""
        return (yield _get(f"/matchmaking/tickets/{ticket_id}", ticket_token))

    def cancel_ticket(self, ticket_id: str, ticket_token: str) -> dict[str, Any]:
        """Cancel a searching ticket (ApiError 409 ``ALREADY_MATCHED`` when too late)."""
        return (yield _call("DELETE", f"/matchmaking/tickets/{ticket_id}", headers=_auth(ticket_token)))

    def wait_for_match(
        self, ticket_id: str, ticket_token: str, *, timeout: float = 330.0, poll_s: float = 0.25
    ) -> Seat:
        """Poll the ticket every ``poll_s`` seconds until it ends; the matched seat.

        Raises:
            ApiError: the ticket ended without a match (code ``TICKET_CANCELLED`` /
                ``TICKET_EXPIRED``), or the server refused.
            TimeoutError: still searching after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            t = yield _do("ticket", ticket_id, ticket_token)
            if t.get("status") in FINAL_TICKET_STATUSES:
                return _seat_of(t)
            if time.monotonic() > deadline:
                raise TimeoutError(f"ticket {ticket_id} still searching after {timeout} s")
            yield _do("_sleep", poll_s)

    def find_match(
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
        created = yield _do("create_ticket", kind, players, name, config, profile_token=profile_token)
        try:
            return (yield _do("wait_for_match", created["ticket_id"], created["ticket_token"], timeout=timeout))
        except Exception:
            try:
                yield _do("cancel_ticket", created["ticket_id"], created["ticket_token"])
            except Exception:  # noqa: BLE001 - the original error matters
                pass
            raise

    def queues(self) -> list[dict[str, Any]]:
        """Queue statistics: ``[{"queue", "kind", "players", "waiting", "in_games",
        "matches_last_minute", "median_wait_s", "p90_wait_s"}]``."""
        return (yield _call("GET", "/matchmaking/queues"))["queues"]

    def leaderboard(self, kind: str = "life", players: int = 2) -> list[dict[str, Any]]:
        """The top 100 of a queue: ``[{"profile_id", "name", "rating", "games"}]``."""
        return (yield _call("GET", "/leaderboard", params={"kind": kind, "players": players}))["entries"]

    # -- replay tools (docs/replays.md)

    def fork(self, game_id: str, seq: int, token: str | None = None, *, idempotency_key: str | None = None) -> str:
        """A new game starting in the state right after event ``seq`` of ``game_id``, every
        seat free; returns its id. Anyone may fork a finished game; a running one only its
        players (``token``). Raises ApiError 403 ``FORBIDDEN``, 422 ``MALFORMED``."""
        return (yield _post(f"/game/{game_id}/fork", token, idempotency_key, json={"seq": seq}))["game_id"]

    def import_log(
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
        params = {k: v for k, v in (("origin_game_id", origin_game_id), ("origin_file", origin_file)) if v}
        headers = _post_headers(None, idempotency_key)
        if isinstance(log, str | bytes):
            headers["Content-Type"] = "application/x-ndjson"
            body: dict[str, Any] = {"content": log.encode() if isinstance(log, str) else log}
        else:
            body = {"json": {"events": list(log)}}
        return (yield _call("POST", "/games/import", headers=headers, params=params, **body))


class CommandOperations:
    """The commands of one seat over its stream socket (:meth:`AsyncCellWarClient.commands`,
    docs/api/websocket.md), written once for both flavours: the ``id`` of a frame is its
    idempotency key, so a command whose answer did not come (the socket closed, or no
    answer within the client's timeout) or came as 503 or 413 is sent again over REST with
    the same key, and the server applies it once; a frame above
    :data:`client.sdk.core.COMMAND_FRAME_BYTES` goes over REST at once."""

    def __init__(self, client: Any, game_id: str, token: str) -> None:
        self._client, self.game_id, self.token = client, game_id, token
        self._frames = _CommandFrames()
        #: Stream messages read and not yet given to :meth:`messages` (the oldest dropped first).
        self._kept: collections.deque[dict[str, Any]] = collections.deque(maxlen=MESSAGES_KEPT)
        #: Why the socket could not be opened (then every command goes over REST), else None.
        self.open_error: Exception | None = None

    def act(self, action: dict[str, Any], *, idempotency_key: str | None = None) -> dict[str, Any]:
        """Send an action object of the contract (the body of ``POST /game/{id}/action``);
        returns ``{"seq", "view"}``.

        Raises:
            ApiError: the server refused it (the same status and code as over REST).
        """
        return (yield from self._command(idempotency_key or str(uuid.uuid4()), action))

    def end_turn(self, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """End your turn / say ready; returns ``{"seq", "view"}``.

        Raises:
            ApiError: the server refused it (the same status and code as over REST).
        """
        return (yield from self._command(idempotency_key or str(uuid.uuid4()), None))

    def valid_actions(self, unit_id: int | None = None) -> list[dict[str, Any]]:
        """The legal moves of the seat's unit ``unit_id`` now (every unit of the seat's
        for None), each ``{"unit_id", "dx", "dy", "kind"}``: over the socket when it is
        open (answered in order after the commands sent before it), else
        ``GET /game/{id}/valid_actions``. A server that does not know the frame
        (``UNKNOWN_FRAME_TYPE``) is asked over REST.

        Raises:
            ApiError: the server refused it (the same status and code as over REST).
        """
        answer: Any = FALLBACK
        if self.over_socket:
            key = str(uuid.uuid4())
            answer = yield _do("_exchange", key, _CommandFrames.valid_actions(key, unit_id))
        if answer is FALLBACK or (isinstance(answer, ApiError) and answer.code == "UNKNOWN_FRAME_TYPE"):
            return (yield _do("_rest", "valid_actions", self.game_id, self.token, unit_id))
        if isinstance(answer, ApiError):
            raise answer
        return answer

    def _command(self, key: str, action: dict[str, Any] | None) -> Steps:
        frame = _CommandFrames.command(key, action)
        answer: Any = FALLBACK
        if self.over_socket and len(frame.encode()) <= COMMAND_FRAME_BYTES:
            answer = yield _do("_exchange", key, frame)
        if answer is FALLBACK:
            if action is None:
                return (yield _do("_rest", "end_turn", self.game_id, self.token, idempotency_key=key))
            return (yield _do("_rest", "act", self.game_id, self.token, action, idempotency_key=key))
        if isinstance(answer, ApiError):
            raise answer
        return answer

    @property
    def over_socket(self) -> bool:
        """Whether commands go over the socket now (else over REST)."""
        raise NotImplementedError


def install(cls: type, ops: type, wrap: Callable[[Callable[..., Steps]], Callable[..., Any]]) -> type:
    """Give ``cls`` every public operation of ``ops`` it does not define itself, as
    ``wrap(operation)`` (which runs the steps), with its name, signature and docstring."""
    for name, op in vars(ops).items():
        if callable(op) and not name.startswith("_") and name not in cls.__dict__:
            setattr(cls, name, functools.wraps(op)(wrap(op)))
    return cls
