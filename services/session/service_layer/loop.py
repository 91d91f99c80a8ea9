"""The command loop: the session's one service layer for every write (cosmicpython's
``service_layer``; handlers are plain coroutines over the ports of
services/session/service_layer/ports.py).

Every command — create, join, action, end_turn, leave and disconnect (``remove_player``),
expire, and the ticker's generations — goes through the same steps, under the game's
lock on this instance:

1. **catch up**: a game marked stale (a lost race, a failed write) is caught up with
   the log first;
2. **idempotency**: the command id, scoped per game and acting player, with a digest of
   the command, is looked up in the game's command map (rebuilt from every event of the
   log, so a retry is answered however late it comes); the same key with another body
   is ``IDEMPOTENCY_KEY_REUSED``;
3. **repair**: a finished state whose ``GameFinished`` was never written (a crash
   between the events of one command) gets it first;
4. **decide** through the engine (``Engine.Decide`` returns the events, the new state
   with its envelope, and the views of the caller and of the players watched now). A
   running game's unrecorded run (the packed tick path) is recorded first, in the same
   append: ``GenerationsTicked`` of the generations run so far, then the command's
   events. A refusal is checked against the log's tail: if another instance wrote
   meanwhile, catch up and decide again;
5. **append** with the expected last per-game seq as the fence (JetStream
   ``Nats-Expected-Last-Subject-Sequence``) and the scoped command id as ``Nats-Msg-Id``;
   a lost race marks the game stale and goes round again (at most
   :data:`MAX_ATTEMPTS` times, then ``CONFLICT``). A race lost to a write the log
   does not show (the tail still at the fence: an append of the platform's own that
   timed out during a quorum loss and is still in flight) is no conflict: the cache is
   still the log (nothing to catch up), and the command is tried again after
   :data:`IN_FLIGHT_BACKOFF_S`, paused without the game's lock (the other commands of
   the game meanwhile meet the same fence, or the write once it shows), and answered
   ``UNAVAILABLE`` (503 with ``Retry-After``: retry the same request) when the log still
   does not show it (docs/faults.md). Whether the tail moved is one read of it
   (:meth:`CommandLoop._log_moved`), for a lost race, a refusal and a create alike;
6. **projections** (services/session/service_layer/projections.py: progress before the cache shows
   the new state; snapshot and directory after it), then the cache takes the new state
   and wakes the game's watchers.

Several instances may run the same command (a retried request on another instance, a
disconnect seen by two): the fence and the command id make it land once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from cellwar.v1 import engine_pb2, events_pb2
from cellwar.v1.codes import CommandType, ErrorCode, EventType
from services.common.errors import ServiceError
from services.common.jsonwire import dumps
from services.session.domain.commands import Command
from services.session.domain.game import Game, broken_error, meta_of
from services.session.domain.idempotency import (
    command_digest,
    command_key,
    game_id_for,
    recorded_command_id,
    repeated_command,
)
from services.session.service_layer.cache import GameCache
from services.session.service_layer.ports import (
    ConcurrencyError,
    DuplicateCommandError,
    EventLog,
    Rules,
    StoreUnavailable,
)
from services.session.service_layer.seats import check_seat

log = structlog.get_logger("cellwar.session.commands")

#: Appends tried before a command fails with ``CONFLICT`` (docs/faults.md).
MAX_ATTEMPTS = 5
#: Races lost to a write the log does not show (still in flight) before a command is
#: answered ``UNAVAILABLE`` (docs/faults.md).
IN_FLIGHT_TRIES = 2
#: Pause before a command that lost to an in-flight write is tried again (seconds). Not
#: longer than the append timeout: the gateway's deadline must leave room for the 503.
IN_FLIGHT_BACKOFF_S = 0.5
#: Command key of the repair that writes a missing ``GameFinished``.
REPAIR_KEY = "p0:repair:finish"


@dataclass(frozen=True)
class Outcome:
    """What a command did: ``seq`` of its last event (the recorded one for a retry, the
    game's seq when it recorded nothing), the player it concerns, whether it was a retry
    answered from the log, and every player's view version right after it (index =
    player id; for a retry the versions the game kept, :meth:`Game.versions_after`, else
    empty: see :meth:`CommandLoop.version_at`)."""

    game: Game
    seq: int
    player_id: int
    repeated: bool = False
    versions: tuple[int, ...] = ()

    def version(self, player_id: int) -> int | None:
        """``player_id``'s version right after the command, when known here."""
        if 0 <= player_id < len(self.versions):
            return self.versions[player_id]
        return None


