"""CellWar rules as a pure library (face: :mod:`engine.api`; docs/architecture/index.md
"The layers").

numpy and the standard library only: no network, no clock, no global randomness.
"""

from engine.api import (
    CONTROL_ACTIONS,
    ENGINE_VERSION,
    EventDraft,
    Summary,
    add_player,
    apply_action,
    apply_event,
    config_from_dict,
    decide,
    decide_tick,
    decode_state,
    encode_state,
    end_player_turn,
    fold,
    get_valid_actions,
    get_visible_state,
    get_winner,
    new_game,
    player_log,
    remove_player,
    state_hash,
    summary,
    tick,
)
from engine.errors import GameError

__all__ = [
    "CONTROL_ACTIONS",
    "ENGINE_VERSION",
    "EventDraft",
    "GameError",
    "Summary",
    "add_player",
    "apply_action",
    "apply_event",
    "config_from_dict",
    "decide",
    "decide_tick",
    "decode_state",
    "encode_state",
    "end_player_turn",
    "fold",
    "get_valid_actions",
    "get_visible_state",
    "get_winner",
    "new_game",
    "player_log",
    "remove_player",
    "state_hash",
    "summary",
    "tick",
]
