"""Hand-made features of the CellWar actions for the trained policy (numpy only).

:class:`Memory` keeps what a player has seen of the enemy (cells where it last saw an
enemy unit, forgotten once seen empty; before any sighting, the mirror image of its
own start, since starts are point-symmetric). :func:`action_features` turns an
observation into one row per action (``(9, FEATURES) float32``, zero rows where the
mask is 0): the action's kind crossed with the situation, and where its target cell
lies (threat, support, toward the enemy, toward fog).

Feature layout (``FEATURES = 8 * 6 + 7 = 55``):

- ``kind (8) × context (6)``: kinds ``fortify, stand, become_factory, move,
  attack_infantry, attack_fortification, attack_factory, produce``; context ``1,
  enemy in sight, enemy combat units next to the acting unit / 3, own units / 8,
  enemy units in sight / 8, own factories / 4``.
- target geometry (7): enemy combat units next to the target / 3, own units next to
  the target / 3 (the acting unit excluded), step toward the nearest known enemy
  (-1, 0, 1), step toward the nearest known enemy structure (fortification, factory),
  step toward the centre, fogged cells within 2 of the target / 25, target on the edge.
"""

from __future__ import annotations

import numpy as np

from client.rl.observation import (
    ENEMY_FACTORY,
    ENEMY_FORTIFICATION,
    ENEMY_INFANTRY,
    OWN_FACTORY,
    OWN_FORTIFICATION,
    OWN_INFANTRY,
    STANDING_2,
    VECTORS,
    VISIBLE,
    acting_cell,
)

KINDS = (
    "fortify",
    "stand",
    "become_factory",
    "move",
    "attack_infantry",
    "attack_fortification",
    "attack_factory",
    "produce",
)
CONTEXT = 6
GEOMETRY = 7
#: Length of one action's feature row.
FEATURES = len(KINDS) * CONTEXT + GEOMETRY

Cell = tuple[int, int]


class Memory:
    """Where a player believes the enemy is (see the module docstring).

    Attributes:
        enemies: cells where an enemy unit was last seen (or guessed).
        structures: the subset last seen holding a fortification or factory.
    """

    def __init__(self) -> None:
        self.enemies: set[Cell] = set()
        self.structures: set[Cell] = set()
        self._started = False

    def reset(self) -> None:
        """Forget everything (a new game)."""
        self.__init__()

    def update(self, planes: np.ndarray) -> None:
        """Fold one observation in: seen cells replace what was believed of them."""
        h, w = planes.shape[1:]
        if not self._started:
            self._started = True
            ys, xs = np.nonzero(planes[OWN_INFANTRY] | planes[OWN_FORTIFICATION] | planes[OWN_FACTORY])
            self.enemies = {(w - 1 - int(x), h - 1 - int(y)) for x, y in zip(xs, ys, strict=True)}
        seen_y, seen_x = np.nonzero(planes[VISIBLE])
        seen = set(zip(seen_x.tolist(), seen_y.tolist(), strict=True))
        ys, xs = np.nonzero(planes[ENEMY_INFANTRY] | planes[ENEMY_FORTIFICATION] | planes[ENEMY_FACTORY])
        now = set(zip(xs.tolist(), ys.tolist(), strict=True))
        ys, xs = np.nonzero(planes[ENEMY_FORTIFICATION] | planes[ENEMY_FACTORY])
        built = set(zip(xs.tolist(), ys.tolist(), strict=True))
        self.enemies = (self.enemies - seen) | now
        self.structures = (self.structures - seen) | built


def _padded(plane: np.ndarray, border: int) -> np.ndarray:
    h, w = plane.shape
    out = np.zeros((h + 2 * border, w + 2 * border), dtype=np.int32)
    out[border : border + h, border : border + w] = plane
    return out


def _nearest(cell: Cell, goals: set[Cell]) -> int:
    if not goals:
        return 0
    x, y = cell
    return min(max(abs(x - gx), abs(y - gy)) for gx, gy in goals)


