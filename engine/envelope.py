"""What the engine keeps next to a state without hashing it: per-player view versions, the
per-game seq, and the turn anchor (docs/architecture/scale-out.md "Per-player view versions":
a view's seq is the player's own version; rollback planning happens in the engine).

An :class:`Envelope` travels with every state the engine service returns (proto
``GameState`` fields ``versions``, ``seq``, ``anchor``) and comes back with the next
call; the session stores it (snapshots too) and reads ``versions`` as the views' ``seq``.
It is a pure function of the log, however the log was applied: event by event
(:func:`decide`, :func:`tick`) or folded in runs (:func:`fold`) — tested.

- ``versions[p]`` (index = player id, 0 = spectator) counts the events player ``p``
  observed (:func:`engine.api.observers`): it moves only when ``p``'s view may change,
  never at a hidden event. A run of ``GenerationsTicked`` folded as one tick counts one
  per event for the observers of the whole run (Life ticks are public).
- ``seq`` is the per-game seq of the last event applied (0 before ``GameCreated``).
- ``anchor`` (kinds whose removal rolls the turn back, :func:`engine.policy.keeps_turn_anchor`):
  the state after the event at which the current turn began (the summary's ``turn``
  changed, or a ``RolledBack`` restored it: then its ``to_seq``; a fork's seat taken
  over moves it too, so a rollback never gives a seat its old name back), and the
  ``PlayerRemoved`` events recorded since. :mod:`engine.removal` plans a rollback from it.
- ``turn_seq`` (games with a turn timer, :mod:`engine.timers`): the per-game seq of the
  event at which the current timed turn began (its :class:`~engine.timers.TurnTimer`
  key changed), 0 while no timer runs. The session adds ``turn_time_s`` to that event's
  recorded time for the deadline; the command ``time_out`` names it (``{"turn_seq"}``)
  and is refused for any other turn.
- ``open_seats``: a fork's seats nobody has taken over yet (:mod:`engine.fork`); while
  any is free a join takes the lowest, and actions, turn ends and ticks wait.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from cellwar.v1.codes import CommandType, ErrorCode, EventType
from engine.api import (
    ENGINE_VERSION,
    EventDraft,
    apply_action_run,
    apply_event,
    decide_tick,
    encode_state,
    event_field,
    observers,
    removal_request,
    state_hash,
    summary,
    tick_events,
    upgrade,
)
from engine.api import decide as decide_command
from engine.api import fold as api_fold
from engine.errors import GameError
from engine.fork import open_seats
from engine.policy import keeps_turn_anchor
from engine.removal import plan_removal, plan_time_out
from engine.timers import check_turn_seq, turn_timer


@dataclass(frozen=True)
class Anchor:
    """Where the current turn began.

    Attributes:
        seq: per-game seq of the event after which the turn began.
        state: ``engine.encode_state`` of the state then; ``state_hash`` its hash.
        removals: ``PlayerRemoved`` events recorded since (payload dicts, no hash).
    """

    seq: int
    state: bytes
    state_hash: str
    removals: tuple[EventDraft, ...] = ()


@dataclass(frozen=True)
class Envelope:
    """Per-player versions (index = player id, 0 = spectator), the per-game seq of the
    last event, the turn anchor (None for kinds without rollback), and ``turn_seq``: the
    seq of the event that began the current timed turn (0 = no timer runs)."""

    seq: int = 0
    versions: tuple[int, ...] = field(default_factory=tuple)
    anchor: Anchor | None = None
    turn_seq: int = 0
    open_seats: tuple[int, ...] = ()


def _turn_seq(env: Envelope, before: Any | None, after: Any, seq: int) -> int:
    """The envelope's ``turn_seq`` after an event (seq ``seq``) turned ``before`` into
    ``after``: the event's seq when a new timed turn began with it, 0 when no timer runs."""
    timer = turn_timer(after)
    if timer is None:
        return 0
    previous = turn_timer(before)
    if previous is None or previous.key != timer.key:
        return seq
    return env.turn_seq


