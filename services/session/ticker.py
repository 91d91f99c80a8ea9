"""The ticker: advances every running game whose lease this instance holds.

One loop wakes every ``interval`` seconds, adds ``generations_per_second x speed x
elapsed`` generations to each game's debt (fractions carry over), and calls
``Engine.Tick`` once for every game owed at least one generation. Each result is
recorded through the command loop (:meth:`CommandLoop.record_tick`: under the game's
lock, fenced by the expected last seq); when the game changed meanwhile, the result is
dropped and the next tick redoes it. DESIGN §3: 8 generations/s x speed 1, 2, 4, 8.

Which games run is the engine's policy (``ticking``), read as data. Exactly one instance
ticks a game: the holder of its lease (services/session/leases.py). A loaded game that
starts running and has no holder yet is leased here at once, so the instance that ran
the command that started it usually ticks it. The class is replaceable: anything with
``start()``, ``stop()`` and ``tick_once(elapsed)`` over the same ports will do.
"""

from __future__ import annotations

import asyncio
import contextlib

import structlog

from services.common.errors import ServiceError
from services.session.commands import CommandLoop
from services.session.games import Game, GameCache
from services.session.leases import Leases

log = structlog.get_logger("cellwar.session.ticker")

#: Most seconds of debt a game may carry (after a pause or a slow engine), seconds.
MAX_BACKLOG_S = 1.0


def tick_interval(generations_per_second: float, longest: float) -> float:
    """Seconds between ticks: ``longest`` (1/8 s), shorter for high rates so a batch stays
    near 64 generations at speed 1, but never below 1/64 s."""
    return max(1 / 64, min(longest, 64 / generations_per_second))


class Ticker:
    """The tick loop of one session instance.

    Args:
        games: the game cache.
        loop: the command loop (records the results).
        leases: this instance's leases.
        generations_per_second: base rate at speed 1 (generations per second).
        interval: seconds between two ticks (see :func:`tick_interval`).
    """

    def __init__(
        self,
        games: GameCache,
        loop: CommandLoop,
        leases: Leases,
        generations_per_second: float,
        interval: float,
    ):
        self.games = games
        self.loop = loop
        self.leases = leases
        self.rate = generations_per_second
        self.interval = interval
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """Start the loop."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="ticker")

    async def stop(self) -> None:
        """Stop the loop; leases are kept until they expire (a restart resumes them)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            await asyncio.sleep(self.interval)
            now = loop.time()
            elapsed, last = now - last, now
            try:
                await self.tick_once(elapsed)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the loop must survive anything
                log.exception("tick_failed")

    async def tick_once(self, elapsed: float) -> int:
        """One tick: ``elapsed`` seconds of generations for every held running game.
        Returns how many games recorded a tick."""
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
        batch: list[tuple[Game, int, int]] = []
        for game in self.games.loaded():
            if game.game_id not in running or not self.leases.holds(game.game_id):
                game.due = 0.0
                continue
            rate = self.rate * max(game.state.speed, 1)
            game.due = min(game.due + rate * elapsed, max(rate * MAX_BACKLOG_S, 1.0))
            n = int(game.due)
            if n >= 1:
                batch.append((game, game.seq, n))
        if not batch:
            return 0
        try:
            reply = await self.games.engine.tick([(g.state, n) for g, _, n in batch])
        except ServiceError as exc:
            log.warning("engine_tick_failed", code=exc.code, error=exc.message, games=len(batch))
            return 0
        recorded = 0
        for (game, seq, n), result in zip(batch, reply.results, strict=False):
            if await self.loop.record_tick(game, seq, result):
                game.due = max(game.due - max(result.generations_run, 1), 0.0)
                recorded += 1
            elif not result.events and game.seq == seq:
                game.due = max(game.due - n, 0.0)  # nothing to run (e.g. engine refused)
        return recorded
