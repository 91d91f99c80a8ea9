"""Who observes a CellWar event, and a player's fog-filtered view of the event log
(``GET /game/{id}/events``: a player gets it fog-filtered, everyone gets it whole once the
game is finished; nothing else leaks, and a view's ``seq`` is the player's own version:
docs/architecture/contracts.md "Who observes an event; a player's own numbering").

One rule, :func:`observers`, decides who observes an event; :func:`player_log` is the
log of the events a player observes, numbered in its own sequence
(:mod:`engine.playerlog`). The rule:

- **Public events**, observed by every seat and by a spectator: ``GameCreated``,
  ``PlayerJoined``, ``TurnEnded`` (the turn passes), ``TurnTimedOut`` (so does it, by
  the clock), ``PlayerRemoved``, ``GameFinished``, and any action or rollback whose
  effect is public: it changes the phase, the turn, the round, a player's
  ``out``/``connected`` or the winner (an attacker eliminated on a fortification passes
  the turn; the last unit destroyed ends the game).
- **An action** (``ActionApplied``) is otherwise observed by the actor and by each other
  player whose view it changes: a unit appears, leaves, moves or changes type or
  standing in a cell that player sees, or one of its own units is hit (its vision
  changes).
- **A rollback** (``RolledBack``, a player removed during its own turn) follows the same
  rule as an action: the acting player and each player whose view it changes. It is
  recorded only when something happened in that turn, so were it public, a player
  would learn that the leaver had moved units it never saw; a rollback
  that undoes only fogged moves changes nothing a player sees and is not observed. Outside its own turn a player sees what its units see now
  (:func:`engine.cellwar.fog.vision_mask`), so this is exactly "its view JSON changed"
  (tested with Hypothesis). A factory seen producing into a fogged cell changes nothing
  a player sees (enemy ``acted`` flags are hidden), so it is not observed.
- A **spectator** of a running game observes only the public events (the session does
  not show it the live game).

What a player's filtered log shows of each observed event:

- ``GameCreated`` with the config's ``units`` reduced to the reader's own start units
  (:func:`own_config`; board size, seats and timeout kept; the lobby shows no units).
- ``GameForked`` (the first event of a fork, :mod:`engine.fork`) without its ``state``
  and ``state_hash``, its config reduced like ``GameCreated``'s.
- ``RolledBack`` reduced to ``{"to_seq"}`` in the reader's own numbering (its base64
  ``state`` would show the whole board; a real seq would count hidden events).
- The reader's own actions in full; another player's action reduced by
  :func:`filter_action` to ``{"action": {"dx", "dy"}}`` plus ``"from"``/``"to"`` for the
  cells the reader saw: never a unit id, a unit type, a count, or a fogged cell.
- Every other public event as recorded.
- **No ``state_hash``**: the hash of the full state is a function of hidden positions
  (on a small board a guess could be checked against it). Once the game is finished the
  session serves the whole log with hashes instead.
- Items are numbered ``seq`` = 1..k (the reader's version after each) with ``log_seq`` =
  the real seq for the session (:mod:`engine.playerlog`); nothing tells how many events
  were left out.

A log of another kind goes to that kind's rule (:func:`engine.api.player_log`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cellwar.v1.codes import ErrorCode
from engine.api import apply_event
from engine.api import player_log as any_kind_player_log
from engine.cellwar.fog import is_visible, vision_mask
from engine.cellwar.state import FINISHED, CellWarState
from engine.errors import GameError
from engine.fork import public_payload
from engine.playerlog import OwnNumbering, rolled_back_payload

#: Event types every player and a spectator observe.
PUBLIC_TYPES = frozenset(
    {"GameCreated", "PlayerJoined", "TurnEnded", "TurnTimedOut", "PlayerRemoved", "GameFinished"}
)
#: Event types observed by the seats whose view they change (module docstring).
VIEW_TYPES = frozenset({"ActionApplied", "RolledBack"})


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


def _public_part(state: CellWarState) -> tuple:
    """What every view shows alike: phase, turn, round, winner, each seat's out/removed."""
    return (
        state.phase,
        state.turn,
        state.round,
        state.winner,
        tuple((p.id, p.out, p.removed) for p in state.players),
    )


def _seen(state: CellWarState, player_id: int) -> tuple:
    """What ``player_id`` (not the player whose turn it is) sees of the units: its vision
    mask and the visible units as its view shows them (others without id and acted)."""
    mask = vision_mask(state, player_id)
    w = state.width
    units = tuple(
        (u.owner, u.type, u.x, u.y, u.standing)
        + ((u.id, u.acted) if u.owner == player_id else (None, None))
        for u in state.units
        if is_visible(mask, w, u.x, u.y)
    )
    return mask, units


