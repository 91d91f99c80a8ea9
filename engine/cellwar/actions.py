"""The vector action ``{"unit_id", "dx", "dy"}``: what it means and what it does.

Source: seed "API действий — только вектор" and "Правила атаки":

==================================  ==========================================================
infantry (0,0)                      becomes a fortification, standing 1 (``fortify``)
infantry (dx,dy) + empty cell       moves there (``move``)
infantry (dx,dy) + enemy            attacks (``attack``): infantry -> destroyed, the attacker
                                    takes its cell; fortification (1st hit) -> the attacker is
                                    destroyed, the fortification becomes infantry in place;
                                    2nd hit = infantry vs infantry; factory -> destroyed, the
                                    attacker takes its cell
infantry (dx,dy) + own unit / off   invalid (``INVALID_ACTION``)
fortification (0,0)                 standing +1 (``stand``); at 3 it becomes a factory
                                    (``become_factory``), which produces from the next turn
fortification (dx,dy)               becomes infantry (counter reset), then the infantry rules
factory (dx,dy) + empty cell        produces an infantry there, which counts as having acted
factory (0,0) / occupied / off      invalid (``INVALID_ACTION``)
==================================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from cellwar.v1.codes import ErrorCode
from engine.cellwar.ids import next_id
from engine.cellwar.state import CellWarState
from engine.cellwar.turns import check_turn, mark_acted, settle
from engine.cellwar.units import FACTORY, FACTORY_AT, FORTIFICATION, INFANTRY, VECTORS, Unit
from engine.errors import GameError

#: What an action does, as reported by :func:`get_valid_actions` (``kind``).
ACTION_KINDS = ("move", "attack", "fortify", "stand", "become_factory", "produce")


def parse_action(action: Mapping[str, Any]) -> tuple[int, int, int]:
    """``(unit_id, dx, dy)`` of a JSON action; other keys are ignored.

    Raises:
        GameError: ``MALFORMED`` when a field is missing, not an integer, or dx/dy is not
            in {-1, 0, 1}.
    """
    if not isinstance(action, Mapping):
        raise GameError(ErrorCode.MALFORMED, "a CellWar action is {unit_id, dx, dy}")
    if "type" in action and "unit_id" not in action:
        raise GameError(
            ErrorCode.MALFORMED,
            f"a CellWar game's action is a move {{unit_id, dx, dy}} (got type {action['type']!r}: "
            "typed actions are for Life and campaign games)",
        )
    values = []
    for key in ("unit_id", "dx", "dy"):
        value = action.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise GameError(
                ErrorCode.MALFORMED, f"{key} must be an integer (action {{unit_id, dx, dy}})"
            )
        values.append(value)
    unit_id, dx, dy = values
    if dx not in (-1, 0, 1) or dy not in (-1, 0, 1):
        raise GameError(ErrorCode.MALFORMED, f"dx and dy must be -1, 0 or 1, got ({dx}, {dy})")
    return unit_id, dx, dy


def interpret(
    state: CellWarState,
    unit: Unit,
    dx: int,
    dy: int,
    occupancy: Mapping[tuple[int, int], Unit] | None = None,
) -> str:
    """What vector (dx, dy) does for ``unit`` now: one of :data:`ACTION_KINDS`.

    ``occupancy`` is ``state.occupancy()`` when the caller already has it.

    Raises:
        GameError: ``INVALID_ACTION`` for a factory's (0, 0), a target off the board, on
            an own unit, or (factory) on any unit.
    """
    if (dx, dy) == (0, 0):
        if unit.type == INFANTRY:
            return "fortify"
        if unit.type == FORTIFICATION:
            return "become_factory" if unit.standing + 1 >= FACTORY_AT else "stand"
        raise GameError(
            ErrorCode.INVALID_ACTION, "a factory cannot stay: (0, 0) is not a factory move"
        )
    x, y = unit.x + dx, unit.y + dy
    if not state.in_board(x, y):
        raise GameError(ErrorCode.INVALID_ACTION, f"({x}, {y}) is off the board")
    if occupancy is None:
        occupancy = state.occupancy()
    target = occupancy.get((x, y))
    if unit.type == FACTORY:
        if target is not None:
            raise GameError(
                ErrorCode.INVALID_ACTION,
                f"a factory produces only on an empty cell; ({x}, {y}) is taken",
            )
        return "produce"
    if target is None:
        return "move"
    if target.owner == unit.owner:
        raise GameError(ErrorCode.INVALID_ACTION, f"({x}, {y}) holds your own unit")
    return "attack"


def _execute(state: CellWarState, unit: Unit, dx: int, dy: int, kind: str) -> CellWarState:
    units = {u.id: u for u in state.units}
    x, y = unit.x + dx, unit.y + dy
    if kind == "fortify":
        units[unit.id] = replace(unit, type=FORTIFICATION, standing=1, acted=True)
    elif kind == "stand":
        units[unit.id] = replace(unit, standing=unit.standing + 1, acted=True)
    elif kind == "become_factory":
        units[unit.id] = replace(unit, type=FACTORY, standing=0, acted=True)
    elif kind == "move":
        units[unit.id] = replace(unit, type=INFANTRY, standing=0, x=x, y=y, acted=True)
    elif kind == "attack":
        target = state.occupancy()[(x, y)]
        if target.type == FORTIFICATION:  # 1st hit: the attacker dies, the fortification yields
            del units[unit.id]
            units[target.id] = replace(target, type=INFANTRY, standing=0)
        else:  # infantry (incl. a fortification already hit) or factory: destroyed
            del units[target.id]
            units[unit.id] = replace(unit, type=INFANTRY, standing=0, x=x, y=y, acted=True)
    else:  # produce
        owner = state.player(unit.owner)
        assert owner is not None
        new_id, state = next_id(state, owner.id)
        units[unit.id] = replace(unit, acted=True)
        units[new_id] = Unit(new_id, owner.id, INFANTRY, x, y, 0, acted=True)
        state = state.with_player(replace(owner, produced=owner.produced + 1))
    return replace(state, units=tuple(units[k] for k in sorted(units)))


def _pending_combat(state: CellWarState, player_id: int) -> list[int]:
    return [u.id for u in state.units if u.owner == player_id and u.combat and not u.acted]


def apply_action(state: CellWarState, player_id: int, action: Mapping[str, Any]) -> CellWarState:
    """Apply ``{"unit_id", "dx", "dy"}`` of ``player_id``; returns the new state.

    Produced unit ids are drawn per owner (:mod:`engine.cellwar.ids`), so an id never
    tells a player what others have or produced.

    Raises:
        GameError: ``MALFORMED`` (see :func:`parse_action`), ``WRONG_PHASE``,
            ``GAME_FINISHED``, ``UNKNOWN_PLAYER``, ``NOT_YOUR_TURN``, ``INVALID_ACTION``
            (unknown unit or not yours, or see :func:`interpret`), ``UNIT_ALREADY_ACTED``,
            ``UNITS_NOT_DONE`` (a factory while combat units still have to act).

    Version 4+: the turn counts as acted and the player's ``idle`` count goes to 0
    (:func:`engine.cellwar.turns.mark_acted`).
    """
    unit_id, dx, dy = parse_action(action)
    check_turn(state, player_id)
    unit = state.unit(unit_id)
    if unit is None or unit.owner != player_id:
        raise GameError(ErrorCode.INVALID_ACTION, f"unit {unit_id} is not one of your units")
    if unit.acted:
        raise GameError(ErrorCode.UNIT_ALREADY_ACTED, f"unit {unit_id} has already acted this turn")
    if unit.type == FACTORY:
        pending = _pending_combat(state, player_id)
        if pending:
            raise GameError(
                ErrorCode.UNITS_NOT_DONE, f"combat units {pending} must act before factories"
            )
    kind = interpret(state, unit, dx, dy)
    return settle(mark_acted(_execute(state, unit, dx, dy, kind), player_id))


def get_valid_actions(
    state: CellWarState, player_id: int, unit_id: int | None = None
) -> list[dict]:
    """Legal actions now: ``[{"unit_id", "dx", "dy", "kind"}]`` by unit id, then dy, dx.

    Empty when it is not ``player_id``'s turn, for a unit that has acted, is not the
    player's, or is a factory while combat units still have to act.
    """
    try:
        check_turn(state, player_id)
    except GameError:
        return []
    factories_may_act = not _pending_combat(state, player_id)
    occupancy = state.occupancy()
    out = []
    for unit in state.units:
        if unit.owner != player_id or unit.acted or (unit_id is not None and unit.id != unit_id):
            continue
        if unit.type == FACTORY and not factories_may_act:
            continue
        for dx, dy in VECTORS:
            try:
                kind = interpret(state, unit, dx, dy, occupancy)
            except GameError:
                continue
            out.append({"unit_id": unit.id, "dx": dx, "dy": dy, "kind": kind})
    return out