def action_features(observation: dict, memory: Memory) -> np.ndarray:
    """``(9, FEATURES) float32`` feature rows of the nine actions (zeros where masked).

    Args:
        observation: the env's observation dict (``observation`` planes, ``action_mask``).
        memory: the player's :class:`Memory`, already updated with this observation.
    """
    planes = observation["observation"]
    mask = observation["action_mask"]
    out = np.zeros((9, FEATURES), dtype=np.float32)
    here = acting_cell(planes)
    if here is None:
        return out
    h, w = planes.shape[1:]
    x, y = here
    own = planes[OWN_INFANTRY] | planes[OWN_FORTIFICATION] | planes[OWN_FACTORY]
    enemy_combat = planes[ENEMY_INFANTRY] | planes[ENEMY_FORTIFICATION]
    enemy_any = enemy_combat | planes[ENEMY_FACTORY]
    fog = 1 - planes[VISIBLE]
    # padded copies: a 3x3 / 5x5 window sum at (x, y) never leaves the array
    pad_c = _padded(enemy_combat, 1)
    pad_o = _padded(own, 1)
    pad_f = _padded(fog, 2)
    n_enemy = int(enemy_any.sum())
    context = np.array(
        [
            1.0,
            1.0 if n_enemy else 0.0,
            min(pad_c[y : y + 3, x : x + 3].sum(), 3) / 3,
            own.sum() / 8,
            n_enemy / 8,
            planes[OWN_FACTORY].sum() / 4,
        ],
        dtype=np.float32,
    )
    if planes[OWN_FACTORY, y, x]:
        unit = "factory"
    elif planes[OWN_FORTIFICATION, y, x]:
        unit = "fortification"
    else:
        unit = "infantry"
    centre = ((w - 1) / 2, (h - 1) / 2)
    goals = memory.enemies
    structures = memory.structures
    d_goal, d_struct = _nearest(here, goals), _nearest(here, structures)
    d_centre = max(abs(x - centre[0]), abs(y - centre[1]))
    for i, (dx, dy) in enumerate(VECTORS):
        if not mask[i]:
            continue
        tx, ty = x + dx, y + dy
        if (dx, dy) == (0, 0):
            if unit == "infantry":
                kind = 0
            else:
                kind = 2 if planes[STANDING_2, y, x] else 1
        elif unit == "factory":
            kind = 7
        elif planes[ENEMY_INFANTRY, ty, tx]:
            kind = 4
        elif planes[ENEMY_FORTIFICATION, ty, tx]:
            kind = 5
        elif planes[ENEMY_FACTORY, ty, tx]:
            kind = 6
        else:
            kind = 3
        row = out[i]
        row[kind * CONTEXT : (kind + 1) * CONTEXT] = context
        g = len(KINDS) * CONTEXT
        threat = pad_c[ty : ty + 3, tx : tx + 3].sum() - (1 if kind in (4, 5) else 0)
        support = pad_o[ty : ty + 3, tx : tx + 3].sum() - 1  # the acting unit itself
        row[g] = min(threat, 3) / 3
        row[g + 1] = min(max(support, 0), 3) / 3
        t = (tx, ty)
        row[g + 2] = d_goal - _nearest(t, goals) if goals else 0.0
        row[g + 3] = d_struct - _nearest(t, structures) if structures else 0.0
        row[g + 4] = d_centre - max(abs(tx - centre[0]), abs(ty - centre[1]))
        row[g + 5] = pad_f[ty : ty + 5, tx : tx + 5].sum() / 25
        row[g + 6] = 1.0 if tx in (0, w - 1) or ty in (0, h - 1) else 0.0
    return out


class BatchMemory:
    """:class:`Memory` for ``k`` games at once, as ``(k, H, W)`` bool arrays
    (``enemies``, ``structures``); :meth:`update` folds in ``(k, C, H, W)`` planes of
    the games in ``rows`` exactly as :meth:`Memory.update` folds one."""

    def __init__(self, k: int, height: int, width: int) -> None:
        self.enemies = np.zeros((k, height, width), bool)
        self.structures = np.zeros((k, height, width), bool)
        self.started = np.zeros(k, bool)

    def update(self, rows: np.ndarray, planes: np.ndarray) -> None:
        """Fold ``planes[j]`` into game ``rows[j]``'s memory."""
        fresh = ~self.started[rows]
        if fresh.any():
            f = rows[fresh]
            own = (planes[fresh, OWN_INFANTRY] | planes[fresh, OWN_FORTIFICATION] | planes[fresh, OWN_FACTORY]) > 0
            self.enemies[f] = own[:, ::-1, ::-1]
            self.structures[f] = False
            self.started[f] = True
        seen = planes[:, VISIBLE] > 0
        now = (planes[:, ENEMY_INFANTRY] | planes[:, ENEMY_FORTIFICATION] | planes[:, ENEMY_FACTORY]) > 0
        built = (planes[:, ENEMY_FORTIFICATION] | planes[:, ENEMY_FACTORY]) > 0
        self.enemies[rows] = (self.enemies[rows] & ~seen) | now
        self.structures[rows] = (self.structures[rows] & ~seen) | built


def _box(planes: np.ndarray, r: int) -> np.ndarray:
    """``(k, H, W)`` sums over the ``(2r + 1)``² window around each cell (zero outside)."""
    k, h, w = planes.shape
    pad = np.zeros((k, h + 2 * r, w + 2 * r), np.int32)
    pad[:, r : r + h, r : r + w] = planes
    rows = np.zeros((k, h + 2 * r, w), np.int32)
    for d in range(2 * r + 1):
        rows += pad[:, :, d : d + w]
    out = np.zeros((k, h, w), np.int32)
    for d in range(2 * r + 1):
        out += rows[:, d : d + h, :]
    return out


_DX = np.array([dx for dx, _ in VECTORS])
_DY = np.array([dy for _, dy in VECTORS])