class Projection(Protocol):
    """A read model updated after each append (snapshots, the directory, profiles)."""

    async def before(
        self, game: Game, events: Sequence[events_pb2.Event], state: engine_pb2.GameState
    ) -> None:
        """Called after the append, before the cache shows ``state``."""
        ...

    async def after(
        self, game: Game, events: Sequence[events_pb2.Event], before: engine_pb2.GameState
    ) -> None:
        """Called once the cache shows the new state (``before``: the state it replaced)."""
        ...


class ProgressChecker(Protocol):
    """Whether a profile may start a level (campaign)."""

    async def check_level(self, profile_id: str, level: Any) -> None:
        """Raises ServiceError ``LEVEL_LOCKED``, ``PROFILE_NOT_FOUND``, ``UNAVAILABLE``."""
        ...


class CommandLoop:
    """Runs commands against the cached games (module docstring).

    Args:
        games: the cache (loads games, folds followed events).
        store: the event log; engine: the rules.
        projections: read models updated after each append, in order.
        progress: checks a profile's unlocked level at create (None: not checked).
        max_attempts: appends tried before ``CONFLICT`` (races lost to another writer).
        in_flight_tries / in_flight_backoff_s: races lost to a write the log does not
            show yet, and the pause after each, before ``UNAVAILABLE``.
    """

    def __init__(
        self,
        games: GameCache,
        store: EventLog,
        engine: Rules,
        projections: Sequence[Projection] = (),
        progress: ProgressChecker | None = None,
        max_attempts: int = MAX_ATTEMPTS,
        in_flight_tries: int = IN_FLIGHT_TRIES,
        in_flight_backoff_s: float = IN_FLIGHT_BACKOFF_S,
    ) -> None:
        self.games = games
        self.store = store
        self.engine = engine
        self.projections = list(projections)
        self.progress = progress
        self.max_attempts = max_attempts
        self.in_flight_tries = in_flight_tries
        self.in_flight_backoff_s = in_flight_backoff_s

    # ------------------------------------------------------------------ commands

    async def handle(self, cmd: Command) -> Outcome:
        """Run ``cmd`` (module docstring); a command id this actor already used in this
        game returns the recorded result and changes nothing.

        Raises:
            ServiceError: ``GAME_NOT_FOUND``, rule codes from the engine, ``CONFLICT``
                (lost to other writers :attr:`max_attempts` times), ``UNAVAILABLE``
                (NATS did not answer, or the log still does not show the write the
                fence lost to), ``GAME_BROKEN``, ``IDEMPOTENCY_KEY_REUSED``.
        """
        key = command_key(cmd.actor, cmd.command_id) if cmd.command_id else ""
        digest = command_digest(cmd.type, cmd.payload) if cmd.command_id else ""
        attempt = in_flight = 0
        while True:
            game = await self.games.get(cmd.game_id)
            async with game.lock:
                while attempt < self.max_attempts:
                    last = attempt == self.max_attempts - 1
                    attempt += 1
                    if game.stale:
                        await self.games.refresh(game)
                    if game.broken:
                        raise broken_error(game)
                    if key and key not in game.commands and game.commands_from > 1:
                        await self.games.complete_commands(game)
                    repeated = repeated_command(game, key, digest)
                    if repeated is not None:
                        log.info("command_repeated", game_id=game.game_id, command_id=key)
                        versions = game.versions_after(key, repeated.seq)
                        return Outcome(game, repeated.seq, repeated.player_id, True, versions)
                    if game.needs_finish and not await self.repair(game):
                        continue
                    try:
                        reply = await self._decide(game, cmd)
                    except ServiceError as exc:
                        # A refusal must hold against the latest log, not a stale cache
                        # (another instance may have written since): check, catch up, retry.
                        if exc.code in (ErrorCode.UNAVAILABLE, ErrorCode.INTERNAL) or last:
                            raise
                        if not await self._log_moved(game.game_id, game.seq):
                            raise
                        log.info("cache_behind_log", game_id=game.game_id, seq=game.seq)
                        game.stale = True
                        continue
                    if len(reply.events) <= reply.ticked:
                        return Outcome(game, game.seq, cmd.actor, versions=tuple(game.state.versions))
                    stored = await self._append(
                        game,
                        reply.events,
                        reply.state,
                        reply.views,
                        recorded_command_id(key, digest),
                        system=reply.ticked,
                    )
                    if stored is not None:
                        return Outcome(
                            game,
                            stored[-1].seq,
                            stored[reply.ticked].actor or cmd.actor,
                            versions=tuple(reply.state.versions),
                        )
                    if not await self._log_moved(game.game_id, game.seq):
                        # lost to a write the log does not show: no other writer won, so
                        # not a conflict, and the cache is the log (nothing to catch up)
                        game.stale = False
                        attempt -= 1
                        in_flight += 1
                        self._check_in_flight(game, in_flight)
                        break  # pause, without the lock: other commands find the same
                else:
                    raise ServiceError(
                        ErrorCode.CONFLICT,
                        f"game {cmd.game_id} changed {self.max_attempts} times meanwhile; retry",
                    )
            await asyncio.sleep(self.in_flight_backoff_s * in_flight)

    def _check_in_flight(self, game: Game, in_flight: int) -> None:
        """Raise ServiceError ``UNAVAILABLE`` once ``in_flight`` races in a row were lost to
        a write the log does not show (:attr:`in_flight_tries`; docs/faults.md)."""
        if in_flight >= self.in_flight_tries:
            log.warning("append_in_flight", game_id=game.game_id, seq=game.seq)
            raise ServiceError(
                ErrorCode.UNAVAILABLE,
                f"game {game.game_id}: an earlier write is still in flight"
                " (the event store is recovering); retry the same request",
            )

    async def create(
        self, kind: str, config: Any, command_id: str = "", profile_id: str = ""
    ) -> Game:
        """Create a game; returns it. A retried create (same command id) returns the same
        game and records nothing. ``profile_id``: the profile whose progress the game
        counts for (only when the engine's policy names a level, checked unlocked).

        Raises:
            ServiceError: engine codes (``INVALID_CONFIG``, ...), ``LEVEL_LOCKED``,
                ``PROFILE_NOT_FOUND``, ``IDEMPOTENCY_KEY_REUSED``, ``CONFLICT``,
                ``UNAVAILABLE``.
        """
        game_id = game_id_for(command_id)
        payload = json.dumps({"kind": kind, "config": config}).encode()
        # The create key is the game id's seed, unscoped (a create has no player yet).
        digest = (
            command_digest(CommandType.CREATE, payload + b"\0" + profile_id.encode())
            if command_id
            else ""
        )
        retried = await self._retried(game_id, command_id, digest)
        if retried is not None:
            return retried
        reply = await self.engine.decide(None, CommandType.CREATE, 0, payload)
        level = reply.state.policy.progress_level
        if profile_id and level and self.progress is not None:
            await self.progress.check_level(profile_id, level)
        game = await self._start(
            game_id,
            self._events(reply.events),
            reply.state,
            reply.views,
            command_id,
            digest,
            profile_id if level else "",
        )
        log.info("game_created", game_id=game_id, kind=kind, seq=game.seq)
        return game

    async def fork(
        self, source: Game, state: engine_pb2.GameState, seq: int, command_id: str = ""
    ) -> Game:
        """Start a new game in ``state``, the state of ``source`` right after event ``seq``
        (``Engine.Decide`` of the command ``fork``: ``GameForked``, seats free). A retried
        fork (same command id, same source and seq) returns the same game.

        Raises:
            ServiceError: ``CONFLICT`` (the command id made another game),
                ``IDEMPOTENCY_KEY_REUSED``, ``UNAVAILABLE``, engine codes.
        """
        payload = dumps({"from_game": source.game_id, "from_seq": seq})
        game_id = game_id_for(f"fork:{command_id}" if command_id else "")
        digest = command_digest(CommandType.FORK, payload) if command_id else ""
        retried = await self._retried(game_id, command_id, digest)
        if retried is not None:
            return retried
        reply = await self.engine.decide(state, CommandType.FORK, 0, payload)
        game = await self._start(
            game_id, self._events(reply.events), reply.state, reply.views, command_id, digest
        )
        log.info("game_forked", game_id=game_id, from_game=source.game_id, from_seq=seq)
        return game

    async def import_log(
        self, events: Sequence[events_pb2.Event], origin: bytes = b"", command_id: str = ""
    ) -> tuple[Game, bool]:
        """Create a game from a recorded log (``Engine.Reenact``: every command decided
        again and compared; nothing is written unless the whole log is reproduced).
        Returns the game and whether the log was finished (else the game is a fork of its
        last state, with free seats). A retried import (same command id and log) returns
        the same game, appending what an interrupted first try did not.

        Raises:
            ServiceError: ``LOG_MISMATCH`` / ``MALFORMED`` / ``UNKNOWN_ENGINE_VERSION``
                with ``seq``, ``CONFLICT``, ``IDEMPOTENCY_KEY_REUSED``, ``UNAVAILABLE``.
        """
        game_id = game_id_for(f"import:{command_id}" if command_id else "")
        body = b"".join(e.SerializeToString(deterministic=True) for e in events) + b"\0" + origin
        digest = command_digest("import", body) if command_id else ""
        reply = await self.engine.reenact(events, origin)
        todo = list(reply.events)
        if command_id:
            existing = await self._existing(game_id)
            if existing is not None:
                await self._same_create(existing, command_id, digest)
                async with existing.lock:
                    if existing.seq >= len(todo):
                        return existing, reply.finished
                    if todo[existing.seq - 1].state_hash != existing.state.state_hash:
                        raise ServiceError(ErrorCode.CONFLICT, "this command id imported another log")
                    stored = await self.store.append(
                        game_id, todo[existing.seq :], existing.seq, recorded_command_id(command_id, digest)
                    )
                    await self._project(existing, stored, reply.state, reply.views)
                return existing, reply.finished
        game = await self._start(game_id, todo, reply.state, reply.views, command_id, digest)
        log.info("game_imported", game_id=game_id, events=len(todo), finished=reply.finished)
        return game, reply.finished

    async def _start(
        self,
        game_id: str,
        events: Sequence[events_pb2.Event],
        state: engine_pb2.GameState,
        views: Sequence[bytes],
        command_id: str,
        digest: str,
        profile_id: str = "",
    ) -> Game:
        """Append the first events of a new game (a create, a fork or an import) with the
        fence at 0, then project them; ``profile_id``: the profile whose progress the game
        counts for (kept in its ``meta``).

        Raises:
            ServiceError: ``CONFLICT`` (the id is taken by another command),
                ``UNAVAILABLE`` (NATS did not answer, or an earlier try of this command
                is still in flight: the log is empty but the fence at 0 was lost).
        """
        try:
            stored = await self.store.append(
                game_id, events, 0, recorded_command_id(command_id, digest)
            )
        except (ConcurrencyError, DuplicateCommandError) as exc:
            retried = await self._retried(game_id, command_id, digest)
            if retried is not None:
                return retried
            if not await self._log_moved(game_id, 0):
                # lost to a write the log does not show: our own timed-out try, in flight
                raise ServiceError(
                    ErrorCode.UNAVAILABLE,
                    f"game {game_id}: an earlier try is still in flight; retry the same request",
                ) from exc
            raise ServiceError(ErrorCode.CONFLICT, "game id taken; retry") from exc
        meta = meta_of(stored[0])
        if profile_id:
            meta["profile_id"] = profile_id
        game = Game(game_id, engine_pb2.GameState(), 0, {}, meta)
        self.games.add(game)
        async with game.lock:
            await self._project(game, stored, state, views)
        return game

    async def _existing(self, game_id: str) -> Game | None:
        try:
            return await self.games.get(game_id)
        except ServiceError as exc:
            if exc.code == ErrorCode.GAME_NOT_FOUND:
                return None
            raise

    async def _retried(self, game_id: str, command_id: str, digest: str) -> Game | None:
        """The game a keyed create, fork or import already made (None: none yet, or no
        key). Raises ServiceError ``IDEMPOTENCY_KEY_REUSED`` / ``CONFLICT`` when the key
        made it with another body."""
        if not command_id:
            return None
        existing = await self._existing(game_id)
        return None if existing is None else await self._same_create(existing, command_id, digest)

    async def _same_create(self, game: Game, command_id: str, digest: str) -> Game:
        if command_id not in game.commands and game.commands_from > 1:
            async with game.lock:
                await self.games.complete_commands(game)
        if repeated_command(game, command_id, digest) is not None:
            return game
        raise ServiceError(ErrorCode.CONFLICT, "this command id created another game")

    async def _decide(self, game: Game, cmd: Command) -> engine_pb2.DecideReply:
        """``Engine.Decide`` of ``cmd`` on the game now: its unrecorded run first (the
        generations this instance knows were run), the views of the caller and of the
        players watched or polled now (a join: every view, its seat is not known yet).
        Raises ServiceError."""
        await check_seat(self.games, game, cmd.type, cmd.payload)  # ALREADY_SEATED
        before = game.run_done if game.running else 0
        view_players = None
        if cmd.type != CommandType.JOIN:
            now = self.games._now()
            view_players = sorted({cmd.actor, *game.view_players(now)})
        return await self.engine.decide(
            game.state,
            cmd.type,
            cmd.actor,
            cmd.payload,
            game_id=game.game_id,
            generations_before=before,
            view_players=view_players,
        )

    async def record_run(
        self,
        game: Game,
        expected_seq: int,
        base_hash: str,
        result: engine_pb2.RunResult,
        views: dict[int, bytes],
    ) -> bool:
        """Append the events of a recorded run (``Engine.Run``: a checkpoint, a stable
        board, the end) unless the game moved since the run's base (``expected_seq``,
        ``base_hash``). Returns True when recorded. Never raises for store trouble
        (logged; the run goes on from the last recorded state)."""
        async with game.lock:
            if (
                game.stale
                or game.broken
                or game.seq != expected_seq
                or game.state.state_hash != base_hash
                or not result.events
            ):
                return False
            try:
                stored = await self._append(game, result.events, result.state, views, "")
            except StoreUnavailable as exc:
                log.warning("run_not_recorded", game_id=game.game_id, error=str(exc))
                return False
            return stored is not None

    async def version_after(self, outcome: Outcome, player_id: int) -> int:
        """``player_id``'s view version right after the command of ``outcome`` (known for
        a command run here; folded from the log for a retry answered from it).

        Raises:
            ServiceError: ``UNAVAILABLE``, ``GAME_BROKEN``.
        """
        known = outcome.version(player_id)
        if known is not None:
            return known
        return await self.version_at(outcome.game, outcome.seq, player_id)

    async def version_at(self, game: Game, seq: int, player_id: int) -> int:
        """``player_id``'s view version right after event ``seq`` (a retried command is
        answered with the version its events gave).

        Raises:
            ServiceError: ``UNAVAILABLE``, ``GAME_BROKEN``.
        """
        if seq >= game.seq:
            return game.version(player_id)
        state = await self.games.state_at(game, seq)
        versions = state.versions
        return int(versions[player_id]) if 0 <= player_id < len(versions) else seq

    # ------------------------------------------------------------------ internals

    def _events(self, drafts: Sequence[engine_pb2.EventDraft]) -> list[events_pb2.Event]:
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

    async def _append(
        self,
        game: Game,
        drafts: Sequence[engine_pb2.EventDraft],
        state: engine_pb2.GameState,
        views: Sequence[bytes] | dict[int, bytes],
        command_id: str,
        *,
        system: int = 0,
    ) -> list[events_pb2.Event] | None:
        """Append with the fence, then project and take the state. None when the race
        was lost (the game is marked stale). ``system``: leading events that are the
        system's (no command id). Call under the game's lock.

        Raises:
            StoreUnavailable: NATS did not answer (the game is marked stale).
        """
        try:
            stored = await self.store.append(
                game.game_id, self._events(drafts), game.seq, command_id, system=system
            )
        except (ConcurrencyError, DuplicateCommandError) as exc:
            log.info("append_race_lost", game_id=game.game_id, error=str(exc))
            game.stale = True
            return None
        except StoreUnavailable:
            game.stale = True
            raise
        await self._project(game, stored, state, views)
        return stored

    async def _log_moved(self, game_id: str, seq: int) -> bool:
        """Whether the log's tail is past per-game seq ``seq`` (what the cache, or a
        create's fence, expected): one read of the tail. After a lost race, False means
        the write the fence lost to is not in the log (yet): an append of ours that timed
        out and is still in flight, not another writer's event. After a refusal, True
        means the cache was behind the log.

        Raises:
            StoreUnavailable: NATS did not answer.
        """
        return await self.store.last_seq(game_id) != seq

    async def _project(
        self,
        game: Game,
        stored: Sequence[events_pb2.Event],
        state: engine_pb2.GameState,
        views: Sequence[bytes] | dict[int, bytes],
    ) -> None:
        for projection in self.projections:
            await projection.before(game, stored, state)
        before = game.state
        game.take(state, stored, views, self.store.stream_seq_of(game.game_id))
        for projection in self.projections:
            await projection.after(game, stored, before)

    async def repair(self, game: Game) -> bool:
        """Write the ``GameFinished`` a crash left out (:attr:`Game.needs_finish`) now,
        its payload from the spectator view (``winner``, ``result``); False when another
        instance wrote meanwhile (the race was lost). Call under the game's lock.

        Raises:
            ServiceError: ``UNAVAILABLE``, ``GAME_BROKEN``.
        """
        view = json.loads(await self.games.raw_view(game, 0))
        draft = engine_pb2.EventDraft(
            type=EventType.GAME_FINISHED,
            actor=0,
            payload=dumps({"result": view.get("result"), "winner": view.get("winner")}),
            state_hash=game.state.state_hash,
        )
        events = self._events([draft])
        try:
            stored = await self.store.append(game.game_id, events, game.seq, REPAIR_KEY)
        except (ConcurrencyError, DuplicateCommandError):
            game.stale = True
            return False
        except StoreUnavailable:
            game.stale = True
            raise
        state = await self.engine.fold(game.state, stored)  # the envelope counts it too
        if state is None or state.state_hash != game.state.state_hash:
            raise ServiceError(ErrorCode.GAME_BROKEN, "the repaired GameFinished does not fold")
        await self._project(game, stored, state, ())
        log.warning("game_finished_repaired", game_id=game.game_id, seq=game.seq)
        return True
