"""The CellWar JSON config and the default start (docs/architecture/rules.md "CellWar").

``{"width": 16, "height": 16, "players": 2, "units"?: [{"owner": 1, "type": "infantry",
"x": 0, "y": 0, "standing"?: 1}], "disconnect_timeout_s"?: 30}``.

Decisions where the seed is silent (recorded here):

- width and height are 4..64 cells; players 2..8.
- ``units`` replaces the default start; every player must own at least one unit, no two
  units may share a cell. ``standing`` is only for fortifications (1..3, default 1); a
  fortification given with standing 3 is a factory (seed: "на 3 — принудительно
  становится Фабрикой") and is normalised to ``{"type": "factory"}``.
- The default start is stored explicitly in the normalised config, so
  ``config_from_dict(config_to_dict(c)) == c`` (a folded ``GameCreated`` gives the same
  state as the command that created it).
- Default start: each player 2 infantry on two horizontally adjacent cells at spread
  positions, corners first: top-left, bottom-right, top-right, bottom-left, then the
  edge midpoints top, bottom, left, right (there the pair is vertical). A board too small
  for that (overlapping positions) is ``INVALID_CONFIG``.
- ``disconnect_timeout_s`` (seconds, > 0, default 30) is only stored; the session uses it.
- ``turn_time_s`` (seconds per turn, 1..86400, default none) and ``rated`` (default false)
  are the options every multiplayer kind shares (:mod:`engine.options`); they are in the
  normalised config only when set.
- ``spectators``: who may watch the game while it runs (docs/spectators.md).
  ``"finished"`` (the default): nobody but its players until it has ended (a fog game's
  present and recent past are the whole position of a turn-based game, so a player in a
  second tab must not see its opponent through a spectator's delay; Lichess delays its
  spectators for the same reason, lichess-org/lila#12720). ``"live"``: delayed
  spectators (at least 10 s late) while it runs. ``"live"`` in a rated game is refused
  (``LIVE_SPECTATORS_RATED``, HTTP 422): a rated result must not be won with a second
  tab. Normalised only when ``"live"``, so a config without the key (every game
  recorded before it existed) keeps its bytes and hash and reads as ``"finished"``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from cellwar.v1.codes import ErrorCode
from engine.cellwar.units import FACTORY, FACTORY_AT, FORTIFICATION, INFANTRY, UNIT_TYPES
from engine.errors import GameError
from engine.options import OPTION_KEYS, options_dict, parse_rated, parse_turn_time

#: Board side limits in cells.
MIN_SIDE, MAX_SIDE = 4, 64
#: Seat limits.
MIN_PLAYERS, MAX_PLAYERS = 2, 8
#: Upper bound of ``disconnect_timeout_s`` (one day, in seconds).
MAX_TIMEOUT_S = 86_400

#: ``spectators`` values: nobody watches before the end (the default) / delayed
#: spectators while it runs.
SPECTATORS_FINISHED, SPECTATORS_LIVE = "finished", "live"
SPECTATORS_VALUES = (SPECTATORS_FINISHED, SPECTATORS_LIVE)

_KEYS = (
    frozenset({"width", "height", "players", "units", "disconnect_timeout_s", "spectators"})
    | OPTION_KEYS
)
_UNIT_KEYS = frozenset({"owner", "type", "x", "y", "standing"})


@dataclass(frozen=True)
class UnitSpec:
    """A unit of the start position.

    Attributes:
        owner: player id 1..players.
        type: ``"infantry"``, ``"fortification"`` or ``"factory"``.
        x, y: column and row in cells.
        standing: fortification standing counter 1..2; 0 for the other types.
    """

    owner: int
    type: str
    x: int
    y: int
    standing: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON form; ``standing`` only for fortifications."""
        out: dict[str, Any] = {"owner": self.owner, "type": self.type, "x": self.x, "y": self.y}
        if self.type == FORTIFICATION:
            out["standing"] = self.standing
        return out


