"""Turn timers, enforced by the holder of a game's lease (docs/architecture/rules.md "Turn timers").

The engine says whether a turn is timed and where it began (the policy's
``turn_time_s`` and the envelope's ``turn_seq``: the per-game seq of the event that
began the turn). The deadline is that event's **recorded** time + ``turn_time_s``
(:meth:`services.session.service_layer.cache.GameCache.turn_deadline`), so every instance computes
the same one, and it survives any restart: nothing of it lives only in memory.

A timed game needs a lease holder (the keeper takes one for it, as for a ticked game;
its directory entry says ``lease``). Every pass of the keeper's clocks
(:data:`services.session.keeper.CLOCK_INTERVAL_S`), :meth:`TurnTimers.run` looks at the
held timed games; for each whose deadline has passed it sends the command ``time_out``
``{"turn_seq"}`` through the command loop with the deterministic command id
``timeout:<turn_seq>``. Two instances that both send it (a lease changing hands) collide
on the fence and the idempotency key: ``TurnTimedOut`` is recorded once. A timeout that
lost to a player's own ``end_turn`` is refused by the engine (``NO_CHANGE``: that turn
is over) and records nothing. A command that reaches the game after the deadline but
before the timeout is recorded is accepted like any other (the log decides; the engine
has no clock).

Clocks: deadlines compare the recorded time (the appending instance's clock) with this
instance's clock, so instances need clocks kept in step (NTP), as the disconnect clocks
already do.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable

import structlog

from services.common.errors import ServiceError
from services.session.domain.commands import Command
from services.session.domain.game import Game
from services.session.service_layer.cache import GameCache
from services.session.service_layer.loop import CommandLoop

log = structlog.get_logger("cellwar.session.timers")


class TurnTimers:
    """Sends ``time_out`` for the held games whose turn deadline has passed.

    Args:
        games: the game cache (deadlines); loop: the command loop (the timeouts).
        clock: unix time in seconds.
    """

    def __init__(
        self, games: GameCache, loop: CommandLoop, clock: Callable[[], float] = time.time
    ) -> None:
        self.games = games
        self.loop = loop
        self.clock = clock
        self._running: dict[str, asyncio.Task] = {}
        #: Timeouts recorded by this instance (white-box checks in tests, logs).
        self.recorded = 0

    @staticmethod
    def needs_lease(game: Game) -> bool:
        """A timed turn is running: someone must watch its deadline."""
        return game.timed

    async def run(self, held: Iterable[Game]) -> None:
        """Start a timeout for every held game whose timed turn is past its deadline (at
        most one in flight per game)."""
        now = self.clock()
        for game in held:
            if not game.timed:  # a stale cache is caught up by the command loop first
                continue
            task = self._running.get(game.game_id)
            if task is not None and not task.done():
                continue
            try:
                deadline = await self.games.turn_deadline(game)
            except ServiceError as exc:
                log.warning("turn_deadline_unknown", game_id=game.game_id, code=exc.code)
                continue
            if deadline is None or now < deadline:
                continue
            self._running[game.game_id] = asyncio.create_task(
                self._time_out(game.game_id, game.state.turn_seq, now - deadline),
                name=f"timeout-{game.game_id}",
            )

    async def _time_out(self, game_id: str, turn_seq: int, late_s: float) -> None:
        try:
            outcome = await self.loop.handle(Command.time_out(game_id, turn_seq))
        except ServiceError as exc:
            # NO_CHANGE: the turn ended meanwhile (a player's end_turn, another instance)
            log.info("turn_not_timed_out", game_id=game_id, turn_seq=turn_seq, code=exc.code)
            return
        finally:
            self._running.pop(game_id, None)
        if not outcome.repeated:
            self.recorded += 1
        log.info(
            "turn_timed_out",
            game_id=game_id,
            seq=outcome.seq,
            turn_seq=turn_seq,
            late_s=round(late_s, 3),
            repeated=outcome.repeated,
        )

    async def stop(self) -> None:
        """Cancel the timeouts in flight (another holder sends them again)."""
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._running.clear()
