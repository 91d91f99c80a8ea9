"""The engine's one face: the seed's engine functions for every game kind.

Every function is pure and deterministic: same input, same output, bit for bit; no
network, no clock, no global randomness. A game state is an immutable value (a frozen
dataclass with a ``kind`` attribute); functions return new states and never change
their arguments, so snapshots and rollback can keep old states.

Each kind module (:func:`engine.kinds.registry`, typed :class:`engine.kinds.KindRules`)
implements this contract:

=============================================  ===================================================
``config_from_dict(data) -> Config``           validate a JSON config; ``GameError`` ``INVALID_CONFIG``
``config_to_dict(config) -> dict``             the normalised JSON config (defaults filled in)
``new_game(config, rules) -> State``           a game waiting for its players, under the rules
                                               of engine version ``rules``
                                               (:mod:`engine.versions`)
``add_player(state, name) -> State``           next player id joins; ``GAME_FULL`` when full
``apply_action(state, player_id, action)``     action = JSON dict of the REST contract
``end_player_turn(state, player_id)``
``tick(state, generations) -> State``          Life kinds: up to n generations, stops early
                                               when the game stops running (stable/finished)
``remove_player(state, player_id) -> State``   disconnect / leave: the player and its cells go
``get_visible_state(state, player_id,          a JSON-ready dict (the view of docs/api, without
reveal=False)``                                ``game_id``/``seq``, which the session adds);
                                               ``reveal``: the whole truth (replays of a
                                               finished game)
``get_valid_actions(state, player_id, unit_id)``  list of JSON dicts
``get_winner(state) -> int | None``
``summary(state) -> Summary``                  phase, turn, generation, speed, players...
``encode_state(state) -> bytes``               canonical encoding (equal states, equal bytes)
``decode_state(data: bytes) -> State``
``player_log(events, player_id) -> list``      what a player may read of a whole log (only
                                               what it saw while the game runs): CellWar
                                               :mod:`engine.cellwar.log`, Life
                                               :mod:`engine.life.log` (blind placement),
                                               campaign the whole log (one player)
``observers(before, etype, actor, payload,     optional: who sees an event (kinds with hidden
after) -> set``                                information; default every seat + spectator)
``upgrade(state, version) -> State``           optional: the state under newer rules (default:
                                               only ``rules`` changes)
``turn_timer(state) -> TurnTimer | None``      optional: the timed turn running now (kinds with
                                               ``turn_time_s``; :mod:`engine.timers`)
``time_out(state) -> State``                   with ``turn_timer``: the current timed turn ran
                                               out (``TurnTimedOut``)
=============================================  ===================================================

On top of those, :func:`decide` and :func:`fold` turn commands into events and events
back into states; the session service stores events and never interprets them.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cellwar.v1.codes import CommandType, ErrorCode, EventType
from engine import versions
from engine.errors import NO_CHANGE, GameError
from engine.kinds import rules_for
from engine.lifecycle import expire
from engine.memo import once as _cached
from engine.options import seat_profile
from engine.timers import time_out, timed_out_players

#: Recorded in every event; bump when a rule change would fold old logs differently
#: (:mod:`engine.versions`, docs/architecture/engine-versions.md).
ENGINE_VERSION = versions.ENGINE_VERSION

_MAGIC = b"CWS1"

#: Action types recorded as ``ControlChanged`` rather than ``ActionApplied``.
CONTROL_ACTIONS = frozenset({"pause", "resume", "speed"})


@dataclass(frozen=True)
class Summary:
    """What the session needs to know of a state without reading it.

    Attributes:
        kind: ``"life"``, ``"campaign"`` or ``"cellwar"``.
        phase: e.g. ``"waiting"``, ``"placement"``, ``"running"``, ``"paused"``,
            ``"redraw"``, ``"playing"``, ``"finished"``.
        turn: player id whose turn it is, 0 when nobody's.
        generation: generations run so far (0 for CellWar).
        speed: speed multiplier of a running Life game (1, 2, 4, 8); 1 otherwise.
        players_joined / max_players: seats taken / seats in the game.
        finished: the game is over.
    """

    kind: str
    phase: str
    turn: int
    generation: int
    speed: int
    players_joined: int
    max_players: int
    finished: bool


@dataclass(frozen=True)
class EventDraft:
    """An event before the session gives it a seq and a time.

    Attributes: ``type`` (past tense, see proto/cellwar/v1/events.proto), ``actor``
    (player id, 0 = system), ``payload`` (JSON-ready dict), ``state_hash`` (after it).
    """

    type: str
    actor: int
    payload: dict
    state_hash: str


def _rules(state: Any):
    return rules_for(state.kind)


def config_from_dict(kind: str, data: Mapping[str, Any]) -> Any:
    """Validate a JSON config of ``kind``. Raises GameError INVALID_CONFIG."""
    if not isinstance(data, Mapping):
        raise GameError(ErrorCode.INVALID_CONFIG, "config must be a JSON object")
    return rules_for(kind).config_from_dict(dict(data))


def new_game(config: Any, *, engine_version: str | None = None) -> Any:
    """A new game of the config's kind (``config.kind``), waiting for players, under the
    rules of ``engine_version`` (default: the current :data:`ENGINE_VERSION`).

    Raises:
        GameError: ``MALFORMED`` for an unknown engine version.
    """
    rules = ENGINE_VERSION if engine_version is None else versions.check(engine_version)
    return rules_for(config.kind).new_game(config, rules=rules)


def rules_version(state: Any) -> str:
    """The engine version whose rules ``state`` follows (:mod:`engine.versions`)."""
    return str(getattr(state, "rules", "1"))


def upgrade(state: Any, engine_version: str) -> Any:
    """``state`` under the rules of ``engine_version`` (the same state when it already
    follows them). The kind module's ``upgrade`` does what a version change needs (e.g.
    CellWar unit ids); by default only ``rules`` changes.

    Raises:
        GameError: ``MALFORMED`` for an unknown version, or one older than the state's
            (versions in a log never go down).
    """
    version = versions.check(engine_version)
    current = rules_version(state)
    if version == current:
        return state
    if not versions.at_least(version, current):
        raise GameError(
            ErrorCode.MALFORMED,
            f"an event of engine version {version} follows version {current}: versions in a log never go down",
        )
    own = getattr(_rules(state), "upgrade", None)
    return own(state, version) if own is not None else dataclasses.replace(state, rules=version)


def add_player(state: Any, name: str) -> Any:
    """The next player (ids from 1) joins. Raises GameError GAME_FULL / GAME_FINISHED."""
    return _rules(state).add_player(state, name)


def apply_action(state: Any, player_id: int, action: Mapping[str, Any]) -> Any:
    """Apply a player's action (a JSON dict). Raises GameError; the input state is unchanged."""
    if not isinstance(action, Mapping):
        raise GameError(ErrorCode.MALFORMED, "action must be a JSON object")
    return _rules(state).apply_action(state, player_id, dict(action))