def batch_action_features(planes: np.ndarray, masks: np.ndarray, memory: BatchMemory, rows: np.ndarray) -> np.ndarray:
    """``(k, 9, FEATURES) float32``: :func:`action_features` of ``k`` observations at
    once (equal row by row; tested), ``memory`` already updated for games ``rows``.

    Args:
        planes: ``(k, C, H, W)`` observation planes; masks: ``(k, 9)`` action masks.
        memory: the games' :class:`BatchMemory`; rows: ``(k,)`` their indices in it.
    """
    k, _, h, w = planes.shape
    out = np.zeros((k, 9, FEATURES), np.float32)
    acting = planes[:, 7].reshape(k, -1)
    has = acting.any(axis=1)
    cell = acting.argmax(axis=1)
    y, x = np.divmod(cell, w)
    own = (planes[:, OWN_INFANTRY] | planes[:, OWN_FORTIFICATION] | planes[:, OWN_FACTORY]).astype(np.int32)
    enemy_combat = (planes[:, ENEMY_INFANTRY] | planes[:, ENEMY_FORTIFICATION]).astype(np.int32)
    enemy_any = enemy_combat | planes[:, ENEMY_FACTORY]
    fog = 1 - planes[:, VISIBLE].astype(np.int32)
    box_c, box_o, box_f = _box(enemy_combat, 1), _box(own, 1), _box(fog, 2)
    ar = np.arange(k)
    n_enemy = enemy_any.reshape(k, -1).sum(axis=1)
    context = np.stack(
        [
            np.ones(k),
            (n_enemy > 0).astype(np.float64),
            np.minimum(box_c[ar, y, x], 3) / 3,
            own.reshape(k, -1).sum(axis=1) / 8,
            n_enemy / 8,
            planes[:, OWN_FACTORY].reshape(k, -1).sum(axis=1) / 4,
        ],
        axis=1,
    ).astype(np.float32)
    is_fac = planes[ar, OWN_FACTORY, y, x] > 0
    is_fort = ~is_fac & (planes[ar, OWN_FORTIFICATION, y, x] > 0)
    ty, tx = y[:, None] + _DY[None, :], x[:, None] + _DX[None, :]
    tyc, txc = np.clip(ty, 0, h - 1), np.clip(tx, 0, w - 1)
    rr = ar[:, None]
    e_inf = planes[rr, ENEMY_INFANTRY, tyc, txc] > 0
    e_fort = planes[rr, ENEMY_FORTIFICATION, tyc, txc] > 0
    e_fac = planes[rr, ENEMY_FACTORY, tyc, txc] > 0
    kind = np.where(e_inf, 4, np.where(e_fort, 5, np.where(e_fac, 6, 3)))
    kind = np.where(is_fac[:, None], 7, kind)
    stay_kind = np.where(is_fort | is_fac, np.where(planes[ar, STANDING_2, y, x] > 0, 2, 1), 0)
    kind[:, 4] = stay_kind
    legal = (masks > 0) & has[:, None]
    # the kind's context block
    cols = kind[:, :, None] * CONTEXT + np.arange(CONTEXT)[None, None, :]
    vals = np.broadcast_to(context[:, None, :], (k, 9, CONTEXT))
    out[rr[:, :, None], np.arange(9)[None, :, None], cols] = vals
    g = len(KINDS) * CONTEXT
    threat = box_c[rr, tyc, txc] - np.isin(kind, (4, 5))
    support = box_o[rr, tyc, txc] - 1
    out[:, :, g] = np.minimum(threat, 3) / 3
    out[:, :, g + 1] = np.minimum(np.maximum(support, 0), 3) / 3
    # Chebyshev distance to the nearest remembered cell, from here and from each target
    hw = h * w
    cy, cx = np.divmod(np.arange(hw), w)
    qy = np.concatenate([y[:, None], tyc], axis=1)  # (k, 10)
    qx = np.concatenate([x[:, None], txc], axis=1)
    cheb = np.maximum(np.abs(qy[:, :, None] - cy[None, None, :]), np.abs(qx[:, :, None] - cx[None, None, :]))
    for col, goals in ((g + 2, memory.enemies[rows]), (g + 3, memory.structures[rows])):
        flat = goals.reshape(k, hw)
        d = np.where(flat[:, None, :], cheb, 10**6).min(axis=2)
        any_goal = flat.any(axis=1)
        out[:, :, col] = np.where(any_goal[:, None], d[:, :1] - d[:, 1:], 0)
    ch, cw = (h - 1) / 2, (w - 1) / 2
    d_here = np.maximum(np.abs(x - cw), np.abs(y - ch))
    out[:, :, g + 4] = d_here[:, None] - np.maximum(np.abs(tx - cw), np.abs(ty - ch))
    out[:, :, g + 5] = box_f[rr, tyc, txc] / 25
    out[:, :, g + 6] = ((tx == 0) | (tx == w - 1) | (ty == 0) | (ty == h - 1)).astype(np.float32)
    out[~legal] = 0
    return out
