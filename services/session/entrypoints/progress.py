"""Progress of running games between recorded events, across session instances.

The packed tick path records a running game's generations only every few seconds
(services/session/entrypoints/ticker.py), yet every watcher's view must advance every tick
(docs/api/websocket.md: a frame after every change and every generation), also on instances that
do not tick the game. Decision (docs/architecture/ticking.md): **the lease holder
pushes progress on core NATS, on demand**:

* an instance serving players of a running game whose lease it does not hold (open
  Watch streams, recent GetViews) publishes ``RunInterest{player_ids}`` on
  ``games.<id>.interest`` every :data:`INTEREST_EVERY_S` (and at once when a Watch
  opens);
* the holder remembers that interest for :data:`INTEREST_TTL_S`, asks the engine for
  those players' views with each tick, and publishes ``RunProgress{seq, base_hash,
  done, generation, views}`` on ``games.<id>.progress``;
* an instance that has the game loaded at that base takes the progress
  (``Game.advance_run``: its watchers get the new views); progress of another base is
  dropped (the follower brings the recorded events within milliseconds).

Core NATS, not the stream: progress is not a fact of the game (the log records it at
the next checkpoint), and losing a message only delays a frame by a tick. Nothing is
published for games nobody watches elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import structlog
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from cellwar.v1 import session_pb2
from services.common.tasks import cancel
from services.session.adapters.leases import Leases
from services.session.domain.game import Game
from services.session.service_layer.cache import GameCache

log = structlog.get_logger("cellwar.session.progress")

#: Seconds between two interest messages of a watched game.
INTEREST_EVERY_S = 1.0
#: Seconds the holder keeps serving an interest it heard (3 missed messages).
INTEREST_TTL_S = 3.0


def progress_subject(game_id: str) -> str:
    """The core NATS subject of a game's progress."""
    return f"games.{game_id}.progress"


def interest_subject(game_id: str) -> str:
    """The core NATS subject of the interest in a game's progress."""
    return f"games.{game_id}.interest"


class ProgressRelay:
    """Publishes and receives progress and interest (module docstring).

    Args:
        nc: the NATS connection.
        games: the game cache; leases: this instance's leases.
    """

    def __init__(self, nc: NATS, games: GameCache, leases: Leases) -> None:
        self.nc = nc
        self.games = games
        self.leases = leases
        self._subs: list = []
        self._task: asyncio.Task | None = None
        self.published = 0
        self.received = 0

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    async def start(self) -> None:
        """Subscribe to every game's progress and interest; start the interest loop."""
        self._subs = [
            await self.nc.subscribe("games.*.progress", cb=self._on_progress),
            await self.nc.subscribe("games.*.interest", cb=self._on_interest),
        ]
        self._task = asyncio.create_task(self._interest_loop(), name="progress-interest")

    async def stop(self) -> None:
        """Stop the loop and unsubscribe."""
        await cancel(self._task)
        self._task = None
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        self._subs = []

    # ------------------------------------------------------------------ holder side

    async def _on_interest(self, msg: Msg) -> None:
        try:
            interest = session_pb2.RunInterest.FromString(msg.data)
        except Exception:  # noqa: BLE001 - a foreign message: ignore
            return
        game = self.games.games.get(interest.game_id)
        if game is None or not self.leases.holds(interest.game_id):
            return
        until = self._now() + INTEREST_TTL_S
        for pid in interest.player_ids:
            game.remote[pid] = until

    def publish(self, game: Game, player_ids: Sequence[int], views: Sequence[bytes]) -> None:
        """After a tick of a held game: publish the views other instances want."""
        wanted = set(game.remote_players(self._now()))
        if not wanted:
            return
        pairs = [(pid, v) for pid, v in zip(player_ids, views, strict=False) if pid in wanted]
        message = session_pb2.RunProgress(
            game_id=game.game_id,
            seq=game.seq,
            base_hash=game.state.state_hash,
            done=game.run_done,
            generation=game.run_generation,
            player_ids=[p for p, _ in pairs],
            views=[v for _, v in pairs],
        )
        self._send(progress_subject(game.game_id), message.SerializeToString())
        self.published += 1

    def _send(self, subject: str, data: bytes) -> None:
        if self.nc.is_closed:
            return
        task = asyncio.ensure_future(self.nc.publish(subject, data))
        task.add_done_callback(_quiet)

    # ------------------------------------------------------------------ watcher side

    async def _on_progress(self, msg: Msg) -> None:
        try:
            progress = session_pb2.RunProgress.FromString(msg.data)
        except Exception:  # noqa: BLE001
            return
        game = self.games.games.get(progress.game_id)
        if (
            game is None
            or self.leases.holds(progress.game_id)
            or game.seq != progress.seq
            or game.state.state_hash != progress.base_hash
            or progress.done < game.run_done
        ):
            return
        self.received += 1
        views = dict(zip(progress.player_ids, progress.views, strict=False))
        game.advance_run(progress.done, progress.generation, views, self._now())

    def poke(self, game: Game) -> None:
        """Publish the interest in ``game`` now (a Watch just opened here)."""
        self._interest(game, self._now())

    def _interest(self, game: Game, now: float) -> None:
        if not game.running or self.leases.holds(game.game_id):
            return
        players = game.view_players(now, remote=False)
        if players:
            message = session_pb2.RunInterest(game_id=game.game_id, player_ids=players)
            self._send(interest_subject(game.game_id), message.SerializeToString())

    async def _interest_loop(self) -> None:
        while True:
            await asyncio.sleep(INTEREST_EVERY_S)
            now = self._now()
            for game in self.games.loaded():
                try:
                    self._interest(game, now)
                except Exception:  # noqa: BLE001 - the loop must go on
                    log.exception("interest_failed", game_id=game.game_id)


def _quiet(task: asyncio.Future) -> None:
    """Swallow a failed fire-and-forget publish (a lost progress message costs a frame)."""
    if not task.cancelled():
        task.exception()