def end_player_turn(state: Any, player_id: int) -> Any:
    """End ``player_id``'s turn (Life: "ready" in redraw). Raises GameError."""
    return _rules(state).end_player_turn(state, player_id)


def tick(state: Any, generations: int) -> Any:
    """Run up to ``generations`` generations of a running Life game; stops early when the
    phase leaves ``running`` (stable board → ``redraw``, or finished)."""
    return _rules(state).tick(state, generations)


def remove_player(state: Any, player_id: int) -> Any:
    """Remove a player and everything it owns (disconnect, leave)."""
    return _rules(state).remove_player(state, player_id)


def get_visible_state(state: Any, player_id: int | None, *, reveal: bool = False) -> dict:
    """The view of ``player_id`` (None or 0 = spectator) as a JSON-ready dict.

    ``reveal=True`` shows what the rules hide while a game runs (once a game is
    finished, everything is public; for replays of finished games): Life's
    blind placement shows the whole board, CellWar every unit with its id.
    """
    if reveal:
        return _rules(state).get_visible_state(state, player_id or None, reveal=True)
    return _rules(state).get_visible_state(state, player_id or None)


def get_valid_actions(state: Any, player_id: int, unit_id: int | None = None) -> list[dict]:
    """Legal actions of a player (CellWar: of one unit, or all units when None)."""
    return _rules(state).get_valid_actions(state, player_id, unit_id)


