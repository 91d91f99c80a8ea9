"""One game as the session sees it (the aggregate): its cached state, summary, envelope
and policy, the seats and the turn clock, and small helpers over its first event.

States are opaque ``GameState`` messages; the session reads only their summary, the
envelope and the policy (what to do, as data)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from cellwar.v1 import engine_pb2, events_pb2
from cellwar.v1.codes import ErrorCode, EventType
from services.common.errors import ServiceError
from services.common.jsonwire import event_payload, view_dumps
from services.session.domain.idempotency import CommandResult, parse_command_id, remember_command


def merge_view(
    view: bytes, game_id: str, seq: int, turn_deadline: str | None = None, **extra: Any
) -> bytes:
    """A view JSON with ``game_id``, ``seq`` (the player's version) and ``turn_deadline``
    (ISO 8601 UTC; None when no turn timer runs) added, and any ``extra`` keys (e.g. a
    delayed spectator's ``delay_s``): compact, key-sorted UTF-8 (orjson: text as UTF-8,
    not ``\\u`` escapes; a view is shown, never hashed)."""
    data = orjson.loads(view)
    data["game_id"] = game_id
    data["seq"] = seq
    data["turn_deadline"] = turn_deadline
    data.update(extra)
    return view_dumps(data)


#: A game id: 1..64 characters of ``[A-Za-z0-9_-]`` (URL-safe, a NATS subject token).
GAME_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def valid_game_id(game_id: str) -> bool:
    """True when ``game_id`` is 1..64 characters of ``[A-Za-z0-9_-]``."""
    return bool(GAME_ID_PATTERN.match(game_id))


#: Event types a game's log may start with: a new game, or a fork of another's state.
FIRST_EVENTS = (EventType.GAME_CREATED, EventType.GAME_FORKED)


def origin_of(first: dict[str, Any], etype: str) -> dict[str, Any] | None:
    """Where a game came from, read from its first event's payload: ``{"game_id",
    "seq"}`` of a fork's source, merged with the ``origin`` an import recorded (``{"game_id"?,
    "file"?}``); None for a game created here."""
    origin: dict[str, Any] = {}
    if etype == EventType.GAME_FORKED and first.get("from_game"):
        origin.update(game_id=first.get("from_game"), seq=first.get("from_seq"))
    if isinstance(first.get("origin"), dict):
        origin.update(first["origin"])
    return origin or None


def meta_of(first: events_pb2.Event) -> dict[str, Any]:
    """A game's ``meta`` from its first event (``GameCreated`` or ``GameForked``): ``kind``,
    ``config``, ``created_at`` and ``origin`` when it came from elsewhere."""
    payload = event_payload(first)
    meta: dict[str, Any] = {
        "kind": payload.get("kind", ""),
        "config": payload.get("config", {}),
        "created_at": first.time.ToJsonString(),
    }
    origin = origin_of(payload, first.type)
    if origin is not None:
        meta["origin"] = origin
    return meta


def iso_time(unix_s: float | None) -> str | None:
    """``unix_s`` as ISO 8601 UTC with milliseconds (``2025-01-01T12:00:00.000Z``)."""
    if unix_s is None:
        return None
    return datetime.fromtimestamp(unix_s, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def event_time(event: events_pb2.Event) -> float:
    """The recorded time of an event, unix seconds."""
    return event.time.seconds + event.time.nanos / 1e9


def not_found(game_id: str) -> ServiceError:
    """``GAME_NOT_FOUND`` for ``game_id``."""
    return ServiceError(ErrorCode.GAME_NOT_FOUND, f"no game {game_id!r}")


def broken_error(game: Game) -> ServiceError:
    """``GAME_BROKEN``: the game's log cannot be folded."""
    return ServiceError(
        ErrorCode.GAME_BROKEN, f"game {game.game_id} cannot be replayed: {game.broken}"
    )


#: Commands whose every-player view versions a game keeps after taking them, newest
#: last: a retry of one of them (a client resending its unanswered frame after a
#: reconnect) is answered without folding the log (:meth:`Game.versions_after`).
RECENT_COMMANDS = 32


