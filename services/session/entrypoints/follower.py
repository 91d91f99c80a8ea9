"""Following the event log: every event any instance appends reaches every instance.

Decision (docs/architecture/scale-out.md "Following the log"): **one consumer per instance** on
``games.*.events`` — an ephemeral push consumer without acks (memory storage, one
replica), starting right after the stream's last message at start-up. Events of games
this instance has not loaded are dropped on arrival (the game id is read from the
subject, the payload is not parsed); events of loaded games are queued and folded onto
the cached state in batches (:meth:`services.session.service_layer.cache.GameCache.followed`).
One consumer per loaded game would multiply consumers by the number of games and hit the
server's consumer limit; one per instance costs one consumer whatever the load.

The consumer is ordered by hand: every message carries its stream and consumer
sequence; a consumer sequence that skips (a message the client dropped), missed idle
heartbeats (NATS restarted, the consumer was lost) or a reconnect recreate the consumer
from the last stream sequence seen + 1, so nothing is skipped and nothing before it is
replayed. (nats-py's own ordered consumer would restart from stream sequence 1 after a
reset: the whole history.) Games whose events might have been missed while away are
caught up from the log: after every reset (a reconnect's too) the follower runs its
``on_reset`` (the bootstrap gives :meth:`GameCache.catch_up_all`), and a gap in a game's
seqs reloads it. The catch-up matters when the consumer came back on a replica still
catching up, or a game was loaded from one (docs/faults.md "After a quorum loss").
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import nats.errors
import structlog
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js import api
from nats.js.client import JetStreamContext

from services.session.adapters.event_store import STREAM

log = structlog.get_logger("cellwar.session.follower")

#: The subjects of every game's log.
SUBJECTS = "games.*.events"

#: ``on_event(game_id, data, stream_seq)`` for each event of ``games.<game_id>.events``.
OnEvent = Callable[[str, bytes, int], None]


class Follower:
    """One ordered push consumer of every game's events (module docstring).

    Args:
        nc / js: the NATS connection and its JetStream context.
        on_event: called on the event loop for each event, in stream order.
        on_reset: awaited in a task of its own after each reset, once the consumer is
            back (a reset while it runs runs it once more after); its errors are logged.
        heartbeat_s: idle heartbeat of the consumer; 3 missed ones recreate it.
    """

    def __init__(
        self,
        nc: NATS,
        js: JetStreamContext,
        on_event: OnEvent,
        on_reset: Callable[[], Awaitable[None]] | None = None,
        heartbeat_s: float = 2.0,
    ) -> None:
        self.nc = nc
        self.js = js
        self.on_event = on_event
        self.on_reset = on_reset
        self.heartbeat_s = heartbeat_s
        self.last_stream_seq = 0
        self.resets = 0
        self._dseq = 0
        self._sub = None
        self._consumer = ""
        self._alive = 0.0
        self._watchdog: asyncio.Task | None = None
        self._resetting: asyncio.Lock | None = None
        self._closing = False
        self._generation = 0
        self._catching: asyncio.Task | None = None
        self._catch_again = False

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    async def start(self) -> None:
        """Start following after the stream's current last message."""
        self._resetting = asyncio.Lock()
        info = await self.js.stream_info(STREAM)
        self.last_stream_seq = int(info.state.last_seq or 0)
        await self._subscribe()
        self._watchdog = asyncio.create_task(self._watch(), name="follower-watchdog")

    async def _subscribe(self) -> None:
        inbox = self.nc.new_inbox()
        self._dseq = 0
        self._generation += 1
        generation = self._generation

        async def on_msg(msg: Msg) -> None:
            if generation == self._generation:
                await self._on_msg(msg)

        self._sub = await self.nc.subscribe(inbox, cb=on_msg)
        config = api.ConsumerConfig(
            deliver_subject=inbox,
            deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=self.last_stream_seq + 1,
            ack_policy=api.AckPolicy.NONE,
            filter_subject=SUBJECTS,
            idle_heartbeat=self.heartbeat_s,
            mem_storage=True,
            num_replicas=1,
            inactive_threshold=max(30.0, 10 * self.heartbeat_s),
        )
        try:
            info = await self.js.add_consumer(STREAM, config)
        except BaseException:
            await self._sub.unsubscribe()
            self._sub = None
            raise
        self._consumer = info.name
        self._alive = self._now()
        log.info("follower_started", consumer=self._consumer, from_stream_seq=self.last_stream_seq + 1)

    async def _on_msg(self, msg: Msg) -> None:
        self._alive = self._now()
        headers = msg.headers or {}
        if headers.get("Status"):  # idle heartbeat: did the consumer skip anything?
            last = headers.get("Nats-Last-Consumer")
            if last is not None and int(last) != self._dseq:
                self._schedule_reset("heartbeat names another last delivery")
            return
        try:
            meta = msg.metadata
        except Exception:  # noqa: BLE001 - not a JetStream message: ignore
            return
        if meta.sequence.consumer != self._dseq + 1:
            self._schedule_reset("consumer sequence skipped")
            return
        self._dseq = meta.sequence.consumer
        self.last_stream_seq = meta.sequence.stream
        parts = msg.subject.split(".")
        if len(parts) == 3:
            self.on_event(parts[1], msg.data, meta.sequence.stream)

    def _schedule_reset(self, why: str) -> None:
        if not self._closing:
            asyncio.get_running_loop().create_task(self.reset(why))

    async def reset(self, why: str = "reconnect") -> None:
        """Recreate the consumer from the last stream sequence seen + 1."""
        assert self._resetting is not None
        if self._resetting.locked():
            return
        async with self._resetting:
            self.resets += 1
            log.info("follower_reset", why=why, from_stream_seq=self.last_stream_seq + 1)
            await self._drop()
            while not self._closing:
                try:
                    await self._subscribe()
                except (TimeoutError, nats.errors.Error) as exc:
                    log.warning("follower_resubscribe_failed", error=str(exc))
                    await asyncio.sleep(min(self.heartbeat_s, 1.0))
                    continue
                self._catch_up()
                return

    def _catch_up(self) -> None:
        """Run :attr:`on_reset` in a task (once more after the one under way, if any)."""
        if self.on_reset is None or self._closing:
            return
        if self._catching is not None and not self._catching.done():
            self._catch_again = True
            return
        self._catching = asyncio.get_running_loop().create_task(self._run_catch_up(), name="follower-catch-up")

    async def _run_catch_up(self) -> None:
        assert self.on_reset is not None
        while True:
            self._catch_again = False
            try:
                await self.on_reset()
            except Exception:  # noqa: BLE001 - the next reset tries again
                log.exception("follower_catch_up_failed")
            if not self._catch_again or self._closing:
                return

    async def _drop(self) -> None:
        self._generation += 1  # late messages of the old subscription are ignored
        sub, consumer = self._sub, self._consumer
        self._sub, self._consumer = None, ""
        if sub is not None:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        if consumer:
            with contextlib.suppress(Exception):
                await self.js.delete_consumer(STREAM, consumer)

    async def _watch(self) -> None:
        while not self._closing:
            await asyncio.sleep(self.heartbeat_s)
            if self._sub is not None and self._now() - self._alive > 3 * self.heartbeat_s:
                await self.reset("heartbeats missed")

    async def stop(self) -> None:
        """Stop following and delete the consumer."""
        self._closing = True
        for task in (self._watchdog, self._catching):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self._drop()
