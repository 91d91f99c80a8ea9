"""Games as aggregates: the cache of each loaded game's state, kept current from the log.

Any session instance serves any game (docs/architecture/scale-out.md). An instance loads a
game on first use (:meth:`GameCache.get`: the latest snapshot + ``Engine.Fold`` of the
events after it, checked against the last recorded hash) — **loading writes nothing**. From
then on the cache follows the log: this instance's own appends (the command loop,
services/session/service_layer/loop.py) and every event another instance appends, delivered by the
follower (services/session/entrypoints/follower.py) and folded onto the cached state
(:meth:`GameCache.apply`). A gap or a hash that does not match reloads the game from the
log. States are opaque ``GameState`` messages; the session reads only their summary, the
envelope (``versions``: each player's view version) and the policy (what to do, as data).
Idle games are evicted (:meth:`GameCache.evict_idle`) and loaded again on use.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

import structlog

from cellwar.v1 import engine_pb2, events_pb2
from cellwar.v1.codes import ErrorCode
from services.common.errors import ServiceError
from services.session.domain.game import (
    FIRST_EVENTS,
    Game,
    broken_error,
    event_time,
    iso_time,
    merge_view,
    meta_of,
    not_found,
    valid_game_id,
)
from services.session.domain.idempotency import CommandResult, remember_command
from services.session.service_layer.ports import (
    DirectoryPort,
    EventLog,
    Rules,
    Snapshot,
    SnapshotRepository,
    StoreUnavailable,
)
from services.session.service_layer.replays import ReplayCache

log = structlog.get_logger("cellwar.session.games")

#: ``await peek(game, player_id)``: a player's view of the game's unrecorded run, or None
#: (services/session/entrypoints/ticker.py :class:`RunPeek`).
Peek = Callable[[Game, int], Awaitable[bytes | None]]


class GameCache:
    """The loaded games of this instance: load, follow, render views, evict.

    Args:
        store, snapshots, engine: the ports (services/session/service_layer/ports.py).
        directory: optional; ``fetch(game_id)`` gives the directory entry (profile id).
        snapshot_every: a replay's fold leaves a snapshot at least every this many events.
        peek: the views of unrecorded runs (None: a run's views are those it was told).
    """

    def __init__(
        self,
        store: EventLog,
        snapshots: SnapshotRepository,
        engine: Rules,
        directory: DirectoryPort | None = None,
        snapshot_every: int = 100,
        peek: Peek | None = None,
    ) -> None:
        self.store = store
        self.snapshots = snapshots
        self.engine = engine
        self.directory = directory
        self.games: dict[str, Game] = {}
        self._load_locks: dict[str, asyncio.Lock] = {}
        #: Recently replayed states (services/session/service_layer/replays.py).
        self.replays = ReplayCache()
        #: A replay's fold leaves a snapshot at least every this many events (settings).
        self.snapshot_every = snapshot_every
        #: ``await peek(game, player_id)``: the view of a game's unrecorded run from the
        #: engine's run cache (the lease holder knows the run), or None.
        self.peek = peek

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
        game.note_seats(events)
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
        """Read the command ids and the seats' profiles (:attr:`Game.seated`) of the
        events before :attr:`Game.commands_from` (a game rebuilt from a snapshot knows
        only the later ones) into its command map, once. Call
        under the game's lock. Raises ServiceError ``UNAVAILABLE``."""
        if game.commands_from <= 1:
            return
        older: dict[str, CommandResult] = {}
        events = await self.store.read(game.game_id, 1, game.commands_from - 1)
        for event in events:
            remember_command(older, event)
        game.note_seats(events)  # the seats joined before the snapshot, too
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
        game.seated = fresh.seated
        game.commands_from = fresh.commands_from
        game.last_snapshot_seq = max(game.last_snapshot_seq, fresh.last_snapshot_seq)
        game.last_history_seq = max(game.last_history_seq, fresh.last_history_seq)
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
        """Catch every loaded game up with the log (after the follower's reset, a NATS
        reconnect's included: events may have been missed while away)."""
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
