"""Delayed spectators (``?spectate=1&delay_s=N``, CellWar N >= 10; docs/spectators.md): a
spectator sees a game as it was ``delay_s`` seconds ago, never its present.

The delayed state is read from the log, not from the live game: the state right after the
latest event whose ``time`` is at least ``delay_s`` old (nearest snapshot + ``Engine.Fold``,
checked against the recorded hash), moved forward event by event as their times pass.
Whatever the live cache knows, a spectator can only be shown what the log held
``delay_s`` ago.

- One :class:`DelayedFeed` per ``(game, delay_s)`` on an instance, shared by the
  spectator streams and ``GET /state?spectate=1`` of that delay, kept for
  :data:`IDLE_S` after its last use (:class:`Spectators`). It holds the delayed state, the
  events read from the log but not yet old enough (at most ``delay_s`` worth), and the
  rendered view of its state.
- The delay is the engine's to bound, as data (``Policy.spectator_delay_min_s``: CellWar
  10 s while it runs when its config says ``"spectators": "live"``, whose spectator sees
  everything; 0 elsewhere); at most :data:`MAX_DELAY_S`. Below the minimum:
  ``MALFORMED``. An infinite minimum (CellWar without ``"spectators": "live"``, the
  default) admits no spectator before the end: ``SPECTATORS_AFTER_END`` (409), and no
  view is rendered (docs/spectators.md).
- Views are the engine's spectator view (``Engine.Views`` for player 0: CellWar shows
  every unit; Life hides blind placements until placement ends) with ``game_id``,
  ``seq``, ``delay_s`` and ``turn_deadline``: the deadline of the turn running at the
  moment shown (ISO 8601 UTC; None when no timer ran then), as the players saw it then:
  the time of the event that began that turn, which the feed read on its way (no read
  of the log per frame when the turn changes).
  ``seq``: the per-game seq of the event shown when the spectator sees everything
  (``Policy.spectators_see_all``), else the spectator's own version (so a blind
  placement's drawing moves nothing).
- Frames: when the spectator sees everything, one frame per event, in order, even when
  several events fall due together (the feed folds them one by one and keeps the last
  :data:`HISTORY` states shown, so every stream of the feed sends each of them);
  otherwise a frame when the spectator's version moves.
- A game none of whose events is ``delay_s`` old yet has nothing to show:
  ``GET`` answers ``NOT_YET_VISIBLE`` (409); a stream waits.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable, Sequence

import structlog

from cellwar.v1 import engine_pb2, events_pb2
from cellwar.v1.codes import ErrorCode
from services.common.errors import ServiceError
from services.session.domain.game import Game, iso_time, merge_view
from services.session.service_layer.cache import GameCache

log = structlog.get_logger("cellwar.session.spectators")

#: The longest delay a spectator may ask for (seconds): the events a feed holds span it.
MAX_DELAY_S = 3600.0
#: Seconds an unused feed is kept (a spectator polling ``GET /state`` reuses it).
IDLE_S = 60.0
#: Seconds between two reads of the log for events newer than those a feed holds, while
#: it still holds some (a feed with none left waits for the game to change instead).
REFILL_S = 1.0
#: States a feed keeps of those it has shown (the newest), so a stream that was busy
#: sending while several events fell due still sends a frame for each.
HISTORY = 256


def check_delay(game: Game, delay_s: float) -> float:
    """``delay_s`` if a spectator of ``game`` may ask for it; a negative ``delay_s`` (none
    given) is the least the game allows now.

    Raises:
        ServiceError: ``SPECTATORS_AFTER_END`` while the game runs and admits no spectator
            before its end (an infinite minimum); ``MALFORMED`` when the delay is not
            within 0..:data:`MAX_DELAY_S`, or below the engine's minimum for this game
            while it runs.
    """
    if not game.finished and math.isinf(game.policy.spectator_delay_min_s):
        raise ServiceError(
            ErrorCode.SPECTATORS_AFTER_END,
            f"game {game.game_id} is running under fog of war: spectators may watch it once "
            'it has ended (its creator did not ask for live spectators, "spectators": "live")',
        )
    if delay_s < 0:
        return 0.0 if game.finished else float(game.policy.spectator_delay_min_s)
    if not 0 <= delay_s <= MAX_DELAY_S:
        raise ServiceError(ErrorCode.MALFORMED, f"delay_s must be within 0..{MAX_DELAY_S:g} seconds")
    least = float(game.policy.spectator_delay_min_s)
    if delay_s < least and not game.finished:
        raise ServiceError(
            ErrorCode.MALFORMED,
            f"spectators of game {game.game_id} are delayed by at least {least:g} s while it "
            f"runs (delay_s={delay_s:g})",
        )
    return delay_s


def _time(event: events_pb2.Event) -> float:
    return event.time.seconds + event.time.nanos / 1e9


class DelayedFeed:
    """One game seen ``delay_s`` late (module docstring).

    Attributes:
        state: the delayed state (after event :attr:`seq`), None until some event is old
            enough; ``seq`` its per-game seq (0 = none).
        event_time: unix time of event :attr:`seq`.
        shown: the newest states shown, ``(seq, state)`` in seq order (at most
            :data:`HISTORY`; only the newest when the spectator does not see
            everything); the last one is :attr:`state`.
        last_used: unix time of the last use (eviction).
    """

    def __init__(
        self, games: GameCache, game: Game, delay_s: float, clock: Callable[[], float] = time.time
    ) -> None:
        self.games = games
        self.game = game
        self.delay_s = delay_s
        self.clock = clock
        self.state: engine_pb2.GameState | None = None
        self.seq = 0
        self.event_time = 0.0
        self.shown: deque[tuple[int, engine_pb2.GameState]] = deque(maxlen=HISTORY)
        self.pending: deque[events_pb2.Event] = deque()
        self.read_to = 0
        self.refilled_at = 0.0
        self.last_used = clock()
        self.watchers = 0
        self.lock = asyncio.Lock()
        self._views: dict[int, tuple[int, bytes]] = {}  # seq -> (frame seq, view JSON)
        self._turn_times: dict[int, float] = {}  # turn_seq -> time of that event (unix s)
        self._started = False

    # ------------------------------------------------------------------ log

    def _show(
        self,
        seq: int,
        state: engine_pb2.GameState,
        when: float,
        events: Sequence[events_pb2.Event] = (),
    ) -> None:
        """Make ``state`` (after event ``seq``, recorded at ``when``, reached through
        ``events``) the delayed state; a feed whose spectator does not see everything
        keeps only it (a Life board may be large, and its frames follow the spectator's
        version, not each event). The time of the event that began its timed turn is
        kept when it is among ``events`` (the turn deadline of its view)."""
        self.state, self.seq, self.event_time = state, seq, when
        if not state.policy.spectators_see_all:
            self.shown.clear()
        self.shown.append((seq, state))
        turn_seq = state.turn_seq
        if turn_seq and turn_seq not in self._turn_times:
            began = next((e for e in reversed(events) if e.seq == turn_seq), None)
            if began is not None:
                self._turn_times[turn_seq] = _time(began)
        kept = {s for s, _ in self.shown}
        for old in [s for s in self._views if s not in kept]:
            del self._views[old]
        turns = {st.turn_seq for _, st in self.shown}
        for old in [t for t in self._turn_times if t not in turns]:
            del self._turn_times[old]

    async def _deadline(self, state: engine_pb2.GameState) -> float | None:
        """The turn deadline (unix seconds) of a shown ``state``: the time of the event
        that began its timed turn (kept by :meth:`_show`) + the policy's ``turn_time_s``;
        read from the log only when the feed never saw that event (then kept too). None:
        no timer ran.

        Raises:
            StoreUnavailable: NATS did not answer.
        """
        if not state.policy.turn_time_s or not state.turn_seq or state.finished:
            return None
        began = self._turn_times.get(state.turn_seq)
        if began is None:  # a turn that began before what the feed read: once
            deadline = await self.games.deadline_at(self.game, state)
            if deadline is not None:
                self._turn_times[state.turn_seq] = deadline - state.policy.turn_time_s
            return deadline
        return began + state.policy.turn_time_s

    async def _start(self) -> None:
        """Read the log once: the delayed state is the state after the last event that is
        old enough; the newer events wait in :attr:`pending`."""
        events = await self.games.store.read(self.game.game_id)
        cutoff = self.clock() - self.delay_s
        shown = [e for e in events if _time(e) <= cutoff]
        if shown:
            last = shown[-1]
            state = await self.games.state_at(self.game, last.seq)
            self._show(last.seq, state, _time(last), shown)
        self.pending.extend(e for e in events if e.seq > self.seq)
        self.read_to = events[-1].seq if events else 0
        self.refilled_at = self.clock()
        self._started = True

    async def _refill(self) -> None:
        """Read the events the log gained since the last read."""
        if self.game.seq <= self.read_to:
            return
        if self.pending and self.clock() - self.refilled_at < REFILL_S:
            return
        fresh = await self.games.store.read(self.game.game_id, self.read_to + 1)
        self.pending.extend(fresh)
        if fresh:
            self.read_to = fresh[-1].seq
        self.refilled_at = self.clock()

    def _see_all(self) -> bool:
        state = self.state if self.state is not None else self.game.state
        return bool(state.policy.spectators_see_all)

    async def advance(self) -> bool:
        """Move the delayed state to the last event at least ``delay_s`` old: event by
        event when the spectator sees everything (each state is kept in :attr:`shown`),
        else in one fold. Returns True when it moved.

        Raises:
            ServiceError: ``GAME_BROKEN`` (the log does not fold to its hashes),
                ``UNAVAILABLE``.
        """
        async with self.lock:
            self.last_used = self.clock()
            if not self._started:
                await self._start()
                return self.state is not None
            await self._refill()
            cutoff = self.clock() - self.delay_s
            due: list[events_pb2.Event] = []
            while self.pending and _time(self.pending[0]) <= cutoff:
                due.append(self.pending.popleft())
            if not due:
                return False
            if self.state is None and due[0].seq != 1:
                self.state = await self.games.state_at(self.game, due[0].seq - 1)
            steps = [[e] for e in due] if self._see_all() else [due]
            for step in steps:
                state = await self.games.engine.fold(self.state, step)
                if state is None or state.state_hash != step[-1].state_hash:
                    raise ServiceError(
                        ErrorCode.GAME_BROKEN,
                        f"game {self.game.game_id} does not fold to its hash at seq {step[-1].seq}",
                    )
                self._show(step[-1].seq, state, _time(step[-1]), step)
            return True

    def next_due(self) -> float | None:
        """Unix time at which the next event held becomes old enough (None: none held)."""
        return _time(self.pending[0]) + self.delay_s if self.pending else None

    @property
    def finished(self) -> bool:
        """The delayed state is the game's end."""
        return self.state is not None and self.state.finished

    def since(self, seq: int | None) -> list[int]:
        """Seqs of the shown states after ``seq``, oldest first (None: the newest only;
        a ``seq`` older than the kept states: all kept)."""
        if self.state is None:
            return []
        if seq is None:
            return [self.seq]
        return [s for s, _ in self.shown if s > seq]

    # ------------------------------------------------------------------ views

    def frame_seq(self, state: engine_pb2.GameState | None = None, seq: int | None = None) -> int:
        """The ``seq`` of a delayed view (default: of the delayed state): the game's seq
        when the spectator sees everything, else the spectator's own version (module
        docstring)."""
        state = self.state if state is None else state
        seq = self.seq if seq is None else seq
        assert state is not None
        if state.policy.spectators_see_all or not state.versions:
            return seq
        return int(state.versions[0])

    async def view(self, seq: int | None = None) -> tuple[int, bytes]:
        """``(frame seq, view JSON)`` of the state shown after event ``seq`` (default: the
        delayed state; rendered once per state), with the turn deadline of that moment.

        Raises:
            ServiceError: ``NOT_YET_VISIBLE`` (no event old enough yet), engine codes,
                ``UNAVAILABLE``.
        """
        if self.state is None:
            raise ServiceError(
                ErrorCode.NOT_YET_VISIBLE,
                f"game {self.game.game_id} has no event older than {self.delay_s:g} s yet",
            )
        seq = self.seq if seq is None else seq
        cached = self._views.get(seq)
        if cached is not None:
            return cached
        state = next((st for s, st in self.shown if s == seq), self.state)
        frame = self.frame_seq(state, seq)
        raw = (await self.games.engine.views(state, [0]))[0]
        deadline = iso_time(await self._deadline(state))
        view = merge_view(raw, self.game.game_id, frame, deadline, delay_s=self.delay_s)
        self._views[seq] = (frame, view)
        return frame, view


