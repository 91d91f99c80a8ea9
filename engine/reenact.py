"""Re-deciding a recorded log: the engine's half of importing a log file (re-decided
by the engine; a bad hash is refused with its seq: docs/architecture/replay-tools.md "Imports").

A log is trusted only as far as the rules reproduce it. :func:`reenact` rebuilds, from
the recorded events, the commands that made them and decides each one again through
:func:`engine.envelope.decide` / :func:`engine.envelope.tick`, under the engine version
that recorded it (so a log written by an older version is re-decided under that
version's rules; an unknown version is refused). The events each command gives must
equal the recorded ones — type, actor, payload and ``state_hash`` — else the log is
refused at the first event that differs:

==========================  =================================================================
recorded event              command decided again
==========================  =================================================================
``GameCreated``             ``create {"kind", "config"}`` (extra payload keys, e.g. the
                            ``origin`` an earlier import added, are not compared)
``GameForked`` (first)      none: its state must have its recorded hash (the source game is
                            not in the file; :func:`engine.api.forked_state`)
``PlayerJoined``            ``join {"name", "profile_id"?}`` (a fork's free seat is taken in
                            seat order)
``ActionApplied``,          ``action`` = the recorded ``payload.action``, by the actor
``ControlChanged``
``TurnEnded``               ``end_turn`` by the actor
``GenerationsTicked``       a tick of ``payload.count`` generations (it must run them all)
``PlayerRemoved``           ``remove_player {"player_id", "reason"}`` by the actor
``RolledBack``              ``remove_player`` of the player whose turn it is (reason and
                            actor from that player's ``PlayerRemoved`` further on): the
                            engine plans the rollback again from its own turn anchor
``GameExpired``             ``expire``
``TurnTimedOut``            ``time_out {"turn_seq"}`` of the timed turn running then (the
                            envelope's ``turn_seq``); from engine version 4 it also gives
                            the ``PlayerRemoved`` of a CellWar seat that let two own turns
                            in a row time out (:func:`engine.removal.plan_time_out`)
``GameFinished``            none: it must be one the previous command gave
==========================  =================================================================

Every recorded event must carry a ``state_hash``: a player's filtered log (no hashes,
hidden events left out) cannot be imported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cellwar.v1.codes import CommandType, ErrorCode, EventType
from engine import versions
from engine.api import EventDraft, forked_state, summary
from engine.envelope import Envelope, advance, decide, tick
from engine.errors import GameError

#: Payload keys of ``GameCreated`` that the decision makes (the rest is not compared).
_CREATED_KEYS = ("kind", "config")


class LogMismatch(GameError):
    """The log is not what the rules decide: refused at ``seq``.

    Attributes:
        code: ``LOG_MISMATCH``, ``UNKNOWN_ENGINE_VERSION`` or ``MALFORMED``.
        seq: the first event that differs (a seq one past the end when the log stops
            inside a command).
    """

    def __init__(self, code: ErrorCode, seq: int, message: str) -> None:
        super().__init__(code, f"seq {seq}: {message}")
        self.seq = seq


@dataclass(frozen=True)
class Recorded:
    """One event of the log, as read from a file or the REST log.

    Attributes:
        seq: per-game seq (1-based, contiguous); ``type``, ``actor``, ``payload`` (dict);
        state_hash: the recorded hash after it; engine_version: the version that wrote it.
    """

    seq: int
    type: str
    actor: int
    payload: Mapping[str, Any]
    state_hash: str
    engine_version: str


@dataclass(frozen=True)
class Reenacted:
    """A log re-decided without a difference: the state after its last event, the
    envelope (view versions, open seats) and whether the game is finished."""

    state: Any
    envelope: Envelope

    @property
    def finished(self) -> bool:
        """The log ends with a finished game."""
        return summary(self.state).finished


def _version(event: Recorded) -> str:
    try:
        return versions.check(event.engine_version or versions.ENGINE_VERSION)
    except GameError as exc:
        raise LogMismatch(ErrorCode.UNKNOWN_ENGINE_VERSION, event.seq, exc.message) from exc


def _check_shape(events: Sequence[Recorded]) -> None:
    if not events:
        raise LogMismatch(ErrorCode.MALFORMED, 1, "the log has no events")
    for i, event in enumerate(events, start=1):
        if event.seq != i:
            raise LogMismatch(ErrorCode.MALFORMED, i, f"seq {event.seq} found where {i} was expected")
        if not event.state_hash:
            raise LogMismatch(
                ErrorCode.MALFORMED,
                i,
                "event without state_hash: a player's filtered log cannot be imported "
                "(export the whole log of a finished game)",
            )
    if events[0].type not in (EventType.GAME_CREATED, EventType.GAME_FORKED):
        raise LogMismatch(ErrorCode.MALFORMED, 1, "a log starts with GameCreated or GameForked")


def _command(state: Any, env: Envelope, events: Sequence[Recorded], i: int) -> tuple[str, int, dict]:
    """The command that recorded ``events[i]`` (module table): ``(type, actor, payload)``."""
    e = events[i]
    p = dict(e.payload)
    if e.type == EventType.PLAYER_JOINED:
        join = {"name": p.get("name")}
        if p.get("profile_id"):
            join["profile_id"] = p["profile_id"]
        return CommandType.JOIN, 0, join
    if e.type == EventType.TURN_TIMED_OUT:
        return CommandType.TIME_OUT, 0, {"turn_seq": env.turn_seq}
    if e.type in (EventType.ACTION_APPLIED, EventType.CONTROL_CHANGED):
        action = p.get("action")
        if not isinstance(action, Mapping):
            raise LogMismatch(ErrorCode.LOG_MISMATCH, e.seq, f"{e.type} without an action object")
        return CommandType.ACTION, e.actor, dict(action)
    if e.type == EventType.TURN_ENDED:
        return CommandType.END_TURN, e.actor, {}
    if e.type == EventType.PLAYER_REMOVED:
        return CommandType.REMOVE_PLAYER, e.actor, {"player_id": p.get("player_id"), "reason": p.get("reason")}
    if e.type == EventType.ROLLED_BACK:
        player = summary(state).turn
        for later in events[i + 1 :]:
            if later.type == EventType.PLAYER_REMOVED and later.payload.get("player_id") == player:
                reason = later.payload.get("reason")
                return CommandType.REMOVE_PLAYER, e.actor, {"player_id": player, "reason": reason}
        raise LogMismatch(
            ErrorCode.LOG_MISMATCH, e.seq, f"RolledBack without the removal of player {player}, whose turn it is"
        )
    if e.type == EventType.GAME_EXPIRED:
        return CommandType.EXPIRE, 0, {}
    if e.type == EventType.GAME_FINISHED:
        raise LogMismatch(ErrorCode.LOG_MISMATCH, e.seq, "GameFinished where the rules do not end the game")
    raise LogMismatch(ErrorCode.MALFORMED, e.seq, f"unknown event type {e.type!r}")


def _differs(draft: EventDraft, event: Recorded) -> str:
    """Why ``event`` is not ``draft`` ("" when they are the same)."""
    if draft.type != event.type:
        return f"the rules record {draft.type}, the log {event.type}"
    if draft.actor != event.actor:
        return f"the rules record actor {draft.actor}, the log {event.actor}"
    if draft.type == EventType.GAME_CREATED:
        same = all(draft.payload.get(k) == event.payload.get(k) for k in _CREATED_KEYS)
    else:
        same = dict(draft.payload) == dict(event.payload)
    if not same:
        return f"{event.type}'s payload is not the one the rules record"
    if draft.state_hash != event.state_hash:
        return (
            f"{event.type} recorded state_hash {event.state_hash[:12]}…, "
            f"the rules give {draft.state_hash[:12]}…"
        )
    return ""


def reenact(events: Sequence[Recorded]) -> Reenacted:
    """Decide every command of a recorded log again and compare (module docstring).

    Args:
        events: the whole log, seqs 1..n, each with its ``state_hash``.

    Returns:
        The state and envelope after the last event.

    Raises:
        LogMismatch: ``MALFORMED`` (not a whole log with hashes: seq gaps, no hash, a
            first event that is neither ``GameCreated`` nor ``GameForked``, an unknown
            type), ``UNKNOWN_ENGINE_VERSION`` (a version this engine does not know),
            ``LOG_MISMATCH`` (the first event the rules do not reproduce, or refuse);
            ``seq`` names the event.
    """
    _check_shape(events)
    state: Any = None
    env = Envelope()
    i = 0
    while i < len(events):
        event = events[i]
        version = _version(event)
        if i == 0 and event.type == EventType.GAME_FORKED:
            try:
                state = forked_state(event.payload)
            except GameError as exc:
                raise LogMismatch(ErrorCode.LOG_MISMATCH, event.seq, exc.message) from exc
            if event.state_hash != event.payload.get("state_hash") or event.actor != 0:
                raise LogMismatch(ErrorCode.LOG_MISMATCH, event.seq, "GameForked's state_hash or actor is not its state's")
            env = advance(env, None, event.type, 0, event.payload, state, event.seq)
            i += 1
            continue
        try:
            if i == 0:
                created = dict(event.payload)
                command = (CommandType.CREATE, 0, {k: created.get(k) for k in _CREATED_KEYS})
            elif event.type != EventType.GENERATIONS_TICKED:
                command = _command(state, env, events, i)
            if i > 0 and event.type == EventType.GENERATIONS_TICKED:
                count = event.payload.get("count")
                if not isinstance(count, int) or isinstance(count, bool) or count < 1:
                    raise LogMismatch(ErrorCode.LOG_MISMATCH, event.seq, f"count must be an integer >= 1, got {count!r}")
                drafts, after, env_after = tick(state, env, count, engine_version=version)
            else:
                drafts, after, env_after = decide(state, env, *command, engine_version=version)
        except LogMismatch:
            raise
        except GameError as exc:
            raise LogMismatch(
                ErrorCode.LOG_MISMATCH, event.seq, f"the rules refuse {event.type}: {exc.code}: {exc.message}"
            ) from exc
        if not drafts:
            raise LogMismatch(ErrorCode.LOG_MISMATCH, event.seq, f"the rules record nothing for {event.type}")
        for k, draft in enumerate(drafts):
            if i + k >= len(events):
                raise LogMismatch(
                    ErrorCode.LOG_MISMATCH,
                    len(events) + 1,
                    f"the log ends inside a command: the rules also record {draft.type}",
                )
            why = _differs(draft, events[i + k])
            if why:
                raise LogMismatch(ErrorCode.LOG_MISMATCH, events[i + k].seq, why)
        state, env = after, env_after
        i += len(drafts)
    return Reenacted(state, env)


def recorded(items: Sequence[Mapping[str, Any]]) -> list[Recorded]:
    """:class:`Recorded` events from REST-shaped dicts (``seq``, ``type``, ``actor``,
    ``payload``, ``state_hash``?, ``engine_version``?).

    Raises:
        LogMismatch: ``MALFORMED`` naming the item that does not have that shape.
    """
    out = []
    for n, item in enumerate(items, start=1):
        try:
            seq, actor, payload = item["seq"], item["actor"], item["payload"]
            if not isinstance(seq, int) or not isinstance(actor, int) or not isinstance(payload, Mapping):
                raise TypeError
            out.append(
                Recorded(
                    seq,
                    str(item["type"]),
                    actor,
                    payload,
                    str(item.get("state_hash") or ""),
                    str(item.get("engine_version") or ""),
                )
            )
        except (KeyError, TypeError) as exc:
            raise LogMismatch(ErrorCode.MALFORMED, n, "not an event object {seq, type, actor, payload, ...}") from exc
    return out
