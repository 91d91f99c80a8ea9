"""The CellWar observation: a player's view (``engine.cellwar.fog.get_visible_state``) as fog planes, and the
nine-vector action index. numpy and the views' board codec (``cellwar.v1.board_codec``,
standard library) only, no engine: the local and the remote environment,
the bots and the trained policy all read observations through this module.

Planes of ``observation`` (``(C, H, W) uint8``, 0 or 1, ``C = 10``; cell (x, y) is
``[:, y, x]``):

=====  =====================================================================
index  plane
=====  =====================================================================
0      own infantry
1      own fortifications
2      own factories
3      enemy infantry in sight (every other player)
4      enemy fortifications in sight
5      enemy factories in sight
6      visible cells (the view's ``visible`` mask: what the player sees now)
7      the unit that must act now (one cell; none when the player is not to act)
8      own units that still have to act this turn
9      fortifications (own or enemy, in sight) at standing 2: their next ``stand``
       makes a factory
=====  =====================================================================

Only what the player's view holds goes in: enemy units appear only on visible cells
because the view lists only those (tested against the engine's omniscient state).

The action is an index 0..8 into :data:`VECTORS`, row by row (``dy`` -1, 0, 1, then
``dx`` -1, 0, 1): index ``(dy + 1) * 3 + (dx + 1)``; 4 is ``(0, 0)`` (stay: fortify,
stand). ``action_mask`` is ``(9,) int8``, 1 where the vector is legal for the unit that
must act.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from cellwar.v1 import board_codec

OWN_INFANTRY, OWN_FORTIFICATION, OWN_FACTORY = 0, 1, 2
ENEMY_INFANTRY, ENEMY_FORTIFICATION, ENEMY_FACTORY = 3, 4, 5
VISIBLE, ACTING, PENDING, STANDING_2 = 6, 7, 8, 9
#: Number of planes.
CHANNELS = 10
#: Plane names by index (docs, rendering, debugging).
PLANE_NAMES = (
    "own_infantry",
    "own_fortification",
    "own_factory",
    "enemy_infantry",
    "enemy_fortification",
    "enemy_factory",
    "visible",
    "acting",
    "pending",
    "standing_2",
)
#: Unit type -> offset of its plane (own planes 0..2, enemy planes 3..5).
TYPE_PLANE = {"infantry": 0, "fortification": 1, "factory": 2}
#: The nine action vectors (dx, dy) by action index.
VECTORS: tuple[tuple[int, int], ...] = tuple((dx, dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1))
#: Index of the stay vector (0, 0).
STAY = 4


def action_index(dx: int, dy: int) -> int:
    """Action index of the vector (dx, dy), each in -1..1."""
    return (dy + 1) * 3 + (dx + 1)


# The views' board codec (cellwar.v1, standard library only), not the engine's decoder:
# the trained policy plays with numpy alone (tests/rl/test_policies.py), so this module
# must not import the engine.
@lru_cache(maxsize=4096)
def _mask_from_rle(text: str, width: int, height: int) -> np.ndarray:
    cells = board_codec.decode_board(text, width, height, max_state=1)
    return np.frombuffer(bytes(cells), dtype=np.uint8).reshape(height, width)  # read-only


def visible_mask(view: Mapping[str, Any]) -> np.ndarray:
    """The view's ``visible`` two-state text (``o`` visible, ``b`` fogged;
    ``cellwar.v1.board_codec``) as a read-only ``(H, W) uint8`` array of 0/1 (decoded once
    per distinct text: views repeat). A view without ``visible`` sees nothing.

    Raises:
        cellwar.v1.board_codec.BoardFormatError: a malformed text, a state other than
            ``b``/``o`` or a visible cell outside the board (a ``ValueError``).
    """
    return _mask_from_rle(str(view.get("visible") or "!"), int(view["width"]), int(view["height"]))


def encode_view(view: Mapping[str, Any], acting: tuple[int, int] | None = None) -> np.ndarray:
    """The observation planes of one player's view.

    Args:
        view: the player's view (``you``, ``width``, ``height``, ``units``, ``visible``).
        acting: (x, y) of the unit that must act now, or None.

    Returns:
        ``(CHANNELS, height, width) uint8`` planes (module docstring).
    """
    w, h = int(view["width"]), int(view["height"])
    you = view.get("you")
    planes = np.zeros((CHANNELS, h, w), dtype=np.uint8)
    for u in view.get("units") or ():
        x, y, kind = u["x"], u["y"], u["type"]
        own = u["owner"] == you
        planes[TYPE_PLANE[kind] + (0 if own else 3), y, x] = 1
        if own and not u.get("acted"):
            planes[PENDING, y, x] = 1
        if kind == "fortification" and u.get("standing") == 2:
            planes[STANDING_2, y, x] = 1
    planes[VISIBLE] = visible_mask(view)
    if acting is not None:
        planes[ACTING, acting[1], acting[0]] = 1
    return planes


def action_mask(vectors: Iterable[tuple[int, int]]) -> np.ndarray:
    """``(9,) int8``: 1 at the index of each legal (dx, dy)."""
    mask = np.zeros(9, dtype=np.int8)
    for dx, dy in vectors:
        mask[action_index(dx, dy)] = 1
    return mask


def acting_cell(planes: np.ndarray) -> tuple[int, int] | None:
    """(x, y) of the unit that must act (plane 7), or None."""
    ys, xs = np.nonzero(planes[ACTING])
    if len(xs) == 0:
        return None
    return int(xs[0]), int(ys[0])


def action_kinds(observation: Mapping[str, np.ndarray]) -> list[str | None]:
    """What each of the nine actions does for the unit that must act, read from the
    observation alone (seed "API действий — только вектор"): ``fortify``, ``stand``,
    ``become_factory``, ``move``, ``attack``, ``produce``; None where masked out.

    The unit's neighbours are always in sight (every vision radius is >= 1), so the
    target of a legal action is always known.
    """
    planes = observation["observation"]
    mask = observation["action_mask"]
    here = acting_cell(planes)
    kinds: list[str | None] = [None] * 9
    if here is None:
        return kinds
    x, y = here
    if planes[OWN_FACTORY, y, x]:
        unit = "factory"
    elif planes[OWN_FORTIFICATION, y, x]:
        unit = "fortification"
    else:
        unit = "infantry"
    enemy = planes[ENEMY_INFANTRY] | planes[ENEMY_FORTIFICATION] | planes[ENEMY_FACTORY]
    for i, (dx, dy) in enumerate(VECTORS):
        if not mask[i]:
            continue
        if (dx, dy) == (0, 0):
            if unit == "infantry":
                kinds[i] = "fortify"
            else:
                kinds[i] = "become_factory" if planes[STANDING_2, y, x] else "stand"
        elif unit == "factory":
            kinds[i] = "produce"
        else:
            kinds[i] = "attack" if enemy[y + dy, x + dx] else "move"
    return kinds


def units_of(planes: np.ndarray, you: int = 1, enemy: int = 2) -> list[dict[str, Any]]:
    """The units the planes show, as view-like dicts ``{"owner", "type", "x", "y",
    "standing"}`` (owner ``you`` for own planes, ``enemy`` for every enemy plane)."""
    out = []
    for kind, offset in TYPE_PLANE.items():
        for side, owner in ((0, you), (3, enemy)):
            ys, xs = np.nonzero(planes[offset + side])
            for x, y in zip(xs.tolist(), ys.tolist(), strict=True):
                standing = 0
                if kind == "fortification":
                    standing = 2 if planes[STANDING_2, y, x] else 1
                out.append({"owner": owner, "type": kind, "x": x, "y": y, "standing": standing})
    return out
