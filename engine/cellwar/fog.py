"""Fog of war: vision masks and the per-player view (docs/api/index.md "Views").

Source: seed "Туман войны": a player sees only the cells within the vision radius of its
units (Chebyshev: infantry 1, fortification 2, factory 1 cells); when a unit moves, the
old area stays visible until the end of the turn and the new one is visible at once; on
the next turn only the area around the new positions is visible.

Decisions where the seed is silent (recorded here):

- During its own turn a player sees ``state.seen | what its units see now``; outside its
  own turn (and while waiting) only what its units see now. A player that is out has no
  units and sees nothing.
- A spectator (``player_id`` None) sees everything; so does everyone once the game is
  finished (the whole event log is public then too, docs/api/index.md "Games").
- Only visible units appear, listed by cell (row, then column). Units of other players
  are shown with ``"id": null`` and ``"acted": null``: ids would reveal how many units
  exist or were produced, and ``acted`` the timing of their moves (and a list in id order
  would place an enemy unit by its id). Own units carry their real id (actions need it).
- Per player the view gives ``units``/``cells`` (unit count) for yourself only (every
  player for a spectator or once finished); ``out`` and ``connected`` are public (the
  turn order visibly skips a player who is out).
- ``visible`` is a two-state RLE of the visible mask, every row written in full:
  ``o`` visible, ``b`` fogged, rows end with ``$``, the last with ``!`` (the views' board
  codec, ``cellwar.v1.board_codec.encode_mask``, which defines the format).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from cellwar.v1 import board_codec
from engine.cellwar.state import COLOURS, FINISHED, PLAYING, CellWarState


@lru_cache(maxsize=65536)
def square_mask(width: int, height: int, x: int, y: int, radius: int) -> int:
    """Cell mask of the cells within Chebyshev ``radius`` of (x, y), clipped to the board."""
    x0, x1 = max(0, x - radius), min(width - 1, x + radius)
    row = ((1 << (x1 - x0 + 1)) - 1) << x0
    mask = 0
    for yy in range(max(0, y - radius), min(height - 1, y + radius) + 1):
        mask |= row << (yy * width)
    return mask


def full_mask(width: int, height: int) -> int:
    """The mask of every cell."""
    return (1 << (width * height)) - 1


def vision_mask(state: CellWarState, player_id: int) -> int:
    """Cells the units of ``player_id`` see now (no memory)."""
    w, h = state.width, state.height
    mask = 0
    for u in state.units:
        if u.owner == player_id:
            mask |= square_mask(w, h, u.x, u.y, u.vision)
    return mask


def visible_mask(state: CellWarState, player_id: int | None) -> int:
    """Cells ``player_id`` sees at this moment (None = spectator: all)."""
    if player_id is None or state.phase == FINISHED:
        return full_mask(state.width, state.height)
    mask = vision_mask(state, player_id)
    if state.phase == PLAYING and player_id == state.turn:
        mask |= state.seen
    return mask


def is_visible(mask: int, width: int, x: int, y: int) -> bool:
    """Cell (x, y) is in ``mask``."""
    return bool(mask >> (y * width + x) & 1)


@lru_cache(maxsize=16384)
def mask_to_rle(mask: int, width: int, height: int) -> str:
    """The view's ``visible`` text of a mask (``cellwar.v1.board_codec.encode_mask``:
    ``o`` set, ``b`` unset, every row in full; rows end ``$``, the last ``!``).
    Cached: a turn's views repeat the same few masks."""
    return board_codec.encode_mask(mask, width, height)


def rle_to_mask(text: str, width: int, height: int) -> int:
    """Inverse of :func:`mask_to_rle` (``cellwar.v1.board_codec.decode_mask``: also reads
    ``n$`` and short rows).

    Raises:
        ValueError: a malformed text (``board_codec.BoardFormatError``, with line and
            column), a state other than ``b``/``o``, or a live cell outside ``width`` x
            ``height``.
    """
    return board_codec.decode_mask(text, width, height)


def get_visible_state(
    state: CellWarState, player_id: int | None, *, reveal: bool = False
) -> dict[str, Any]:
    """The view of ``player_id`` (None = spectator) as a JSON-ready dict.

    Shape (the REST view without ``game_id``/``seq``): ``{"kind": "cellwar", "phase",
    "turn", "you", "round", "width", "height", "players": [{"id", "name", "color",
    "cells", "units", "budget_left", "connected", "out"}], "units": [{"id", "owner",
    "type", "x", "y", "standing", "acted"}], "visible", "winner", "result"}``.
    A player id that has no seat sees like an out player: nothing. ``reveal=True`` (replays
    of a finished game: once a game is finished, everything is public)
    shows every unit with its id, as a spectator sees them.
    """
    w, h = state.width, state.height
    everything = player_id is None or state.phase == FINISHED or reveal
    mask = visible_mask(state, None if reveal else player_id)
    units = []
    counts: dict[int, int] = {}
    # Listed by cell (row, then column), not by id: the place of an enemy unit in an id
    # order would tell how its id compares with the viewer's (how many units it made).
    for u in sorted(state.units, key=lambda u: (u.y, u.x)):
        counts[u.owner] = counts.get(u.owner, 0) + 1
        if not is_visible(mask, w, u.x, u.y):
            continue
        d = u.to_dict()
        if not everything and u.owner != player_id:
            d["id"] = None
            d["acted"] = None
        units.append(d)
    players = []
    for p in state.players:
        count = counts.get(p.id, 0) if everything or p.id == player_id else None
        players.append(
            {
                "id": p.id,
                "name": p.name,
                "color": COLOURS[p.id],
                "cells": count,
                "units": count,
                "budget_left": None,
                "connected": not p.removed,
                "out": p.out,
            }
        )
    return {
        "kind": "cellwar",
        "phase": state.phase,
        "turn": state.turn,
        "you": player_id,
        "round": state.round,
        "width": w,
        "height": h,
        "players": players,
        "units": units,
        "visible": mask_to_rle(mask, w, h),
        "winner": state.winner,
        "result": "win" if state.phase == FINISHED and state.winner is not None else None,
    }