def get_winner(state: Any) -> int | None:
    """The winner's player id, or None (running, or a draw)."""
    return _rules(state).get_winner(state)


def summary(state: Any) -> Summary:
    """Phase, turn, generation, speed and seats of a state (computed once per state
    object: states are immutable values)."""
    return _cached(state, "summary", lambda: _rules(state).summary(state))


def encode_state(state: Any) -> bytes:
    """Canonical bytes of a state: equal states give equal bytes (the basis of the hash).

    Computed once per state object: a 300×300 Life state is ~90 kB, and the engine
    service, the hash and the event draft all need it."""

    def compute() -> bytes:
        kind = state.kind.encode()
        return b"".join((_MAGIC, bytes([len(kind)]), kind, _rules(state).encode_state(state)))

    return _cached(state, "encoded", compute)


def decode_state(data: bytes) -> Any:
    """Inverse of :func:`encode_state`. Raises GameError MALFORMED on foreign bytes."""
    if not data.startswith(_MAGIC) or len(data) < 6:
        raise GameError(ErrorCode.MALFORMED, "not an encoded CellWar state")
    n = data[4]
    kind = data[5 : 5 + n].decode()
    return rules_for(kind).decode_state(data[5 + n :])


def state_hash(state: Any) -> str:
    """Hex sha256 of :func:`encode_state` (computed once per state object)."""
    return _cached(state, "hash", lambda: hashlib.sha256(encode_state(state)).hexdigest())


# --------------------------------------------------------------------------- forks


def fork_payload(state: Any, command: Mapping[str, Any]) -> dict[str, Any]:
    """The payload of ``GameForked`` starting a new game in ``state`` (:mod:`engine.fork`):
    ``{"from_game", "from_seq", "state_hash", "state", "kind", "config", "origin"?}``, the
    state as base64 of :func:`encode_state` (as ``RolledBack`` carries it), its hash, and
    the kind and normalised config (for readers that only look at the first event).

    Args:
        state: the state to start from (kept exactly: its hash stays the recorded one).
        command: ``{"from_game": str, "from_seq": int >= 0, "origin"?: object}``.

    Raises:
        GameError: ``MALFORMED`` for a ``from_game`` that is not a string of at most 64
            characters, a ``from_seq`` that is not an integer >= 0, an ``origin`` that is
            not an object.
    """
    from_game, from_seq = command.get("from_game", ""), command.get("from_seq", 0)
    if not isinstance(from_game, str) or len(from_game) > 64:
        raise GameError(ErrorCode.MALFORMED, "from_game must be a game id (a string of at most 64 characters)")
    if not isinstance(from_seq, int) or isinstance(from_seq, bool) or from_seq < 0:
        raise GameError(ErrorCode.MALFORMED, f"from_seq must be an integer >= 0, got {from_seq!r}")
    out: dict[str, Any] = {
        "from_game": from_game,
        "from_seq": from_seq,
        "state_hash": state_hash(state),
        "state": base64.b64encode(encode_state(state)).decode("ascii"),
        "kind": state.kind,
        "config": _rules(state).config_to_dict(state.config),
    }
    origin = command.get("origin")
    if origin is not None:
        if not isinstance(origin, Mapping):
            raise GameError(ErrorCode.MALFORMED, "origin must be a JSON object")
        out["origin"] = dict(origin)
    return out


