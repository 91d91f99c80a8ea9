"""The stamp library (docs/playing.md "Life"): 29 classic Life patterns in five categories.

Each pattern is an RLE file ``data/<id>.rle`` (package ``engine.life.patterns.data``)
with ``#N`` name, ``#O`` author when known, ``#C category: <category>``,
``#C source: <where it was published>`` and a description. The cells are LifeWiki's
(https://conwaylife.com/wiki/) as published in Golly's pattern collection
(jimblandy/golly) and NDJ-1701/HardKnockLife; each is checked by
``tests/engine/test_patterns.py`` against the kernel (still lifes still, oscillator
periods, spaceship speeds, methuselah sizes, gun periods).

Ids are snake_case; boards are (h, w) uint8 with 1 for live cells (stamps take the
placing player's colour).
"""

from __future__ import annotations

import dataclasses
import functools
from pkgutil import get_data

from engine.life.rle import Pattern, parse

__all__ = ["CATEGORIES", "UnknownPattern", "catalogue", "categories", "get", "names"]

CATEGORIES: dict[str, tuple[str, ...]] = {
    "still_lifes": (
        "block",
        "beehive",
        "tub",
        "boat",
        "ship",
        "loaf",
        "eater",
        "pond",
        "aircraft_carrier",
        "long_boat",
        "canoe",
    ),
    "oscillators": ("blinker", "toad", "beacon", "clock", "pulsar", "pentadecathlon"),
    "spaceships": ("glider", "lwss", "mwss", "hwss", "loafer"),
    "methuselahs": ("r_pentomino", "acorn", "diehard", "thunderbird", "rabbits"),
    "guns": ("gosper_glider_gun", "simkin_glider_gun"),
}
"""Pattern ids by category, in the library's display order."""

_CATEGORY_OF = {pid: cat for cat, ids in CATEGORIES.items() for pid in ids}


class UnknownPattern(KeyError):
    """No pattern of that id; the message lists the known ids."""

    def __init__(self, name: object) -> None:
        self.name = name
        super().__init__(f"unknown pattern {name!r}; known: {', '.join(names())}")

    def __str__(self) -> str:
        return str(self.args[0])


def names() -> list[str]:
    """All pattern ids, grouped by category in :data:`CATEGORIES` order."""
    return [pid for ids in CATEGORIES.values() for pid in ids]


def categories() -> dict[str, list[str]]:
    """``{category: [ids]}`` ordered still_lifes, oscillators, spaceships, methuselahs, guns."""
    return {cat: list(ids) for cat, ids in CATEGORIES.items()}


@functools.lru_cache(maxsize=64)
def get(name: str) -> Pattern:
    """The library pattern ``name`` (cached; its board is read-only, copy it to edit).

    Returns:
        A :class:`~engine.life.rle.Pattern` with ``board`` (h, w) uint8 (1 = alive),
        ``name``, ``rule``, ``comments``, ``category`` and ``source`` set.

    Raises:
        UnknownPattern: (a ``KeyError``) ``name`` is not one of :func:`names`.
    """
    if not isinstance(name, str) or name not in _CATEGORY_OF:
        raise UnknownPattern(name)
    raw = get_data("engine.life.patterns.data", f"{name}.rle")  # through the package loader
    if raw is None:
        raise UnknownPattern(name)
    text = raw.decode("utf-8")
    pattern = parse(text)
    meta = _meta(pattern.comments)
    return dataclasses.replace(pattern, category=_CATEGORY_OF[name], source=meta.get("source"))


def _meta(comments: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for c in comments:
        key, sep, value = c.partition(":")
        if sep and key.strip() in ("category", "source"):
            out[key.strip()] = value.strip()
    return out


@functools.lru_cache(maxsize=1)
def _catalogue() -> tuple[dict, ...]:
    out = []
    for pid in names():
        p = get(pid)
        out.append(
            {
                "id": pid,
                "name": p.name or pid,
                "category": p.category,
                "width": p.width,
                "height": p.height,
                "cells": [[x, y] for x, y in p.cells()],
                "source": p.source,
            }
        )
    return tuple(out)


def catalogue() -> list[dict]:
    """JSON-ready list for ``GET /patterns``, in :func:`names` order.

    Each item: ``{"id", "name", "category", "width", "height", "cells": [[x, y], ...],
    "source"}`` with ``x`` the column and ``y`` the row of a live cell. A fresh copy on
    every call.
    """
    return [{**item, "cells": [list(c) for c in item["cells"]]} for item in _catalogue()]
