"""A player's view of a Life event log while placement is blind (DESIGN.md §3 "blind
placement", §5 "nothing else leaks", §7 ``GET /game/{id}/events``: "a player gets it
fog-filtered; everyone gets it whole once the game is finished").

During ``placement`` each player draws in turn and nobody sees another player's cells
(:func:`engine.life.game.get_visible_state` hides them). The log must not lift that
veil, so :func:`player_log` folds the log from ``GameCreated`` and decides, event by
event, what ``player_id`` may see of it. The rule:

- **Hidden**: another player's drawing action (``ActionApplied`` of ``place``,
  ``erase``, ``stamp`` or ``reset_turn``) taken while the game was in ``placement``
  (the phase of the state before the event). It is left out entirely (its seq is
  missing from the answer); the ``TurnEnded`` that follows shows that the turn passed,
  which the view shows anyway.
- **Kept as recorded**: every other event: ``GameCreated`` (the config has no cells),
  ``PlayerJoined``, ``TurnEnded``, ``PlayerRemoved``, ``GameFinished``,
  ``ControlChanged`` (pause/resume/speed), the reader's own actions in full, another
  player's non-drawing actions (``resign``, ``propose_finish``: no cells), and every
  event once placement is over (from then on the board is visible to all, so the fold
  stops there: no generation is computed for the filter).
- **No ``state_hash``** on any event of the filtered log: a hash of the full state is a
  function of the hidden cells (a guess could be checked against it). Once placement is
  over the session serves the whole log with hashes instead
  (``services/session/visibility.py``).

The shape mirrors :mod:`engine.cellwar.log`: ``[{"seq", "type", "actor", "payload"}]``
in log order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.api import apply_event
from engine.errors import GameError

#: Life actions that draw on the board (DESIGN.md §3; docs/ARCHITECTURE.md "Life actions").
DRAWING_ACTIONS = frozenset({"place", "erase", "stamp", "reset_turn"})

#: Phases in which another player's drawing is hidden from the reader (the board is blind
#: in ``placement``; nobody can draw in ``waiting``, listed so the fold runs through it).
BLIND_PHASES = frozenset({"waiting", "placement"})


def _entry(event: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "seq": int(event.get("seq", 0)),
        "type": str(event["type"]),
        "actor": int(event.get("actor", 0)),
        "payload": dict(event.get("payload") or {}),
    }


def hidden_from(event: Mapping[str, Any], phase_before: str, player_id: int) -> bool:
    """Whether ``event`` (taken in ``phase_before``) is hidden from ``player_id``: another
    player's drawing action during ``placement``."""
    if event.get("type") != "ActionApplied" or phase_before != "placement":
        return False
    if int(event.get("actor", 0)) == player_id:
        return False
    action = (event.get("payload") or {}).get("action") or {}
    return action.get("type") in DRAWING_ACTIONS


def player_log(events: Iterable[Mapping[str, Any]], player_id: int) -> list[dict[str, Any]]:
    """The events of a whole Life log that ``player_id`` may see (module docstring).

    Args:
        events: the log from seq 1, each ``{"seq", "type", "actor", "payload"}`` (payload a
            dict; a ``"state_hash"`` is ignored).
        player_id: the reader (>= 1). A player id without a seat sees every event but the
            placement drawing of all players.

    Returns:
        JSON-ready ``[{"seq", "type", "actor", "payload"}]`` in log order, without hashes.

    Raises:
        GameError: ``MALFORMED`` when the log does not start with ``GameCreated``; any
            rule error means the log does not fold (a broken log).
    """
    events = list(events)
    if not events:
        return []
    if events[0].get("type") != "GameCreated":
        raise GameError("MALFORMED", "a player log needs the whole log from GameCreated")
    state: Any = None
    out: list[dict[str, Any]] = []
    for event in events:
        before = state.phase if state is not None else ""
        if state is None or before in BLIND_PHASES:  # after placement all is public: no fold
            payload = event.get("payload") or {}
            state = apply_event(state, str(event["type"]), int(event.get("actor", 0)), payload)
        if not hidden_from(event, before, player_id):
            out.append(_entry(event))
    return out