def advance(
    env: Envelope,
    before: Any | None,
    etype: str,
    actor: int,
    payload: Mapping[str, Any],
    after: Any,
    seq: int,
    count: int = 1,
) -> Envelope:
    """The envelope after event ``etype`` (``count`` events of it folded as one, for a run
    of ticks) turned ``before`` into ``after``; ``seq`` is the per-game seq of the (last)
    event."""
    seats = summary(after).max_players + 1
    versions = list(env.versions[:seats]) + [0] * max(seats - len(env.versions), 0)
    for pid in observers(before, etype, actor, payload, after):
        if 0 <= pid < seats:
            versions[pid] += count
    seats = env.open_seats
    claimed = False
    if etype == EventType.GAME_FORKED:
        seats = open_seats(after)
    elif etype == EventType.PLAYER_JOINED and payload.get("player_id") in seats:
        seats = tuple(s for s in seats if s != payload.get("player_id"))
        claimed = True
    anchor = env.anchor
    if not keeps_turn_anchor(after):
        anchor = None
    elif etype == EventType.ROLLED_BACK:
        to_seq = event_field(etype, payload, "to_seq", int)
        anchor = Anchor(to_seq, encode_state(after), state_hash(after))
    elif before is None or claimed or summary(before).turn != summary(after).turn:
        anchor = Anchor(seq, encode_state(after), state_hash(after))
    elif etype == EventType.PLAYER_REMOVED:
        removal = EventDraft(EventType.PLAYER_REMOVED, actor, dict(payload), "")
        anchor = replace(anchor, removals=(*anchor.removals, removal))
    turn_seq = _turn_seq(env, before, after, seq)
    if seats:
        turn_seq = 0  # a fork waiting for its players: no turn runs, no clock either
    elif claimed and turn_timer(after) is not None:
        turn_seq = seq  # the last seat taken over: the forked turn's clock starts now
    return Envelope(seq, tuple(versions), anchor, turn_seq, seats)


def _versioned_fold() -> bool:
    """True when :func:`engine.api.fold` takes ``(type, actor, payload, engine_version)``
    events (each folded under the rules of the version that recorded it)."""
    return "engine_version" in inspect.signature(apply_event).parameters


def fold(
    state: Any | None,
    env: Envelope,
    events: Iterable[tuple],
) -> tuple[Any, Envelope]:
    """Fold ``(seq, type, actor, payload[, engine_version])`` events onto ``(state, env)``
    (state None = from ``GameCreated``), through :func:`engine.api.fold` so each event
    folds as the engine folds it (its version's rules where the engine keeps several).
    A run of ``GenerationsTicked`` is folded in one call (one tick of their summed
    count) and counted once per event for the observers of the whole run; so is a run of
    one actor's ``ActionApplied`` where the kind folds it at once
    (:func:`engine.api.apply_action_run`: Life placements during blind placement, whose
    observers are the actor alone, for each of them).

    Raises:
        GameError: the log and the rules disagree (see :func:`engine.api.apply_event`).
    """
    versioned = _versioned_fold()
    run: list[tuple] = []

    def item(event: tuple) -> tuple:
        _, etype, actor, payload, *rest = event
        if versioned:
            return (etype, actor, payload, rest[0] if rest else None)
        return (etype, actor, payload)

    def flush(state: Any, env: Envelope) -> tuple[Any, Envelope]:
        after = api_fold(state, [item(e) for e in run])
        env = advance(
            env, state, EventType.GENERATIONS_TICKED, 0, run[0][3], after, run[-1][0], len(run)
        )
        run.clear()
        return after, env

    actions: list[tuple] = []

    def flush_actions(state: Any, env: Envelope) -> tuple[Any, Envelope]:
        # a run of one actor's actions folded at once where the kind allows it (its
        # observers are then the same for each: a Life placement's are its actor)
        first = actions[0]
        version = item(first)[3] if versioned else None
        after = None
        if state is not None and len(actions) > 1:
            after = apply_action_run(
                state,
                first[2],
                [event_field(e[1], e[3], "action", Mapping) for e in actions],
                engine_version=version,
            )
        if after is not None:
            env = advance(
                env, state, first[1], first[2], first[3], after, actions[-1][0], len(actions)
            )
            state = after
        else:
            for e in actions:
                after = api_fold(state, [item(e)])
                env = advance(env, state, e[1], e[2], e[3], after, e[0])
                state = after
        actions.clear()
        return state, env

    for event in events:
        seq, etype, actor, payload = event[:4]
        if actions and (
            etype != EventType.ACTION_APPLIED
            or actor != actions[0][2]
            or item(event)[3:] != item(actions[0])[3:]
        ):
            state, env = flush_actions(state, env)
        if etype == EventType.GENERATIONS_TICKED:
            run.append(event)
            continue
        if run:
            state, env = flush(state, env)
        if etype == EventType.ACTION_APPLIED:
            actions.append(event)
            continue
        after = api_fold(state, [item(event)])
        env = advance(env, state, etype, actor, payload, after, seq)
        state = after
    if actions:
        state, env = flush_actions(state, env)
    if run:
        state, env = flush(state, env)
    return state, env


