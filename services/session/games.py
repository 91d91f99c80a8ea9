"""Games as aggregates: an in-memory cache of each game's state, rebuilt from NATS.

The session is the only writer of events. A command runs under the game's lock:
idempotency check (the command id, scoped by game and acting player, with a digest of
the command, is stored in every event it produced, so a retried command is applied once
however late it comes, and a key reused for another body is refused) -> ``Engine.Decide`` -> append to the
event store with the expected last seq (a lost race reloads the game and retries, up
to :data:`MAX_ATTEMPTS` times, then ``CONFLICT``) -> cache update, snapshot, directory
entry, watchers woken. The session never interprets the rules: states are opaque
``GameState`` messages and only their summary fields (phase, finished, ...) are read.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from cellwar.v1 import engine_pb2, events_pb2
from services.common.errors import ServiceError
from services.common.jsonwire import dumps, event_payload
from services.common.settings import Settings
from services.session.directory import Directory
from services.session.engine_client import EngineClient
from services.session.profiles import Profiles
from services.session.snapshots import Snapshot, SnapshotStore
from services.session.store import (
    ConcurrencyError,
    DuplicateCommandError,
    EventStore,
    StoreUnavailable,
    valid_game_id,
)

log = structlog.get_logger("cellwar.session.games")

#: Appends tried before a command fails with ``CONFLICT`` (DESIGN §6).
MAX_ATTEMPTS = 5


@dataclass(frozen=True)
class CommandResult:
    """What a command produced: the seq of its last event and the player it concerns;
    ``digest`` is :func:`command_digest` of the command ("" in logs written before it)."""

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


def repeated_command(game: Game, key: str, digest: str) -> CommandResult | None:
    """The recorded result of command ``key`` in ``game`` (None when it is new).

    Raises:
        ServiceError: ``IDEMPOTENCY_KEY_REUSED`` when the key was recorded with another
            body (digest).
    """
    result = game.commands.get(key) if key else None
    if result is not None and result.digest and digest and result.digest != digest:
        raise ServiceError(
            "IDEMPOTENCY_KEY_REUSED",
            "this Idempotency-Key was already used for a different request; "
            "use a new key for a new request",
        )
    return result


@dataclass(eq=False)
class Game:
    """One cached game (the aggregate).

    Attributes:
        state: the engine state after event ``seq`` (opaque bytes + summary).
        seq: per-game seq of the last event (0 = none yet).
        commands: command id -> result, for every command in the log.
        meta: ``kind``, ``config`` (from GameCreated), ``created_at`` (ISO time) and,
            for a campaign game played for a profile, ``profile_id`` (kept in the
            directory entry, as the engine's events do not carry it).
        stale: the cache may be behind the log (a lost race or an unanswered write);
            reload before the next command.
        broken: why the log cannot be folded ("" = fine); such a game refuses commands.
        due: generations the ticker owes this game (fractional).
        last_event_type: type of the last event (a crash may leave GameFinished unwritten).
    """

    game_id: str
    state: engine_pb2.GameState
    seq: int
    commands: dict[str, CommandResult]
    meta: dict[str, Any]
    stale: bool = False
    broken: str = ""
    last_snapshot_seq: int = 0
    due: float = 0.0
    last_event_type: str = ""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    views: dict[tuple[int, int], asyncio.Task] = field(default_factory=dict)

    def notify(self) -> None:
        """Wake every watcher waiting on :attr:`changed`."""
        event, self.changed = self.changed, asyncio.Event()
        event.set()

    @property
    def running(self) -> bool:
        """True while the ticker should advance this game."""
        return self.state.phase == "running" and not self.state.finished and not self.broken


def game_id_for(command_id: str) -> str:
    """The id of a new game: derived from the create command's id (so a retried create
    finds its game), else random. 12 hex characters, URL-safe."""
    if command_id:
        return hashlib.sha256(b"cellwar-create:" + command_id.encode()).hexdigest()[:12]
    return uuid.uuid4().hex[:12]


def merge_view(view: bytes, game_id: str, seq: int) -> bytes:
    """A view JSON with ``game_id`` and ``seq`` added (compact, key-sorted)."""
    data = json.loads(view)
    data["game_id"] = game_id
    data["seq"] = seq
    return dumps(data)


def _not_found(game_id: str) -> ServiceError:
    return ServiceError("GAME_NOT_FOUND", f"no game {game_id!r}")


class Games:
    """The repository of games: load, run commands, record ticks, render views."""

    def __init__(
        self,
        store: EventStore,
        snapshots: SnapshotStore,
        directory: Directory,
        engine: EngineClient,
        settings: Settings,
        profiles: Profiles | None = None,
    ) -> None:
        self.store = store
        self.snapshots = snapshots
        self.directory = directory
        self.engine = engine
        self.settings = settings
        #: Campaign progress (KV PROFILES); None = not recorded.
        self.profiles = profiles
        self.games: dict[str, Game] = {}
        self._load_locks: dict[str, asyncio.Lock] = {}

    # ------------------------------------------------------------------ loading

    async def start(self) -> None:
        """Load the directory and rebuild every game that is not finished (a game that
        cannot be rebuilt now is logged and loaded on first use)."""
        entries = await self.directory.load()
        for game_id, entry in list(entries.items()):
            if entry.get("phase") == "finished":
                continue
            try:
                await self.get(game_id)
            except ServiceError as exc:
                log.error("game_not_rebuilt", game_id=game_id, code=exc.code, error=exc.message)
        log.info("games_rebuilt", games=len(self.games), directory=len(entries))

    def loaded(self) -> list[Game]:
        """Every game in the cache."""
        return list(self.games.values())

    async def get(self, game_id: str) -> Game:
        """The cached game, loaded from NATS on first use.

        Raises:
            ServiceError: ``GAME_NOT_FOUND`` (no events), ``UNAVAILABLE`` (NATS or engine down).
        """
        game = self.games.get(game_id)
        if game is not None:
            return game
        if not valid_game_id(game_id):
            raise _not_found(game_id)
        lock = self._load_locks.setdefault(game_id, asyncio.Lock())
        async with lock:
            game = self.games.get(game_id)
            if game is None:
                game = await self._build(game_id)
                self.games[game_id] = game
                async with game.lock:
                    await self._after_load(game)
        self._load_locks.pop(game_id, None)
        return game

    async def _build(self, game_id: str) -> Game:
        """Rebuild a game: latest snapshot + Engine.Fold of the events after it, checked
        against the last event's state hash. Raises ServiceError GAME_NOT_FOUND/UNAVAILABLE."""
        events = await self.store.read(game_id)
        if not events or events[0].type != "GameCreated":
            raise _not_found(game_id)
        created = event_payload(events[0])
        meta = {
            "kind": created.get("kind", ""),
            "config": created.get("config", {}),
            "created_at": events[0].time.ToJsonString(),
        }
        profile_id = None
        if meta["kind"] == "campaign":
            profile_id = (await self.directory.fetch(game_id) or {}).get("profile_id")
        if profile_id:
            meta["profile_id"] = profile_id
        commands: dict[str, CommandResult] = {}
        broken = ""
        for i, event in enumerate(events):
            if event.seq != i + 1 and not broken:
                broken = f"seq {event.seq} found where {i + 1} was expected"
            if event.command_id:
                key, digest = parse_command_id(event.command_id)
                first = commands.get(key)
                commands[key] = CommandResult(
                    event.seq, first.player_id if first else event.actor, digest
                )
        seq = events[-1].seq
        snap = await self.snapshots.latest(game_id)
        if snap is not None and (
            snap.seq > len(events) or events[snap.seq - 1].state_hash != snap.state.state_hash
        ):
            log.warning("snapshot_ignored", game_id=game_id, seq=snap.seq)
            snap = None
        state = engine_pb2.GameState()
        if not broken:
            try:
                rest = events[snap.seq :] if snap else events
                folded = await self.engine.fold(snap.state if snap else None, rest)
                state = folded if folded is not None else state
                if state.state_hash != events[-1].state_hash:
                    broken = (
                        f"fold gives hash {state.state_hash[:12]} but event {seq} "
                        f"recorded {events[-1].state_hash[:12]}"
                    )
            except ServiceError as exc:
                if exc.code == "UNAVAILABLE":
                    raise
                broken = f"fold refused: {exc.code}: {exc.message}"
        if broken:
            log.error("game_broken", game_id=game_id, seq=seq, reason=broken)
        game = Game(game_id, state, seq, commands, meta, broken=broken)
        game.last_snapshot_seq = snap.seq if snap else 0
        game.last_event_type = events[-1].type
        log.info(
            "game_loaded",
            game_id=game_id,
            seq=seq,
            phase=state.phase,
            snapshot=game.last_snapshot_seq,
        )
        return game

    async def _after_load(self, game: Game) -> None:
        """Repairs after a crash: a GameFinished that was decided but not written, and the
        directory entry. Call under the game's lock."""
        if not game.broken and game.state.finished and game.last_event_type != "GameFinished":
            view = json.loads((await self.engine.views(game.state, [0]))[0])
            draft = events_pb2.Event(
                type="GameFinished",
                actor=0,
                payload=json.dumps(
                    {"result": view.get("result"), "winner": view.get("winner")},
                    separators=(",", ":"),
                    sort_keys=True,
                ).encode(),
                state_hash=game.state.state_hash,
                engine_version=self.engine.engine_version,
            )
            try:
                stored = await self.store.append(game.game_id, [draft], game.seq)
                game.seq, game.last_event_type = stored[-1].seq, "GameFinished"
                log.warning("game_finished_repaired", game_id=game.game_id, seq=game.seq)
            except (ConcurrencyError, DuplicateCommandError, StoreUnavailable) as exc:
                game.stale = True
                log.warning("repair_failed", game_id=game.game_id, error=str(exc))
        if not game.broken and game.state.finished:
            await self._record_progress(game)  # idempotent: a rebuilt win counts once
        await self._update_directory(game, force=game.game_id not in self.directory.entries)
        if not game.broken and game.last_snapshot_seq < game.seq and game.state.finished:
            await self._snapshot(game)

    async def reload(self, game: Game) -> None:
        """Replace a cached game's state with the log's (after a lost race). Call under
        the game's lock. Raises ServiceError."""
        fresh = await self._build(game.game_id)
        game.state, game.seq, game.commands = fresh.state, fresh.seq, fresh.commands
        game.meta, game.broken = fresh.meta, fresh.broken
        game.last_snapshot_seq = max(game.last_snapshot_seq, fresh.last_snapshot_seq)
        game.last_event_type = fresh.last_event_type
        game.stale = False
        await self._after_load(game)
        game.notify()

    # ------------------------------------------------------------------ commands

    async def create(
        self, kind: str, config: Any, command_id: str = "", profile_id: str = ""
    ) -> str:
        """Create a game; returns its id. A retried create (same command id) returns the
        same id and records nothing. ``profile_id`` (campaign only, checked by the caller):
        the profile whose progress the game counts for, stored in the directory entry.

        Raises:
            ServiceError: engine codes (``INVALID_CONFIG``, ...), ``CONFLICT``, ``UNAVAILABLE``.
        """
        game_id = game_id_for(command_id)
        payload = json.dumps({"kind": kind, "config": config}).encode()
        # The create key is the game id's seed, unscoped (a create has no player yet).
        digest = (
            command_digest("create", payload + b"\0" + profile_id.encode()) if command_id else ""
        )
        if command_id:
            existing = await self._existing(game_id)
            if existing is not None:
                return self._same_create(existing, command_id, digest)
        reply = await self.engine.decide(None, "create", 0, payload)
        events = self._events(reply.events, reply.state)
        try:
            stored = await self.store.append(
                game_id, events, 0, recorded_command_id(command_id, digest)
            )
        except (ConcurrencyError, DuplicateCommandError) as exc:
            existing = await self._existing(game_id) if command_id else None
            if existing is not None:
                return self._same_create(existing, command_id, digest)
            raise ServiceError("CONFLICT", "game id taken; retry") from exc
        created = event_payload(stored[0])
        game = Game(
            game_id,
            reply.state,
            stored[-1].seq,
            {command_id: CommandResult(stored[-1].seq, 0, digest)} if command_id else {},
            {
                "kind": created.get("kind", kind),
                "config": created.get("config", config),
                "created_at": stored[0].time.ToJsonString(),
            },
        )
        if profile_id and kind == "campaign":
            game.meta["profile_id"] = profile_id
        self.games[game_id] = game
        async with game.lock:
            await self._update_directory(game, force=True)
            await self._snapshot(game)
        log.info("game_created", game_id=game_id, kind=kind, seq=game.seq)
        return game_id

    async def _existing(self, game_id: str) -> Game | None:
        try:
            return await self.get(game_id)
        except ServiceError as exc:
            if exc.code == "GAME_NOT_FOUND":
                return None
            raise

    @staticmethod
    def _same_create(game: Game, command_id: str, digest: str) -> str:
        if repeated_command(game, command_id, digest) is not None:
            return game.game_id
        raise ServiceError("CONFLICT", "this command id created another game")

    async def execute(
        self, game_id: str, command_type: str, actor: int, payload: bytes, command_id: str = ""
    ) -> tuple[Game, CommandResult]:
        """Run a command on a game (``join``, ``action``, ``end_turn``, ``remove_player``).

        Returns the game and the command's result; a command id this actor already used
        in this game (:func:`command_key`) returns the recorded result and changes nothing.

        Raises:
            ServiceError: ``GAME_NOT_FOUND``, rule codes from the engine, ``CONFLICT``
                (lost the append race :data:`MAX_ATTEMPTS` times), ``UNAVAILABLE``,
                ``GAME_BROKEN``, ``IDEMPOTENCY_KEY_REUSED`` (the id came with another body).
        """
        key = command_key(actor, command_id) if command_id else ""
        digest = command_digest(command_type, payload) if command_id else ""
        game = await self.get(game_id)
        async with game.lock:
            for attempt in range(MAX_ATTEMPTS):
                if game.stale:
                    await self.reload(game)
                if game.broken:
                    raise ServiceError(
                        "GAME_BROKEN", f"game {game_id} cannot be replayed: {game.broken}"
                    )
                repeated = repeated_command(game, key, digest)
                if repeated is not None:
                    log.info("command_repeated", game_id=game_id, command_id=key)
                    return game, repeated
                try:
                    reply = await self.engine.decide(game.state, command_type, actor, payload)
                except ServiceError as exc:
                    # A refusal must hold against the latest log, not a stale cache
                    # (another instance may have written since): check, reload, retry.
                    if exc.code in ("UNAVAILABLE", "INTERNAL") or attempt == MAX_ATTEMPTS - 1:
                        raise
                    if await self.store.last_seq(game_id) == game.seq:
                        raise
                    log.info("cache_behind_log", game_id=game_id, seq=game.seq)
                    game.stale = True
                    continue
                if not reply.events:
                    return game, CommandResult(game.seq, actor)
                events = self._events(reply.events, reply.state)
                try:
                    stored = await self.store.append(
                        game_id, events, game.seq, recorded_command_id(key, digest)
                    )
                except (ConcurrencyError, DuplicateCommandError) as exc:
                    log.info(
                        "append_race_lost", game_id=game_id, attempt=attempt + 1, error=str(exc)
                    )
                    game.stale = True
                    continue
                except StoreUnavailable:
                    game.stale = True
                    raise
                result = CommandResult(stored[-1].seq, stored[0].actor or actor, digest)
                if key:
                    game.commands[key] = result
                await self._applied(game, stored, reply.state)
                return game, result
        raise ServiceError(
            "CONFLICT", f"game {game_id} changed {MAX_ATTEMPTS} times meanwhile; retry"
        )

    async def record_tick(
        self, game: Game, expected_seq: int, result: engine_pb2.TickResult
    ) -> bool:
        """Append a tick's events unless the game changed since the tick was computed.
        Returns True when recorded. Never raises for store trouble (logged; retried by
        the next tick)."""
        async with game.lock:
            if game.stale or game.broken or game.seq != expected_seq or not result.events:
                return False
            events = self._events(result.events, result.state)
            try:
                stored = await self.store.append(game.game_id, events, game.seq)
            except (ConcurrencyError, DuplicateCommandError, StoreUnavailable) as exc:
                log.warning("tick_not_recorded", game_id=game.game_id, error=str(exc))
                game.stale = True
                return False
            await self._applied(game, stored, result.state)
            return True

    def _events(
        self, drafts: Sequence[engine_pb2.EventDraft], state: engine_pb2.GameState
    ) -> list[events_pb2.Event]:
        version = self.engine.engine_version
        return [
            events_pb2.Event(
                type=d.type,
                actor=d.actor,
                payload=d.payload,
                state_hash=d.state_hash,
                engine_version=version,
            )
            for d in drafts
        ]

    async def _applied(
        self, game: Game, stored: list[events_pb2.Event], state: engine_pb2.GameState
    ) -> None:
        """Take the new state into the cache, snapshot when due, update the directory,
        wake watchers. Call under the game's lock."""
        if any(e.type == "GameFinished" for e in stored):
            # Before the cache and the directory show "finished": whoever sees the end
            # sees the progress, and a crash in between leaves the game unfinished in
            # the directory, so the restart rebuilds it and records again.
            await self._record_progress(game, state)
        before = game.state
        game.state = state
        game.seq = stored[-1].seq
        game.last_event_type = stored[-1].type
        due = (
            any(e.type == "TurnEnded" for e in stored)
            or before.phase != state.phase
            or before.turn != state.turn  # a turn began (CellWar rollback target)
            or state.finished
            or game.seq - game.last_snapshot_seq >= self.settings.snapshot_every
        )
        if due:
            await self._snapshot(game)
        if (
            before.phase != state.phase
            or before.players_joined != state.players_joined
            or before.finished != state.finished
        ):
            await self._update_directory(game)
        game.notify()

    async def _snapshot(self, game: Game) -> None:
        stream_seq = await self.store.stream_seq_of(game.game_id)
        snap = Snapshot(game.seq, stream_seq, game.state)
        if await self.snapshots.put(game.game_id, snap):
            game.last_snapshot_seq = game.seq

    async def _update_directory(self, game: Game, force: bool = False) -> None:
        entry = {
            "kind": game.meta.get("kind") or game.state.kind,
            "config": game.meta.get("config", {}),
            "created_at": game.meta.get("created_at", ""),
            "phase": "finished" if game.state.finished else game.state.phase,
            "players_joined": game.state.players_joined,
            "max_players": game.state.max_players,
        }
        if game.meta.get("profile_id"):
            entry["profile_id"] = game.meta["profile_id"]
        if force or self.directory.entries.get(game.game_id) != entry:
            await self.directory.put(game.game_id, entry)

    async def _record_progress(
        self, game: Game, state: engine_pb2.GameState | None = None
    ) -> None:
        """A finished campaign game played for a profile: merge its outcome (``state``,
        default the cached one) into the profile (KV PROFILES). Never raises (failures
        are logged)."""
        state = state if state is not None else game.state
        profile_id = game.meta.get("profile_id")
        if self.profiles is None or not profile_id or not state.finished:
            return
        await self.profiles.record_finished(game.game_id, profile_id, self.engine, state)

    # ------------------------------------------------------------------ views

    async def view(self, game: Game, player_id: int) -> tuple[int, bytes]:
        """``(seq, view JSON)`` of a player (0 = spectator) at the game's current seq.
        Concurrent callers for the same (seq, player) share one Engine.Views call.

        Raises:
            ServiceError: ``GAME_BROKEN``, engine codes, ``UNAVAILABLE``.
        """
        if game.broken:
            raise ServiceError(
                "GAME_BROKEN", f"game {game.game_id} cannot be replayed: {game.broken}"
            )
        seq, state = game.seq, game.state
        key = (seq, player_id)
        task = game.views.get(key)
        if task is None:
            for old in [k for k in game.views if k[0] != seq]:
                del game.views[old]
            task = asyncio.create_task(self.render(game.game_id, seq, state, player_id))
            game.views[key] = task
        try:
            return seq, await asyncio.shield(task)
        except ServiceError:
            if game.views.get(key) is task:
                del game.views[key]
            raise

    async def render(
        self, game_id: str, seq: int, state: engine_pb2.GameState, player_id: int
    ) -> bytes:
        """The view of ``state`` for ``player_id`` with ``game_id`` and ``seq`` added."""
        views = await self.engine.views(state, [player_id])
        return merge_view(views[0], game_id, seq)

    # ------------------------------------------------------------------ replay

    async def state_at(self, game: Game, seq: int) -> engine_pb2.GameState:
        """The state after event ``seq``: nearest snapshot at or before it + Engine.Fold of
        the events after it, checked against the recorded hash of event ``seq``.

        Raises:
            ServiceError: ``MALFORMED`` (seq out of 1..current), ``GAME_BROKEN`` (hash
                mismatch), ``UNAVAILABLE``.
        """
        if seq < 1 or seq > game.seq:
            raise ServiceError("MALFORMED", f"seq must be within 1..{game.seq}")
        if seq == game.seq and not game.broken:
            return game.state
        snap = await self.snapshots.at_or_before(game.game_id, seq)
        start = snap.seq + 1 if snap else 1
        events = await self.store.read(
            game.game_id, start, seq, start_stream_seq=snap.stream_seq if snap else None
        )
        if snap and events and events[0].seq != start:
            snap, events = None, await self.store.read(game.game_id, 1, seq)
        state = await self.engine.fold(snap.state if snap else None, events)
        expected = events[-1].state_hash if events else (snap.state.state_hash if snap else "")
        if state is None or state.state_hash != expected:
            raise ServiceError(
                "GAME_BROKEN", f"replay to seq {seq} does not match the recorded hash"
            )
        return state
