"""Values of a CellWar game: players, the state, and its canonical encoding.

Every value is a frozen dataclass holding tuples and ints, so an old state stays valid
after a new one is made from it (a game state is a value, :mod:`engine.api`). Cell masks are
Python ints used as bit sets: bit ``y * width + x`` is the cell at column x, row y.

Fog memory: the seed's snapshot holds "each player's fog". Outside its own turn a
player's fog is a function of its units' positions (recomputed), so only the current
player's memory is stored: ``seen``, the cells it has seen since its turn began
(the union of what it saw at the start of the turn and what it sees now).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import ClassVar

from cellwar.v1.codes import ErrorCode
from engine.cellwar.config import CellWarConfig, config_from_dict, config_to_dict
from engine.cellwar.units import Unit
from engine.errors import GameError
from engine.versions import ENGINE_VERSION, at_least
from engine.versions import check as check_version

WAITING, PLAYING, FINISHED = "waiting", "playing", "finished"
#: Phases: ``waiting`` (seats open) -> ``playing`` -> ``finished``.
PHASES = (WAITING, PLAYING, FINISHED)
#: Colour names by player id (1..4 as Life; 5..8 added for CellWar).
COLOURS = {
    1: "red",
    2: "green",
    3: "blue",
    4: "yellow",
    5: "purple",
    6: "orange",
    7: "cyan",
    8: "pink",
}


@dataclass(frozen=True)
class Player:
    """A seat that has been taken.

    Attributes:
        id: player id (1..players, in join order = turn order).
        name: display name.
        out: no longer plays (eliminated: lost its last unit; or removed).
        removed: left or disconnected past the timeout (``connected`` is false).
        produced: infantry its factories have produced (allocates unit ids).
        idle: engine version 4+: its own turns in a row that timed out without it acting
            (no action, no ``end_turn``); at :data:`IDLE_TURNS_LIMIT` the seat is removed
            as disconnected (:mod:`engine.cellwar.turns`). Always 0 before version 4.
    """

    id: int
    name: str
    out: bool = False
    removed: bool = False
    produced: int = 0
    idle: int = 0


@dataclass(frozen=True)
class CellWarState:
    """The full state of a CellWar game.

    Attributes:
        config: the normalised config.
        phase: ``"waiting"``, ``"playing"`` or ``"finished"``.
        players: seats taken, by id.
        units: live units sorted by id.
        turn: id of the player whose turn it is; 0 when nobody's (waiting, finished).
        round: 1 in the first round, +1 each time the turn order wraps; 0 while waiting.
        seen: cell mask the current player has seen during this turn (0 when no turn).
        winner: the last player with units, once finished.
        rules: the engine version whose rules this game follows (:mod:`engine.versions`).
        issued: version 2+: unit ids issued so far per owner (index owner - 1), start
            units included (:func:`engine.cellwar.ids.next_id`); ``()`` in version 1.
        id_base: version 2+: added to every id issued (0, except in a game upgraded from
            version 1, where it lies above every id version 1 could have issued).
        turn_acted: version 4+: the player whose turn it is has acted in this turn (an
            action); cleared whenever the turn changes. Always False before version 4.
    """

    kind: ClassVar[str] = "cellwar"

    config: CellWarConfig
    phase: str = WAITING
    players: tuple[Player, ...] = ()
    units: tuple[Unit, ...] = ()
    turn: int = 0
    round: int = 0
    seen: int = 0
    winner: int | None = None
    rules: str = ENGINE_VERSION
    issued: tuple[int, ...] = ()
    id_base: int = 0
    turn_acted: bool = False

    @property
    def width(self) -> int:
        """Board width in cells."""
        return self.config.width

    @property
    def height(self) -> int:
        """Board height in cells."""
        return self.config.height

    def player(self, player_id: int) -> Player | None:
        """The seat of ``player_id``, or None when nobody has that id."""
        if 1 <= player_id <= len(self.players):
            return self.players[player_id - 1]
        return None

    def active_ids(self) -> list[int]:
        """Ids of players still in the game (joined, not out), in turn order."""
        return [p.id for p in self.players if not p.out]

    def unit(self, unit_id: int) -> Unit | None:
        """The live unit with that id, or None."""
        for u in self.units:
            if u.id == unit_id:
                return u
        return None

    def units_of(self, player_id: int) -> list[Unit]:
        """Live units of a player, by id."""
        return [u for u in self.units if u.owner == player_id]

    def occupancy(self) -> dict[tuple[int, int], Unit]:
        """``(x, y) -> unit`` for every live unit."""
        return {(u.x, u.y): u for u in self.units}

    def in_board(self, x: int, y: int) -> bool:
        """The cell (x, y) is on the board."""
        return 0 <= x < self.config.width and 0 <= y < self.config.height

    def with_player(self, player: Player) -> CellWarState:
        """A copy with ``player`` replacing the seat of the same id."""
        players = list(self.players)
        players[player.id - 1] = player
        return replace(self, players=tuple(players))


def encode_state(state: CellWarState) -> bytes:
    """Canonical bytes: compact key-sorted JSON (equal states give equal bytes). ``rules``,
    ``issued`` and ``id_base`` are written from engine version 2 on only, so version-1
    states keep their bytes (and the hashes version 1 recorded); each player's ``idle``
    and the state's ``turn_acted`` from version 4 on only (versions 2 and 3 keep theirs)."""
    idle = at_least(state.rules, "4")
    doc = {
        "config": config_to_dict(state.config),
        "phase": state.phase,
        "players": [
            {"id": p.id, "name": p.name, "out": p.out, "removed": p.removed, "produced": p.produced}
            | ({"idle": p.idle} if idle else {})
            for p in state.players
        ],
        "units": [u.to_dict() for u in state.units],
        "turn": state.turn,
        "round": state.round,
        "seen": format(state.seen, "x"),
        "winner": state.winner,
    }
    if state.rules != "1":
        doc.update(rules=state.rules, issued=list(state.issued), id_base=state.id_base)
    if idle:
        doc["turn_acted"] = state.turn_acted
    return json.dumps(doc, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()


def decode_state(data: bytes) -> CellWarState:
    """Inverse of :func:`encode_state`.

    Raises:
        GameError: ``MALFORMED`` when the bytes are not an encoded CellWar state.
    """
    try:
        doc = json.loads(data.decode())
        return CellWarState(
            config=config_from_dict(doc["config"]),
            phase=str(doc["phase"]),
            players=tuple(
                Player(
                    int(p["id"]),
                    str(p["name"]),
                    bool(p["out"]),
                    bool(p["removed"]),
                    int(p["produced"]),
                    int(p.get("idle", 0)),
                )
                for p in doc["players"]
            ),
            units=tuple(Unit.from_dict(u) for u in doc["units"]),
            turn=int(doc["turn"]),
            round=int(doc["round"]),
            seen=int(doc["seen"], 16),
            winner=None if doc["winner"] is None else int(doc["winner"]),
            rules=check_version(doc.get("rules", "1")),
            issued=tuple(int(n) for n in doc.get("issued", ())),
            id_base=int(doc.get("id_base", 0)),
            turn_acted=bool(doc.get("turn_acted", False)),
        )
    except GameError as exc:
        raise GameError(
            ErrorCode.MALFORMED, f"not an encoded CellWar state: {exc.message}"
        ) from exc
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise GameError(ErrorCode.MALFORMED, f"not an encoded CellWar state: {exc}") from exc
