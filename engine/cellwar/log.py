"""A player's fog-filtered view of a CellWar event log (DESIGN.md §5 "nothing else leaks",
§7 ``GET /game/{id}/events``: "a player gets it fog-filtered; everyone gets it whole once
the game is finished").

:func:`player_log` folds the log from ``GameCreated`` and decides, event by event, what
``player_id`` may see of it at the moment it happened. The rule:

- **Public events** (every player sees them, payload as recorded): ``GameCreated`` with
  its config reduced to the reader's own start units (:func:`own_config`: the view hides
  enemy units, so their start cells must not be told either; board size, seats and
  timeout are kept; the lobby shows no units), ``PlayerJoined``, ``TurnEnded`` (``{}``: what dies at the end of a turn is not told),
  ``PlayerRemoved`` (``{"player_id", "reason"}``), ``GameFinished``, and ``RolledBack``
  reduced to ``{"to_seq"}`` (its base64 ``state`` would show the whole board).
- **Own actions** (``ActionApplied`` whose actor is ``player_id``): in full.
- **Another player's action**: kept only when the acting unit's start cell or its target
  cell (start + (dx, dy)) was visible to ``player_id`` at that moment. Outside its own
  turn a player sees what its units see (:func:`engine.cellwar.fog.vision_mask`), taken
  before or after the action (an attack may kill the unit that saw it). The payload is
  reduced to ``{"action": {"dx", "dy"}}`` plus ``"from": [x, y]`` and ``"to": [x, y]``
  only for the cells that were visible: never a unit id, a unit type, a count, or what
  happened in a fogged cell.
- **Hidden events** are left out entirely (their seqs are missing from the answer; the
  numbering of public events already shows that something happened, which the turn
  order makes public anyway).
- Any other event type (none exists in CellWar) is left out.
- **No ``state_hash``** on any event of a filtered log: the hash of the full state is a
  function of hidden positions (on a small board a guess could be checked against it).
  Once the game is finished the session serves the whole log with hashes instead.

A log of another kind goes to that kind's rule (:func:`engine.api.player_log`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.api import apply_event
from engine.api import player_log as any_kind_player_log
from engine.cellwar.fog import is_visible, vision_mask
from engine.cellwar.state import CellWarState
from engine.errors import GameError

#: Event types every player sees (RolledBack without its state).
PUBLIC_TYPES = frozenset(
    {"GameCreated", "PlayerJoined", "TurnEnded", "PlayerRemoved", "GameFinished", "RolledBack"}
)


def _entry(event: Mapping[str, Any], payload: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "seq": int(event.get("seq", 0)),
        "type": str(event["type"]),
        "actor": int(event.get("actor", 0)),
        "payload": dict(payload),
    }


def own_config(payload: Mapping[str, Any], player_id: int) -> dict[str, Any]:
    """``GameCreated``'s payload ``{"kind", "config"}`` as ``player_id`` may read it: the
    config's ``units`` reduced to those it owns (every other key kept)."""
    out = dict(payload)
    config = dict(out.get("config") or {})
    if "units" in config:
        config["units"] = [
            dict(u) for u in config["units"] or [] if int(u.get("owner", 0)) == player_id
        ]
    out["config"] = config
    return out


def filter_action(
    before: CellWarState, after: CellWarState, actor: int, action: Mapping[str, Any], player_id: int
) -> dict[str, Any] | None:
    """What ``player_id`` sees of ``actor``'s action ``{"unit_id", "dx", "dy"}`` that turned
    ``before`` into ``after``: the reduced payload, or None when it saw nothing.

    ``{"action": {"dx", "dy"}, "from"?: [x, y], "to"?: [x, y]}`` (cells: column, row).
    """
    if actor == player_id:
        return {"action": dict(action)}
    unit = before.unit(int(action.get("unit_id", 0)))
    if unit is None:  # cannot happen for a log that folds; show nothing
        return None
    dx, dy = int(action.get("dx", 0)), int(action.get("dy", 0))
    mask = vision_mask(before, player_id) | vision_mask(after, player_id)
    w = before.width
    start, target = (unit.x, unit.y), (unit.x + dx, unit.y + dy)
    payload: dict[str, Any] = {"action": {"dx": dx, "dy": dy}}
    if is_visible(mask, w, *start):
        payload["from"] = list(start)
    if before.in_board(*target) and is_visible(mask, w, *target):
        payload["to"] = list(target)
    if "from" not in payload and "to" not in payload:
        return None
    return payload


def player_log(events: Iterable[Mapping[str, Any]], player_id: int) -> list[dict[str, Any]]:
    """The events of a whole log that ``player_id`` may see, reduced (module docstring).

    Args:
        events: the log from seq 1, each ``{"seq", "type", "actor", "payload"}`` (payload a
            dict; ``"state_hash"`` is only read for kinds without fog).
        player_id: the reader (>= 1). A player id without a seat sees the public events.

    Returns:
        JSON-ready ``[{"seq", "type", "actor", "payload"}]`` in log order (CellWar); a log
        of another kind is filtered by its own rule (:func:`engine.api.player_log`).

    Raises:
        GameError: ``MALFORMED`` when the log does not start with ``GameCreated``; any
            rule error means the log does not fold (a broken log).
    """
    events = list(events)
    if not events:
        return []
    if events[0].get("type") != "GameCreated":
        raise GameError("MALFORMED", "a player log needs the whole log from GameCreated")
    if (events[0].get("payload") or {}).get("kind") != "cellwar":
        return any_kind_player_log(events, player_id)
    state: Any = None
    out: list[dict[str, Any]] = []
    for event in events:
        etype = str(event["type"])
        actor = int(event.get("actor", 0))
        payload = event.get("payload") or {}
        before = state
        state = apply_event(state, etype, actor, payload)
        if etype == "RolledBack":
            out.append(_entry(event, {"to_seq": int(payload.get("to_seq", 0))}))
        elif etype == "GameCreated":
            out.append(_entry(event, own_config(payload, player_id)))
        elif etype in PUBLIC_TYPES:
            out.append(_entry(event, payload))
        elif etype == "ActionApplied" and before is not None:
            seen = filter_action(before, state, actor, payload.get("action") or {}, player_id)
            if seen is not None:
                out.append(_entry(event, seen))
    return out