def forked_state(payload: Mapping[str, Any]) -> Any:
    """The state a ``GameForked`` payload starts from, checked against its ``state_hash``.

    Raises:
        GameError: ``MALFORMED`` when ``state`` is not base64 of an encoded state or its
            hash is not the recorded ``state_hash``.
    """
    try:
        data = base64.b64decode(str(payload["state"]), validate=True)
    except (KeyError, ValueError) as exc:
        raise GameError(ErrorCode.MALFORMED, "GameForked carries no base64 state") from exc
    state = decode_state(data)
    if state_hash(state) != payload.get("state_hash"):
        raise GameError(ErrorCode.MALFORMED, "GameForked's state does not have its recorded state_hash")
    return state


def claim_seat(state: Any, seat: int, name: str) -> Any:
    """``state`` with seat ``seat`` (a player id of a fork's state) taken over by ``name``:
    only the seat's name changes; its cells, units and budget stay (:mod:`engine.fork`).
    A kind module may define ``claim_seat`` itself.

    Raises:
        GameError: ``GAME_FINISHED``; ``UNKNOWN_PLAYER`` (no such seat); ``WRONG_PHASE``
            (the seat's player is out of the game).
    """
    own = getattr(_rules(state), "claim_seat", None)
    if own is not None:
        return own(state, seat, name)
    if summary(state).finished:
        raise GameError(ErrorCode.GAME_FINISHED, "the game is over")
    players = tuple(state.players)
    if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= len(players):
        raise GameError(ErrorCode.UNKNOWN_PLAYER, f"no seat {seat!r} in this game")
    if players[seat - 1].out:
        raise GameError(ErrorCode.WRONG_PHASE, f"seat {seat} is out of the game")
    taken = tuple(dataclasses.replace(p, name=name) if p.id == seat else p for p in players)
    return dataclasses.replace(state, players=taken)


# --------------------------------------------------------------------------- events


def finished_payload(state: Any) -> dict:
    """The payload ``GameFinished`` records for a finished ``state``: ``{"winner",
    "result"}`` as the spectator's view shows them (winner: a player id or None; result:
    ``"win"``, ``"draw"``, ``"loss"``)."""
    view = get_visible_state(state, None)
    return {"winner": view.get("winner"), "result": view.get("result")}


def _with_finish(state_before: Any, state: Any, drafts: list[EventDraft]) -> list[EventDraft]:
    """Append GameFinished when this step ended the game."""
    if state_before is not None and summary(state_before).finished:
        return drafts
    if summary(state).finished:
        drafts.append(EventDraft("GameFinished", 0, finished_payload(state), drafts[-1].state_hash))
    return drafts


