"""Games as aggregates: the cache of each loaded game's state, kept current from the log.

Any session instance serves any game (docs/architecture/scale-out.md). An instance loads a
game on first use (:meth:`GameCache.get`: the latest snapshot + ``Engine.Fold`` of the
events after it, checked against the last recorded hash) — **loading writes nothing**. From
then on the cache follows the log: this instance's own appends (the command loop,
services/session/commands.py) and every event another instance appends, delivered by the
follower (services/session/follower.py) and folded onto the cached state
(:meth:`GameCache.apply`). A gap or a hash that does not match reloads the game from the
log. States are opaque ``GameState`` messages; the session reads only their summary, the
envelope (``versions``: each player's view version) and the policy (what to do, as data).
Idle games are evicted (:meth:`GameCache.evict_idle`) and loaded again on use.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import structlog

from cellwar.v1 import engine_pb2, events_pb2
from cellwar.v1.codes import ErrorCode, EventType
from services.common.errors import ServiceError
from services.common.jsonwire import dumps, event_payload
from services.session.ports import EventLog, Rules, SnapshotRepository
from services.session.replays import ReplayCache
from services.session.snapshots import Snapshot
from services.session.store import StoreUnavailable, valid_game_id

log = structlog.get_logger("cellwar.session.games")


@dataclass(frozen=True)
class CommandResult:
    """A command found in the log: the seq of its last event, the player it concerns and
    ``digest`` (:func:`command_digest`; "" in logs written before digests)."""

    seq: int
    player_id: int
    digest: str = ""


def command_key(actor: int, command_id: str) -> str:
    """The session's idempotency key of a game command: ``p<actor>:<command_id>``.

    Keys are scoped by game (each game keeps its own map; the store's ``Nats-Msg-Id``
    starts with the game id) and here by the acting player, so one player's key never
    answers another's command. A join (actor 0, no seat yet) is scoped to the game only.
    """
    return f"p{actor}:{command_id}"


def command_digest(command_type: str, payload: bytes) -> str:
    """16 hex characters of sha256 over the command type and its JSON payload: a key
    sent again with another body is told apart from a retry."""
    return hashlib.sha256(command_type.encode() + b"\0" + payload).hexdigest()[:16]


def recorded_command_id(key: str, digest: str) -> str:
    """What an event's ``command_id`` holds: ``<key>#<digest>``."""
    return f"{key}#{digest}" if digest else key


def parse_command_id(recorded: str) -> tuple[str, str]:
    """``(key, digest)`` of an event's ``command_id`` (digest "" when none was recorded)."""
    key, sep, digest = recorded.rpartition("#")
    if sep and len(digest) == 16 and all(c in "0123456789abcdef" for c in digest):
        return key, digest
    return recorded, ""


def game_id_for(command_id: str) -> str:
    """The id of a new game: derived from the create command's id (so a retried create
    finds its game), else random. 12 hex characters, URL-safe."""
    if command_id:
        return hashlib.sha256(b"cellwar-create:" + command_id.encode()).hexdigest()[:12]
    return uuid.uuid4().hex[:12]


