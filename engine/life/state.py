"""Values of a Life game: config, players, state, and their canonical encoding.

Every value here is a frozen dataclass; boards are stored as immutable ``bytes``
(row-major, ``height * width`` cells, 0 dead, k = colour k = player k), so an old state
stays valid after a new one is made from it (snapshots and rollback rely on it).
The rules live in :mod:`engine.life.game`.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from cellwar.v1.codes import ErrorCode
from engine.errors import GameError
from engine.life.zones import zones_for
from engine.options import OPTION_KEYS, options_dict, parse_rated, parse_turn_time
from engine.versions import ENGINE_VERSION
from engine.versions import check as check_version

#: Board side limits (cells; the create body's ``width``/``height``, docs/api/openapi.md).
MIN_SIDE, MAX_SIDE = 8, 1024
#: Upper bound of integer settings (budget, max_generations): an int32, as on the wire.
MAX_INT = 2**31 - 1
#: Colour names by player id (a view's ``players[].color``).
COLOURS = {1: "red", 2: "green", 3: "blue", 4: "yellow"}
#: Speed multipliers of the action ``speed`` (x 8 generations/s).
SPEEDS = (1, 2, 4, 8)
#: Phases (docs/architecture/contracts.md "Phases (Life)", ``waiting`` for open seats).
PHASES = ("waiting", "placement", "running", "paused", "redraw", "finished")

_CONFIG_DEFAULTS: dict[str, Any] = {
    "width": 60,
    "height": 60,
    "players": 2,
    "budget": 100,
    "torus": False,
    "max_generations": 5000,
}


@dataclass(frozen=True)
class LifeConfig:
    """Settings of one Life game (the create body's ``config``, docs/api/index.md "Games").

    Attributes:
        width, height: board size in cells, 8..1024 each.
        players: 2 or 4 seats.
        budget: cells each player may place over the whole game (>= 0).
        torus: wrap both axes; otherwise hard edges.
        max_generations: the game ends by score when this many generations have run.
        turn_time_s: seconds per placement turn and per redraw round (None = no timer;
            :mod:`engine.options`, :mod:`engine.timers`).
        rated: a game made by link that counts for ratings (:mod:`engine.options`).
    """

    kind: ClassVar[str] = "life"

    width: int = 60
    height: int = 60
    players: int = 2
    budget: int = 100
    torus: bool = False
    max_generations: int = 5000
    turn_time_s: int | None = None
    rated: bool = False


def _int_field(data: Mapping[str, Any], name: str, lo: int, hi: int) -> int:
    value = data.get(name, _CONFIG_DEFAULTS[name])
    if isinstance(value, bool) or not isinstance(value, int):
        raise GameError(ErrorCode.INVALID_CONFIG, f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    if not lo <= value <= hi:
        raise GameError(ErrorCode.INVALID_CONFIG, f"{name} must be in {lo}..{hi}, got {value}")
    return value


def config_from_dict(data: Mapping[str, Any]) -> LifeConfig:
    """Validate a JSON config, filling defaults (60×60, 2 players, budget 100, hard edges,
    5000 generations, no turn timer, not rated).

    Raises:
        GameError: ``INVALID_CONFIG`` naming the field for an unknown key, a wrong type or
            a value out of range (width/height 8..1024, players 2 or 4, budget >= 0,
            max_generations >= 1, turn_time_s 1..86400 or null, rated a boolean).
    """
    if not isinstance(data, Mapping):
        raise GameError(ErrorCode.INVALID_CONFIG, "config must be a JSON object")
    known = set(_CONFIG_DEFAULTS) | OPTION_KEYS
    unknown = sorted(set(data) - known)
    if unknown:
        raise GameError(ErrorCode.INVALID_CONFIG, f"unknown config key(s) {unknown}; known: {sorted(known)}")
    width = _int_field(data, "width", MIN_SIDE, MAX_SIDE)
    height = _int_field(data, "height", MIN_SIDE, MAX_SIDE)
    players = data.get("players", 2)
    if isinstance(players, bool) or players not in (2, 4):
        raise GameError(ErrorCode.INVALID_CONFIG, f"players must be 2 or 4, got {players!r}")
    budget = _int_field(data, "budget", 0, MAX_INT)
    max_generations = _int_field(data, "max_generations", 1, MAX_INT)
    torus = data.get("torus", False)
    if not isinstance(torus, bool):
        raise GameError(ErrorCode.INVALID_CONFIG, f"torus must be true or false, got {torus!r}")
    turn_time_s = parse_turn_time(data.get("turn_time_s"))
    rated = parse_rated(data.get("rated"))
    return LifeConfig(width, height, int(players), budget, torus, max_generations, turn_time_s, rated)


def config_to_dict(config: LifeConfig) -> dict[str, Any]:
    """The normalised JSON config: every field present, except ``turn_time_s`` and
    ``rated``, which appear only when set (so the configs and hashes of games recorded
    before they existed stay the same: :mod:`engine.options`)."""
    return {
        "width": config.width,
        "height": config.height,
        "players": config.players,
        "budget": config.budget,
        "torus": config.torus,
        "max_generations": config.max_generations,
        **options_dict(config.turn_time_s, config.rated),
    }


@dataclass(frozen=True)
class LifePlayer:
    """One seat of a Life game.

    Attributes:
        id: player id = colour (1 red, 2 green, 3 blue, 4 yellow).
        name: display name.
        budget_left: cells this player may still place.
        turn_budget: ``budget_left`` when the current drawing turn began (``reset_turn``).
        out: extinct, resigned or removed; an out player no longer acts or scores.
        proposed_finish: sent ``propose_finish``.
        ready: said ``end_turn`` in the current redraw round.
    """

    id: int
    name: str
    budget_left: int
    turn_budget: int
    out: bool = False
    proposed_finish: bool = False
    ready: bool = False


@dataclass(frozen=True)
class LifeState:
    """A Life game at one moment (immutable).

    Attributes:
        config: the game's settings.
        phase: one of :data:`PHASES`.
        turn: the player drawing in ``placement``; 0 in every other phase.
        players: the joined players, ids 1.. in order.
        board: ``height * width`` bytes, row-major; 0 dead, k = colour k.
        placed: the drawing turn's placed-cell mask (``height * width`` bytes, 1 = placed
            in the current drawing turn and still there; erasing it refunds 1), or
            ``b""`` outside a drawing turn (placement or redraw round).
        turn_board: the board when the current drawing turn began (``reset_turn``
            restores the player's zone from it), or ``b""`` outside a drawing turn.
        generation: generations run so far.
        speed: speed multiplier (1, 2, 4, 8).
        stable: the last run stopped on a stable board (redraw opened).
        history: ``(population, digest)`` of each of the last 15 boards before the
            current one, oldest first (:mod:`engine.life.stability`).
        winner: the winner's id once finished with ``result == "win"``.
        result: None while the game runs, then ``"win"`` or ``"draw"``.
        rules: the engine version whose rules this game follows (:mod:`engine.versions`).
    """

    kind: ClassVar[str] = "life"

    config: LifeConfig
    phase: str = "waiting"
    turn: int = 0
    players: tuple[LifePlayer, ...] = ()
    board: bytes = b""
    placed: bytes = b""
    turn_board: bytes = b""
    generation: int = 0
    speed: int = 1
    stable: bool = False
    history: tuple[tuple[int, bytes], ...] = field(default=())
    winner: int | None = None
    result: str | None = None
    rules: str = ENGINE_VERSION

    # ----------------------------------------------------------------- numpy views

    @property
    def shape(self) -> tuple[int, int]:
        """``(height, width)``."""
        return self.config.height, self.config.width

    @property
    def grid(self) -> np.ndarray:
        """The board as a read-only (H, W) uint8 array (no copy)."""
        return np.frombuffer(self.board, dtype=np.uint8).reshape(self.shape)

    @property
    def placed_grid(self) -> np.ndarray:
        """The placed-this-turn mask as a read-only (H, W) uint8 array (zeros outside a turn)."""
        if not self.placed:
            return np.zeros(self.shape, dtype=np.uint8)
        return np.frombuffer(self.placed, dtype=np.uint8).reshape(self.shape)

    @property
    def turn_grid(self) -> np.ndarray:
        """The board at the start of the drawing turn, read-only (H, W) uint8."""
        if not self.turn_board:
            return self.grid
        return np.frombuffer(self.turn_board, dtype=np.uint8).reshape(self.shape)

    def player(self, player_id: int) -> LifePlayer:
        """The joined player ``player_id``.

        Raises:
            GameError: ``UNKNOWN_PLAYER`` when no such player has joined.
        """
        if isinstance(player_id, int) and not isinstance(player_id, bool):
            if 1 <= player_id <= len(self.players):
                return self.players[player_id - 1]
        raise GameError(ErrorCode.UNKNOWN_PLAYER, f"no player {player_id!r} in this game")

    def drawing_zone(self, player_id: int) -> tuple[int, int, int, int]:
        """The half-open zone ``(x0, y0, x1, y1)`` where ``player_id`` may draw (a
        half or a quadrant, :func:`engine.life.zones.zones_for`).
        The campaign's state overrides it with its level's zone.

        Raises:
            KeyError: ``player_id`` is not a seat of this game.
        """
        return zones_for(self.config.width, self.config.height, self.config.players)[player_id]

    def with_player(self, player: LifePlayer) -> LifeState:
        """A copy with ``player`` replacing the player of the same id."""
        players = list(self.players)
        players[player.id - 1] = player
        return replace(self, players=tuple(players))

    def map_players(self, **changes: Any) -> tuple[LifePlayer, ...]:
        """Every player with ``changes`` applied (for bulk updates like ``ready=False``)."""
        return tuple(replace(p, **changes) for p in self.players)


# --------------------------------------------------------------------------- encoding

_HEADER = struct.Struct(">I")


def encode(state: LifeState, *, config_dict: Mapping[str, Any] | None = None, extra: Mapping[str, Any] | None = None) -> bytes:
    """Canonical bytes: a 4-byte length, a key-sorted compact JSON header, then the
    board, placed mask and turn board bytes (lengths in the header). Equal states give
    equal bytes; no compression, so the bytes do not depend on a zlib version.

    ``config_dict`` replaces the Life config in the header and ``extra`` adds keys (the
    campaign kind stores its level config and ``run_start`` this way). ``rules`` is in
    the header only from engine version 2 on, so version-1 states keep their bytes (and
    the hashes recorded by version 1).
    """
    header = {
        "config": dict(config_dict) if config_dict is not None else config_to_dict(state.config),
        "phase": state.phase,
        "turn": state.turn,
        "players": [
            [p.id, p.name, p.budget_left, p.turn_budget, p.out, p.proposed_finish, p.ready]
            for p in state.players
        ],
        "generation": state.generation,
        "speed": state.speed,
        "stable": state.stable,
        "history": [[pop, d.hex()] for pop, d in state.history],
        "winner": state.winner,
        "result": state.result,
        "lengths": [len(state.board), len(state.placed), len(state.turn_board)],
        **({"rules": state.rules} if state.rules != "1" else {}),
        **(extra or {}),
    }
    head = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    return b"".join((_HEADER.pack(len(head)), head, state.board, state.placed, state.turn_board))


def decode_fields(
    data: bytes, parse_config: Callable[[Mapping[str, Any]], Any], what: str = "Life"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split bytes of :func:`encode` into (state fields, the whole JSON header).

    ``parse_config`` turns the header's config into the kind's config value (its
    ``width`` and ``height`` are checked against the board bytes).

    Raises:
        GameError: ``MALFORMED`` when the bytes are not an encoded state of that kind.
    """
    try:
        (n,) = _HEADER.unpack_from(data, 0)
        header = json.loads(data[4 : 4 + n])
        config = parse_config(header["config"])
        nb, np_, nt = header["lengths"]
        off = 4 + n
        board = bytes(data[off : off + nb])
        placed = bytes(data[off + nb : off + nb + np_])
        turn_board = bytes(data[off + nb + np_ : off + nb + np_ + nt])
        cells = config.width * config.height
        if (
            len(board) != cells
            or len(placed) not in (0, cells)
            or len(turn_board) not in (0, cells)
        ):
            raise ValueError("board size does not match the config")
        if off + nb + np_ + nt != len(data):
            raise ValueError("trailing bytes")
        players = tuple(
            LifePlayer(int(i), str(nm), int(b), int(tb), bool(o), bool(pf), bool(r))
            for i, nm, b, tb, o, pf, r in header["players"]
        )
        fields = {
            "config": config,
            "phase": str(header["phase"]),
            "turn": int(header["turn"]),
            "players": players,
            "board": board,
            "placed": placed,
            "turn_board": turn_board,
            "generation": int(header["generation"]),
            "speed": int(header["speed"]),
            "stable": bool(header["stable"]),
            "history": tuple((int(pop), bytes.fromhex(d)) for pop, d in header["history"]),
            "winner": None if header["winner"] is None else int(header["winner"]),
            "result": header["result"],
            "rules": check_version(header.get("rules", "1")),
        }
        return fields, header
    except GameError as exc:
        raise GameError(ErrorCode.MALFORMED, f"not an encoded {what} state: {exc.message}") from exc
    except (ValueError, KeyError, TypeError, struct.error) as exc:
        raise GameError(ErrorCode.MALFORMED, f"not an encoded {what} state: {exc}") from exc


def decode(data: bytes) -> LifeState:
    """Inverse of :func:`encode`.

    Raises:
        GameError: ``MALFORMED`` when the bytes are not an encoded Life state.
    """
    fields, _ = decode_fields(data, config_from_dict)
    return LifeState(**fields)