def decide(
    state: Any | None,
    command_type: str,
    actor: int,
    payload: Mapping[str, Any],
    *,
    engine_version: str | None = None,
) -> tuple[list[EventDraft], Any]:
    """Run a command; return the events that record it and the state after them.

    ``command_type``: ``"create"`` (payload ``{"kind", "config"}``, state None),
    ``"join"`` (``{"name", "profile_id"?}``: the profile is recorded in ``PlayerJoined``
    only in a rated game, :func:`engine.options.seat_profile`; ``{"name", "seat"}`` takes
    over seat ``seat`` of a fork, :mod:`engine.fork`), ``"action"`` (the action dict),
    ``"end_turn"``, ``"remove_player"`` (``{"player_id", "reason"}``; the rollback of a
    removal during one's own CellWar turn is planned by :mod:`engine.envelope`, which
    knows where the turn began), ``"expire"`` (``{}``: a waiting game expires,
    :mod:`engine.lifecycle`), ``"time_out"`` (``{"turn_seq"}``: the current timed turn
    ran out, :mod:`engine.timers`; :mod:`engine.envelope` checks ``turn_seq`` against the
    turn that is running — here it is not checked — and the removal of the seats that let
    their turns time out, engine version 4, is planned by :func:`engine.removal.plan_time_out`),
    ``"fork"`` (``{"from_game",
    "from_seq", "origin"?}``: a new game that starts in ``state`` as it is,
    ``GameForked``, :mod:`engine.fork`).
    Folding the returned events onto ``state`` gives the returned state (tested).
    The command is decided under the current rules (:data:`ENGINE_VERSION`), or under
    ``engine_version`` when given (re-deciding an imported log under the version that
    wrote it, :mod:`engine.reenact`): a state of an older version is upgraded first
    (:func:`upgrade`). A fork keeps its state's version as it is (its hash must stay the
    one recorded at ``from_seq``).

    Raises:
        GameError: the rules refuse the command (nothing is recorded); ``NO_CHANGE``
            (engine version 2+) for a command that would change nothing; ``MALFORMED``
            for an unknown ``engine_version``.
    """
    payload = dict(payload or {})
    version = ENGINE_VERSION if engine_version is None else versions.check(engine_version)
    if command_type == "create":
        config = config_from_dict(str(payload.get("kind", "")), payload.get("config") or {})
        new = new_game(config, engine_version=version)
        cfg = rules_for(config.kind).config_to_dict(config)
        return [EventDraft("GameCreated", 0, {"kind": config.kind, "config": cfg}, state_hash(new))], new
    if state is None:
        raise GameError(ErrorCode.MALFORMED, f"command {command_type!r} needs a game")
    if command_type == CommandType.FORK:
        draft = EventDraft(EventType.GAME_FORKED, 0, fork_payload(state, payload), state_hash(state))
        return _with_finish(None, state, [draft]), state
    state = upgrade(state, version)  # decide uses the current rules (or those asked for)
    if command_type == "join":
        name = payload.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 40:
            raise GameError(ErrorCode.MALFORMED, "name must be a non-empty string of at most 40 characters")
        profile_id = seat_profile(state, payload.get("profile_id"))
        seat = payload.get("seat")
        if seat is not None:
            new = claim_seat(state, seat, name.strip())
            pid = int(seat)
        else:
            new = add_player(state, name.strip())
            pid = summary(new).players_joined
        joined = {"player_id": pid, "name": name.strip(), **({"profile_id": profile_id} if profile_id else {})}
        drafts = [EventDraft("PlayerJoined", pid, joined, state_hash(new))]
    elif command_type == "action":
        new = apply_action(state, actor, payload)
        etype = "ControlChanged" if payload.get("type") in CONTROL_ACTIONS else "ActionApplied"
        drafts = [EventDraft(etype, actor, {"action": payload}, state_hash(new))]
    elif command_type == "end_turn":
        new = end_player_turn(state, actor)
        drafts = [EventDraft("TurnEnded", actor, {}, state_hash(new))]
    elif command_type == CommandType.EXPIRE:
        new = expire(state)
        drafts = [EventDraft(EventType.GAME_EXPIRED, 0, {}, state_hash(new))]
    elif command_type == CommandType.TIME_OUT:
        late = timed_out_players(state)
        new = time_out(state)
        # actor: the player whose turn ran out (0 for a round of several, Life's redraw)
        who = summary(state).turn
        drafts = [EventDraft(EventType.TURN_TIMED_OUT, who, {"players": late}, state_hash(new))]
    elif command_type == "remove_player":
        pid, reason = removal_request(payload, actor)
        new = remove_player(state, pid)
        if encode_state(new) == encode_state(state) and versions.at_least(rules_version(state), "2"):
            # Already out: record nothing rather than a PlayerRemoved that changes nothing.
            raise GameError(NO_CHANGE, f"player {pid} is already out of the game")
        drafts = [
            EventDraft(
                "PlayerRemoved", actor, {"player_id": pid, "reason": reason}, state_hash(new)
            )
        ]
    else:
        raise GameError(ErrorCode.MALFORMED, f"unknown command {command_type!r}")
    return _with_finish(state, new, drafts), new


