"""Forks: a new game that starts in the state another game had at one of its events
(docs/replays.md; internals: docs/architecture/replay-tools.md "Forks").

A fork's log starts with ``GameForked`` (actor 0) instead of ``GameCreated``::

    {"from_game", "from_seq", "state_hash", "state", "kind", "config", "origin"?}

``state`` is base64 of :func:`engine.api.encode_state` of the source's state right after
event ``from_seq`` (as ``RolledBack`` carries a state), ``state_hash`` its hash — the
hash the source recorded at ``from_seq`` — and the event's own ``state_hash`` is the same:
the fork starts in exactly that state (:func:`engine.api.forked_state` checks it when
folding). ``kind``/``config`` repeat the state's for readers of the first event;
``origin`` (optional) says where a log came from when the fork was made by an import.
The state keeps the engine version it had (its hash would change otherwise); the
fork's next command upgrades it to the current rules like any old game.

**Seats.** The fork's seats are free: every player still in the game at ``from_seq``
(joined, not out) is a seat to take over, in id order. A join takes the lowest free seat:
``PlayerJoined {"player_id": seat, "name"}`` whose seat already exists renames that seat
(:func:`engine.api.claim_seat`) and keeps its cells, units and budget. Seats that were
never joined at ``from_seq`` (a fork of a game still waiting) are joined as usual. While
a seat is free the fork waits: actions, turn ends and ticks are refused (``WRONG_PHASE``)
or not run, the session's policy says nothing is ticked, and views and the lobby show
``phase: "waiting"`` with ``open_seats``. Which seats are free is part of the engine's
envelope (:class:`engine.envelope.Envelope` ``open_seats``: a function of the log, like
the view versions), not of the hashed state.

A fork of a finished state is finished at once (``GameForked`` + ``GameFinished``).
Hidden information stays hidden in the fork's own log: a player's filtered log shows
``GameForked`` without ``state`` and ``state_hash`` (and CellWar's config with the
reader's own start units only), and the fork's views follow its kind's rules (CellWar
fog, Life blind placement) for its new players.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from engine.api import summary
from engine.policy import Policy

#: Keys of a ``GameForked`` payload a filtered log leaves out: the whole state (and its
#: hash, which a guess could be checked against).
HIDDEN_KEYS = frozenset({"state", "state_hash"})

#: The phase views and the lobby show while a fork has free seats.
WAITING = "waiting"


def open_seats(state: Any) -> tuple[int, ...]:
    """The seats of a fork's start state to take over: players joined and not out, in id
    order; none when the state is finished."""
    if summary(state).finished:
        return ()
    return tuple(p.id for p in state.players if not getattr(p, "out", False))


def public_payload(payload: Mapping[str, Any]) -> dict[str, Any]:
    """``GameForked``'s payload as a filtered log shows it (no ``state``, no hash)."""
    return {k: v for k, v in payload.items() if k not in HIDDEN_KEYS}


def seating_policy(policy: Policy, seats: Sequence[int]) -> Policy:
    """``policy`` while ``seats`` are free: nothing ticks, and only the seats taken count as
    active players (presence, disconnect clocks). Unchanged when no seat is free."""
    if not seats:
        return policy
    free = set(seats)
    return replace(
        policy,
        ticking=False,
        active_players=tuple(p for p in policy.active_players if p not in free),
    )


def seating_view(view: dict[str, Any], seats: Sequence[int]) -> dict[str, Any]:
    """A view while ``seats`` are free: ``phase`` ``"waiting"`` and ``open_seats`` (seat
    ids, ascending). Unchanged when no seat is free."""
    if not seats:
        return view
    return {**view, "phase": WAITING, "open_seats": list(seats)}
