"""Removing a player, with the rollback of its own turn where the kind says so (the
CellWar seed "Отключение игрока": a player who goes during its own turn takes the game
back to the snapshot after the previous player's turn, then it and its units are removed
and the turn passes on; outside its own turn it is removed at once); and the removal of
a seat that let its turns time out (:func:`plan_time_out`, docs/game-end.md).

The rollback is planned here, in the engine, from the state and the turn anchor the
engine keeps (:class:`engine.envelope.Anchor`: the state where the current turn began,
its seq, and the ``PlayerRemoved`` events recorded since). The session only runs the
command ``remove_player`` through its command loop (leave, disconnect past the timeout).

The events, in order (the log format every existing log already has):

1. ``RolledBack {"to_seq", "state": base64 of the anchor state}`` whose ``state_hash`` is
   the anchor's (the hash recorded at ``to_seq``) — only when the policy says
   ``rollback_on_leave``, it is the player's own turn of an unfinished game, and something
   happened since the turn began (``anchor.seq`` < the current seq);
2. ``PlayerRemoved`` again for every other player removed since the anchor, with its
   recorded actor and payload (a rollback never undoes a removal);
3. ``PlayerRemoved {"player_id", "reason"}`` of the player (+ ``GameFinished`` when one
   player is left), decided by :func:`engine.api.decide`.

A timeout (:func:`plan_time_out`) records ``TurnTimedOut`` (+ ``GameFinished`` when the
timeout itself ended the game), then, under engine version 4+, for each seat the rules
name (:func:`engine.timers.idle_seats`: a CellWar seat whose last two own turns timed out
without it acting) the same ``PlayerRemoved {"player_id", "reason": "disconnected"}`` by
the system (actor 0) that a disconnect past the timeout records (+ ``GameFinished``:
the last player left wins). Such a seat's turn has just passed on, so no rollback
applies (:func:`rolls_back` is false for it).
"""

from __future__ import annotations

import base64
from typing import Any

from cellwar.v1.codes import CommandType, EventType, RemovalReason
from engine.api import EventDraft, decide, decode_state, summary
from engine.policy import policy
from engine.timers import idle_seats


def rolls_back(state: Any, player_id: int, anchor: Any, seq: int) -> bool:
    """True when removing ``player_id`` now starts with a ``RolledBack``: the kind rolls
    back, the game runs, it is the player's own turn, and the turn anchor (``anchor``:
    :class:`engine.envelope.Anchor` or None) lies before the current per-game ``seq``."""
    if anchor is None or player_id <= 0 or anchor.seq >= seq:
        return False
    s = summary(state)
    return not s.finished and s.turn == player_id and policy(state).rollback_on_leave


def plan_removal(
    state: Any,
    player_id: int,
    reason: str,
    actor: int,
    anchor: Any,
    seq: int,
    *,
    engine_version: str | None = None,
) -> list[tuple[EventDraft, Any]]:
    """The events of removing ``player_id`` (module docstring), each with the state right
    after it.

    Args:
        state: the game now; ``seq`` its per-game seq.
        reason: ``"left"`` or ``"disconnected"`` (:class:`cellwar.v1.codes.RemovalReason`).
        actor: the player for a leave, 0 (the system) for a disconnect.
        anchor: the turn anchor (None: no rollback is possible).
        engine_version: decide under these rules (default: the current ones).

    Raises:
        GameError: ``GAME_FINISHED``, ``UNKNOWN_PLAYER``, ``INVALID_ACTION`` (already out:
            nothing to record).
    """
    steps: list[tuple[EventDraft, Any]] = []
    if rolls_back(state, player_id, anchor, seq):
        start = decode_state(anchor.state)
        back = EventDraft(
            EventType.ROLLED_BACK,
            actor,
            {"to_seq": anchor.seq, "state": base64.b64encode(anchor.state).decode("ascii")},
            anchor.state_hash,
        )
        steps.append((back, start))
        state = start
        for removal in anchor.removals:
            other = int(removal.payload.get("player_id", 0) or 0)
            if other in (0, player_id) or summary(state).finished:
                continue
            drafts, state = decide(
                state,
                CommandType.REMOVE_PLAYER,
                removal.actor,
                removal.payload,
                engine_version=engine_version,
            )
            steps.extend((d, state) for d in drafts)
        if summary(state).finished:  # a re-applied removal ended the game: nothing is left
            return steps
    drafts, state = decide(
        state,
        CommandType.REMOVE_PLAYER,
        actor,
        {"player_id": player_id, "reason": str(reason)},
        engine_version=engine_version,
    )
    steps.extend((d, state) for d in drafts)
    return steps


def plan_time_out(
    state: Any, *, engine_version: str | None = None
) -> list[tuple[EventDraft, Any]]:
    """The events of the command ``time_out`` (module docstring), each with the state right
    after it: ``TurnTimedOut`` (+ ``GameFinished``), then ``PlayerRemoved {"player_id",
    "reason": "disconnected"}`` by the system for every seat
    :func:`engine.timers.idle_seats` names (+ ``GameFinished`` when one player is left).

    The caller has checked that the timeout is for the running turn
    (:func:`engine.timers.check_turn_seq`).

    Args:
        state: the game now.
        engine_version: decide under these rules (default: the current ones); under
            versions 1-3 no seat is ever named, so only ``TurnTimedOut`` is recorded.

    Raises:
        GameError: ``WRONG_PHASE`` / ``GAME_FINISHED`` (no timed turn is running).
    """
    drafts, state = decide(state, CommandType.TIME_OUT, 0, {}, engine_version=engine_version)
    steps = [(d, state) for d in drafts]
    for player_id in idle_seats(state):
        if summary(state).finished:
            break
        drafts, state = decide(
            state,
            CommandType.REMOVE_PLAYER,
            0,
            {"player_id": player_id, "reason": str(RemovalReason.DISCONNECTED)},
            engine_version=engine_version,
        )
        steps.extend((d, state) for d in drafts)
    return steps
