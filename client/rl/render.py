"""Pictures of a CellWar view for ``render_mode="ansi"`` and ``"rgb_array"``.

Both read a view (the shape of ``engine.cellwar.fog.get_visible_state``): the local environment passes the spectator's view
(the whole board), the remote one the view of its first seat (fog drawn as such).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from client.rl.observation import visible_mask

#: Player colours (the views' colour names) as RGB.
RGB = {
    "red": (220, 60, 60),
    "green": (60, 180, 80),
    "blue": (70, 110, 230),
    "yellow": (230, 200, 50),
    "purple": (160, 80, 200),
    "orange": (240, 140, 40),
    "cyan": (60, 200, 210),
    "pink": (240, 120, 180),
}
_FALLBACK = (200, 200, 200)
#: Letters of the unit types in the text picture.
LETTERS = {"infantry": "i", "fortification": "F", "factory": "#"}
#: Side of one cell in the picture, pixels.
CELL_PX = 16


def to_text(view: Mapping[str, Any]) -> str:
    """The board as text: one line per row, each cell 3 characters: owner digit and
    type letter (``i`` infantry, ``F`` fortification + standing, ``#`` factory),
    `` . `` an empty visible cell, ``   `` fog."""
    w, h = int(view["width"]), int(view["height"])
    seen = visible_mask(view)
    cells = [[" . " if seen[y, x] else "   " for x in range(w)] for y in range(h)]
    for u in view.get("units") or ():
        extra = str(u.get("standing") or "") if u["type"] == "fortification" else " "
        cells[u["y"]][u["x"]] = f"{u['owner']}{LETTERS[u['type']]}{extra}"
    head = f"round {view.get('round')}  turn {view.get('turn')}  phase {view.get('phase')}"
    if view.get("winner") is not None:
        head += f"  winner {view.get('winner')}"
    return "\n".join([head, *("".join(row).rstrip() for row in cells)]) + "\n"


def to_rgb(view: Mapping[str, Any]) -> np.ndarray:
    """The board as an ``(H * 16, W * 16, 3) uint8`` image: fog black, visible cells dark
    grey, infantry a small square, a fortification a ring, a factory a full cell, in the
    owner's colour."""
    w, h = int(view["width"]), int(view["height"])
    c = CELL_PX
    image = np.zeros((h * c, w * c, 3), dtype=np.uint8)
    seen = visible_mask(view).astype(bool)
    image[np.repeat(np.repeat(seen, c, axis=0), c, axis=1)] = (40, 40, 40)
    colours = {p["id"]: RGB.get(str(p.get("color")), _FALLBACK) for p in view.get("players") or ()}
    for u in view.get("units") or ():
        colour = colours.get(u["owner"], _FALLBACK)
        y0, x0 = u["y"] * c, u["x"] * c
        cell = image[y0 : y0 + c, x0 : x0 + c]
        if u["type"] == "factory":
            cell[1:-1, 1:-1] = colour
        elif u["type"] == "fortification":
            cell[2:-2, 2:-2] = colour
            cell[5:-5, 5:-5] = (40, 40, 40)
        else:
            cell[5:-5, 5:-5] = colour
    return image