@dataclass(frozen=True)
class CellWarConfig:
    """Settings of one CellWar game.

    Attributes:
        width, height: board size in cells (4..64 each).
        players: number of seats (2..8).
        units: the start position, in config order (ids are drawn per owner,
            :mod:`engine.cellwar.ids`).
        disconnect_timeout_s: seconds the session waits for a lost player (> 0).
        turn_time_s: seconds per turn (None = no timer; :mod:`engine.timers`).
        rated: a game made by link that counts for ratings (:mod:`engine.options`).
        spectators: ``"finished"`` (spectators once it has ended) or ``"live"`` (delayed
            spectators while it runs); module docstring.
    """

    kind: ClassVar[str] = "cellwar"

    width: int = 16
    height: int = 16
    players: int = 2
    units: tuple[UnitSpec, ...] = ()
    disconnect_timeout_s: float = 30
    turn_time_s: int | None = None
    rated: bool = False
    spectators: str = SPECTATORS_FINISHED

    @property
    def live_spectators(self) -> bool:
        """Delayed spectators may watch while the game runs."""
        return self.spectators == SPECTATORS_LIVE


def _bad(message: str) -> GameError:
    return GameError(ErrorCode.INVALID_CONFIG, message)


def _int(value: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    if not lo <= value <= hi:
        raise _bad(f"{name} must be in {lo}..{hi}, got {value}")
    return value


def _timeout(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad(f"disconnect_timeout_s must be a number of seconds > 0, got {value!r}")
    if not math.isfinite(value) or not 0 < value <= MAX_TIMEOUT_S:
        raise _bad(f"disconnect_timeout_s must be in (0, {MAX_TIMEOUT_S}] seconds, got {value}")
    value = float(value)
    return int(value) if value.is_integer() else value


def _spectators(value: Any, rated: bool) -> str:
    """``spectators`` of a JSON config (absent or null: ``"finished"``).

    Raises:
        GameError: ``INVALID_CONFIG`` for another value; ``LIVE_SPECTATORS_RATED`` for
            ``"live"`` in a rated game.
    """
    if value is None:
        return SPECTATORS_FINISHED
    if value not in SPECTATORS_VALUES:
        raise _bad(f"spectators must be one of {list(SPECTATORS_VALUES)}, got {value!r}")
    if value == SPECTATORS_LIVE and rated:
        raise GameError(
            ErrorCode.LIVE_SPECTATORS_RATED,
            'a rated game cannot have live spectators ("spectators": "live"): they would show '
            "a player its opponents' units; spectators may watch it once it has ended",
        )
    return value


def default_start(width: int, height: int, players: int) -> tuple[UnitSpec, ...]:
    """The default start: 2 infantry per player, corners first (see the module docstring).

    Raises:
        GameError: ``INVALID_CONFIG`` when the board is too small for the positions.
    """
    w, h = width, height
    mx, my = w // 2, h // 2
    anchors = (
        ((0, 0), (1, 0)),  # top-left
        ((w - 1, h - 1), (w - 2, h - 1)),  # bottom-right
        ((w - 1, 0), (w - 2, 0)),  # top-right
        ((0, h - 1), (1, h - 1)),  # bottom-left
        ((mx - 1, 0), (mx, 0)),  # top middle
        ((mx, h - 1), (mx - 1, h - 1)),  # bottom middle
        ((0, my - 1), (0, my)),  # left middle
        ((w - 1, my), (w - 1, my - 1)),  # right middle
    )
    specs = tuple(
        UnitSpec(owner, INFANTRY, x, y)
        for owner, cells in enumerate(anchors[:players], start=1)
        for x, y in cells
    )
    if len({(s.x, s.y) for s in specs}) != len(specs):
        raise _bad(
            f"a {width}x{height} board is too small for the default start of {players} players;"
            " use a larger board or give explicit units"
        )
    return specs


def _unit_spec(item: Any, i: int, width: int, height: int, players: int) -> UnitSpec:
    where = f"units[{i}]"
    if not isinstance(item, Mapping):
        raise _bad(f"{where} must be an object {{owner, type, x, y, standing?}}")
    unknown = sorted(set(item) - _UNIT_KEYS)
    if unknown:
        raise _bad(f"{where} has unknown keys {unknown}; allowed: {sorted(_UNIT_KEYS)}")
    for key in ("owner", "type", "x", "y"):
        if key not in item:
            raise _bad(f"{where} is missing {key!r}")
    owner = _int(item["owner"], f"{where}.owner", 1, players)
    utype = item["type"]
    if utype not in UNIT_TYPES:
        raise _bad(f"{where}.type must be one of {list(UNIT_TYPES)}, got {utype!r}")
    x = _int(item["x"], f"{where}.x", 0, width - 1)
    y = _int(item["y"], f"{where}.y", 0, height - 1)
    standing = item.get("standing")
    if utype != FORTIFICATION:
        if standing is not None:
            raise _bad(f"{where}.standing is only for fortifications")
        return UnitSpec(owner, utype, x, y)
    standing = 1 if standing is None else _int(standing, f"{where}.standing", 1, FACTORY_AT)
    if standing == FACTORY_AT:
        return UnitSpec(owner, FACTORY, x, y)
    return UnitSpec(owner, FORTIFICATION, x, y, standing)


def config_from_dict(data: Mapping[str, Any]) -> CellWarConfig:
    """Validate a JSON config, filling defaults (16×16, 2 players, default start, 30 s, no
    turn timer, not rated, spectators once finished).

    Raises:
        GameError: ``INVALID_CONFIG`` naming the field: an unknown key, a wrong type, a
            value out of range, a unit off the board, two units on one cell, a player
            without units, or a board too small for the default start;
            ``LIVE_SPECTATORS_RATED``: ``"spectators": "live"`` with ``"rated": true``.
    """
    if not isinstance(data, Mapping):
        raise _bad("config must be a JSON object")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise _bad(f"unknown config keys {unknown}; allowed: {sorted(_KEYS)}")
    width = _int(data.get("width", 16), "width", MIN_SIDE, MAX_SIDE)
    height = _int(data.get("height", 16), "height", MIN_SIDE, MAX_SIDE)
    players = _int(data.get("players", 2), "players", MIN_PLAYERS, MAX_PLAYERS)
    timeout = _timeout(data.get("disconnect_timeout_s", 30))
    raw_units = data.get("units")
    if raw_units is None:
        units = default_start(width, height, players)
    else:
        if not isinstance(raw_units, list | tuple) or not raw_units:
            raise _bad("units must be a non-empty list of {owner, type, x, y, standing?}")
        units = tuple(_unit_spec(u, i, width, height, players) for i, u in enumerate(raw_units))
        seen: dict[tuple[int, int], int] = {}
        for i, u in enumerate(units):
            if (u.x, u.y) in seen:
                raise _bad(f"units[{i}] and units[{seen[(u.x, u.y)]}] are both on ({u.x}, {u.y})")
            seen[(u.x, u.y)] = i
        missing = sorted(set(range(1, players + 1)) - {u.owner for u in units})
        if missing:
            raise _bad(f"players {missing} have no units; every player needs at least one")
    turn_time_s = parse_turn_time(data.get("turn_time_s"))
    rated = parse_rated(data.get("rated"))
    spectators = _spectators(data.get("spectators"), rated)
    return CellWarConfig(width, height, players, units, timeout, turn_time_s, rated, spectators)


def config_to_dict(config: CellWarConfig) -> dict[str, Any]:
    """The normalised JSON config (defaults filled in, the start position explicit;
    ``turn_time_s`` and ``rated`` only when set: :mod:`engine.options`; ``spectators``
    only when ``"live"``)."""
    out = {
        "width": config.width,
        "height": config.height,
        "players": config.players,
        "units": [u.to_dict() for u in config.units],
        "disconnect_timeout_s": config.disconnect_timeout_s,
        **options_dict(config.turn_time_s, config.rated),
    }
    if config.live_spectators:
        out["spectators"] = SPECTATORS_LIVE
    return out
