"""Per-kind policy as data: what the session needs to know of the rules for one state.

The session service knows no rules (docs/architecture/index.md "The layers"): it never names
a game kind. Every decision it takes that depends on the kind — who may read the log and
when, whether a spectator may watch live, what the lobby hides, how long a lost player is
waited for, whether a removal rolls the turn back, whether the game is ticked, whether it
may expire — is a field of :class:`Policy`, computed here from the state and shipped with
every ``GameState`` by the engine service (proto ``cellwar.v1.Policy``).

The per-kind values, in one table (sources in brackets; pages of docs/architecture/):

=============================  ==========================  ============================  ===========
field                          ``life``                    ``campaign``                  ``cellwar``
=============================  ==========================  ============================  ===========
``log_private``                not finished                never (one player)            not finished
                               [blind placement]                                         [the seed's fog of war]
``spectators_live``            always (blind view: empty)  always                        finished only
``lobby_hidden_keys``          —                           —                             ``units``
``disconnect_timeout_s``       0 (not tracked)             0                             config [session.md]
``rollback_on_leave``          no                          no                            yes [session.md]
``ticking``                    phase ``running``           phase ``running``             never
``expirable``                  phase ``waiting``           phase ``waiting``             phase ``waiting``
``progress_level``             0                           the level                     0
``spectator_delay_min_s``      0                           0                             10 with config
                                                                                         ``"spectators": "live"``,
                                                                                         else inf (after the end
                                                                                         only; docs/spectators.md)
``spectators_see_all``         no (blind placement)        yes                           yes [rules.md "CellWar"]
``turn_time_s``                config, placement/redraw    0 (no timer)                  config, playing
                               [rules.md "Turn timers"]                                  [rules.md "Turn timers"]
=============================  ==========================  ============================  ===========

``turn_time_s`` is the length of the timed turn running now (:func:`engine.timers.turn_timer`;
0 = none); the envelope's ``turn_seq`` says where it began.

A kind module may define ``policy(state) -> Policy`` itself; it then wins over the table.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, replace
from typing import Any

from engine.kinds import rules_for
from engine.timers import turn_timer

#: Why a fogged log is private (the sentence a FORBIDDEN answer gives).
FOG_REASON = (
    "is running under fog of war: only its players may see it (everyone may once it is finished)"
)
#: Why a Life log is private: its past holds the blind placements.
BLIND_REASON = (
    "is not finished: a Life log may hold blind placements, so only its players may see it, "
    "each what it saw (everyone may once it is finished)"
)

#: The shortest delay of a CellWar spectator (seconds; docs/spectators.md: N >= 10):
#: a spectator sees everything, so it must never see the present of a running game.
SPECTATOR_DELAY_MIN_S = 10.0
#: ``spectator_delay_min_s`` of a game no spectator may watch before its end (no delay is
#: enough): CellWar without ``"spectators": "live"`` (docs/spectators.md).
SPECTATORS_AFTER_END = math.inf


@dataclass(frozen=True)
class Policy:
    """What the session acts on for one state (fields as in proto ``cellwar.v1.Policy``).

    Attributes:
        log_private: the log and replays are filtered per player now.
        private_reason: a sentence for the FORBIDDEN answer ("" when not private).
        spectators_live: a spectator may see the live view now.
        lobby_hidden_keys: config keys the lobby leaves out.
        disconnect_timeout_s: seconds a lost player is waited for (0 = not tracked).
        rollback_on_leave: a removal during the player's own turn rolls the turn back.
        ticking: the game advances by ticks now.
        expirable: seats are open and nothing started: the game may expire.
        active_players: ids of players still in the game (joined, not out), ascending.
        progress_level: the campaign level a finish counts for (0 = none).
        spectator_delay_min_s: the shortest delay (seconds) a delayed spectator may ask
            for while the game runs (CellWar: 10); ``inf``: none may
            watch it before it has ended (docs/spectators.md).
        spectators_see_all: the spectator's view shows every event's effect (so a
            delayed spectator's frames are numbered by the game's seq and sent at every
            event); otherwise by the spectator's own version (Life: blind placement).
        turn_time_s: seconds of the timed turn running now (0 = no timer runs).
    """

    log_private: bool = False
    private_reason: str = ""
    spectators_live: bool = True
    lobby_hidden_keys: tuple[str, ...] = ()
    disconnect_timeout_s: float = 0.0
    rollback_on_leave: bool = False
    ticking: bool = False
    expirable: bool = False
    active_players: tuple[int, ...] = ()
    progress_level: int = 0
    spectator_delay_min_s: float = 0.0
    spectators_see_all: bool = False
    turn_time_s: int = 0


def _active(state: Any) -> tuple[int, ...]:
    return tuple(p.id for p in state.players if not p.out)


def _life(state: Any) -> Policy:
    # Private until the end, not only during placement: the whole log would tell, once
    # the board is visible, how many drawing actions each opponent took blind and when
    # (nothing leaks, not counts, not the timing of hidden events; docs/architecture/
    # contracts.md, "Indistinguishability"), and the game's
    # seqs would not be the player's own numbering any more.
    private = state.phase != "finished"
    return Policy(
        log_private=private,
        private_reason=BLIND_REASON if private else "",
        ticking=state.phase == "running",
        expirable=state.phase == "waiting",
        active_players=_active(state),
    )


def _campaign(state: Any) -> Policy:
    return Policy(
        ticking=state.phase == "running",
        expirable=state.phase == "waiting",
        active_players=_active(state),
        progress_level=int(state.config.level),
        spectators_see_all=True,
    )


def _cellwar(state: Any) -> Policy:
    finished = state.phase == "finished"
    return Policy(
        log_private=not finished,
        private_reason="" if finished else FOG_REASON,
        spectators_live=finished,
        lobby_hidden_keys=("units",),
        disconnect_timeout_s=float(state.config.disconnect_timeout_s),
        rollback_on_leave=True,
        expirable=state.phase == "waiting",
        active_players=_active(state),
        spectator_delay_min_s=(
            SPECTATOR_DELAY_MIN_S
            if getattr(state.config, "live_spectators", False)
            else SPECTATORS_AFTER_END
        ),
        spectators_see_all=True,
    )


_TABLE = {"life": _life, "campaign": _campaign, "cellwar": _cellwar}


def policy(state: Any) -> Policy:
    """The :class:`Policy` of ``state`` (the kind module's own ``policy`` when it has one,
    else the module table). A kind without either gets the defaults (nothing private,
    nothing tracked)."""
    own = getattr(rules_for(state.kind), "policy", None)
    if own is not None:
        return own(state)
    table = _TABLE.get(state.kind)
    found = table(state) if table is not None else Policy(active_players=_active(state))
    timer = turn_timer(state)
    return replace(found, turn_time_s=timer.seconds) if timer is not None else found


def keeps_turn_anchor(state: Any) -> bool:
    """True when removals of this kind may roll the turn back, so the engine service keeps
    the state where each turn began (cheap: no full policy computed)."""
    own = getattr(rules_for(state.kind), "policy", None)
    if own is not None:
        return own(state).rollback_on_leave
    return state.kind == "cellwar"


def revealed_view(state: Any, player_id: int | None) -> dict:
    """The view of ``player_id`` with everything public (a finished game's replay: once a
    game is finished, everything is public).

    Uses ``get_visible_state(state, player_id, reveal=True)`` when the kind module takes
    ``reveal``; otherwise the spectator's view with ``you`` set to the reader for a kind
    whose spectator sees everything (CellWar), else the player's own view.
    """
    rules = rules_for(state.kind)
    if "reveal" in inspect.signature(rules.get_visible_state).parameters:
        return rules.get_visible_state(state, player_id, reveal=True)
    if state.kind == "cellwar":
        view = rules.get_visible_state(state, None)
        view["you"] = player_id
        return view
    return rules.get_visible_state(state, player_id)