def decide_tick(
    state: Any, generations: int, *, engine_version: str | None = None
) -> tuple[list[EventDraft], Any]:
    """Tick a running game by up to ``generations``; the events are GenerationsTicked
    (with the count actually run; none when 0) and GameFinished if the game ended.
    Decided under the current rules like :func:`decide` (or ``engine_version``);
    nothing run: the state as given."""
    original = state
    state = upgrade(state, ENGINE_VERSION if engine_version is None else versions.check(engine_version))
    new = tick(state, generations)
    drafts = tick_events(state, new)
    return (drafts, new) if drafts else ([], original)


def tick_events(before: Any, after: Any) -> list[EventDraft]:
    """The events that record a run from ``before`` to ``after`` (``after`` =
    ``tick(before, n)``, however it was computed: one call, several, or the packed tick
    path): ``GenerationsTicked`` with the generations run, and ``GameFinished`` when the
    run ended the game; none when nothing ran and the phase is unchanged. ``before`` is
    under the current rules (:func:`upgrade`), as :func:`decide_tick` ticks it."""
    ran = summary(after).generation - summary(before).generation
    if ran <= 0 and summary(after).phase == summary(before).phase:
        return []
    drafts = [EventDraft("GenerationsTicked", 0, {"count": ran}, state_hash(after))]
    return _with_finish(before, after, drafts)


def apply_event(
    state: Any | None,
    etype: str,
    actor: int,
    payload: Mapping[str, Any],
    *,
    engine_version: str | None = None,
) -> Any:
    """Fold one recorded event onto a state (the inverse of :func:`decide`), under the
    rules of the ``engine_version`` that recorded it (:mod:`engine.versions`).

    ``engine_version`` None (or empty): ``GameCreated`` makes a game of the current
    version and any other event folds under the state's own version. Otherwise ``GameCreated`` fixes the
    game's version, a later event of a newer version upgrades the state first
    (:func:`upgrade`), and ``RolledBack`` restores its recorded state as it was.
    ``GameForked`` (the first event of a fork) starts from its recorded state as it was
    (checked against its ``state_hash``); a ``PlayerJoined`` naming a seat that already
    exists takes that seat of a fork over (:func:`claim_seat`).

    Raises:
        GameError: ``MALFORMED`` for an unknown event type or engine version; any rule
            error means the log and the rules disagree (a bug, or a rules change made
            without a version bump).
    """
    engine_version = engine_version or None  # "" (a proto default) = not recorded
    if etype == "GameCreated":
        missing = [k for k in ("kind", "config") if k not in payload]
        if missing:
            raise GameError(ErrorCode.MALFORMED, f"GameCreated without {' and '.join(missing)}")
        return new_game(
            config_from_dict(payload["kind"], payload["config"]), engine_version=engine_version
        )
    if etype == EventType.GAME_FORKED:
        if state is not None:
            raise GameError(ErrorCode.MALFORMED, "GameForked can only be the first event of a log")
        return forked_state(payload)
    if state is None:
        raise GameError(ErrorCode.MALFORMED, f"event {etype} before GameCreated")
    if engine_version is not None and etype != "RolledBack":
        state = upgrade(state, engine_version)
    if etype == "PlayerJoined":
        seat = payload.get("player_id")
        name = event_field(etype, payload, "name", str)
        if isinstance(seat, int) and 1 <= seat <= summary(state).players_joined:
            return claim_seat(state, seat, name)  # a fork's seat taken over
        return add_player(state, name)
    if etype in ("ActionApplied", "ControlChanged"):
        return apply_action(state, actor, event_field(etype, payload, "action", Mapping))
    if etype == "TurnEnded":
        return end_player_turn(state, actor)
    if etype == "GenerationsTicked":
        return tick(state, event_field(etype, payload, "count", int))
    if etype == "PlayerRemoved":
        return remove_player(state, event_field(etype, payload, "player_id", int))
    if etype == "RolledBack":
        try:
            recorded = base64.b64decode(event_field(etype, payload, "state", str), validate=True)
        except binascii.Error as exc:
            raise GameError(ErrorCode.MALFORMED, f"RolledBack's state is not base64: {exc}") from None
        return decode_state(recorded)
    if etype == "GameFinished":
        return state
    if etype == EventType.GAME_EXPIRED:
        return expire(state)
    if etype == EventType.TURN_TIMED_OUT:
        return time_out(state)
    raise GameError(ErrorCode.MALFORMED, f"unknown event type {etype!r}")


