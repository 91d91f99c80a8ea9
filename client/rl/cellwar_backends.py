"""Where a CellWar environment's game lives: in this process on the engine library
(:class:`LocalCellWar`), or on a CellWar server through the public REST API
(:class:`RemoteCellWar`). Both have the same methods, so
:class:`client.rl.cellwar.CellWarEnv` plays either without knowing which.

A backend answers only through a player's view and the legal actions of that player
(engine ``get_visible_state`` / ``get_valid_actions``, or ``GET /state`` /
``GET /valid_actions``); the environment builds observations from nothing else.

The unit that must act is the first unit of the engine's list of legal actions
(``get_valid_actions(state, player)``: combat units by id, then factories), so the
environment asks for one unit at a time in the engine's order.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from cellwar.v1.codes import EventType

#: A legal move of the unit that must act: (unit_id, [(dx, dy), ...]).
Acting = tuple[Any, list[tuple[int, int]]]


class CellWarBackend(Protocol):
    """What :class:`client.rl.cellwar.CellWarEnv` needs of a game.

    ``players``: seats of the game; ``seats``: the seats this environment plays (after
    :meth:`reset`). Player ids are 1..players.
    """

    players: int
    width: int
    height: int
    seats: tuple[int, ...]

    def reset(self, units: list[dict[str, Any]] | None) -> None:
        """Start a new game (``units``: an explicit start, or None for the default)."""

    def turn(self) -> int:
        """The player to act, 0 when the game is finished."""

    def round(self) -> int:
        """The round number (1 in the first round)."""

    def winner(self) -> int | None:
        """The winner once finished, else None."""

    def out(self) -> frozenset[int]:
        """Players who are out (no units, or removed)."""

    def view(self, player: int) -> dict[str, Any]:
        """The player's view (the shape of ``engine.cellwar.fog.get_visible_state``)."""

    def acting(self, player: int) -> Acting | None:
        """The unit that must act now and its legal vectors; None when no unit can."""

    def act(self, player: int, unit_id: Any, dx: int, dy: int) -> None:
        """Apply the unit's action (raises on a refusal, changing nothing)."""

    def end_turn(self, player: int) -> None:
        """End the player's turn."""

    def wait(self) -> None:
        """Block until one of :attr:`seats` is to act or the game is finished."""


