"""Turn timers: which turn is timed, and what a timeout does (docs/game-end.md).

The engine has no clock. It says, for each state, whether a timer runs and for how long
(:func:`turn_timer`: the config's ``turn_time_s`` and a *turn key* that changes exactly
when a new timed turn begins), and what happens when the time is up (:func:`time_out`,
recorded as ``TurnTimedOut``). The envelope (:mod:`engine.envelope`) keeps
``turn_seq``, the per-game seq of the event at which the current timed turn began — a
function of the log alone, so every session instance finds the same one. The session
reads the recorded time of that event: the deadline is ``time(turn_seq) + turn_time_s``
(views show it as ``turn_deadline``). The holder of the game's lease sends the command
``time_out`` with ``{"turn_seq"}`` once the deadline has passed; the engine refuses it
(``NO_CHANGE``) unless that turn is still the current one, so a late or repeated
timeout never ends the next turn.

What a timeout does, by kind (each kind module's ``time_out(state)``; a kind without
``turn_timer`` has no timer):

- **CellWar** (:func:`engine.cellwar.turns.time_out`): the player's units that have not
  acted stay where they are and do nothing (no fortifying, no counter step); factories
  that have not produced produce nothing, except that a factory with no free
  neighbouring cell dies as at any end of turn; then the turn passes as after
  ``end_turn``.
  Engine version 4+: a seat that let two of its own turns in a row time out without
  acting is then removed as disconnected (:func:`idle_seats`; the seed "Потеря связи:
  ждём таймаут, затем как отключение"): the command ``time_out`` records
  ``TurnTimedOut``, then ``PlayerRemoved {"player_id", "reason": "disconnected"}`` by
  the system (+ ``GameFinished``: the last player left wins), planned by
  :func:`engine.removal.plan_time_out`. So a game whose players are all gone ends.
- **Life placement**: what the player placed stays, the turn passes to the next player
  (after the last, the simulation starts).
- **Life redraw**: every player not ready yet is made ready, so the round ends: the
  simulation resumes, or the game ends if nobody placed a cell in the round (an empty
  redraw round): a Life game nobody plays ends by itself.

A command that arrives after the deadline but before ``TurnTimedOut`` is recorded is
accepted (the engine has no clock; the log decides): what it does stays, and if it ends
the turn the timeout is refused as stale.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from cellwar.v1.codes import ErrorCode
from engine.errors import GameError
from engine.kinds import rules_for


@dataclass(frozen=True)
class TurnTimer:
    """The timer of the current turn.

    Attributes:
        seconds: the time allowed (the config's ``turn_time_s``).
        key: identifies the timed turn: it changes exactly when a new timed turn begins
            (e.g. CellWar ``("turn", round, player)``, Life ``("redraw", generation)``).
    """

    seconds: int
    key: Hashable


def turn_timer(state: Any) -> TurnTimer | None:
    """The timer of ``state``'s current turn, or None when no timer runs (no
    ``turn_time_s``, a phase without turns, a finished game, a kind without timers)."""
    if state is None:
        return None
    own = getattr(rules_for(state.kind), "turn_timer", None)
    return own(state) if own is not None else None


def time_out(state: Any) -> Any:
    """The state after the current timed turn ran out (module docstring, by kind).

    Raises:
        GameError: ``WRONG_PHASE`` when no timed turn is running (``GAME_FINISHED`` for a
            finished game).
    """
    if turn_timer(state) is None:
        if getattr(state, "phase", "") == "finished":
            raise GameError(ErrorCode.GAME_FINISHED, "the game is over")
        raise GameError(ErrorCode.WRONG_PHASE, "no timed turn is running")
    return rules_for(state.kind).time_out(state)


def timed_out_players(state: Any) -> list[int]:
    """Who had not finished when the current timed turn ran out (the ``players`` of
    ``TurnTimedOut``): the kind module's ``timed_out_players``, else the player whose
    turn it is."""
    own = getattr(rules_for(state.kind), "timed_out_players", None)
    if own is not None:
        return list(own(state))
    turn = int(getattr(state, "turn", 0) or 0)
    return [turn] if turn else []


def idle_seats(state: Any) -> list[int]:
    """The seats to remove as disconnected after a timeout (the kind module's
    ``idle_seats``: CellWar version 4+, :func:`engine.cellwar.turns.idle_seats`); none for
    a kind without it."""
    if state is None:
        return []
    own = getattr(rules_for(state.kind), "idle_seats", None)
    return list(own(state)) if own is not None else []


def check_turn_seq(state: Any, turn_seq: int, payload: dict) -> None:
    """Refuse a ``time_out`` command that is not for the current timed turn.

    Args:
        state: the state now; turn_seq: the envelope's seq of the event that began the
            current timed turn (0 = none); payload: the command's ``{"turn_seq": n}``.

    Raises:
        GameError: ``MALFORMED`` (no integer ``turn_seq``), ``WRONG_PHASE`` /
            ``GAME_FINISHED`` (no timed turn), ``NO_CHANGE`` (that turn is over: the
            timeout is stale and would change nothing of it).
    """
    asked = payload.get("turn_seq")
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
        raise GameError(ErrorCode.MALFORMED, "time_out needs the turn's seq: {\"turn_seq\": n}")
    if turn_timer(state) is None:
        time_out(state)  # raises the reason
    if asked != turn_seq:
        raise GameError(
            ErrorCode.NO_CHANGE,
            f"the turn that began at seq {asked} is over (the current one began at {turn_seq})",
        )