def removal_request(payload: Mapping[str, Any], actor: int) -> tuple[int, str]:
    """``(player_id, reason)`` of a ``remove_player`` command (default: the actor, who
    ``"left"``).

    Raises:
        GameError: ``MALFORMED`` unless ``player_id`` is an integer and ``reason`` a string.
    """
    player, reason = payload.get("player_id", actor), payload.get("reason", "left")
    if not isinstance(player, int) or isinstance(player, bool) or not isinstance(reason, str):
        raise GameError(
            ErrorCode.MALFORMED,
            f"remove_player needs an integer player_id and a string reason, got {player!r:.40}"
            f" and {reason!r:.40}",
        )
    return player, reason


def event_field(etype: str, payload: Mapping[str, Any], key: str, kind: type) -> Any:
    """``payload[key]`` of a recorded event, checked to be a ``kind`` (an int is never a
    bool). Raises GameError ``MALFORMED`` naming the event type and field."""
    value = payload.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise GameError(ErrorCode.MALFORMED, f"{etype} needs {key} as {kind.__name__}, got {value!r:.40}")
    return value


def apply_action_run(
    state: Any, actor: int, actions: list[Mapping[str, Any]], *, engine_version: str | None = None
) -> Any | None:
    """Fold a run of ``ActionApplied`` events of one actor (their actions, in order) as
    one update when the kind says it is the same as one by one (its
    ``apply_action_run``: Life placements during blind placement); None otherwise (fold
    them one by one). The state is upgraded to ``engine_version`` first, as
    :func:`apply_event` would.

    Raises:
        GameError: as :func:`apply_action` for the first action the rules refuse.
    """
    own = getattr(_rules(state), "apply_action_run", None)
    if own is None or len(actions) < 2:
        return None
    if engine_version:
        state = upgrade(state, engine_version)
    return own(state, actor, [dict(a) for a in actions])


def fold(state: Any | None, events: Iterable[tuple]) -> Any:
    """Fold ``(type, actor, payload)`` or ``(type, actor, payload, engine_version)`` events
    onto ``state`` (None = from GameCreated), each under its version (:func:`apply_event`).

    Consecutive ``GenerationsTicked`` events of one version are folded as one tick of
    their summed count: ``tick(tick(s, a), b) == tick(s, a + b)`` whenever the first tick
    ran all ``a`` generations, which a recorded count guarantees (tested), and one kernel
    call over many generations is much cheaper than many calls over one (replay speed,
    docs/benchmarks.md). Consecutive ``ActionApplied`` events of one actor and version are folded
    as one update where the kind allows it (:func:`apply_action_run`).
    """
    pending = 0
    pending_version: str | None = None
    run: list[tuple] = []

    def flush(state: Any) -> Any:
        if pending_version is not None:
            state = upgrade(state, pending_version)
        return tick(state, pending)

    def flush_run(state: Any) -> Any:
        actor, version = run[0][1], run[0][3]
        after = None
        if state is not None:
            after = apply_action_run(
                state,
                actor,
                [event_field(e[0], e[2], "action", Mapping) for e in run],
                engine_version=version,
            )
        if after is None:
            for etype, a, payload, v in run:
                state = apply_event(state, etype, a, payload, engine_version=v)
            return state
        return after

    for event in events:
        etype, actor, payload = event[0], event[1], event[2]
        version = event[3] if len(event) > 3 and event[3] else None
        if run and (etype != "ActionApplied" or actor != run[0][1] or version != run[0][3]):
            state = flush_run(state)
            run = []
        if etype == "GenerationsTicked":
            if pending and version != pending_version:
                state = flush(state)
                pending = 0
            pending += event_field(etype, payload, "count", int)
            pending_version = version
            continue
        if pending:
            state = flush(state)
            pending = 0
        if etype == "ActionApplied":
            run.append((etype, actor, payload, version))
            continue
        state = apply_event(state, etype, actor, payload, engine_version=version)
    if run:
        state = flush_run(state)
    if pending:
        state = flush(state)
    return state


