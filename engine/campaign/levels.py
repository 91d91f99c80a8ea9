"""The campaign's 103 levels as pure data (the Life seed's section "Кампания").

Levels 1-7 are written by hand below; levels 8-103 come from the deterministic
generator (:mod:`engine.campaign.generator`) and are checked in as
``engine/campaign/data/levels_generated.json`` (one level per line). :func:`levels`
loads that file, so every run on every machine sees the same levels; the test suite
regenerates the file in memory and fails on any difference.

Units and conventions: every size, coordinate and budget is in cells. ``x`` is the
column (``0..width-1``), ``y`` the row (``0..height-1``). A zone is the half-open
rectangle ``[x0, x1) x [y0, y1)`` where the player may draw. Enemy cells are green
(colour 2 of :func:`engine.life.step`); the player is red (colour 1).

This module imports numpy and the standard library only and never reads anything
outside the ``engine`` package.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pkgutil import get_data
from typing import Any

import numpy as np

#: Number of campaign levels (the seed's 103).
LEVEL_COUNT = 103
#: Levels written by hand in this module (1..HAND_LEVEL_COUNT).
HAND_LEVEL_COUNT = 7
#: Name of the checked-in data file inside the ``engine.campaign.data`` package.
DATA_FILE = "levels_generated.json"

Cell = tuple[int, int]
Zone = tuple[int, int, int, int]


class UnknownLevelError(KeyError, ValueError):
    """A level number outside ``1..LEVEL_COUNT`` (both a ``KeyError`` and a ``ValueError``)."""

    def __str__(self) -> str:  # KeyError would show the repr of the message
        return str(self.args[0]) if self.args else "unknown level"


@dataclass(frozen=True)
class Level:
    """One campaign level (all sizes in cells).

    Attributes:
        number: 1..103.
        name_en, name_ru: display names (English, Russian).
        hint_en, hint_ru: one or two sentences for the player.
        width, height: board size in cells.
        zone: ``(x0, y0, x1, y1)`` half-open rectangle where the player may draw.
        budget: cells the player may place over the whole level.
        enemy: live green cells as ``(x, y)`` pairs, sorted, no duplicates.
        hopeless: ``True`` for the few levels that are nearly impossible on purpose
            (a glider gun); their enemy is not a still life or an oscillator.

    Raises:
        ValueError: from the constructor when the data is inconsistent (zone empty or
            outside the board, enemy cell outside the board, unsorted or duplicated
            enemy cells, negative budget).
    """

    number: int
    name_en: str
    name_ru: str
    hint_en: str
    hint_ru: str
    width: int
    height: int
    zone: Zone
    budget: int
    enemy: tuple[Cell, ...] = field(repr=False)
    hopeless: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.number <= LEVEL_COUNT:
            raise ValueError(f"level number {self.number} is outside 1..{LEVEL_COUNT}")
        if self.width < 1 or self.height < 1:
            raise ValueError(f"level {self.number}: board {self.width}x{self.height} is empty")
        x0, y0, x1, y1 = self.zone
        if not (0 <= x0 < x1 <= self.width and 0 <= y0 < y1 <= self.height):
            raise ValueError(
                f"level {self.number}: zone {self.zone} is empty or outside the "
                f"{self.width}x{self.height} board"
            )
        if self.budget < 0:
            raise ValueError(f"level {self.number}: negative budget {self.budget}")
        if list(self.enemy) != sorted(set(self.enemy)):
            raise ValueError(f"level {self.number}: enemy cells must be sorted and unique")
        for x, y in self.enemy:
            if not (0 <= x < self.width and 0 <= y < self.height):
                raise ValueError(f"level {self.number}: enemy cell {(x, y)} is outside the board")

    def enemy_board(self) -> np.ndarray:
        """A new ``(height, width)`` uint8 board: 2 on enemy cells, 0 elsewhere."""
        board = np.zeros((self.height, self.width), dtype=np.uint8)
        if self.enemy:
            xs, ys = zip(*self.enemy, strict=True)
            board[list(ys), list(xs)] = 2
        return board

    def in_zone(self, x: int, y: int) -> bool:
        """Whether the player may draw on cell ``(x, y)`` (column, row)."""
        x0, y0, x1, y1 = self.zone
        return x0 <= x < x1 and y0 <= y < y1

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (lists instead of tuples); :meth:`from_dict` reads it back."""
        return {
            "number": self.number,
            "name_en": self.name_en,
            "name_ru": self.name_ru,
            "hint_en": self.hint_en,
            "hint_ru": self.hint_ru,
            "width": self.width,
            "height": self.height,
            "zone": list(self.zone),
            "budget": self.budget,
            "hopeless": self.hopeless,
            "enemy": [list(c) for c in self.enemy],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Level:
        """Build a level from :meth:`to_dict` output.

        Raises:
            KeyError: a field is missing.
            ValueError: the data is inconsistent (see the class docstring).
        """
        return cls(
            number=int(data["number"]),
            name_en=str(data["name_en"]),
            name_ru=str(data["name_ru"]),
            hint_en=str(data["hint_en"]),
            hint_ru=str(data["hint_ru"]),
            width=int(data["width"]),
            height=int(data["height"]),
            zone=tuple(int(v) for v in data["zone"]),  # type: ignore[arg-type]
            budget=int(data["budget"]),
            enemy=tuple(sorted((int(x), int(y)) for x, y in data["enemy"])),
            hopeless=bool(data.get("hopeless", False)),
        )


# --------------------------------------------------------------------------- figures
# Plain-text figures for the hand levels ("O" alive, "." dead), kept here so that the
# hand levels depend on nothing but this file. All are still lifes or oscillators.

_ART: dict[str, str] = {
    "block": "OO/OO",
    "beehive": ".OO./O..O/.OO.",
    "loaf": ".OO./O..O/.O.O/..O.",
    "blinker": "OOO",
    "boat": "OO./O.O/.O.",
    "ship": "OO./O.O/.OO",
    "long_boat": "OO../O.O./.O.O/..O.",
    "aircraft_carrier": "OO../O..O/..OO",
    "beacon": "OO../OO../..OO/..OO",
    "toad": ".OOO/OOO.",
    "clock": "..O./O.O./.O.O/.O..",
    "tub": ".O./O.O/.O.",
    "pond": ".OO./O..O/O..O/.OO.",
    "canoe": "...OO/....O/...O./O.O../OO...",
}


def _figure(name: str, x: int, y: int, *, turn: bool = False) -> list[Cell]:
    """Cells of figure ``name`` with its top-left at ``(x, y)``; ``turn`` transposes it."""
    cells = []
    for dy, row in enumerate(_ART[name].split("/")):
        for dx, ch in enumerate(row):
            if ch == "O":
                cells.append((x + dy, y + dx) if turn else (x + dx, y + dy))
    return cells


def _enemy(*figures: tuple) -> tuple[Cell, ...]:
    """Sorted unique cells of ``(name, x, y[, turn])`` figures."""
    cells: set[Cell] = set()
    for fig in figures:
        cells.update(_figure(fig[0], fig[1], fig[2], turn=bool(fig[3]) if len(fig) > 3 else False))
    return tuple(sorted(cells))


#: Documented solutions of hand levels, verified by the tests through
#: :func:`engine.life.step` (hard edges): place ``cells`` (red, inside the zone, within
#: the budget) and every green cell is gone within ``generations`` generations.
SOLUTIONS: dict[int, dict[str, Any]] = {
    1: {"cells": ((9, 8),), "generations": 4},
}


def _hand_levels() -> list[Level]:
    """Levels 1-7 (the seed's "Кампания")."""
    return [
        Level(
            number=1,
            name_en="Warm-up",
            name_ru="Разминка",
            hint_en=(
                "A lone block. Touch it from outside: one red cell right above its "
                "top-left cell, at (9, 8), and both are gone in 4 generations."
            ),
            hint_ru=(
                "Одинокий блок. Коснитесь его снаружи: одна красная клетка прямо над его "
                "левой верхней клеткой, в (9, 8), — и через 4 поколения нет обоих."
            ),
            width=20,
            height=20,
            zone=(0, 0, 20, 20),
            budget=10,
            enemy=_enemy(("block", 9, 9)),
        ),
        Level(
            number=2,
            name_en="Loaf",
            name_ru="Каравай",
            hint_en="A loaf in the middle. Draw in the central square and break its crust.",
            hint_ru="Каравай посреди поля. Рисуйте в центральном квадрате и надломите корку.",
            width=24,
            height=24,
            zone=(4, 4, 20, 20),
            budget=15,
            enemy=_enemy(("loaf", 10, 10)),
        ),
        Level(
            number=3,
            name_en="Swarm",
            name_ru="Рой",
            hint_en=(
                "Many small figures: blocks, beehives, blinkers and loaves. The whole "
                "board is yours; mind the chain reactions."
            ),
            hint_ru=(
                "Много мелких фигур: блоки, ульи, мигалки и караваи. Всё поле ваше; "
                "следите за цепными реакциями."
            ),
            width=40,
            height=40,
            zone=(0, 0, 40, 40),
            budget=80,
            enemy=_enemy(
                ("block", 5, 5),
                ("beehive", 16, 4),
                ("blinker", 29, 6),
                ("loaf", 6, 16),
                ("block", 19, 18),
                ("beehive", 30, 16, True),
                ("blinker", 6, 30, True),
                ("block", 17, 31),
                ("loaf", 29, 29),
                ("beehive", 24, 24),
            ),
        ),
        Level(
            number=4,
            name_en="From Afar",
            name_ru="Издалека",
            hint_en=(
                "The enemy is far outside your strip. Send something that travels: a "
                "glider (5 cells) flies diagonally."
            ),
            hint_ru=(
                "Враг далеко за пределами вашей полосы. Пошлите то, что летает: глайдер "
                "(5 клеток) движется по диагонали."
            ),
            width=60,
            height=30,
            zone=(0, 0, 16, 30),
            budget=40,
            enemy=_enemy(("block", 44, 8), ("beehive", 48, 19)),
        ),
        Level(
            number=5,
            name_en="Flotilla",
            name_ru="Флотилия",
            hint_en=(
                "A fleet at anchor: boats, ships, long boats and aircraft carriers. "
                "Draw along the bottom shore."
            ),
            hint_ru=(
                "Флот на якоре: лодки, кораблики, длинные лодки и авианосцы. Рисуйте "
                "вдоль нижнего берега."
            ),
            width=50,
            height=40,
            zone=(0, 30, 50, 40),
            budget=70,
            enemy=_enemy(
                ("boat", 5, 4),
                ("ship", 15, 6),
                ("long_boat", 26, 4),
                ("aircraft_carrier", 37, 5),
                ("aircraft_carrier", 6, 14, True),
                ("boat", 17, 15),
                ("long_boat", 28, 14),
                ("ship", 40, 16),
                ("ship", 9, 23),
                ("boat", 22, 24),
                ("aircraft_carrier", 34, 23),
            ),
        ),
        Level(
            number=6,
            name_en="Chase",
            name_ru="Погоня",
            hint_en=(
                "Blinking beacons, toads and clocks all around your central square: "
                "they move in place but never leave it. Time your strikes."
            ),
            hint_ru=(
                "Вокруг вашего центрального квадрата мигают маяки, жабы и часы: они "
                "шевелятся, но не сходят с места. Выбирайте момент удара."
            ),
            width=50,
            height=50,
            zone=(18, 18, 32, 32),
            budget=80,
            enemy=_enemy(
                ("beacon", 5, 5),
                ("toad", 22, 6),
                ("clock", 39, 5),
                ("toad", 6, 23, True),
                ("clock", 40, 22),
                ("beacon", 5, 40),
                ("toad", 22, 42),
                ("beacon", 40, 40),
                ("clock", 12, 12),
                ("clock", 34, 34),
            ),
        ),
        Level(
            number=7,
            name_en="Rabbits",
            name_ru="Кролики",
            hint_en=(
                "A warren of tubs, ponds and canoes across the field. Your strip is on "
                "the left edge; the budget is generous, the distance is not."
            ),
            hint_ru=(
                "Целая колония ванн, прудов и каноэ по всему полю. Ваша полоса — у "
                "левого края; бюджет щедрый, а расстояние — нет."
            ),
            width=60,
            height=40,
            zone=(0, 0, 12, 40),
            budget=90,
            enemy=_enemy(
                ("tub", 18, 4),
                ("pond", 27, 5),
                ("canoe", 38, 3),
                ("tub", 50, 6),
                ("canoe", 17, 15, True),
                ("tub", 29, 17),
                ("pond", 40, 15),
                ("tub", 52, 18),
                ("pond", 19, 28),
                ("canoe", 30, 27),
                ("tub", 42, 30),
                ("pond", 51, 29),
            ),
        ),
    ]


def _load_generated() -> list[Level]:
    """Levels 8-103 from the checked-in JSON (package data).

    Raises:
        FileNotFoundError: the data file is missing from the installed package.
        ValueError: the file does not hold levels 8..103 in order.
    """
    raw = get_data("engine.campaign.data", DATA_FILE)  # through the package loader (zip-safe)
    if raw is None:
        raise ValueError(f"engine.campaign.data has no {DATA_FILE}")
    text = raw.decode("utf-8")
    payload = json.loads(text)
    out = [Level.from_dict(item) for item in payload["levels"]]
    expected = list(range(HAND_LEVEL_COUNT + 1, LEVEL_COUNT + 1))
    if [lv.number for lv in out] != expected:
        raise ValueError(f"{DATA_FILE} must hold levels {expected[0]}..{expected[-1]} in order")
    return out


@lru_cache(maxsize=1)
def _all_levels() -> tuple[Level, ...]:
    return tuple(_hand_levels() + _load_generated())


def levels() -> list[Level]:
    """All 103 campaign levels in order (a new list of the same immutable levels).

    Identical on every run and machine: hand levels are literals, the rest is the
    checked-in data file (docs/playing.md "Campaign").
    """
    return list(_all_levels())


def level(number: int) -> Level:
    """Level ``number`` (1..103).

    Raises:
        UnknownLevelError: (a ``KeyError`` and a ``ValueError``) for a number outside
            1..103 or not an integer.
    """
    if isinstance(number, bool) or not isinstance(number, int | np.integer):
        raise UnknownLevelError(f"level number must be an integer, got {number!r}")
    if not 1 <= number <= LEVEL_COUNT:
        raise UnknownLevelError(f"level {number} does not exist: levels are 1..{LEVEL_COUNT}")
    return _all_levels()[int(number) - 1]