def random_start(width: int, height: int, players: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """A seeded random start: 2 infantry per player on two neighbouring cells.

    With 2 players the start is point-symmetric (player 2 mirrors player 1 through the
    board's centre, so neither side is favoured); with more, every pair is drawn at
    random on free cells.

    Returns:
        The config's ``units`` list ``[{"owner", "type", "x", "y"}]``.
    """
    taken: set[tuple[int, int]] = set()
    units: list[dict[str, Any]] = []

    def pair() -> list[tuple[int, int]]:
        while True:
            x, y = int(rng.integers(0, width)), int(rng.integers(0, height))
            dx, dy = [(1, 0), (0, 1), (-1, 0), (0, -1)][int(rng.integers(0, 4))]
            cells = [(x, y), (x + dx, y + dy)]
            ok = all(0 <= cx < width and 0 <= cy < height and (cx, cy) not in taken for cx, cy in cells)
            if players == 2:
                mirror = [(width - 1 - cx, height - 1 - cy) for cx, cy in cells]
                ok = ok and not set(mirror) & set(cells) and all(
                    max(abs(cx - mx), abs(cy - my)) > 2 for cx, cy in cells for mx, my in mirror
                )
                if ok:
                    return cells + mirror
            elif ok:
                return cells

    if players == 2:
        cells = pair()
        for owner, (x, y) in zip((1, 1, 2, 2), cells, strict=True):
            units.append({"owner": owner, "type": "infantry", "x": x, "y": y})
        return units
    for owner in range(1, players + 1):
        for x, y in pair():
            taken.add((x, y))
            units.append({"owner": owner, "type": "infantry", "x": x, "y": y})
    return units


class LocalCellWar:
    """A CellWar game in this process on the engine library.

    The game is an immutable engine state plus its event log (``(type, actor,
    payload)`` in the engine's event shapes: ``GameCreated``, ``PlayerJoined``,
    ``ActionApplied``, ``TurnEnded``), so :meth:`events` / :meth:`load` save and
    restore it by replay through :func:`engine.fold`.

    Args:
        width, height: board size in cells (4..64).
        players: seats (2..8); the environment plays all of them.
    """

    def __init__(self, width: int, height: int, players: int) -> None:
        import engine  # the in-process backend is the only part of client/ on the engine

        self._engine = engine
        self.width, self.height, self.players = width, height, players
        self.seats = tuple(range(1, players + 1))
        self.state: Any = None
        self.log: list[tuple[str, int, dict[str, Any]]] = []
        self._views: dict[int, dict[str, Any]] = {}
        self._acting: dict[int, Acting | None] = {}
        self._order: list[Any] = []
        self._order_player = 0
        self._turn: int | None = None

    # -- game lifecycle

    def reset(self, units: list[dict[str, Any]] | None) -> None:
        """A new game with every seat joined (player 1 to act)."""
        config: dict[str, Any] = {"width": self.width, "height": self.height, "players": self.players}
        if units is not None:
            config["units"] = units
        drafts, state = self._engine.decide(None, "create", 0, {"kind": "cellwar", "config": config})
        log = [(d.type, d.actor, d.payload) for d in drafts]
        for seat in self.seats:
            drafts, state = self._engine.decide(state, "join", 0, {"name": f"player_{seat}"})
            log += [(d.type, d.actor, d.payload) for d in drafts]
        self._set(state, log)

    def events(self) -> list[tuple[str, int, dict[str, Any]]]:
        """The event log so far (a copy; payloads are shared and never changed)."""
        return list(self.log)

    def load(self, events: Sequence[Sequence[Any]]) -> None:
        """Replace the game by the fold of ``events`` (``[type, actor, payload]`` each).

        Raises:
            engine.GameError: the events do not fold (not a CellWar log of this size).
            ValueError: the log is of another board size or seat count.
        """
        log = [(str(e[0]), int(e[1]), dict(e[2])) for e in events]
        state = self._engine.fold(None, log)
        if getattr(state, "kind", None) != "cellwar":
            raise ValueError("the events are not a CellWar game")
        view = self._engine.get_visible_state(state, None)
        if (view["width"], view["height"], len(view["players"])) != (self.width, self.height, self.players):
            raise ValueError(
                f"the events are a {view['width']}x{view['height']} game of {len(view['players'])} "
                f"players, this environment is {self.width}x{self.height} with {self.players}"
            )
        self._set(state, log)

    def copy(self) -> LocalCellWar:
        """An independent copy sharing the immutable state (cheap: for search)."""
        other = LocalCellWar.__new__(LocalCellWar)
        other.__dict__.update(self.__dict__)
        other.log = list(self.log)
        other._views = dict(self._views)
        other._acting = dict(self._acting)
        other._order = list(self._order)
        return other

    def _set(self, state: Any, log: list[tuple[str, int, dict[str, Any]]]) -> None:
        self.state, self.log = state, log
        self._views, self._acting, self._turn = {}, {}, None
        self._order, self._order_player = [], 0

    def _apply(self, state: Any, event: tuple[str, int, dict[str, Any]]) -> None:
        self.state = state
        self.log.append(event)
        self._views, self._acting, self._turn = {}, {}, None

    # -- reading

    def turn(self) -> int:
        """Player to act (0 once finished)."""
        if self._turn is None:
            self._turn = self._engine.summary(self.state).turn
        return self._turn

    def _public(self) -> dict[str, Any]:
        # Round and who is out are public: read them from the view the next
        # observation needs anyway (the player to act), not a view of its own.
        return self.view(self.turn() or self.seats[0])

    def round(self) -> int:
        """Round number (public in every view)."""
        return int(self._public()["round"])

    def winner(self) -> int | None:
        """Winner once finished."""
        return self._engine.get_winner(self.state)

    def out(self) -> frozenset[int]:
        """Players who are out (public in every view)."""
        return frozenset(p["id"] for p in self._public()["players"] if p["out"])

    def view(self, player: int) -> dict[str, Any]:
        """The player's view (computed once per state)."""
        view = self._views.get(player)
        if view is None:
            view = self._views[player] = self._engine.get_visible_state(self.state, player)
        return view

    def acting(self, player: int) -> Acting | None:
        """The first unit of the engine's legal-action list and its vectors.

        Units act in the order of ``get_valid_actions(state, player)`` at the start of the
        turn; a unit that has acted (or died) has no legal action left, so the next one
        in that order acts. When the combat units are done the list is asked again
        (factories join it then). Equivalent to taking the first unit of a fresh full
        list every time (tested), at a fraction of the cost.
        """
        if player in self._acting:
            return self._acting[player]
        found: Acting | None = None
        if self.turn() == player:
            if self._order_player != player:
                self._order, self._order_player = [], player
            get = self._engine.get_valid_actions
            while self._order and found is None:
                uid = self._order[0]
                legal = get(self.state, player, uid)
                if legal:
                    found = (uid, [(a["dx"], a["dy"]) for a in legal])
                else:
                    self._order.pop(0)
            if found is None:
                everything = get(self.state, player)
                if everything:
                    order: list[Any] = []
                    for a in everything:
                        if not order or order[-1] != a["unit_id"]:
                            order.append(a["unit_id"])
                    self._order = order
                    uid = order[0]
                    found = (uid, [(a["dx"], a["dy"]) for a in everything if a["unit_id"] == uid])
        self._acting[player] = found
        return found

    # -- commands

    def act(self, player: int, unit_id: Any, dx: int, dy: int) -> None:
        """Apply ``{unit_id, dx, dy}`` (raises engine.GameError, changing nothing)."""
        action = {"unit_id": unit_id, "dx": dx, "dy": dy}
        self._apply(self._engine.apply_action(self.state, player, action), (EventType.ACTION_APPLIED, player, {"action": action}))
        if self._order and self._order[0] == unit_id:  # it has acted: the next one is due
            self._order.pop(0)

    def end_turn(self, player: int) -> None:
        """End the player's turn; the order of units is asked afresh next turn."""
        self._apply(self._engine.end_player_turn(self.state, player), (EventType.TURN_ENDED, player, {}))
        self._order, self._order_player = [], 0

    def wait(self) -> None:
        """Every seat is played here: nothing to wait for."""

    def spectator_view(self) -> dict[str, Any]:
        """The whole board (rendering only; never part of an observation)."""
        return self._engine.get_visible_state(self.state, None)


class RemoteCellWar:
    """A CellWar game on a server, through the public REST API (:mod:`client.sdk`).

    Without ``game_id`` each :meth:`reset` creates a new game and joins every seat (the
    environment plays them all). With ``game_id`` the first :meth:`reset` takes seats of
    that existing game: the ones whose ``tokens`` are given (joined by the caller), else
    ``join`` next free ones; it waits until every seat is taken (the game starts). The
    other seats are played by others, and :meth:`wait` polls until one of this
    environment's seats is to act.

    Args:
        url: the gateway, e.g. ``"http://localhost:8000"``.
        width, height, players: the game (for ``game_id``: as that game was created).
        game_id: join this game instead of creating one.
        join: seats to take in ``game_id`` (default 1).
        tokens: ``{player_id: player_token}`` of seats of ``game_id`` already joined.
        name: player name prefix.
        poll_s: seconds between polls while others play.
        timeout_s: longest wait for others (seconds) before ``TimeoutError``.
        client: a :class:`client.sdk.CellWarClient` to use (tests: a transport).
    """

    def __init__(
        self,
        url: str,
        width: int,
        height: int,
        players: int,
        *,
        game_id: str | None = None,
        join: int = 1,
        tokens: Mapping[int, str] | None = None,
        name: str = "rl",
        poll_s: float = 0.1,
        timeout_s: float = 600.0,
        client: Any = None,
    ) -> None:
        from client.sdk import CellWarClient, Seat

        self._seat_type = Seat
        self.given_tokens = {int(k): str(v) for k, v in (tokens or {}).items()}
        self.api = client if client is not None else CellWarClient(url)
        self.width, self.height, self.players = width, height, players
        self.fixed_game = game_id
        self.game_id: str | None = game_id
        self.join_count = join
        self.name = name
        self.poll_s = poll_s
        self.timeout_s = timeout_s
        self.seats: tuple[int, ...] = ()
        self.tokens: dict[int, str] = {}
        self._views: dict[int, dict[str, Any]] = {}
        self._acting: dict[int, Acting | None] = {}
        self._used = False

    def reset(self, units: list[dict[str, Any]] | None) -> None:
        """Create (or, with ``game_id``, join once) a game.

        Raises:
            RuntimeError: ``reset`` again on a joined ``game_id`` (a game is played once).
            client.sdk.ApiError: the server refused.
        """
        if self.fixed_game is not None:
            if self._used:
                raise RuntimeError(f"game {self.fixed_game} was already played: a joined game cannot be reset")
            if self.given_tokens:
                seats = [self._seat_type(self.fixed_game, pid, token) for pid, token in self.given_tokens.items()]
            else:
                seats = [self.api.join(self.fixed_game, f"{self.name}-{i + 1}") for i in range(self.join_count)]
        else:
            config: dict[str, Any] = {"width": self.width, "height": self.height, "players": self.players}
            if units is not None:
                config["units"] = units
            self.game_id = self.api.create_game("cellwar", config)
            seats = [self.api.join(self.game_id, f"{self.name}-{i + 1}") for i in range(self.players)]
        self._used = True
        self.tokens = {s.player_id: s.token for s in seats}
        self.seats = tuple(sorted(self.tokens))
        self._forget()
        deadline = time.monotonic() + self.timeout_s
        while self.view(self.seats[0]).get("phase") == "waiting":  # seats still open
            if time.monotonic() > deadline:
                raise TimeoutError(f"game {self.game_id} still waiting for players after {self.timeout_s} s")
            time.sleep(self.poll_s)
            self._forget()

    def _forget(self, keep: dict[int, dict[str, Any]] | None = None) -> None:
        self._views = dict(keep or {})
        self._acting = {}

    def _any_view(self) -> dict[str, Any]:
        if self._views:
            return next(iter(self._views.values()))
        return self.view(self.seats[0])

    def turn(self) -> int:
        """Player to act (0 once finished), from a view of one of this env's seats."""
        view = self._any_view()
        return 0 if view.get("phase") == "finished" else int(view.get("turn") or 0)

    def round(self) -> int:
        """Round number."""
        return int(self._any_view().get("round") or 0)

    def winner(self) -> int | None:
        """Winner once finished."""
        return self._any_view().get("winner")

    def out(self) -> frozenset[int]:
        """Players who are out."""
        return frozenset(p["id"] for p in self._any_view().get("players") or () if p.get("out"))

    def view(self, player: int) -> dict[str, Any]:
        """``GET /game/{id}/state`` of the seat (cached until the next command)."""
        view = self._views.get(player)
        if view is None:
            view = self._views[player] = self.api.state(self.game_id, self.tokens[player])
        return view

    def acting(self, player: int) -> Acting | None:
        """The first unit of ``GET /game/{id}/valid_actions`` and its vectors."""
        if player not in self._acting:
            found = None
            if self.turn() == player:
                legal = self.api.valid_actions(self.game_id, self.tokens[player])
                if legal:
                    uid = legal[0]["unit_id"]
                    found = (uid, [(a["dx"], a["dy"]) for a in legal if a["unit_id"] == uid])
            self._acting[player] = found
        return self._acting[player]

    def act(self, player: int, unit_id: Any, dx: int, dy: int) -> None:
        """``POST /game/{id}/action``; the answer's view is kept."""
        answer = self.api.move(self.game_id, self.tokens[player], unit_id, dx, dy)
        self._forget({player: answer["view"]})

    def end_turn(self, player: int) -> None:
        """``POST /game/{id}/end_turn``."""
        answer = self.api.end_turn(self.game_id, self.tokens[player])
        self._forget({player: answer["view"]})

    def wait(self) -> None:
        """Poll until one of this env's seats is to act or the game is finished.

        Raises:
            TimeoutError: nothing changed for ``timeout_s`` seconds.
        """
        deadline = time.monotonic() + self.timeout_s
        while True:
            self._forget()
            turn = self.turn()
            if turn == 0 or turn in self.tokens or not set(self.tokens) - self.out():
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"no turn for seats {self.seats} in {self.timeout_s} s")
            time.sleep(self.poll_s)

    def spectator_view(self) -> dict[str, Any]:
        """The view of this env's first seat (the server shows no one everything)."""
        return self.view(self.seats[0])

    def close(self) -> None:
        """Close the HTTP client."""
        self.api.close()


def first_unit(view: Mapping[str, Any], unit_id: Any) -> tuple[int, int] | None:
    """(x, y) of the own unit ``unit_id`` in a view, or None."""
    you = view.get("you")
    for u in view.get("units") or ():
        if u.get("id") == unit_id and u.get("owner") == you:
            return int(u["x"]), int(u["y"])
    return None