def _track(
    state: Any | None, env: Envelope, steps: list[tuple[EventDraft, Any]]
) -> tuple[list[EventDraft], Any, Envelope]:
    drafts = []
    for draft, after in steps:
        env = advance(env, state, draft.type, draft.actor, draft.payload, after, env.seq + 1)
        state = after
        drafts.append(draft)
    return drafts, state, env


#: Commands a fork refuses while a seat is free (:mod:`engine.fork`).
_WAIT_FOR_SEATS = frozenset({CommandType.ACTION, CommandType.END_TURN, CommandType.TIME_OUT})


def decide(
    state: Any | None,
    env: Envelope,
    command_type: str,
    actor: int,
    payload: Mapping[str, Any],
    *,
    engine_version: str | None = None,
) -> tuple[list[EventDraft], Any, Envelope]:
    """Run a command (:func:`engine.api.decide`; ``remove_player`` through
    :func:`engine.removal.plan_removal`, which may roll the turn back first; ``time_out``
    only for the timed turn that is running, :func:`engine.timers.check_turn_seq`, through
    :func:`engine.removal.plan_time_out`, which removes the seats that let their turns
    time out).
    Returns the events, the state after them and the envelope after them (their seqs
    follow ``env.seq``). ``fork`` starts a new game (a fresh envelope) in ``state``;
    while a fork has free seats (``env.open_seats``) a join takes the lowest of them and
    actions and turn ends are refused. ``engine_version``: decide under those rules
    instead of the current ones (:mod:`engine.reenact`).

    Raises:
        GameError: the rules refuse the command (nothing is recorded); ``WRONG_PHASE``
            for an action or turn end while a fork waits for its players.
    """
    if command_type == CommandType.FORK:
        drafts, after = decide_command(state, command_type, actor, payload)
        return _track(None, Envelope(), [(d, after) for d in drafts])
    if env.open_seats and command_type in _WAIT_FOR_SEATS:
        raise GameError(
            ErrorCode.WRONG_PHASE,
            f"this fork waits for players to take seats {list(env.open_seats)} (POST /join)",
        )
    if command_type == CommandType.JOIN and env.open_seats:
        payload = {**dict(payload or {}), "seat": env.open_seats[0]}
    if command_type == CommandType.TIME_OUT and state is not None:
        check_turn_seq(state, env.turn_seq, dict(payload or {}))
    if command_type == CommandType.REMOVE_PLAYER and state is not None:
        player, reason = removal_request(dict(payload or {}), actor)
        steps = plan_removal(
            state,
            player,
            reason,
            actor,
            env.anchor,
            env.seq,
            engine_version=engine_version,
        )
    elif command_type == CommandType.TIME_OUT and state is not None:
        steps = plan_time_out(state, engine_version=engine_version)  # + idle seats removed
    else:
        drafts, after = decide_command(
            state, command_type, actor, payload, engine_version=engine_version
        )
        steps = [(d, after) for d in drafts]
    if state is None:
        env = Envelope()
    return _track(state, env, steps)


def tick(
    state: Any, env: Envelope, generations: int, *, engine_version: str | None = None
) -> tuple[list[EventDraft], Any, Envelope]:
    """Tick a running game by up to ``generations`` (:func:`engine.api.decide_tick`):
    ``GenerationsTicked`` (+ ``GameFinished``), the state and the envelope after them.
    A fork with free seats is not ticked (no events)."""
    if env.open_seats:
        return [], state, env
    drafts, after = decide_tick(state, generations, engine_version=engine_version)
    return _track(state, env, [(d, after) for d in drafts])


def ticked(state: Any, env: Envelope, after: Any) -> tuple[list[EventDraft], Any, Envelope]:
    """Record a run computed elsewhere: ``after`` = ``tick(upgrade(state), n)`` (the
    packed tick path, or ticks in several calls). Returns what :func:`tick` returns for
    ``tick(state, env, n)`` (``tick(tick(s, a), b) == tick(s, a + b)`` while the first
    ran all ``a``): the ``GenerationsTicked`` (+ ``GameFinished``), ``after``, and the
    envelope after them; no events (and ``state`` as given) when nothing ran."""
    drafts = tick_events(upgrade(state, ENGINE_VERSION), after)
    if not drafts:
        return [], state, env
    return _track(state, env, [(d, after) for d in drafts])