def merge_view(
    view: bytes, game_id: str, seq: int, turn_deadline: str | None = None, **extra: Any
) -> bytes:
    """A view JSON with ``game_id``, ``seq`` (the player's version) and ``turn_deadline``
    (ISO 8601 UTC; None when no turn timer runs) added, and any ``extra`` keys (e.g. a
    delayed spectator's ``delay_s``) (compact, key-sorted)."""
    data = json.loads(view)
    data["game_id"] = game_id
    data["seq"] = seq
    data["turn_deadline"] = turn_deadline
    data.update(extra)
    return dumps(data)


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
            began (the state's ``turn_seq``; services/session/timers.py), ``(0, 0.0)``
            when not known yet.
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
    remote: dict[int, float] = field(default_factory=dict)
    turn_began: tuple[int, float] = (0, 0.0)
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

    def note_turn_start(self, events: Sequence[events_pb2.Event], turn_seq: int) -> None:
        """Remember the time of the event at which the timed turn ``turn_seq`` began, when
        it is among ``events``."""
        if not turn_seq or self.turn_began[0] == turn_seq:
            return
        for event in events:
            if event.seq == turn_seq:
                self.turn_began = (turn_seq, event_time(event))
                return


def remember_command(commands: dict[str, CommandResult], event: events_pb2.Event) -> None:
    """Record the command id of ``event`` (the first event of a command gives its player,
    the last its seq)."""
    if not event.command_id:
        return
    key, digest = parse_command_id(event.command_id)
    first = commands.get(key)
    commands[key] = CommandResult(event.seq, first.player_id if first else event.actor, digest)


class GameCache:
    """The loaded games of this instance: load, follow, render views, evict.

    Args:
        store, snapshots, engine: the ports (services/session/ports.py).
        directory: optional; ``fetch(game_id)`` gives the directory entry (profile id).
        snapshot_every: a replay's fold leaves a snapshot at least every this many events.
    """

    def __init__(
        self,
        store: EventLog,
        snapshots: SnapshotRepository,
        engine: Rules,
        directory: Any | None = None,
        snapshot_every: int = 100,
    ) -> None:
        self.store = store
        self.snapshots = snapshots
        self.engine = engine
        self.directory = directory
        self.games: dict[str, Game] = {}
        self._load_locks: dict[str, asyncio.Lock] = {}
        #: Recently replayed states (services/session/replays.py).
        self.replays = ReplayCache()
        #: A replay's fold leaves a snapshot at least every this many events (settings).
        self.snapshot_every = snapshot_every
        #: ``await peek(game, player_id)``: the view of a game's unrecorded run from the
        #: engine's run cache (set by the ticker: the lease holder knows the run), or None.
        self.peek: Any | None = None

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    def loaded(self) -> list[Game]:
        """Every game in the cache."""
        return list(self.games.values())

    # ------------------------------------------------------------------ loading

    async def get(self, game_id: str) -> Game:
        """The cached game, loaded from the log on first use (writes nothing).

        Raises:
            ServiceError: ``GAME_NOT_FOUND`` (no events), ``UNAVAILABLE`` (NATS or engine down).
        """
        game = self.games.get(game_id)
        if game is None:
            if not valid_game_id(game_id):
                raise not_found(game_id)
            lock = self._load_locks.setdefault(game_id, asyncio.Lock())
            async with lock:
                game = self.games.get(game_id)
                if game is None:
                    game = await self.build(game_id)
                    self.games[game_id] = game
            self._load_locks.pop(game_id, None)
        game.touched = self._now()
        return game

    def add(self, game: Game) -> None:
        """Put a game this instance just created into the cache."""
        game.touched = self._now()
        self.games[game.game_id] = game

    async def build(self, game_id: str) -> Game:
        """Rebuild a game from the nearest snapshot at or before its last event (the
        latest) + Engine.Fold of the events after it, checked against the last event's
        state hash; a stretch without snapshots gets them filled in, as a replay does. A
        snapshot without an envelope (written before view versions existed), or whose
        hash is not the one its event recorded, is ignored: the log is folded from
        ``GameCreated``. Only the events from the snapshot on are read: the command ids
        of the older ones are read when a command needs them
        (:meth:`complete_commands`).

        Raises:
            ServiceError: ``GAME_NOT_FOUND``, ``UNAVAILABLE``.
        """
        first = await self.store.read(game_id, 1, 1)
        if not first or first[0].type not in FIRST_EVENTS:
            raise not_found(game_id)
        meta = meta_of(first[0])
        last = await self.store.last_seq(game_id)
        snap = await self.snapshots.at_or_before(game_id, last) if last > 1 else None
        if snap is not None and (snap.seq > last or not snap.state.versions):
            log.info("snapshot_ignored", game_id=game_id, seq=snap.seq)
            snap = None
        events: list[events_pb2.Event] = []
        if snap is not None:  # from the snapshot's own event on, to check its hash
            events = await self.store.read(game_id, snap.seq, start_stream_seq=snap.stream_seq)
            if not events or events[0].seq != snap.seq or events[0].state_hash != snap.state.state_hash:
                log.info("snapshot_ignored", game_id=game_id, seq=snap.seq)
                snap = None
        if snap is None:
            events = await self.store.read(game_id)
        start = snap.seq if snap else 1
        commands: dict[str, CommandResult] = {}
        broken = ""
        for i, event in enumerate(events):
            if event.seq != start + i and not broken:
                broken = f"seq {event.seq} found where {start + i} was expected"
            remember_command(commands, event)
        seq = events[-1].seq
        state = engine_pb2.GameState()
        if not broken:
            try:
                rest = events[1:] if snap else events
                if snap is not None and not rest:
                    # No event after the snapshot: its policy as this engine computes it
                    # (one written by an older engine may admit spectators it no longer
                    # does, docs/spectators.md).
                    folded = await self.engine.refresh(snap.state)
                else:
                    folded = await self._fold_filling(
                        game_id, seq, snap.state if snap else None, rest
                    )
                state = folded if folded is not None else state
                if state.state_hash != events[-1].state_hash:
                    broken = (
                        f"fold gives hash {state.state_hash[:12]} but event {seq} "
                        f"recorded {events[-1].state_hash[:12]}"
                    )
            except ServiceError as exc:
                if exc.code in (ErrorCode.UNAVAILABLE, ErrorCode.INTERNAL):
                    raise
                broken = f"fold refused: {exc.code}: {exc.message}"
        if broken:
            log.error("game_broken", game_id=game_id, seq=seq, reason=broken)
        if state.policy.progress_level and self.directory is not None:
            profile_id = (await self.directory.fetch(game_id) or {}).get("profile_id")
            if profile_id:
                meta["profile_id"] = profile_id
        game = Game(game_id, state, seq, commands, meta, broken=broken)
        game.commands_from = start
        game.note_turn_start(events, state.turn_seq)
        game.stream_seq = self.store.stream_seq_of(game_id)
        game.last_snapshot_seq = snap.seq if snap else 0
        game.last_event_type = events[-1].type
        game.last_event_time = event_time(events[-1])
        log.info(
            "game_loaded", game_id=game_id, seq=seq, phase=state.phase, snapshot=game.last_snapshot_seq
        )
        return game

    async def complete_commands(self, game: Game) -> None:
        """Read the command ids of the events before :attr:`Game.commands_from` (a game
        rebuilt from a snapshot knows only the later ones) into its command map. Call
        under the game's lock. Raises ServiceError ``UNAVAILABLE``."""
        if game.commands_from <= 1:
            return
        older: dict[str, CommandResult] = {}
        for event in await self.store.read(game.game_id, 1, game.commands_from - 1):
            remember_command(older, event)
        for key, result in older.items():
            newer = game.commands.get(key)
            if newer is None:
                game.commands[key] = result
            else:  # a command across the boundary: its first event gives the player
                game.commands[key] = CommandResult(
                    newer.seq, result.player_id, newer.digest or result.digest
                )
        game.commands_from = 1

    async def reload(self, game: Game) -> None:
        """Replace a cached game's state with the log's. Call under the game's lock.
        Raises ServiceError."""
        fresh = await self.build(game.game_id)
        game.commands, game.meta, game.broken = fresh.commands, fresh.meta, fresh.broken
        game.commands_from = fresh.commands_from
        game.last_snapshot_seq = max(game.last_snapshot_seq, fresh.last_snapshot_seq)
        game.state, game.seq, game.stream_seq = fresh.state, fresh.seq, fresh.stream_seq
        game.last_event_type = fresh.last_event_type
        game.last_event_time = fresh.last_event_time
        game.turn_began = fresh.turn_began
        game.views, game._rendering = {}, {}
        game.stale = False
        game.notify()

    async def refresh(self, game: Game) -> None:
        """Catch a cached game up with the log: the events after its seq are folded onto
        its state (a gap or a hash mismatch reloads it). Call under the game's lock.

        Raises:
            ServiceError: ``UNAVAILABLE``.
        """
        start = game.stream_seq + 1 if game.stream_seq else None
        events = await self.store.read(game.game_id, game.seq + 1, start_stream_seq=start)
        await self._fold_in(game, events, self.store.stream_seq_of(game.game_id))
        game.stale = False

    async def _fold_in(
        self, game: Game, events: Sequence[events_pb2.Event], stream_seq: int = 0
    ) -> None:
        """Fold ``events`` (those after ``game.seq``) onto the cached state; missing events
        before them (appended while the game was loading, say) are read from the log; a
        log that still does not line up, or a hash that does not match, reloads the game.
        Call under the game's lock."""
        events = [e for e in events if e.seq > game.seq]
        if not events:
            return
        if events[0].seq > game.seq + 1 and not game.broken:
            start = game.stream_seq + 1 if game.stream_seq else None
            missing = await self.store.read(
                game.game_id, game.seq + 1, events[0].seq - 1, start_stream_seq=start
            )
            events = [*missing, *events]
        if game.broken or events[0].seq != game.seq + 1 or any(
            b.seq != a.seq + 1 for a, b in zip(events, events[1:], strict=False)
        ):
            log.info("follow_gap", game_id=game.game_id, seq=game.seq, next=events[0].seq)
            await self.reload(game)
            return
        try:
            state = await self.engine.fold(game.state, events)
        except ServiceError as exc:
            if exc.code in (ErrorCode.UNAVAILABLE, ErrorCode.INTERNAL):
                game.stale = True
                raise
            state = None
        if state is None or state.state_hash != events[-1].state_hash:
            log.warning("follow_mismatch", game_id=game.game_id, seq=events[-1].seq)
            await self.reload(game)
            return
        game.take(state, events, stream_seq=stream_seq)

    # ------------------------------------------------------------------ following

    def followed(self, event: events_pb2.Event, stream_seq: int) -> None:
        """An event of ``games.<id>.events`` seen by the follower: if the game is loaded
        and the event is new to it, queue it and fold the queue soon (batched)."""
        game = self.games.get(event.game_id)
        if game is None or event.seq <= game.seq:
            return
        game.inbox.append(event)
        game.inbox_stream_seq = stream_seq
        if game._draining is None or game._draining.done():
            game._draining = asyncio.create_task(self._drain(game), name=f"follow-{game.game_id}")

    async def _drain(self, game: Game) -> None:
        async with game.lock:
            while game.inbox:
                events, hint, game.inbox = game.inbox, game.inbox_stream_seq, []
                try:
                    await self._fold_in(game, events, hint)
                except ServiceError as exc:
                    log.warning("follow_failed", game_id=game.game_id, code=exc.code)
                    game.stale = True
                    return
                except Exception:  # noqa: BLE001 - a follower task must never die loudly
                    log.exception("follow_crashed", game_id=game.game_id)
                    game.stale = True
                    return

    async def catch_up_all(self) -> None:
        """Catch every loaded game up with the log (after a NATS reconnect: events may
        have been missed while away)."""
        for game in self.loaded():
            async with game.lock:
                try:
                    await self.refresh(game)
                except ServiceError as exc:
                    game.stale = True
                    log.warning("catch_up_failed", game_id=game.game_id, code=exc.code)

    # ------------------------------------------------------------------ eviction

    def evict_idle(self, idle_s: float, keep: set[str] = frozenset()) -> list[str]:
        """Drop games unused for ``idle_s`` seconds with no Watch open, not in ``keep``
        (games whose lease this instance holds), not locked. Returns their ids."""
        now = self._now()
        gone = []
        for game in self.loaded():
            if (
                game.game_id in keep
                or game.watchers
                or game.lock.locked()
                or now - game.touched < idle_s
            ):
                continue
            del self.games[game.game_id]
            self.store.forget(game.game_id)
            self.replays.forget(game.game_id)
            gone.append(game.game_id)
        if gone:
            log.info("games_evicted", games=len(gone))
        return gone

    # ------------------------------------------------------------------ views

    async def raw_view(self, game: Game, player_id: int) -> bytes:
        """The engine's view of the current state for ``player_id`` (0 = spectator):
        Decide's when this instance made the state, else one Engine.Views call for the
        spectator and every seat (shared by concurrent callers).

        Raises:
            ServiceError: ``GAME_BROKEN``, engine codes, ``UNAVAILABLE``.
        """
        if game.broken:
            raise broken_error(game)
        cached = game.views.get(player_id)
        if cached is not None:
            return cached
        seq, state = game.seq, game.state
        ids = sorted({0, player_id, *range(1, state.players_joined + 1)})
        key = (seq, len(ids))
        task = game._rendering.get(key)
        if task is None:
            task = asyncio.create_task(self.engine.views(state, ids))
            game._rendering[key] = task
        try:
            views = await asyncio.shield(task)
        except ServiceError:
            if game._rendering.get(key) is task:
                del game._rendering[key]
            raise
        rendered = dict(zip(ids, views, strict=False))
        if game.seq == seq:
            game.views.update(rendered)
        return rendered[player_id]

    async def view(self, game: Game, player_id: int) -> tuple[int, bytes]:
        """``(version, view JSON)`` of a player (0 = spectator) now: the view's ``seq``
        is the player's own version (it moves only when this player's view changes).
        While a run is under way the view is the run's (the generation advances, the
        version does not: no event is recorded yet), when it is known here; the lease
        holder asks the engine for it (:attr:`peek`).

        Raises:
            ServiceError: ``GAME_BROKEN``, engine codes, ``UNAVAILABLE``.
        """
        seq = game.seq
        raw = game.run_views.get(player_id) if game.run_done else None
        if raw is None and game.run_done and self.peek is not None and not game.broken:
            raw = await self.peek(game, player_id)
        if raw is not None and game.seq == seq:
            version = game.version(player_id)
            return version, merge_view(raw, game.game_id, version)
        raw = await self.raw_view(game, player_id)
        try:
            deadline = await self.turn_deadline(game)
        except StoreUnavailable as exc:  # shown again with the next view
            log.warning("turn_deadline_unknown", game_id=game.game_id, error=str(exc))
            deadline = None
        if game.seq != seq:  # moved on meanwhile: render the newest
            return await self.view(game, player_id)
        version = game.version(player_id)
        return version, merge_view(raw, game.game_id, version, iso_time(deadline))

    async def turn_deadline(self, game: Game) -> float | None:
        """When the current timed turn runs out (unix seconds): the recorded time of the
        event that began it (the state's ``turn_seq``) + the policy's ``turn_time_s``;
        None when no timer runs. The same on every instance (a function of the log).

        Raises:
            StoreUnavailable: the event had to be read and NATS did not answer.
        """
        if not game.timed:
            return None
        state = game.state
        if game.turn_began[0] != state.turn_seq:
            events = await self.store.read(game.game_id, state.turn_seq, state.turn_seq)
            game.note_turn_start(events, state.turn_seq)
            if game.turn_began[0] != state.turn_seq:
                return None
        return game.turn_began[1] + state.policy.turn_time_s

    async def deadline_at(self, game: Game, state: engine_pb2.GameState) -> float | None:
        """The turn deadline (unix seconds) of an earlier ``state`` of ``game`` (a replay:
        the deadline the game showed then), None when no timer ran.

        Raises:
            StoreUnavailable: NATS did not answer.
        """
        if not state.policy.turn_time_s or not state.turn_seq or state.finished:
            return None
        if game.turn_began[0] == state.turn_seq:
            return game.turn_began[1] + state.policy.turn_time_s
        events = await self.store.read(game.game_id, state.turn_seq, state.turn_seq)
        if not events or events[0].seq != state.turn_seq:
            return None
        return event_time(events[0]) + state.policy.turn_time_s

    # ------------------------------------------------------------------ replay

    async def state_at(self, game: Game, seq: int) -> engine_pb2.GameState:
        """The state after event ``seq``, checked against the recorded hash of event
        ``seq`` (docs/architecture/ticking.md "Replay from snapshots"): folded from the nearest state kept by
        the replay cache when it is within :attr:`snapshot_every` events before ``seq``,
        else from the nearest snapshot at or before it (or the start); a fold over more
        than :attr:`snapshot_every` events without a snapshot (a log written without
        them, e.g. imported) fills the missing snapshots in as it goes. The answer is kept
        in the replay cache.

        Raises:
            ServiceError: ``MALFORMED`` (seq out of 1..current), ``GAME_BROKEN`` (hash
                mismatch), ``UNAVAILABLE``.
        """
        if seq < 1 or seq > game.seq:
            raise ServiceError(ErrorCode.MALFORMED, f"seq must be within 1..{game.seq}")
        if seq == game.seq and not game.broken:
            return game.state
        kept = self.replays.nearest(game.game_id, seq)
        if kept is not None and kept.seq == seq:
            return kept.state
        base: tuple[int, int | None, engine_pb2.GameState] | None = None
        if kept is not None and seq - kept.seq <= self.snapshot_every:
            base = (kept.seq, None, kept.state)
        else:
            snap = await self.snapshots.at_or_before(game.game_id, seq)
            if snap is not None and not snap.state.versions:
                snap = None  # written before envelopes: its view versions are unknown
            if kept is not None and (snap is None or kept.seq >= snap.seq):
                base = (kept.seq, None, kept.state)
            elif snap is not None:
                base = (snap.seq, snap.stream_seq, snap.state)
        start = base[0] + 1 if base else 1
        events = await self.store.read(
            game.game_id, start, seq, start_stream_seq=base[1] if base else None
        )
        if base and events and events[0].seq != start:
            base, events = None, await self.store.read(game.game_id, 1, seq)
        state = await self._fold_filling(game.game_id, game.seq, base[2] if base else None, events)
        expected = events[-1].state_hash if events else (base[2].state_hash if base else "")
        if state is None or state.state_hash != expected:
            raise ServiceError(
                ErrorCode.GAME_BROKEN, f"replay to seq {seq} does not match the recorded hash"
            )
        self.replays.put(game.game_id, seq, state)
        return state

    async def _fold_filling(
        self,
        game_id: str,
        last_seq: int,
        state: engine_pb2.GameState | None,
        events: Sequence[events_pb2.Event],
    ) -> engine_pb2.GameState | None:
        """``Engine.Fold`` of ``events`` onto ``state``; over more than
        :attr:`snapshot_every` events, in pieces ending at multiples of it, each piece's
        state (before ``last_seq``, the game's last event) stored as a snapshot of the
        past (not as the latest) when its hash is the recorded one. Raises ServiceError."""
        every = self.snapshot_every
        if len(events) <= every:
            return await self.engine.fold(state, events)
        start = 0
        while start < len(events):
            end = start
            while end < len(events) - 1 and events[end].seq % every:
                end += 1
            piece = events[start : end + 1]
            state = await self.engine.fold(state, piece)
            last = piece[-1]
            if (
                state is not None
                and last.seq % every == 0
                and last.seq < last_seq
                and state.state_hash == last.state_hash
                and state.versions
            ):
                position = self.store.position_before(game_id, last.seq)
                await self.snapshots.put(game_id, Snapshot(last.seq, position, state), latest=False)
                self.replays.put(game_id, last.seq, state)
            start = end + 1
        return state

    async def replay_view(
        self, game: Game, seq: int, player_id: int, *, reveal: bool = False
    ) -> bytes:
        """The engine's view of ``player_id`` of the state after event ``seq`` (a replay),
        rendered once per kept state, with ``game_id``, ``seq`` and the ``turn_deadline``
        the game showed then still to be merged (:func:`merge_view`). Raises as
        :meth:`state_at`."""
        return (await self.replay_view_and_state(game, seq, player_id, reveal=reveal))[0]

    async def replay_view_and_state(
        self, game: Game, seq: int, player_id: int, *, reveal: bool = False
    ) -> tuple[bytes, engine_pb2.GameState]:
        """:meth:`replay_view` and the state it shows (for :meth:`deadline_at`)."""
        state = await self.state_at(game, seq)
        kept = self.replays.nearest(game.game_id, seq)
        if kept is None or kept.seq != seq:
            kept = self.replays.put(game.game_id, seq, state)
        view = kept.views.get((player_id, reveal))
        if view is None:
            (view,) = await self.engine.views(state, [player_id], reveal=reveal)
            kept.views[(player_id, reveal)] = view
        return view, state
