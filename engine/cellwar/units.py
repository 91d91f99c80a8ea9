"""CellWar units: types, their constants and the unit value.

Source: ``seeds/001_9d7c8657bdcb51a7.txt`` "Юниты" (vision radii 1/2/1, the standing
counter 1, 2, 3 with a forced factory at 3) and docs/architecture/rules.md "CellWar".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

INFANTRY = "infantry"
FORTIFICATION = "fortification"
FACTORY = "factory"

#: All unit types, in the order the seed lists them.
UNIT_TYPES = (INFANTRY, FORTIFICATION, FACTORY)
#: Combat units act first in a turn; factories act after all of them (seed "Раунд").
COMBAT_TYPES = frozenset({INFANTRY, FORTIFICATION})
#: Vision radius in cells (Chebyshev distance) by unit type (seed "Радиус видимости").
VISION_RADIUS = {INFANTRY: 1, FORTIFICATION: 2, FACTORY: 1}
#: A fortification whose standing counter reaches this value becomes a factory.
FACTORY_AT = 3
#: The nine action vectors (dx, dy), row by row: dy -1, 0, 1 and dx -1, 0, 1.
VECTORS = tuple((dx, dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1))


@dataclass(frozen=True)
class Unit:
    """One unit on the board.

    Attributes:
        id: unit id (int >= 1, never reused in a game).
        owner: player id (>= 1).
        type: ``"infantry"``, ``"fortification"`` or ``"factory"``.
        x, y: column and row in cells (0-based; x < width, y < height).
        standing: the fortification's standing counter (1 or 2; at 3 it is a factory);
            0 for infantry and factories.
        acted: the unit has acted in its owner's current turn (reset when a turn ends).
    """

    id: int
    owner: int
    type: str
    x: int
    y: int
    standing: int = 0
    acted: bool = False

    @property
    def combat(self) -> bool:
        """Infantry or fortification (acts before factories)."""
        return self.type in COMBAT_TYPES

    @property
    def vision(self) -> int:
        """Vision radius in cells (Chebyshev)."""
        return VISION_RADIUS[self.type]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{"id", "owner", "type", "x", "y", "standing", "acted"}``."""
        return {
            "id": self.id,
            "owner": self.owner,
            "type": self.type,
            "x": self.x,
            "y": self.y,
            "standing": self.standing,
            "acted": self.acted,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Unit:
        """Inverse of :meth:`to_dict` (trusted input: the state's own encoding)."""
        return cls(
            id=int(data["id"]),
            owner=int(data["owner"]),
            type=str(data["type"]),
            x=int(data["x"]),
            y=int(data["y"]),
            standing=int(data["standing"]),
            acted=bool(data["acted"]),
        )