def observers(
    before: Any | None, etype: str, actor: int, payload: Mapping[str, Any], after: Any
) -> frozenset[int]:
    """Who sees event ``etype`` happen: the player ids (>= 1) whose view it may change,
    and 0 when a spectator's view may change (docs/architecture/contracts.md "Who observes an
    event": a view's ``seq`` is the player's own version and moves only when that player's
    view changes).

    Args:
        before: the state before the event (None before ``GameCreated``).
        etype / actor / payload: the event (payload a dict).
        after: the state after it.

    Returns:
        A set of seat ids and 0 (spectator). This default, used by kinds without hidden
        information, is every seat and the spectator; a kind module with hidden
        information (fog, blind placement) defines ``observers`` with the same signature
        and the same rule as its ``player_log`` (an event a player observes is exactly an
        event of that player's filtered log).
    """
    rules = _rules(after)
    own = getattr(rules, "observers", None)
    if own is not None:
        return frozenset(own(before, etype, actor, payload, after))
    return frozenset(range(0, summary(after).max_players + 1))


def player_log(events: Iterable[Mapping[str, Any]], player_id: int) -> list[dict[str, Any]]:
    """What ``player_id`` may read of a whole event log (only what it observed, numbered in
    its own sequence; docs/architecture/contracts.md), by the kind in its ``GameCreated``.

    Args:
        events: the log from seq 1, each ``{"seq", "type", "actor", "payload",
            "state_hash"?, "engine_version"?}`` (payload a dict; each event folds under
            its ``engine_version``).
        player_id: the reader (>= 1).

    Returns:
        JSON-ready ``[{"seq", "log_seq", "type", "actor", "payload", "state_hash"?}]`` in
        log order: the kind module's ``player_log``, numbered in the reader's own
        sequence (``seq`` = 1..k, its version after each event; ``log_seq`` = the real
        per-game seq, for the session to copy ``time``/``engine_version`` from and strip;
        :mod:`engine.playerlog`). A filtered log carries no ``state_hash``.

    Raises:
        GameError: ``MALFORMED`` when the log does not start with ``GameCreated`` of a
            known kind; any rule error means the log does not fold.
    """
    events = list(events)
    if not events:
        return []
    first = events[0]
    if first.get("type") not in (EventType.GAME_CREATED, EventType.GAME_FORKED):
        raise GameError(ErrorCode.MALFORMED, "a player log needs the whole log from GameCreated")
    kind = (first.get("payload") or {}).get("kind")
    try:
        rules = rules_for(str(kind))
    except GameError as exc:
        raise GameError(ErrorCode.MALFORMED, f"GameCreated of an unknown kind {kind!r}") from exc
    return rules.player_log(events, player_id)


def dumps(obj: Any) -> bytes:
    """Compact, key-sorted JSON bytes (event payloads, views)."""
    return json.dumps(obj, separators=(",", ":"), sort_keys=True).encode()
