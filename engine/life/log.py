"""Who observes a Life event, and a player's view of a Life event log while placement is
blind (``GET /game/{id}/events``; docs/architecture/contracts.md "Who observes an event; a
player's own numbering": nothing else leaks, a view's ``seq`` is the player's own version).

During ``placement`` each player draws in turn and nobody sees another player's cells
(:func:`engine.life.game.get_visible_state` hides them). One rule, :func:`observers`,
says who observes an event, and :func:`player_log` is the log of the events a player
observes, numbered in its own sequence (:mod:`engine.playerlog`):

- **Hidden**: another player's drawing action (``ActionApplied`` of ``place``,
  ``erase``, ``stamp`` or ``reset_turn``) taken while the game was in ``placement``
  (the phase of the state before the event). Only its actor observes it (a spectator's
  placement view is an empty board, so a spectator does not either); it is left out of
  every other player's log. The ``TurnEnded`` that follows shows that the turn passed,
  which the view shows anyway.
- **Public**, observed by every seat and the spectator: every other event:
  ``GameCreated`` (the config has no cells), ``PlayerJoined``, ``TurnEnded``,
  ``PlayerRemoved``, ``GameFinished``, ``ControlChanged`` (pause/resume/speed),
  ``GenerationsTicked``, another player's non-drawing actions (``resign``,
  ``propose_finish``: no cells), and every event once placement is over (from then on
  the board is visible to all, so the fold stops there: no generation is computed for
  the filter).
- ``GameForked`` (the first event of a fork, :mod:`engine.fork`) without its ``state``
  (the whole board, blind placements included) and ``state_hash``.
- **No ``state_hash``** on any event of the filtered log: a hash of the full state is a
  function of the hidden cells (a guess could be checked against it). The log stays
  filtered until the game is finished (engine/policy.py: the whole log would tell, once
  the board is visible, how each opponent drew blind); then the session serves the
  whole log with hashes (``services/session/service_layer/visibility.py``).
- Items are numbered ``seq`` = 1..k (the reader's version) with ``log_seq`` = the real
  seq; nothing tells how many events were left out.

The shape mirrors :mod:`engine.cellwar.log`: ``[{"seq", "log_seq", "type", "actor",
"payload"}]`` in log order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cellwar.v1.codes import ErrorCode
from engine.api import apply_event
from engine.errors import GameError
from engine.fork import public_payload
from engine.playerlog import OwnNumbering

#: Life actions that draw on the board (docs/architecture/contracts.md "Life actions").
DRAWING_ACTIONS = frozenset({"place", "erase", "stamp", "reset_turn"})

#: Phases in which another player's drawing is hidden from the reader (the board is blind
#: in ``placement``; nobody can draw in ``waiting``, listed so the fold runs through it).
BLIND_PHASES = frozenset({"waiting", "placement"})


def blind_drawing(etype: str, payload: Mapping[str, Any], phase_before: str) -> bool:
    """``etype``/``payload`` is a drawing action taken during blind placement."""
    if etype != "ActionApplied" or phase_before != "placement":
        return False
    action = payload.get("action") or {}
    return action.get("type") in DRAWING_ACTIONS


def observers(
    before: Any | None, etype: str, actor: int, payload: Mapping[str, Any], after: Any
) -> frozenset[int]:
    """Who observes a Life event (module docstring): seat ids, and 0 for a spectator.

    Returns:
        ``{actor}`` for a drawing action during placement; every seat and 0 otherwise.
    """
    if before is not None and blind_drawing(etype, payload, before.phase):
        return frozenset({actor})
    return frozenset(range(0, after.config.players + 1))


def hidden_from(event: Mapping[str, Any], phase_before: str, player_id: int) -> bool:
    """Whether ``event`` (taken in ``phase_before``) is hidden from ``player_id``: another
    player's drawing action during ``placement``."""
    if int(event.get("actor", 0)) == player_id:
        return False
    return blind_drawing(str(event.get("type")), event.get("payload") or {}, phase_before)


def player_log(events: Iterable[Mapping[str, Any]], player_id: int) -> list[dict[str, Any]]:
    """The events of a whole Life log that ``player_id`` observes (module docstring).

    Args:
        events: the log from seq 1, each ``{"seq", "type", "actor", "payload",
            "engine_version"?}`` (payload a dict; a ``"state_hash"`` is ignored).
        player_id: the reader (>= 1). A player id without a seat sees every event but the
            placement drawing of all players.

    Returns:
        JSON-ready ``[{"seq", "log_seq", "type", "actor", "payload"}]`` in log order,
        ``seq`` = 1..k, without hashes.

    Raises:
        GameError: ``MALFORMED`` when the log does not start with ``GameCreated``; any
            rule error means the log does not fold (a broken log).
    """
    events = list(events)
    if not events:
        return []
    if events[0].get("type") not in ("GameCreated", "GameForked"):
        raise GameError(ErrorCode.MALFORMED, "a player log needs the whole log from GameCreated")
    state: Any = None
    numbering = OwnNumbering()
    out: list[dict[str, Any]] = []
    for event in events:
        before = state.phase if state is not None else ""
        if state is None or before in BLIND_PHASES:  # after placement all is public: no fold
            payload = event.get("payload") or {}
            state = apply_event(
                state,
                str(event["type"]),
                int(event.get("actor", 0)),
                payload,
                engine_version=event.get("engine_version") or None,
            )
        if not hidden_from(event, before, player_id):
            payload = event.get("payload") or {}
            if event.get("type") == "GameForked":
                payload = public_payload(payload)
            out.append(numbering.entry(event, payload))
        numbering.passed(event)
    return out
