"""Housekeeping of one session instance: leases, disconnect clocks, expiry, eviction.

- **Leases** (every ``lease_ttl_s``/3 and when poked): a game needs a lease holder while
  it is ticked (its directory entry says ``lease``) or has tracked players (their
  disconnect clocks must run somewhere). The keeper takes the lease of every such game
  nobody holds (a dead holder's lease expires within the TTL), loads the game — a game
  is loaded on first use or when this instance takes its lease, never at start-up — and
  gives a lease up when the game no longer needs one. A game found finished without its
  ``GameFinished`` (a crash between two events) is repaired by its new holder, through
  the command loop. A game this instance cannot load after taking its lease (NATS not
  answering: ``lease_game_not_loaded``) has its lease released at once (another
  instance may load it) and is tried again here after a backoff that doubles from
  :data:`LOAD_RETRY_S` up to the lease TTL (services/common/backoff.py, the one the
  lease tries use; a game no longer wanted is forgotten there): a lease is never kept
  on a game nobody ticks (docs/faults.md).
- **Disconnect clocks** of the games this instance holds, every
  :data:`CLOCK_INTERVAL_S` (services/session/entrypoints/presence.py).
- **Turn timers** of the games this instance holds, in the same pass
  (services/session/entrypoints/timers.py): a timed turn past its deadline gets ``time_out``. A
  game with a timed turn running needs a lease holder like a ticked one.
- **Expiry**: a game whose seats stayed open longer than ``waiting_game_ttl_s`` gets the
  command ``expire`` (decided by the engine; ``GameExpired`` + ``GameFinished``), with the
  command id ``expire``, so instances that both try collide harmlessly.
- **Eviction**: a game unused for ``game_idle_s`` with no Watch open and no lease held
  leaves the cache (it is loaded again on use).
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime

import structlog

from cellwar.v1.codes import ErrorCode
from services.common.backoff import Backoff
from services.common.errors import ServiceError
from services.common.settings import Settings
from services.session.adapters.directory import Directory
from services.session.adapters.leases import Leases
from services.session.domain.commands import Command
from services.session.domain.game import Game
from services.session.entrypoints.presence import Presence
from services.session.entrypoints.timers import TurnTimers
from services.session.service_layer.cache import GameCache
from services.session.service_layer.loop import CommandLoop
from services.session.service_layer.projections import directory_entry

log = structlog.get_logger("cellwar.session.keeper")

#: Seconds between two passes of the disconnect clocks.
CLOCK_INTERVAL_S = 0.25
#: Games adopted (lease taken, game loaded) per lease pass at most, so a backlog (old
#: directory entries after an upgrade, many orphans after a crash) loads gradually.
ADOPT_PER_PASS = 100
#: First pause before a game that could not be loaded is adopted again (seconds).
LOAD_RETRY_S = 0.5


def _age_s(created_at: str) -> float:
    """Seconds since an ISO 8601 time (0 when it does not parse)."""
    try:
        created = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return 0.0
    return (datetime.now(created.tzinfo) - created).total_seconds()


class Keeper:
    """The housekeeping loops of one instance (module docstring).

    Args:
        games, loop, leases, presence, directory: the parts it keeps.
        settings: lease TTL, waiting game TTL, idle time.
        poked: set to run the lease pass soon (:meth:`poke`; e.g. by the presence when it
            starts tracking a player); default a new event.
        timers: the turn timers (default ``TurnTimers(games, loop)``).
    """

    def __init__(
        self,
        games: GameCache,
        loop: CommandLoop,
        leases: Leases,
        presence: Presence,
        directory: Directory,
        settings: Settings,
        *,
        poked: asyncio.Event | None = None,
        timers: TurnTimers | None = None,
    ) -> None:
        self.games = games
        self.loop = loop
        self.leases = leases
        self.presence = presence
        self.directory = directory
        self.settings = settings
        self._tasks: list[asyncio.Task] = []
        self._poked = poked or asyncio.Event()
        self._expiring: dict[str, asyncio.Task] = {}
        # game_id -> failed loads in a row and the next try (forgotten once not wanted)
        self._load_failures = Backoff(LOAD_RETRY_S, settings.lease_ttl_s)
        self.timers = timers or TurnTimers(games, loop)

    def needs_lease(self, game: Game) -> bool:
        """A loaded game needs a holder: ticked now, a timed turn running, or tracked
        players whose clocks run (a finished one: until its missing ``GameFinished`` is
        written and its clocks are cleared)."""
        tracked = self.presence.tracks(game.game_id)
        if game.finished or game.broken:
            return game.needs_finish or tracked
        return (
            bool(game.running)
            or TurnTimers.needs_lease(game)
            or (game.policy.disconnect_timeout_s > 0 and tracked)
        )

    def poke(self) -> None:
        """Run the lease pass soon (a game may need a holder now)."""
        self._poked.set()

    def poke_in(self, delay_s: float) -> None:
        """Run the lease pass ``delay_s`` seconds from now (a deferred load is due)."""
        with contextlib.suppress(RuntimeError):  # no running loop: the next pass does it
            asyncio.get_running_loop().call_later(delay_s, self._poked.set)

    def start(self) -> None:
        """Start the loops."""
        self._tasks = [
            asyncio.create_task(self._every(self.settings.lease_ttl_s / 3, self.lease_pass, True)),
            asyncio.create_task(self._every(CLOCK_INTERVAL_S, self.clock_pass)),
            asyncio.create_task(
                self._every(min(60.0, max(self.settings.waiting_game_ttl_s / 4, 0.5)), self.expiry_pass)
            ),
            asyncio.create_task(self._every(min(60.0, self.settings.game_idle_s / 2), self.evict_pass)),
        ]

    async def stop(self) -> None:
        """Stop the loops (leases stay until they expire)."""
        await self.timers.stop()
        tasks = [*self._tasks, *self._expiring.values()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks, self._expiring = [], {}

    async def _every(self, period: float, step, pokeable: bool = False) -> None:
        while True:
            if pokeable:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._poked.wait(), period)
                self._poked.clear()
            else:
                await asyncio.sleep(period)
            try:
                await step()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - housekeeping must go on
                log.exception("housekeeping_failed", step=step.__name__)

    # ------------------------------------------------------------------ leases

    async def lease_pass(self) -> None:
        """Release leases no longer needed; take those nobody holds; load what we took."""
        for gid in list(self.leases.held):
            game = self.games.games.get(gid)
            if game is not None and not self.needs_lease(game):
                await self.leases.release(gid)
        # an entry without "lease" was written before the flag existed: adopt it once, so
        # its new holder rewrites it (and ticks it when it runs)
        wanted = {
            gid
            for gid, entry in self.directory.entries.items()
            if entry.get("lease", "lease" not in entry)
        }
        wanted |= self.presence.tracked_games()
        for g in self.games.loaded():
            if self.needs_lease(g):
                wanted.add(g.game_id)
            elif g.finished:
                # over and needing nothing more: no holder, whatever its directory entry
                # says until the mirror brings the one its end wrote (its lease, just
                # released above, would otherwise be taken again at once)
                wanted.discard(g.game_id)
        self._load_failures.keep_only(wanted)
        self.leases.keep_retries(wanted)
        # nobody's, or ours by name but not held here: this instance restarted with the
        # same instance id and resumes them at once (Leases.acquire), not a TTL later
        orphans = [
            gid
            for gid in wanted
            if not self.leases.holds(gid)
            and not self._load_failures.waiting(gid)
            and self.leases.holder(gid) in (None, self.leases.instance_id)
        ]
        for gid in await self.leases.acquire(orphans[:ADOPT_PER_PASS]):
            await self._adopt(gid)

    async def _adopt(self, game_id: str) -> None:
        """Load a game whose lease this instance just took; repair it when needed."""
        try:
            game = await self.games.get(game_id)
            if game.stale:
                async with game.lock:
                    await self.games.refresh(game)
        except ServiceError as exc:
            await self.leases.release(game_id)
            if exc.code == ErrorCode.GAME_NOT_FOUND:
                log.warning("lease_game_not_loaded", game_id=game_id, code=exc.code)
                self._load_failures.forget(game_id)
                return
            retry_s = self._load_failures.failed(game_id)
            failures = self._load_failures.failures(game_id)
            log.warning(
                "lease_game_not_loaded",
                game_id=game_id,
                code=exc.code,
                failures=failures,
                retry_s=retry_s,
            )
            self.poke_in(retry_s)
            return
        self._load_failures.forget(game_id)
        if game.needs_finish:
            try:
                async with game.lock:
                    if game.needs_finish:
                        await self.loop.repair(game)
            except ServiceError as exc:
                log.warning("repair_failed", game_id=game_id, code=exc.code)
        listed = self.directory.entries.get(game_id)
        if listed is not None and not game.broken and listed != directory_entry(game):
            # a stale entry (a crash between an append and its projection)
            await self.directory.put(game_id, directory_entry(game))
        await self.presence.run_clocks([game])  # clears the clocks of a finished game
        if not self.needs_lease(game):
            await self.leases.release(game_id)

    # ------------------------------------------------------------------ clocks

    async def clock_pass(self) -> None:
        """Run the disconnect clocks and the turn timers of the held games; a loaded timed
        game nobody holds yet brings the lease pass forward."""
        held = [self.games.games.get(gid) for gid in self.leases.held]
        held = [g for g in held if g is not None]
        await self.presence.run_clocks(held)
        await self.timers.run(held)
        if any(g.timed and self.leases.holder(g.game_id) is None for g in self.games.loaded()):
            self.poke()

    # ------------------------------------------------------------------ expiry

    async def expiry_pass(self) -> None:
        """Expire the waiting games older than ``waiting_game_ttl_s``."""
        ttl = self.settings.waiting_game_ttl_s
        for gid, entry in list(self.directory.entries.items()):
            if not entry.get("expirable") or _age_s(str(entry.get("created_at", ""))) < ttl:
                continue
            task = self._expiring.get(gid)
            if task is None or task.done():
                self._expiring[gid] = asyncio.create_task(self._expire(gid))

    async def _expire(self, game_id: str) -> None:
        try:
            outcome = await self.loop.handle(Command.expire(game_id))
            log.info("game_expired", game_id=game_id, seq=outcome.seq, repeated=outcome.repeated)
        except ServiceError as exc:
            log.info("game_not_expired", game_id=game_id, code=exc.code, error=exc.message)
        finally:
            self._expiring.pop(game_id, None)

    # ------------------------------------------------------------------ eviction

    async def evict_pass(self) -> None:
        """Drop idle games from the cache."""
        self.games.evict_idle(self.settings.game_idle_s, keep=set(self.leases.held))
