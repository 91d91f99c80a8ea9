"""CellWar for many games at once: ``N`` games held in numpy arrays, every game's acting
unit stepped by one set of array operations (a batched simulator in the manner of Pgx,
Koyamada et al. 2023, and EnvPool's batched stepping).

The rules are those of the scalar engine (:mod:`engine.cellwar.actions`,
:mod:`~engine.cellwar.turns`, :mod:`~engine.cellwar.fog`, :mod:`~engine.cellwar.ids`,
seed "Юниты", "Правила атаки", "Раунд", "Фабрика", "Туман войны", "Условие победы");
:meth:`CellWarBatch.state` turns game ``i`` back into an engine
:class:`~engine.cellwar.state.CellWarState`, and the differential test
(``tests/engine/test_cellwar_batch.py``) requires its :func:`engine.api.state_hash` to
equal the scalar engine's after every step of more than 1,000 random games.

Who acts, as the environments play (:mod:`client.rl.cellwar_backends`): the player whose
turn it is acts for one unit at a time, the first unit of the engine's list of legal
actions (``get_valid_actions``: combat units by id, then, once every combat unit has
acted, factories by id that have a free neighbouring cell). When no unit of that player
can act, its turn is ended (``end_turn``: blocked factories die, eliminations, the turn
passes; repeated while the next player cannot act either).

Not modelled (never reached by the environments): seats joining (every game starts
full, player 1 to act in round 1), player removal and disconnects, turn timers and
timeouts (``time_out``, and a seat removed after timed-out turns), engine version 1 ids
and upgraded games (``id_base`` is 0). Games follow :data:`engine.versions.ENGINE_VERSION`.

Arrays (``N`` games, ``H`` rows, ``W`` columns; cell (x, y) is ``[i, y, x]``):

==============  ===============  =======================================================
``owner``       (N, H, W) int8   player id of the unit on the cell, 0 when empty
``kind``        (N, H, W) int8   0 empty, 1 infantry, 2 fortification, 3 factory
``standing``    (N, H, W) int8   fortification standing counter (1, 2); 0 otherwise
``acted``       (N, H, W) bool   the unit has acted in its owner's current turn
``uid``         (N, H, W) int32  unit id (:mod:`engine.cellwar.ids`), 0 when empty
``seen``        (N, H, W) bool   cells the player to act has seen this turn
``turn``        (N,) int8        player to act; 0 once finished
``round``       (N,) int32       round number (1 in the first)
``winner``      (N,) int8        winner once finished, else 0
``turn_acted``  (N,) bool        the player to act has applied an action in this turn
``count``       (N, P) int32     live units per player (index player - 1)
``out``         (N, P) bool      the player is out (no units left)
``issued``      (N, P) int32     unit ids issued per owner
``produced``    (N, P) int32     infantry produced per owner
==============  ===============  =======================================================

Only this module's numpy is used: no networking, no environment code.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.cellwar.config import CellWarConfig, UnitSpec
from engine.cellwar.ids import start_ids
from engine.cellwar.state import FINISHED, PLAYING, CellWarState, Player
from engine.cellwar.units import FACTORY, FACTORY_AT, FORTIFICATION, INFANTRY, Unit
from engine.versions import ENGINE_VERSION

EMPTY, INF, FORT, FAC = 0, 1, 2, 3
#: Unit type name -> kind code.
KIND_CODE = {INFANTRY: INF, FORTIFICATION: FORT, FACTORY: FAC}
#: Kind code -> unit type name.
KIND_NAME = {INF: INFANTRY, FORT: FORTIFICATION, FAC: FACTORY}
#: The nine vectors by action index, ``(dy + 1) * 3 + (dx + 1)`` (as client.rl.observation).
DX = np.array([-1, 0, 1, -1, 0, 1, -1, 0, 1], dtype=np.int64)
DY = np.array([-1, -1, -1, 0, 0, 0, 1, 1, 1], dtype=np.int64)
#: Index of the stay vector (0, 0).
STAY = 4
#: Offsets of a 5×5 square around a cell, and which of them lie within radius 1.
_OY, _OX = (a.ravel() for a in np.mgrid[-2:3, -2:3])
_R1 = (np.abs(_OY) <= 1) & (np.abs(_OX) <= 1)


class IllegalBatchAction(ValueError):
    """An action index outside 0..8 or masked out for the acting unit; nothing changed.

    Attributes:
        code: ``"INVALID_ACTION"`` (the engine's code for a refused vector).
        envs: the indices of the games whose action was refused.
    """

    code = "INVALID_ACTION"

    def __init__(self, message: str, envs: np.ndarray) -> None:
        super().__init__(message)
        self.envs = envs


def _dilate(mask: np.ndarray) -> np.ndarray:
    """Cells within Chebyshev distance 1 of a set cell (clipped to the board), for
    ``(k, H, W)`` bool masks."""
    out = mask.copy()
    out[:, :, 1:] |= mask[:, :, :-1]
    out[:, :, :-1] |= mask[:, :, 1:]
    rows = out.copy()
    out[:, 1:, :] |= rows[:, :-1, :]
    out[:, :-1, :] |= rows[:, 1:, :]
    return out


class CellWarBatch:
    """``num`` CellWar games of the same size and seat count (module docstring).

    Args:
        num: number of games (>= 1).
        width, height: board size in cells (4..64).
        players: seats per game (2..8).

    Raises:
        ValueError: a count or size out of range.
    """

    def __init__(self, num: int, width: int, height: int, players: int = 2) -> None:
        if num < 1:
            raise ValueError(f"num must be >= 1, got {num}")
        if not (4 <= width <= 64 and 4 <= height <= 64):
            raise ValueError(f"width and height must be 4..64, got {width}x{height}")
        if not 2 <= players <= 8:
            raise ValueError(f"players must be 2..8, got {players}")
        self.num, self.width, self.height, self.players = num, width, height, players
        n, h, w, p = num, height, width, players
        self.owner = np.zeros((n, h, w), np.int8)
        self.kind = np.zeros((n, h, w), np.int8)
        self.standing = np.zeros((n, h, w), np.int8)
        self.acted = np.zeros((n, h, w), bool)
        self.uid = np.zeros((n, h, w), np.int32)
        self.seen = np.zeros((n, h, w), bool)
        self.turn = np.zeros(n, np.int8)
        self.round = np.zeros(n, np.int32)
        self.winner = np.zeros(n, np.int8)
        self.turn_acted = np.zeros(n, bool)
        self.count = np.zeros((n, p), np.int32)
        self.out = np.zeros((n, p), bool)
        self.issued = np.zeros((n, p), np.int32)
        self.produced = np.zeros((n, p), np.int32)
        self.configs: list[CellWarConfig | None] = [None] * n
        self._all = np.arange(n)
        # the acting unit of each game (valid where has_acting)
        self.has_acting = np.zeros(n, bool)
        self.ay = np.zeros(n, np.int64)
        self.ax = np.zeros(n, np.int64)
        self.mask = np.zeros((n, 9), np.int8)

    # -- starting games

    def start(self, envs: Sequence[int] | np.ndarray, configs: Sequence[CellWarConfig]) -> None:
        """Start game ``envs[k]`` afresh from ``configs[k]`` (every seat joined: playing,
        round 1, player 1 to act, as ``add_player`` starts a full game), then end the
        turns nobody can act in (a start where player 1 holds only blocked factories)."""
        envs = np.asarray(envs, dtype=np.int64)
        for i, config in zip(envs.tolist(), configs, strict=True):
            if (config.width, config.height, config.players) != (self.width, self.height, self.players):
                raise ValueError("a config of another size or seat count than the batch")
            self.configs[i] = config
            for a in (self.owner, self.kind, self.standing, self.acted, self.uid, self.seen):
                a[i] = 0
            ids, issued = start_ids(config, ENGINE_VERSION)
            self.count[i] = 0
            for uid, spec in zip(ids, config.units, strict=True):
                self.owner[i, spec.y, spec.x] = spec.owner
                self.kind[i, spec.y, spec.x] = KIND_CODE[spec.type]
                self.standing[i, spec.y, spec.x] = spec.standing
                self.uid[i, spec.y, spec.x] = uid
                self.count[i, spec.owner - 1] += 1
            self.issued[i] = issued
            self.produced[i] = 0
            self.out[i] = self.count[i] == 0
            self.winner[i] = 0
            self.turn_acted[i] = False
            self.round[i] = 1
            self.turn[i] = 1 + int(np.flatnonzero(~self.out[i])[0])
        self.seen[envs] = self._vision(envs, self.turn[envs])
        self._settle_turns(envs)

    # -- reading

    def _vision(self, envs: np.ndarray, players: np.ndarray) -> np.ndarray:
        """``(k, H, W)`` bool: what the units of ``players[j]`` see now in game ``envs[j]``
        (Chebyshev radius 1 for infantry and factories, 2 for fortifications)."""
        own = self.owner[envs] == players[:, None, None]
        far = own & (self.kind[envs] == FORT)
        # radius 1 around every unit, radius 2 around fortifications:
        # dilate(own) | dilate(dilate(far)) == dilate(own | dilate(far)), as far ⊆ own
        return _dilate(own | _dilate(far)) if far.any() else _dilate(own)

    def _find_acting(self, envs: np.ndarray) -> None:
        """The acting unit and its legal vectors for games ``envs`` (``has_acting``,
        ``ay``/``ax``, ``mask``)."""
        k = len(envs)
        if k == 0:
            return
        hw = self.height * self.width
        full = k == self.num  # every game: read the arrays in place, no gather
        owner = self.owner if full else self.owner[envs]
        kind = self.kind if full else self.kind[envs]
        acted = self.acted if full else self.acted[envs]
        uid = self.uid if full else self.uid[envs]
        mine = owner == self.turn[envs][:, None, None]
        mine &= ~acted
        big = np.int32(2**31 - 1)
        combat = mine & (kind != FAC)  # a unit of the player is never EMPTY
        key = np.where(combat, uid, big).reshape(k, hw)
        cell = key.argmin(axis=1)
        has_combat = key[np.arange(k), cell] != big
        found = has_combat.copy()
        if not has_combat.all():
            rest = np.flatnonzero(~has_combat)
            fac = mine[rest] & (kind[rest] == FAC)
            some = fac.reshape(len(rest), hw).any(axis=1)
            rest, fac = rest[some], fac[some]  # only games whose player has a factory to act
            if len(rest):
                fac &= _dilate(owner[rest] == 0)  # with a free neighbouring cell
                fkey = np.where(fac, uid[rest], big).reshape(len(rest), hw)
                fcell = fkey.argmin(axis=1)
                found[rest] = fkey[np.arange(len(rest)), fcell] != big
                cell[rest] = fcell
        y, x = np.divmod(cell, self.width)
        self.has_acting[envs] = found
        self.ay[envs] = y
        self.ax[envs] = x
        # legal vectors: the 9 target cells
        ty = y[:, None] + DY[None, :]
        tx = x[:, None] + DX[None, :]
        onb = (ty >= 0) & (ty < self.height) & (tx >= 0) & (tx < self.width)
        tyc, txc = np.clip(ty, 0, self.height - 1), np.clip(tx, 0, self.width - 1)
        rows = np.arange(k)[:, None]
        towner = owner[rows, tyc, txc]
        me = self.turn[envs][:, None]
        is_fac = (kind[np.arange(k), y, x] == FAC)[:, None]
        legal = onb & np.where(is_fac, towner == 0, towner != me)
        legal[:, STAY] = ~is_fac[:, 0]
        legal &= found[:, None]
        self.mask[envs] = legal

    # -- stepping

    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> None:
        """Play action index ``actions[i]`` (0..8, ``(dy + 1) * 3 + (dx + 1)``) for the
        acting unit of every running game (of those where ``active``, ``(N,)`` bool, is
        set, when given), then end the turns nobody can act in. Finished games and
        inactive ones are left as they are (their action is ignored).

        Raises:
            IllegalBatchAction: an action outside 0..8 or masked out in a running game
                (nothing changes in any game).
        """
        actions = np.asarray(actions)
        if actions.shape != (self.num,):
            raise ValueError(f"actions must have shape ({self.num},), got {actions.shape}")
        running = self.turn != 0
        if active is not None:
            running &= np.asarray(active, dtype=bool)
        run = np.flatnonzero(running)
        a = actions[run].astype(np.int64)
        bad = (a < 0) | (a > 8)
        bad[~bad] = self.mask[run[~bad], a[~bad]] == 0
        if bad.any():
            raise IllegalBatchAction(
                f"actions masked out or not 0..8 in games {run[bad][:10].tolist()}", run[bad]
            )
        self._apply(run, a)
        self._settle_turns(run)

    def _apply(self, e: np.ndarray, a: np.ndarray) -> None:
        """One unit's action in each game ``e`` (actions.py ``_execute`` and ``settle``)."""
        y, x = self.ay[e], self.ax[e]
        ny, nx = y + DY[a], x + DX[a]
        p = self.turn[e].astype(np.int64)
        kind = self.kind[e, y, x]
        towner = self.owner[e, ny, nx].astype(np.int64)
        tkind = self.kind[e, ny, nx]
        stay = a == STAY
        produce = kind == FAC
        combat = ~stay & ~produce
        move = combat & (towner == 0)
        attack = combat & (towner != 0)
        att_fort = attack & (tkind == FORT)
        att_kill = attack & ~att_fort
        uid_src = self.uid[e, y, x]

        # stay: fortify / stand / become a factory
        s = np.flatnonzero(stay)
        if len(s):
            es, ys, xs = e[s], y[s], x[s]
            k = kind[s]
            st = self.standing[es, ys, xs].astype(np.int64)
            new_st = np.where(k == INF, 1, st + 1)
            becomes = (k == FORT) & (new_st >= FACTORY_AT)
            self.kind[es, ys, xs] = np.where(becomes, FAC, FORT)
            self.standing[es, ys, xs] = np.where(becomes, 0, new_st)
            self.acted[es, ys, xs] = True
        # counts: a killed target, a dead attacker, a produced infantry
        if att_kill.any():
            k = np.flatnonzero(att_kill)
            np.subtract.at(self.count, (e[k], towner[k] - 1), 1)
        if att_fort.any():
            k = np.flatnonzero(att_fort)
            np.subtract.at(self.count, (e[k], p[k] - 1), 1)
        # the source cell empties when its unit moves or dies
        c = np.flatnonzero(move | att_kill | att_fort)
        if len(c):
            ec, yc, xc = e[c], y[c], x[c]
            self.owner[ec, yc, xc] = 0
            self.kind[ec, yc, xc] = EMPTY
            self.standing[ec, yc, xc] = 0
            self.acted[ec, yc, xc] = False
            self.uid[ec, yc, xc] = 0
        # a fortification hit the first time yields: infantry in place
        f = np.flatnonzero(att_fort)
        if len(f):
            self.kind[e[f], ny[f], nx[f]] = INF
            self.standing[e[f], ny[f], nx[f]] = 0
        # the target cell gets an infantry of the player: moved, attacking or produced
        new_uid = uid_src.copy()
        pr = np.flatnonzero(produce)
        if len(pr):
            ep, pp = e[pr], p[pr] - 1
            new_uid[pr] = self.issued[ep, pp] * self.players + pp + 1
            self.issued[ep, pp] += 1
            self.produced[ep, pp] += 1
            self.count[ep, pp] += 1
            self.acted[ep, y[pr], x[pr]] = True
        d = np.flatnonzero(move | att_kill | produce)
        if len(d):
            ed, yd, xd = e[d], ny[d], nx[d]
            self.owner[ed, yd, xd] = p[d]
            self.kind[ed, yd, xd] = INF
            self.standing[ed, yd, xd] = 0
            self.acted[ed, yd, xd] = True
            self.uid[ed, yd, xd] = new_uid[d]
        # fog memory: the new unit's square (radius 2 for a new fortification)
        grow = move | att_kill | produce | (stay & (kind == INF))
        g = np.flatnonzero(grow)
        if len(g):
            radius2 = stay[g]
            cy, cx = np.where(radius2, y[g], ny[g]), np.where(radius2, x[g], nx[g])
            sq = _R1[None, :] | radius2[:, None]  # (k, 25)
            yy = cy[:, None] + _OY[None, :]
            xx = cx[:, None] + _OX[None, :]
            sq &= (yy >= 0) & (yy < self.height) & (xx >= 0) & (xx < self.width)
            rows = np.broadcast_to(e[g][:, None], sq.shape)[sq]
            self.seen[rows, yy[sq], xx[sq]] = True
        self.turn_acted[e] = True
        self._eliminate_and_finish(e)
        # a player eliminated in its own turn loses it at once (2+ players left)
        lost = e[(self.turn[e] != 0) & self.out[e, np.maximum(self.turn[e].astype(np.int64) - 1, 0)]]
        if len(lost):
            self._pass_turn(lost)

    def _eliminate_and_finish(self, e: np.ndarray) -> None:
        """turns.py ``eliminate`` then ``finish_if_over`` for games ``e``."""
        self.out[e] |= self.count[e] == 0
        active = (~self.out[e]).sum(axis=1)
        done = e[(active <= 1) & (self.turn[e] != 0)]
        if len(done):
            left = ~self.out[done]
            self.winner[done] = np.where(left.any(axis=1), left.argmax(axis=1) + 1, 0)
            self.turn[done] = 0
            self.turn_acted[done] = False
            self.acted[done] = False
            self.seen[done] = False

    def _pass_turn(self, e: np.ndarray) -> None:
        """turns.py ``pass_turn`` + ``begin_turn``: the next player not out after the
        current one (the round goes up when the order wraps)."""
        p = self.players
        ids = np.arange(1, p + 1)
        active = ~self.out[e]
        cur = self.turn[e].astype(np.int64)
        later = active & (ids[None, :] > cur[:, None])
        has_later = later.any(axis=1)
        nxt = np.where(has_later, later.argmax(axis=1) + 1, active.argmax(axis=1) + 1)
        self.round[e] += ~has_later
        self.turn[e] = nxt
        self.turn_acted[e] = False
        self.acted[e] = False
        self.seen[e] = self._vision(e, nxt)

    def _settle_turns(self, e: np.ndarray) -> None:
        """Find the acting unit of games ``e``; end the turns nobody can act in (turns.py
        ``end_player_turn``: the player's factories that have not acted are all blocked
        then and die), repeatedly."""
        e = e[self.turn[e] != 0]
        while len(e):
            self._find_acting(e)
            stuck = e[~self.has_acting[e]]
            if not len(stuck):
                break
            me = self.turn[stuck][:, None, None]
            dying = (self.owner[stuck] == me) & ~self.acted[stuck]
            if dying.any():
                self.count[stuck, self.turn[stuck].astype(np.int64) - 1] -= dying.sum(axis=(1, 2)).astype(np.int32)
                for arr in (self.owner, self.kind, self.standing, self.uid):
                    sub = arr[stuck]
                    sub[dying] = 0
                    arr[stuck] = sub
            self._eliminate_and_finish(stuck)
            going = stuck[self.turn[stuck] != 0]
            if len(going):
                self._pass_turn(going)
            e = going
        over = self.turn == 0
        self.has_acting[over] = False
        self.mask[over] = 0

    # -- back to the engine

    def state(self, i: int) -> CellWarState:
        """Game ``i`` as the engine's :class:`CellWarState` (players named
        ``player_1``.., as the environments join them), for hashing and checks.

        Raises:
            ValueError: game ``i`` was never started.
        """
        config = self.configs[i]
        if config is None:
            raise ValueError(f"game {i} was never started")
        ys, xs = np.nonzero(self.owner[i])
        units = sorted(
            (
                Unit(
                    int(self.uid[i, y, x]),
                    int(self.owner[i, y, x]),
                    KIND_NAME[int(self.kind[i, y, x])],
                    int(x),
                    int(y),
                    int(self.standing[i, y, x]),
                    bool(self.acted[i, y, x]),
                )
                for y, x in zip(ys.tolist(), xs.tolist(), strict=True)
            ),
            key=lambda u: u.id,
        )
        players = tuple(
            Player(j + 1, f"player_{j + 1}", bool(self.out[i, j]), False, int(self.produced[i, j]))
            for j in range(self.players)
        )
        finished = int(self.turn[i]) == 0
        seen = 0
        if not finished:
            flat = np.flatnonzero(self.seen[i].ravel())
            for b in flat.tolist():
                seen |= 1 << b
        extra = {}
        if "turn_acted" in CellWarState.__dataclass_fields__:  # engine version 4+
            extra["turn_acted"] = bool(self.turn_acted[i])
        return CellWarState(
            **extra,
            config=config,
            phase=FINISHED if finished else PLAYING,
            players=players,
            units=tuple(units),
            turn=int(self.turn[i]),
            round=int(self.round[i]),
            seen=seen,
            winner=(int(self.winner[i]) or None) if finished else None,
            rules=ENGINE_VERSION,
            issued=tuple(int(v) for v in self.issued[i]),
            id_base=0,
        )


def config_of(width: int, height: int, players: int, units: Sequence[UnitSpec] | None = None) -> CellWarConfig:
    """The normalised config of a game (``units`` None: the default start), as
    ``config_from_dict`` makes it."""
    from engine.cellwar.config import config_from_dict

    data: dict = {"width": width, "height": height, "players": players}
    if units is not None:
        data["units"] = [u.to_dict() for u in units]
    return config_from_dict(data)
