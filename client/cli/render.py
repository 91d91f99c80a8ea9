"""Pictures of a game view (docs/api/index.md "Views") for ``cellwar show``: text for a
terminal and PNG images.

Everything here reads a view dict only (the JSON of ``GET /game/{id}/state`` or
``engine.get_visible_state``), never a game state, so it draws exactly what a client is
shown.

- Life and campaign: the board's multi-state RLE (``.`` dead, ``A`` colour 1, ...).
  Text: one cell per two columns, ``A``..``D`` (or a coloured block with ANSI colours),
  ``.`` dead.
- CellWar: units by type and owner, ``I`` infantry, ``F`` fortification (its standing
  counter in the unit list), ``P`` factory, followed by the owner's number (``I1``,
  ``F2``); ``.`` an empty visible cell, ``#`` a cell in the fog.

Colours are the web client's dark theme (``client/web/css/style.css`` ``--cell-*``,
``client/web/js/cellwar/render.js`` for players 5..8, ``--cw-fog``), so a PNG looks like
the board in the browser: one block of ``scale`` × ``scale`` pixels per cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import groupby
from typing import Any

import numpy as np

from engine.life.rle import rle_body_to_board

#: RGB of the dead cell and of player colours 1..8 (index = colour), dark theme.
PALETTE: tuple[tuple[int, int, int], ...] = (
    (0x1A, 0x1E, 0x27),  # --cell-dead
    (0xEF, 0x52, 0x57),  # 1 red
    (0x3C, 0xC1, 0x7A),  # 2 green
    (0x4F, 0x7D, 0xFF),  # 3 blue
    (0xF5, 0xD9, 0x0A),  # 4 yellow
    (0xA9, 0x70, 0xFF),  # 5 purple
    (0xFF, 0x8B, 0x3D),  # 6 orange
    (0x2E, 0xC5, 0xD3),  # 7 cyan
    (0xFF, 0x6F, 0xB5),  # 8 pink
)
#: RGB of a CellWar cell in the fog (``--cw-fog``).
FOG = (0x07, 0x08, 0x0B)
#: RGB of a unit's outline in a PNG (``--cw-outline`` on the dead colour).
OUTLINE = (0x05, 0x06, 0x08)
#: Letters of CellWar unit types.
UNIT_LETTERS = {"infantry": "I", "fortification": "F", "factory": "P"}
#: Largest PNG side the default scale aims for (pixels).
DEFAULT_PNG_SIDE = 800
#: Largest PNG side ``--scale`` may ask for (pixels; PNG viewers and memory: a 16,384 px
#: square is 768 MiB of RGB before compression).
MAX_PNG_SIDE = 16_384

_RESET = "\x1b[0m"
_DIM = "\x1b[2m"


def colour_rgb(colour: int) -> tuple[int, int, int]:
    """RGB of player colour ``colour`` (1..8; 0 = dead); grey beyond the palette."""
    return PALETTE[colour] if 0 <= colour < len(PALETTE) else (0x88, 0x88, 0x88)


def _fg(rgb: tuple[int, int, int]) -> str:
    return f"\x1b[38;2;{rgb[0]};{rgb[1]};{rgb[2]}m"


def is_cellwar(view: Mapping[str, Any]) -> bool:
    """True for a CellWar view (units), False for Life and campaign (a board)."""
    return view.get("kind") == "cellwar"


def life_board(view: Mapping[str, Any]) -> np.ndarray:
    """The board of a Life or campaign view: (height, width) uint8, 0 dead, k = colour k.

    Raises:
        engine.life.rle.PatternError: a board that is not RLE.
    """
    return rle_body_to_board(str(view.get("board") or "!"), int(view["width"]), int(view["height"]))


def visible_mask(view: Mapping[str, Any]) -> np.ndarray:
    """The visible cells of a CellWar view: (height, width) bool (all True without
    ``visible``)."""
    w, h = int(view["width"]), int(view["height"])
    text = view.get("visible")
    if not text:
        return np.ones((h, w), dtype=bool)
    return rle_body_to_board(str(text), w, h).astype(bool)


def cellwar_grid(view: Mapping[str, Any]) -> list[list[str]]:
    """The CellWar board as tokens, ``grid[y][x]``: ``"I1"``, ``"F2"``, ``"P1"``, ``"."``
    (empty, visible) or ``"#"`` (fog)."""
    w, h = int(view["width"]), int(view["height"])
    mask = visible_mask(view)
    grid = [["." if mask[y, x] else "#" for x in range(w)] for y in range(h)]
    for u in view.get("units") or []:
        x, y = int(u["x"]), int(u["y"])
        if 0 <= x < w and 0 <= y < h:
            grid[y][x] = f"{UNIT_LETTERS.get(str(u['type']), '?')}{u['owner']}"
    return grid


# ----------------------------------------------------------------------------- text


def header_lines(view: Mapping[str, Any], *, title: str = "") -> list[str]:
    """The header above a board: kind, size, phase, generation/round, turn, result, and
    one line per player (letter or number, colour, name, cells/units, budget, state)."""
    kind = str(view.get("kind", "?"))
    w, h = view.get("width"), view.get("height")
    first = [p for p in (title, f"{kind} {w}×{h}") if p]
    lines = [" · ".join(first)]
    facts = [f"phase {view.get('phase')}"]
    if is_cellwar(view):
        facts.append(f"round {view.get('round')}")
    else:
        facts.append(f"generation {view.get('generation')}")
        if view.get("level") is not None:
            name = (view.get("level_name") or {}).get("en", "")
            facts.append(f"level {view['level']}" + (f" {name}" if name else ""))
        if view.get("torus"):
            facts.append("torus")
        if view.get("stable"):
            facts.append("stable")
    if view.get("turn"):
        facts.append(f"turn: player {view['turn']}")
    if view.get("you"):
        facts.append(f"as seen by player {view['you']}")
    if view.get("result"):
        winner = view.get("winner")
        facts.append(f"result {view['result']}" + (f" (winner: player {winner})" if winner else ""))
    lines.append(" · ".join(facts))
    for p in view.get("players") or []:
        pid = int(p["id"])
        mark = str(pid) if is_cellwar(view) else chr(ord("A") + pid - 1)
        count = p.get("units") if is_cellwar(view) else p.get("cells")
        what = "units" if is_cellwar(view) else "cells"
        parts = [f"  {mark} {p.get('color', '')!s:<7} {p.get('name', '')!s:<16}", f"{what} {_or_hidden(count)}"]
        if not is_cellwar(view):
            parts.append(f"budget {_or_hidden(p.get('budget_left'))}")
        if p.get("out"):
            parts.append("out")
        if p.get("connected") is False:
            parts.append("disconnected")
        lines.append("  ".join(parts).rstrip())
    if not is_cellwar(view) and view.get("enemy_cells") is not None:
        lines.append(f"  B enemy   cells {view['enemy_cells']}")
    return lines


def _or_hidden(value: Any) -> str:
    return "hidden" if value is None else str(value)


def board_lines(view: Mapping[str, Any], *, colour: bool = False) -> list[str]:
    """The board as text rows, top row first, two columns per cell (CellWar: three).

    Without ``colour``: Life ``A``..``D`` / ``.``; CellWar ``I1``, ``F2``, ``P1``, ``.``,
    ``#``; tokens separated by spaces (``row.split()`` gives the cells). With ``colour``:
    the same tokens in ANSI 24-bit colours (Life cells as ``██``), dead cells dim.
    """
    if is_cellwar(view):
        rows = []
        for line in cellwar_grid(view):
            cells = []
            for token in line:
                text = token.ljust(2)
                if colour and token not in (".", "#"):
                    text = f"\x1b[1m{_fg(colour_rgb(int(token[1:])))}{text}{_RESET}"
                elif colour:
                    text = f"{_DIM}{text}{_RESET}"
                cells.append(text)
            rows.append(" ".join(cells).rstrip())
        return rows
    board = life_board(view)
    rows = []
    for line in board:
        if colour:  # one escape sequence per run of equal cells
            row = []
            for value, run in groupby(int(c) for c in line):
                n = len(list(run))
                row.append(f"{_fg(colour_rgb(value))}{'██' * n}{_RESET}" if value else f"{_DIM}{'· ' * n}{_RESET}")
            rows.append("".join(row))
        else:
            rows.append(" ".join(chr(ord("A") + int(c) - 1) if c else "." for c in line))
    return rows


def unit_lines(view: Mapping[str, Any]) -> list[str]:
    """CellWar: one line per visible unit (id, owner, type, cell, standing, acted)."""
    out = []
    for u in view.get("units") or []:
        uid = "" if u.get("id") is None else f"#{u['id']} "  # an enemy's id is hidden
        acted = {True: "acted", False: "to act", None: ""}[u.get("acted")]
        standing = f" standing {u['standing']}" if u.get("type") == "fortification" else ""
        out.append(
            f"  {uid}player {u['owner']} {u['type']} at ({u['x']}, {u['y']}){standing}"
            + (f" {acted}" if acted else "")
        )
    return out


def render_text(view: Mapping[str, Any], *, title: str = "", colour: bool = False) -> str:
    """Header, board and (CellWar) unit list as one text block ending with a newline."""
    lines = header_lines(view, title=title)
    lines.append("")
    lines.extend(board_lines(view, colour=colour))
    if is_cellwar(view) and view.get("units"):
        lines.append("")
        lines.extend(unit_lines(view))
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- PNG


def default_scale(view: Mapping[str, Any]) -> int:
    """Pixels per cell so the longer side is about :data:`DEFAULT_PNG_SIDE` (1..32)."""
    side = max(int(view["width"]), int(view["height"]), 1)
    return max(1, min(32, DEFAULT_PNG_SIDE // side))


def render_rgb(view: Mapping[str, Any], scale: int) -> np.ndarray:
    """The picture as an RGB array, (height × scale, width × scale, 3) uint8.

    Life/campaign: every cell a block in its colour. CellWar: visible cells dead-coloured,
    fogged cells :data:`FOG`, each unit a block in its owner's colour (with ``scale`` >= 6
    its shape: a disc for infantry, a square for a fortification, a house for a factory,
    drawn inside the block with an outline, the block's centre in the owner's colour).

    Raises:
        ValueError: ``scale`` < 1.
    """
    if scale < 1:
        raise ValueError(f"scale must be >= 1, got {scale}")
    palette = np.array(PALETTE, dtype=np.uint8)
    if not is_cellwar(view):
        board = life_board(view)
        cells = palette[np.minimum(board, len(PALETTE) - 1)]
        return np.repeat(np.repeat(cells, scale, axis=0), scale, axis=1)
    mask = visible_mask(view)
    cells = np.where(mask[..., None], palette[0], np.array(FOG, dtype=np.uint8)).astype(np.uint8)
    shapes = scale >= 6
    for u in view.get("units") or []:
        if not shapes:
            cells[int(u["y"]), int(u["x"])] = colour_rgb(int(u["owner"]))
    image = np.repeat(np.repeat(cells, scale, axis=0), scale, axis=1)
    if shapes:
        image = _draw_units(image, view, scale)
    return image


def _draw_units(image: np.ndarray, view: Mapping[str, Any], scale: int) -> np.ndarray:
    from PIL import Image, ImageDraw

    pic = Image.fromarray(image, "RGB")
    draw = ImageDraw.Draw(pic)
    line = max(1, scale // 16)
    for u in view.get("units") or []:
        fill = colour_rgb(int(u["owner"]))
        x0, y0 = int(u["x"]) * scale, int(u["y"]) * scale
        cx, cy = x0 + scale / 2, y0 + scale / 2
        kind = u.get("type")
        if kind == "infantry":
            r = scale * 0.36
            draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill, outline=OUTLINE, width=line)
        elif kind == "fortification":
            r = scale * 0.38
            draw.rectangle((cx - r, cy - r, cx + r, cy + r), fill=fill, outline=OUTLINE, width=line)
            if int(u.get("standing") or 1) >= 2 and scale >= 10:  # second stay: an inner mark
                m = scale * 0.12
                draw.rectangle((cx - r + m, cy - r + m, cx - r + 2 * m, cy - r + 2 * m), fill=OUTLINE)
        else:  # factory: a house
            r = scale * 0.40
            roof = cy - r * 0.15
            points = [
                (cx, cy - r), (cx + r, roof), (cx + r * 0.8, roof), (cx + r * 0.8, cy + r),
                (cx - r * 0.8, cy + r), (cx - r * 0.8, roof), (cx - r, roof),
            ]
            draw.polygon(points, fill=fill, outline=OUTLINE)
    return np.asarray(pic)


def write_png(view: Mapping[str, Any], path: str, *, scale: int | None = None) -> tuple[int, int]:
    """Write the view as a PNG picture (:func:`render_rgb`); returns (width, height) in
    pixels. ``scale`` None: :func:`default_scale`.

    Raises:
        OSError: the file cannot be written. ValueError: ``scale`` < 1, or a picture
            with a side over :data:`MAX_PNG_SIDE` pixels (the largest scale that fits is
            said).
    """
    from PIL import Image

    s = default_scale(view) if scale is None else scale
    side = max(int(view["width"]), int(view["height"]))
    if side * s > MAX_PNG_SIDE:
        raise ValueError(
            f"--scale {s} makes a {int(view['width']) * s}×{int(view['height']) * s} px picture;"
            f" at most {MAX_PNG_SIDE:,} px a side (--scale {max(MAX_PNG_SIDE // side, 1)} or less)"
        )
    rgb = render_rgb(view, s)
    Image.fromarray(rgb, "RGB").save(path, format="PNG", optimize=True)
    return rgb.shape[1], rgb.shape[0]