@dataclass(eq=False)
class Game:
    """One cached game (the aggregate).

    Attributes:
        state: the engine state after event ``seq`` (opaque bytes, summary, envelope,
            policy).
        seq: per-game seq of the last event (0 = none yet).
        stream_seq: the store position of event ``seq`` (0 = unknown).
        commands: scoped command key -> result, for every command in the log from event
            ``commands_from`` on (1 = every one; a game rebuilt from a snapshot reads the
            older ones when a command needs them: :meth:`GameCache.complete_commands`).
        meta: ``kind``, ``config`` (from GameCreated, or GameForked for a fork),
            ``created_at`` (ISO time), ``origin`` (where an imported log or a fork came
            from: :func:`origin_of`) and, for a game played for a profile,
            ``profile_id`` (from the directory entry, as the engine's events do not
            carry it).
        stale: the cache may be behind the log; catch up before the next command.
        broken: why the log cannot be folded ("" = fine); such a game refuses commands.
        due: generations the ticker owes this game (fractional).
        last_event_type: type of the last event (a crash may leave GameFinished unwritten).
        last_event_time: recorded time of the last event (unix seconds; 0 = none known).
        views: raw engine views of ``state`` by player id (0 = spectator), when known.
        inbox: followed events waiting to be folded; ``inbox_stream_seq`` the store
            position of the newest.
        watchers: open Watch streams on this instance; ``watching`` the same per player
            id (0 = spectator).
        touched: loop time of the last use (eviction).
        run_done / run_generation / run_views / run_started: the run since ``state``
            that is not recorded yet (the packed tick path,
            docs/architecture/ticking.md): generations run, the generation reached, the views there by
            player id, and the loop time its first generation ran (0 = no run).
        progress: bumped at each step of the run (Watch sends a frame for it).
        wanted / remote: player id -> loop time until which progress views are wanted
            here (a GetView) and by other instances (their interest, on the holder).
        turn_began: ``(seq, unix time)`` of the recorded event at which a timed turn
            began (the state's ``turn_seq``; services/session/entrypoints/timers.py), ``(0, 0.0)``
            when not known yet.
        seated: profile id -> the seat it joined, from the ``PlayerJoined`` events from
            ``commands_from`` on that name a profile (the engine records one in a rated
            game only; services/session/service_layer/seats.py), read with the commands.
        shown: the views as a player is shown them (version, merged view with presence)
            by player id, for ``shown_at`` (seq, run progress, the players away): a
            command's reply and the Watch frame that follows it render it once.
        recent_versions: command key -> (seq of its last event, every player's view
            version right after it), for the last :data:`RECENT_COMMANDS` commands this
            game took as the last events of a new state.
    """

    game_id: str
    state: engine_pb2.GameState
    seq: int
    commands: dict[str, CommandResult]
    meta: dict[str, Any]
    stream_seq: int = 0
    stale: bool = False
    broken: str = ""
    last_snapshot_seq: int = 0
    #: seq of the last snapshot also kept as history (its own key, in the index); 0
    #: since the game was loaded, whatever the store holds
    last_history_seq: int = 0
    due: float = 0.0
    last_event_type: str = ""
    last_event_time: float = 0.0
    views: dict[int, bytes] = field(default_factory=dict)
    inbox: list[events_pb2.Event] = field(default_factory=list)
    inbox_stream_seq: int = 0
    watchers: int = 0
    touched: float = 0.0
    commands_from: int = 1
    run_done: int = 0
    run_generation: int = 0
    run_views: dict[int, bytes] = field(default_factory=dict)
    run_started: float = 0.0
    progress: int = 0
    watching: dict[int, int] = field(default_factory=dict)
    wanted: dict[int, float] = field(default_factory=dict)
    recent_versions: dict[str, tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    remote: dict[int, float] = field(default_factory=dict)
    turn_began: tuple[int, float] = (0, 0.0)
    seated: dict[str, int] = field(default_factory=dict)
    shown: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    shown_at: tuple[int, int, frozenset[int]] = (-1, -1, frozenset())
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    _rendering: dict[tuple[int, int], asyncio.Task] = field(default_factory=dict)
    _draining: asyncio.Task | None = None

    def notify(self) -> None:
        """Wake every watcher waiting on :attr:`changed`."""
        event, self.changed = self.changed, asyncio.Event()
        event.set()

    @property
    def policy(self) -> engine_pb2.Policy:
        """What the engine says the session should do for this state (data)."""
        return self.state.policy

    @property
    def finished(self) -> bool:
        """The game is over."""
        return self.state.finished

    @property
    def running(self) -> bool:
        """True while the ticker should advance this game."""
        return self.state.policy.ticking and not self.state.finished and not self.broken

    @property
    def needs_finish(self) -> bool:
        """The state is finished but its ``GameFinished`` was never written (a crash
        between the events of one command): the command loop repairs it."""
        return (
            not self.broken
            and self.state.finished
            and self.seq > 0
            and self.last_event_type != EventType.GAME_FINISHED
        )

    def version(self, player_id: int) -> int:
        """The view version of ``player_id`` (0 = spectator): how many events it observed
        (the state's envelope); the game's seq for a state without one."""
        versions = self.state.versions
        if not versions:
            return self.seq
        return int(versions[player_id]) if 0 <= player_id < len(versions) else 0

    def take(
        self,
        state: engine_pb2.GameState,
        events: Sequence[events_pb2.Event],
        views: Sequence[bytes] | Mapping[int, bytes] = (),
        stream_seq: int = 0,
    ) -> None:
        """Take a new state after ``events`` (the cache's one way to move forward):
        record their command ids, the views when known (a list indexed by player id, or
        a mapping; empty entries are not known), and wake the watchers. A recorded state
        ends the unrecorded run it replaces."""
        for event in events:
            remember_command(self.commands, event)
        if events and state.versions:
            self._keep_versions(events[-1], state)
        self.note_seats(events)
        self.note_turn_start(events, state.turn_seq)
        self.state = state
        self.seq = events[-1].seq if events else self.seq
        self.last_event_type = events[-1].type if events else self.last_event_type
        self.last_event_time = event_time(events[-1]) if events else self.last_event_time
        self.stream_seq = stream_seq or self.stream_seq
        pairs = views.items() if isinstance(views, Mapping) else enumerate(views)
        self.views = {pid: v for pid, v in pairs if v}
        self._rendering = {}
        self.reset_run()
        self.notify()

    def _keep_versions(self, last: events_pb2.Event, state: engine_pb2.GameState) -> None:
        """Keep the view versions of ``state`` for the command whose last event is
        ``last`` (none when ``last`` carries no command id)."""
        if not last.command_id:
            return
        key, _ = parse_command_id(last.command_id)
        recent = self.recent_versions
        recent.pop(key, None)
        recent[key] = (last.seq, tuple(state.versions))
        if len(recent) > RECENT_COMMANDS:
            del recent[next(iter(recent))]

    def versions_after(self, key: str, seq: int) -> tuple[int, ...]:
        """Every player's view version (index = player id) right after command ``key``,
        whose last event is ``seq``, when this game took it lately; else ``()``, and the
        caller folds the log (:meth:`CommandLoop.version_at`)."""
        kept = self.recent_versions.get(key)
        return kept[1] if kept is not None and kept[0] == seq else ()

    # ------------------------------------------------------------------ the run

    @property
    def generation(self) -> int:
        """The generation the game is at: the run's when one is under way."""
        return self.run_generation if self.run_done else int(self.state.generation)

    def reset_run(self) -> None:
        """Forget the unrecorded run (recorded now, or lost with the lease)."""
        self.run_done = 0
        self.run_generation = 0
        self.run_views = {}
        self.run_started = 0.0

    def advance_run(
        self, done: int, generation: int, views: Mapping[int, bytes], now: float
    ) -> None:
        """The run went on: ``done`` generations since :attr:`state`, at ``generation``,
        with these views (by player id); wakes the watchers."""
        if not self.run_done and done:
            self.run_started = now
        if done != self.run_done:
            self.run_views = {}
        self.run_done = done
        self.run_generation = generation
        self.run_views.update(views)
        self.progress += 1
        self.notify()

    def view_players(self, now: float, *, remote: bool = True) -> list[int]:
        """Players whose views of the run are wanted now: watched here, asked for by a
        recent GetView, and (``remote``) wanted by other instances."""
        ids = {pid for pid, n in self.watching.items() if n > 0}
        ids.update(pid for pid, until in self.wanted.items() if until > now)
        if remote:
            ids.update(pid for pid, until in self.remote.items() if until > now)
        return sorted(ids)

    def remote_players(self, now: float) -> list[int]:
        """Players whose progress views other instances want now."""
        return sorted(pid for pid, until in self.remote.items() if until > now)

    @property
    def timed(self) -> bool:
        """A turn timer runs now (the engine's policy and envelope say so)."""
        return bool(
            self.state.policy.turn_time_s
            and self.state.turn_seq
            and not self.state.finished
            and not self.broken
        )

    def note_seats(self, events: Sequence[events_pb2.Event]) -> None:
        """Remember the profile of each seat joined in ``events`` (:attr:`seated`; a
        ``PlayerJoined`` payload ``{"player_id", "name", "profile_id"?}``, events/proto)."""
        for event in events:
            if event.type != EventType.PLAYER_JOINED:
                continue
            try:
                joined = json.loads(event.payload or b"{}")
            except ValueError:
                continue
            profile_id = joined.get("profile_id") if isinstance(joined, dict) else None
            if isinstance(profile_id, str) and profile_id:
                seat = joined.get("player_id", event.actor)
                self.seated.setdefault(profile_id, seat if isinstance(seat, int) else event.actor)

    def note_turn_start(self, events: Sequence[events_pb2.Event], turn_seq: int) -> None:
        """Remember the time of the event at which the timed turn ``turn_seq`` began, when
        it is among ``events``."""
        if not turn_seq or self.turn_began[0] == turn_seq:
            return
        for event in events:
            if event.seq == turn_seq:
                self.turn_began = (turn_seq, event_time(event))
                return