class Spectators:
    """The delayed feeds of this instance, by ``(game id, delay_s)``.

    Args:
        games: the game cache; clock: unix time (a test may pass its own).
    """

    def __init__(self, games: GameCache, clock: Callable[[], float] = time.time) -> None:
        self.games = games
        self.clock = clock
        self.feeds: dict[tuple[str, float], DelayedFeed] = {}

    def feed(self, game: Game, delay_s: float) -> DelayedFeed:
        """The feed of ``game`` seen ``delay_s`` late (made on first use); drops feeds
        unused for :data:`IDLE_S`. Check the delay first (:func:`check_delay`)."""
        now = self.clock()
        for key, feed in list(self.feeds.items()):
            if not feed.watchers and now - feed.last_used > IDLE_S:
                del self.feeds[key]
        key = (game.game_id, float(delay_s))
        feed = self.feeds.get(key)
        if feed is None or feed.game is not game:
            feed = self.feeds[key] = DelayedFeed(self.games, game, float(delay_s), self.clock)
        return feed

    async def view(self, game: Game, delay_s: float) -> tuple[int, bytes]:
        """``(seq, view)`` of ``game`` as it was ``delay_s`` ago (``GET /state?spectate=1``).

        Raises:
            ServiceError: ``SPECTATORS_AFTER_END``, ``MALFORMED`` (delay),
                ``NOT_YET_VISIBLE``, ``GAME_BROKEN``, ``UNAVAILABLE``.
        """
        feed = self.feed(game, check_delay(game, delay_s))
        await feed.advance()
        return await feed.view()

    async def watch(
        self,
        game: Game,
        delay_s: float,
        send: Callable[[str, int, bytes], object],
        closing: asyncio.Event,
    ) -> None:
        """Send ``("view", seq, view)`` now (once an event is old enough) and whenever the
        delayed view moves (when the spectator sees everything: once per event, in
        order), then ``("finished", seq, view)`` when the delayed state is the end (the
        final view is sent that way only, not also as a ``view``);
        returns then, or when ``closing`` is set.

        Raises:
            ServiceError: ``SPECTATORS_AFTER_END``, ``MALFORMED`` (delay), ``GAME_BROKEN``,
                ``UNAVAILABLE``.
        """
        feed = self.feed(game, check_delay(game, delay_s))
        feed.watchers += 1
        game.watchers += 1  # keeps the game in the cache while someone looks
        try:
            shown: int | None = None  # the game seq of the last state sent
            sent: int | None = None  # the frame seq last sent
            await feed.advance()
            if feed.state is None:
                # nothing was old enough when the spectator came: every event that falls
                # due from now on is its frame, the first ones too (events that fall due
                # together, as a create and the first joins do, are each shown)
                shown = 0
            while not closing.is_set():
                changed = game.changed
                await feed.advance()
                for seq in feed.since(shown):
                    shown = seq
                    if feed.finished and not feed.pending and seq == feed.seq:
                        break  # the final view goes once, as `finished` below
                    frame, view = await feed.view(seq)
                    if frame != sent:
                        await send("view", frame, view)
                        sent = frame
                if feed.finished and not feed.pending and shown == feed.seq:
                    frame, view = await feed.view()
                    await send("finished", frame, view)
                    return
                due = feed.next_due()
                timeout = None if due is None else max(due - self.clock(), 0.0) + 0.01
                if due is None and game.seq > feed.read_to:
                    timeout = REFILL_S  # events the feed has not read yet
                await _wait(changed if due is None else None, closing, timeout)
        finally:
            feed.watchers -= 1
            game.watchers -= 1


async def _wait(changed: asyncio.Event | None, closing: asyncio.Event, timeout: float | None) -> None:
    """Wait for ``changed`` (when given), ``closing`` or ``timeout`` seconds."""
    waits = {asyncio.ensure_future(closing.wait())}
    if changed is not None:
        waits.add(asyncio.ensure_future(changed.wait()))
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
