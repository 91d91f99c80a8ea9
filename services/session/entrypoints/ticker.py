"""The ticker: advances every running game whose lease this instance holds.

One loop wakes every ``interval`` seconds, adds ``generations_per_second x speed x
elapsed`` generations to each game's debt (fractions carry over), and calls
``Engine.Run`` once (per engine replica) for every game owed at least one generation:
the packed tick path (docs/architecture/ticking.md). The engine keeps each running
game in its run cache, so a tick ships only references (game id, the hash of its last
recorded state, the generations run since) and gets back the generation reached and
the views of the players watched now; nothing is recorded per tick. A game nobody
watches (no Watch stream, GetView or other instance's interest: no view is wanted) steps
every :data:`UNWATCHED_STEP_S` instead, all such games at the same tick: the same
generations in fewer, larger items (the per-call cost of a game is about as large as a
generation's), its slot pool advanced whole. A game gets a step every tick again as soon
as someone watches it. A game carries at most :data:`MAX_BACKLOG_S` of owed generations.

A run is **recorded** — one ``GenerationsTicked{n}``, through the command loop
(:meth:`CommandLoop.record_run`, fenced by the expected last seq) — when the board
stabilises or the game ends (the engine says so), at a checkpoint once the run holds
``checkpoint_s`` seconds of generations (8 s by default: a session that dies loses at most that
much running time, the game resumes from its last recorded generation), before any
command of the game (the command loop records it in the command's own append), and when
the instance stops gracefully (:meth:`Ticker.flush`). A game whose run cache entry is
missing (the engine restarted, another replica) is sent again with its last recorded
state: the engine rebuilds the run deterministically (fold(last recorded) + tick(n)).

Progress is pushed to watchers every tick: the game's views move (``Game.advance_run``
wakes Watch streams) while its version does not; watchers on other instances get it
through :class:`services.session.progress.ProgressRelay`.

Which games run is the engine's policy (``ticking``), read as data. Exactly one instance
ticks a game: the holder of its lease (services/session/adapters/leases.py). A loaded game that
starts running and has no holder yet is leased here at once, so the instance that ran the
command that started it usually ticks it. Rate: 8 generations/s x speed 1, 2, 4, 8
(``CELLWAR_GENERATIONS_PER_SECOND``). The class is replaceable: anything with ``start()``,
``stop()``, ``flush()`` and ``tick_once(elapsed)`` over the same ports will do.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

import structlog

from cellwar.v1 import engine_pb2
from services.common.errors import ServiceError
from services.common.tasks import cancel
from services.session.adapters.leases import Leases
from services.session.domain.game import Game
from services.session.service_layer.cache import GameCache
from services.session.service_layer.loop import CommandLoop

log = structlog.get_logger("cellwar.session.ticker")

#: Most seconds of debt a game may carry (after a pause or a slow engine), seconds: above
#: the step of a game nobody watches, with room for a slow tick between two steps.
MAX_BACKLOG_S = 2.0
#: Seconds of running time a run holds at most before it is recorded (a checkpoint).
CHECKPOINT_S = 8.0
#: Seconds a GetView keeps asking for a player's progress views.
WANTED_S = 5.0
#: Seconds between the steps of a game nobody watches (no Watch stream, no recent GetView,
#: no other instance's interest): its generations are the same, run in fewer, larger
#: ``Engine.Run`` items, since no view of the steps between is wanted. A watched game
#: steps every tick.
UNWATCHED_STEP_S = 0.5

OK = engine_pb2.RunResult.OK
MISS = engine_pb2.RunResult.MISS
FAILED = engine_pb2.RunResult.FAILED


def forget_run(games: GameCache, game_id: str) -> None:
    """Another instance took the game's lease: its unrecorded run is not ours to record
    (the new holder goes on from the last recorded state). ``Leases(on_lost=...)``."""
    game = games.games.get(game_id)
    if game is not None:
        game.reset_run()
        game.due = 0.0


class RunPeek:
    """``await peek(game, player_id)``: a player's view of the game's unrecorded run, from
    the engine's run cache (the lease holder only; None elsewhere or when the engine does
    not hold the run). Asks the next ticks for this player's views too. The game cache's
    ``peek`` (:attr:`GameCache.peek`).

    Args:
        leases: this instance's leases; engine: the rules (``Engine.Run``).
    """

    def __init__(self, leases: Any, engine: Any) -> None:
        self.leases = leases
        self.engine = engine

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    async def __call__(self, game: Game, player_id: int) -> bytes | None:
        now = self._now()
        game.wanted[player_id] = now + WANTED_S
        if not self.leases.holds(game.game_id) or not game.run_done:
            return None
        item = engine_pb2.RunItem(
            game_id=game.game_id,
            base_hash=game.state.state_hash,
            done=game.run_done,
            view_players=[player_id],
        )
        try:
            (result,) = await self.engine.run([item])
        except ServiceError:
            return None
        if result.status != OK or not result.views:
            return None
        return result.views[0]


def tick_interval(generations_per_second: float, longest: float) -> float:
    """Seconds between ticks: ``longest`` (1/8 s), shorter for high rates so a batch stays
    near 64 generations at speed 1, but never below 1/64 s."""
    return max(1 / 64, min(longest, 64 / generations_per_second))


class Ticker:
    """The tick loop of one session instance.

    Args:
        games: the game cache.
        loop: the command loop (records runs).
        leases: this instance's leases.
        generations_per_second: base rate at speed 1 (generations per second).
        interval: seconds between two ticks (see :func:`tick_interval`).
        checkpoint_s: running time a run holds at most before it is recorded (seconds).
        relay: publishes progress for watchers on other instances (optional).
        unwatched_step_s: seconds between the steps of a game nobody watches
            (:data:`UNWATCHED_STEP_S`; ``interval`` or less: every tick).
    """

    def __init__(
        self,
        games: GameCache,
        loop: CommandLoop,
        leases: Leases,
        generations_per_second: float,
        interval: float,
        checkpoint_s: float = CHECKPOINT_S,
        relay: Any | None = None,
        unwatched_step_s: float = UNWATCHED_STEP_S,
    ):
        self.games = games
        self.loop = loop
        self.leases = leases
        self.rate = generations_per_second
        self.interval = interval
        self.checkpoint_s = checkpoint_s
        self.relay = relay
        self.unwatched_step_s = unwatched_step_s
        self._since_step: float | None = None  # seconds since the last common step
        self._task: asyncio.Task | None = None

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    def start(self) -> None:
        """Start the loop."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="ticker")

    async def stop(self) -> None:
        """Stop the loop; leases are kept until they expire (a restart resumes them)."""
        await cancel(self._task)
        self._task = None

    async def _run(self) -> None:
        """Tick every ``interval`` seconds on a fixed schedule (a tick's own time does not
        stretch the period); a tick that ran late is followed after a quarter of an
        interval, not at once: the next one catches up, as a game's debt is by time."""
        loop = asyncio.get_running_loop()
        last = next_at = loop.time()
        while True:
            next_at += self.interval
            rest = self.interval / 4
            if next_at - loop.time() < rest:
                next_at = loop.time() + rest
            await asyncio.sleep(next_at - loop.time())
            now = loop.time()
            elapsed, last = now - last, now
            try:
                await self.tick_once(elapsed)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the loop must survive anything
                log.exception("tick_failed")

    def lost(self, game_id: str) -> None:
        """Another instance took the game's lease: :func:`forget_run`."""
        forget_run(self.games, game_id)

    # ------------------------------------------------------------------ ticks

    def _checkpoint(self, game: Game) -> int:
        """Generations a run holds at most before it is recorded (``checkpoint_s`` of
        running time at the game's speed)."""
        return max(1, round(self.checkpoint_s * self.rate * max(game.state.speed, 1)))

    def _item(
        self,
        game: Game,
        generations: int,
        now: float,
        *,
        record: bool = False,
        view_players: list[int] | None = None,
    ):
        return engine_pb2.RunItem(
            game_id=game.game_id,
            base_hash=game.state.state_hash,
            done=game.run_done,
            generations=generations,
            checkpoint=self._checkpoint(game),
            record=record,
            view_players=game.view_players(now) if view_players is None else view_players,
        )

    async def _call(
        self, batch: Sequence[tuple[Game, engine_pb2.RunItem]]
    ) -> list[engine_pb2.RunResult]:
        """``Engine.Run`` of the batch; the items that MISS (no cache entry for them on
        their replica) are sent once more with their base, unless a command moved the game
        off that base during the first call (its result is dropped anyway, and the state
        it holds now would not have the item's ``base_hash``). Raises ServiceError."""
        results = await self.games.engine.run([item for _, item in batch])
        misses = [
            k
            for k, r in enumerate(results)
            if r.status == MISS and batch[k][0].state.state_hash == batch[k][1].base_hash
        ]
        if misses:
            again = []
            for k in misses:
                game, item = batch[k]
                retry = engine_pb2.RunItem()
                retry.CopyFrom(item)
                retry.base.CopyFrom(game.state)
                again.append(retry)
            for k, result in zip(misses, await self.games.engine.run(again), strict=True):
                results[k] = result
        return results

    async def tick_once(self, elapsed: float) -> int:
        """One tick: ``elapsed`` seconds of generations for every held running game.
        Returns how many games ran (or recorded) a step."""
        for game in self.games.loaded():
            if game.stale and not game.lock.locked():
                async with game.lock:
                    if game.stale:
                        with contextlib.suppress(ServiceError):
                            await self.games.refresh(game)
        running = {g.game_id for g in self.games.loaded() if g.running and not g.stale}
        unheld = [gid for gid in running if self.leases.holder(gid) is None]
        if unheld:
            await self.leases.acquire(unheld)
        now = self._now()
        # the games nobody watches step together, at the first tick ``unwatched_step_s``
        # after the last such step (so a slot pool of them advances whole:
        # docs/architecture/ticking.md); half a tick early is near enough
        since = None if self._since_step is None else self._since_step + elapsed
        step_all = since is None or since >= self.unwatched_step_s - self.interval / 2
        self._since_step = 0.0 if step_all else since
        batch: list[tuple[Game, engine_pb2.RunItem]] = []
        for game in self.games.loaded():
            if game.game_id not in running or not self.leases.holds(game.game_id):
                game.due = 0.0
                if game.run_done and self.leases.holder(game.game_id) is None:
                    game.reset_run()
                continue
            rate = self.rate * max(game.state.speed, 1)
            game.due = min(game.due + rate * elapsed, max(rate * MAX_BACKLOG_S, 1.0))
            n = int(game.due)
            overdue = bool(game.run_done) and now - game.run_started >= self.checkpoint_s * 1.5
            if n < 1 and not overdue:
                continue
            views = game.view_players(now)
            if views or step_all or overdue:
                batch.append((game, self._item(game, n, now, record=overdue, view_players=views)))
        if not batch:
            return 0
        return await self._apply(batch)

    async def _apply(self, batch: Sequence[tuple[Game, engine_pb2.RunItem]]) -> int:
        """Run a batch and take each result (record what the engine recorded)."""
        seqs = [game.seq for game, _ in batch]
        try:
            results = await self._call(batch)
        except ServiceError as exc:
            log.warning("engine_run_failed", code=exc.code, error=exc.message, games=len(batch))
            return 0
        now = self._now()
        stepped = 0
        records: list[tuple[Game, int, engine_pb2.RunItem, engine_pb2.RunResult, dict]] = []
        for (game, item), seq, result in zip(batch, seqs, results, strict=True):
            if game.seq != seq or game.state.state_hash != item.base_hash:
                continue  # a command or another instance moved the game meanwhile
            if game.run_done != item.done:
                continue  # lost with the lease, or a peek raced: the next tick redoes it
            if result.status != OK:
                log.warning(
                    "run_refused", game_id=game.game_id, status=result.status, error=result.error
                )
                game.due = 0.0
                continue
            views = dict(zip(item.view_players, result.views, strict=False))
            if result.events:
                records.append((game, seq, item, result, views))
                continue
            game.due = max(game.due - max(result.ran, item.generations), 0.0)
            if result.ran or views:
                game.advance_run(result.done, result.generation, views, now)
                if self.relay is not None:
                    self.relay.publish(game, item.view_players, result.views)
                stepped += 1
        # the records of the tick's games, appended at once (one fence per game; the
        # event store commits appends waiting together as one batch)
        recorded = await asyncio.gather(
            *(
                self.loop.record_run(game, seq, item.base_hash, result, views)
                for game, seq, item, result, views in records
            ),
            return_exceptions=True,
        )
        for (game, _, _, result, _), ok in zip(records, recorded, strict=True):
            if isinstance(ok, BaseException):
                log.error("run_record_failed", game_id=game.game_id, error=repr(ok))
            elif ok:
                game.due = max(game.due - result.ran, 0.0)
                stepped += 1
        return stepped

    # ------------------------------------------------------------------ flush

    async def flush(self) -> int:
        """Record the unrecorded run of every held game now (a graceful stop: nothing is
        lost). Returns how many runs were recorded."""
        now = self._now()
        batch = [
            (game, self._item(game, 0, now, record=True))
            for game in self.games.loaded()
            if game.run_done and self.leases.holds(game.game_id) and not game.stale
        ]
        if not batch:
            return 0
        recorded = await self._apply(batch)
        log.info("runs_flushed", games=len(batch), recorded=recorded)
        return recorded
