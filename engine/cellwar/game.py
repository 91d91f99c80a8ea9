"""The ``cellwar`` kind module behind :mod:`engine.api` (see its contract table).

Source: ``seeds/001_9d7c8657bdcb51a7.txt`` and docs/architecture/rules.md. The rules are split by
responsibility: :mod:`engine.cellwar.config`, :mod:`~engine.cellwar.state`,
:mod:`~engine.cellwar.actions`, :mod:`~engine.cellwar.turns`, :mod:`~engine.cellwar.fog`.

Decisions where the seed is silent: :func:`tick` returns the state unchanged (CellWar
has no generations, so the session's ticker finds nothing to record); the others are
in the docstrings of the modules above.
"""

from __future__ import annotations

from engine.api import Summary
from engine.cellwar import ids
from engine.cellwar.actions import apply_action, get_valid_actions
from engine.cellwar.config import CellWarConfig, config_from_dict, config_to_dict
from engine.cellwar.fog import get_visible_state
from engine.cellwar.ids import start_ids
from engine.cellwar.log import observers, player_log
from engine.cellwar.state import FINISHED, CellWarState, decode_state, encode_state
from engine.cellwar.turns import (
    add_player,
    end_player_turn,
    idle_seats,
    remove_player,
    time_out,
    turn_timer,
    upgrade_idle,
)
from engine.cellwar.units import Unit
from engine.versions import ENGINE_VERSION

__all__ = [
    "CellWarConfig",
    "CellWarState",
    "add_player",
    "apply_action",
    "config_from_dict",
    "config_to_dict",
    "decode_state",
    "encode_state",
    "end_player_turn",
    "get_valid_actions",
    "get_visible_state",
    "get_winner",
    "idle_seats",
    "new_game",
    "observers",
    "player_log",
    "remove_player",
    "summary",
    "tick",
    "time_out",
    "turn_timer",
    "upgrade",
]


def new_game(config: CellWarConfig, rules: str = ENGINE_VERSION) -> CellWarState:
    """A game waiting for its players, with the config's start units, under the rules of
    engine version ``rules``: ids per owner (:mod:`engine.cellwar.ids`; version 1: ids
    1..n in config order)."""
    ids, issued = start_ids(config, rules)
    units = tuple(
        sorted(
            (Unit(i, s.owner, s.type, s.x, s.y, s.standing) for i, s in zip(ids, config.units, strict=True)),
            key=lambda u: u.id,
        )
    )
    return CellWarState(config=config, units=units, rules=rules, issued=issued)


def upgrade(state: CellWarState, version: str) -> CellWarState:
    """The state under the rules of ``version`` (newer than ``state.rules``): unit ids from
    version 1 to 2 (:func:`engine.cellwar.ids.upgrade`), idle turns counted from version 4
    (:func:`engine.cellwar.turns.upgrade_idle`)."""
    return ids.upgrade(upgrade_idle(state, version), version)


def tick(state: CellWarState, generations: int) -> CellWarState:
    """CellWar has no generations: the state is returned unchanged."""
    return state


def get_winner(state: CellWarState) -> int | None:
    """The last player with units once the game is finished; None before."""
    return state.winner


def summary(state: CellWarState) -> Summary:
    """Phase, turn (0 when nobody's), generation 0, speed 1 and seats."""
    return Summary(
        kind="cellwar",
        phase=state.phase,
        turn=state.turn,
        generation=0,
        speed=1,
        players_joined=len(state.players),
        max_players=state.config.players,
        finished=state.phase == FINISHED,
    )