def observers(
    before: CellWarState | None,
    etype: str,
    actor: int,
    payload: Mapping[str, Any],
    after: CellWarState,
) -> frozenset[int]:
    """Who observes event ``etype`` (module docstring): seat ids, and 0 for a spectator.

    Args:
        before / after: the states around the event (``before`` None for GameCreated).
        etype / actor / payload: the event (payload a dict).

    Returns:
        Every seat and 0 for a public event; else (an action or a rollback that changes
        nothing public) the actor and each seat whose view it changes.
    """
    everyone = frozenset(range(0, after.config.players + 1))
    if etype not in VIEW_TYPES or before is None:
        return everyone
    if after.phase == FINISHED or _public_part(before) != _public_part(after):
        return everyone
    seen = {actor} if actor else set()
    for p in before.players:
        if p.id != actor and not p.out and _seen(before, p.id) != _seen(after, p.id):
            seen.add(p.id)
    return frozenset(seen)


def filter_action(
    before: CellWarState, after: CellWarState, actor: int, action: Mapping[str, Any], player_id: int
) -> dict[str, Any] | None:
    """What ``player_id`` sees of ``actor``'s action ``{"unit_id", "dx", "dy"}`` that turned
    ``before`` into ``after`` and that ``player_id`` observes (:func:`observers`): the
    reduced payload ``{"action": {"dx", "dy"}, "from"?: [x, y], "to"?: [x, y]}`` (cells:
    column, row; each only when the reader saw it, before or after the action), or the
    action in full for the actor; None when the reader does not observe it."""
    if actor == player_id:
        return {"action": dict(action)}
    if player_id not in observers(before, "ActionApplied", actor, {"action": action}, after):
        return None
    return _reduced(before, after, action, player_id)


def _reduced(
    before: CellWarState, after: CellWarState, action: Mapping[str, Any], player_id: int
) -> dict[str, Any] | None:
    """Another player's observed action as ``player_id`` sees it (:func:`filter_action`)."""
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
    return payload


def player_log(events: Iterable[Mapping[str, Any]], player_id: int) -> list[dict[str, Any]]:
    """The events of a whole log that ``player_id`` observes, reduced, in its own numbering
    (module docstring).

    Args:
        events: the log from seq 1, each ``{"seq", "type", "actor", "payload",
            "engine_version"?}`` (payload a dict; each event folds under its
            ``engine_version``; ``"state_hash"`` is ignored).
        player_id: the reader (>= 1). A player id without a seat sees the public events.

    Returns:
        JSON-ready ``[{"seq", "log_seq", "type", "actor", "payload"}]`` in log order,
        ``seq`` = 1..k (CellWar); a log of another kind is filtered by its own rule
        (:func:`engine.api.player_log`).

    Raises:
        GameError: ``MALFORMED`` when the log does not start with ``GameCreated``; any
            rule error means the log does not fold (a broken log).
    """
    events = list(events)
    if not events:
        return []
    if events[0].get("type") not in ("GameCreated", "GameForked"):
        raise GameError(ErrorCode.MALFORMED, "a player log needs the whole log from GameCreated")
    if (events[0].get("payload") or {}).get("kind") != "cellwar":
        return any_kind_player_log(events, player_id)
    state: Any = None
    numbering = OwnNumbering()
    out: list[dict[str, Any]] = []
    for event in events:
        etype = str(event["type"])
        actor = int(event.get("actor", 0))
        payload = event.get("payload") or {}
        before = state
        state = apply_event(
            state, etype, actor, payload, engine_version=event.get("engine_version") or None
        )
        reader = player_id if 1 <= player_id <= state.config.players else 0  # no seat: public only
        if reader in observers(before, etype, actor, payload, state):
            if etype == "RolledBack":
                out.append(numbering.entry(event, rolled_back_payload(payload, numbering)))
            elif etype == "GameCreated":
                out.append(numbering.entry(event, own_config(payload, player_id)))
            elif etype == "GameForked":
                out.append(numbering.entry(event, own_config(public_payload(payload), player_id)))
            elif etype == "ActionApplied" and before is not None and actor != player_id:
                seen = _reduced(before, state, payload.get("action") or {}, player_id)
                out.append(numbering.entry(event, seen or {"action": {}}))
            else:
                out.append(numbering.entry(event, payload))
        numbering.passed(event)
    return out
