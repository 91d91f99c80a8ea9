"""The engine's run cache: running games kept between ticks (the packed tick path,
docs/architecture/ticking.md).

``Engine.Tick`` ships every running game's whole state each tick, both ways, and decodes,
re-encodes and hashes it. ``Engine.Run`` instead names games by id: the engine keeps
each running game in this cache — its last recorded state (the *base*), how many
generations it ran since (``done``) and the game now — and advances it in place. A
game's state is encoded, hashed and sent back only when its run is *recorded*: at the
checkpoint the caller plans, when the caller asks (``record``), or when the game leaves
``running`` (a stable board, the end). Views are rendered only for the players asked for.

An entry is found by ``(game_id, base_hash, done)``: a call naming another base or
another ``done`` (this replica restarted, the call was routed elsewhere before, a command
landed meanwhile) is a MISS, and the caller sends the item again with its base; the
entry is then rebuilt as ``tick(base, done)`` — deterministic, so every replica agrees.
Recording re-bases the entry on the recorded state (``done`` 0), so the next tick finds
it when the caller records it too. The cache is bounded (least recently used out).

Two kinds of runs keep "the game now":

* :class:`PlainRun`: the engine state object, advanced with ``engine.tick`` (any kind
  whose policy ticks: Life, campaign);
* packed Life runs (:mod:`engine.life.packed_runs`): boards stay bit-packed across
  ticks; hard-edged games of one size sit side by side in one pool
  (:mod:`engine.life.slots`) and advance together, one kernel call per generation.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

import engine
from cellwar.v1 import engine_pb2
from cellwar.v1.codes import ErrorCode
from engine import api as engine_api
from engine import envelope
from engine.api import dumps
from engine.envelope import Envelope
from engine.errors import GameError
from services.common.jsonwire import view_dumps

log = structlog.get_logger("cellwar.engine.runs")

#: Running games one engine process keeps at most (least recently used out). A 300x300
#: Life game costs ~170 kB here (its base state decoded, and its slot's planes, twice:
#: the kernel's double buffer).
MAX_GAMES = 16384

OK = engine_pb2.RunResult.OK
MISS = engine_pb2.RunResult.MISS
FAILED = engine_pb2.RunResult.FAILED


class Run(Protocol):
    """The game now, ``done`` generations after an entry's base."""

    @property
    def generation(self) -> int:
        """The generation reached."""
        ...

    @property
    def running(self) -> bool:
        """False once the game left ``running`` (stable board, finished)."""
        ...

    def state(self) -> Any:
        """The engine state now (as ``tick(base, done)`` gives it)."""
        ...

    def view_state(self) -> Any:
        """A state good for views now (may skip what views never show)."""
        ...

    def plan(self, checkpoint: int) -> None:
        """The run will be recorded once it holds ``checkpoint`` generations (0 = no
        plan)."""
        ...

    def rebase(self, state: Any) -> None:
        """The run was recorded as ``state``; count from there."""
        ...


class PlainRun:
    """A run kept as the engine state object itself, advanced with :func:`engine.tick`."""

    def __init__(self, state: Any) -> None:
        self._state = state
        self._summary = engine.summary(state)

    @property
    def generation(self) -> int:
        return self._summary.generation

    @property
    def running(self) -> bool:
        return self._summary.phase == "running"

    def advance(self, generations: int) -> int:
        """Run up to ``generations`` generations; returns how many ran."""
        before = self._summary.generation
        self._state = engine.tick(self._state, generations)
        self._summary = engine.summary(self._state)
        return self._summary.generation - before

    def state(self) -> Any:
        return self._state

    def view_state(self) -> Any:
        return self._state

    def plan(self, checkpoint: int) -> None:
        return None

    def rebase(self, state: Any) -> None:
        self._state = state


#: Builds the run of a state (``tick``-ready, upgraded) and advances groups of runs.
class RunKind(Protocol):
    """How runs of some states are kept and advanced (plain, packed)."""

    def accepts(self, state: Any) -> bool:
        """True when this kind keeps runs of ``state``."""
        ...

    def start(self, state: Any) -> Run:
        """The run of ``state`` (nothing run yet)."""
        ...

    def advance_planned(
        self, runs: Sequence[Run], generations: Sequence[int], checkpoints: Sequence[int]
    ) -> tuple[list[int], list[int], list[bool]]:
        """Plan each run's checkpoint (:meth:`Run.plan`; 0 keeps its plan), then advance
        it by up to its generations (stopping where it leaves ``running``). Returns, per
        run: the generations it ran, the generation it reached, whether it still runs."""
        ...

    def release(self, run: Run) -> None:
        """The run leaves the cache."""
        ...


class PlainKind:
    """Runs of any ticking state, one :func:`engine.tick` call each."""

    def accepts(self, state: Any) -> bool:
        return True

    def start(self, state: Any) -> Run:
        return PlainRun(state)

    def advance_planned(
        self, runs: Sequence[Run], generations: Sequence[int], checkpoints: Sequence[int]
    ) -> tuple[list[int], list[int], list[bool]]:
        ran = [run.advance(n) if n > 0 and run.running else 0 for run, n in zip(runs, generations, strict=True)]  # type: ignore[attr-defined]
        return ran, [run.generation for run in runs], [run.running for run in runs]

    def release(self, run: Run) -> None:
        return None


@dataclass(eq=False)
class Entry:
    """One cached running game.

    Attributes:
        game_id: the key.
        base: the state of the game's last recorded event (as decoded), ``env`` its
            envelope, ``base_hash`` its hash.
        done: generations run since ``base``.
        run: the game now; ``kind`` the :class:`RunKind` that keeps it.
    """

    game_id: str
    base: Any
    env: Envelope
    base_hash: str
    done: int
    run: Run
    kind: Any
    touched: float = field(default_factory=time.monotonic)


def _ticking_base(state: Any) -> Any:
    """The state a run starts from: under the current rules, as ``decide_tick`` ticks."""
    return engine_api.upgrade(state, engine.ENGINE_VERSION)


class RunCache:
    """Running games by id (module docstring); thread-safe.

    Args:
        to_proto / envelope_of / from_proto: the engine service's message converters
            (``to_proto(state, env, into)`` fills ``into`` when given).
        kinds: run kinds tried in order (the first that accepts a state keeps it); a
            :class:`PlainKind` is always last.
        max_games: entries kept at most.
    """

    def __init__(
        self,
        to_proto: Callable[[Any, Envelope | None, engine_pb2.GameState | None], engine_pb2.GameState],
        envelope_of: Callable[[engine_pb2.GameState], Envelope],
        from_proto: Callable[[engine_pb2.GameState], Any],
        kinds: Sequence[RunKind] = (),
        max_games: int = MAX_GAMES,
    ) -> None:
        self._to_proto = to_proto
        self._envelope_of = envelope_of
        self._from_proto = from_proto
        self.kinds: list[RunKind] = [*kinds, PlainKind()]
        self.max_games = max_games
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self._lock = threading.Lock()
        # one Run call at a time: the packed kinds advance shared buffers
        self._running = threading.Lock()
        self.misses = 0
        self.hits = 0
        self._back: list[Entry] = []
        self._released: list[Entry] = []  # forgotten while a Run was served

    def __len__(self) -> int:
        return len(self._entries)

    # ------------------------------------------------------------------ entries

    def _take(self, game_id: str) -> Entry | None:
        with self._lock:
            return self._entries.pop(game_id, None)

    def _put(self, entry: Entry) -> None:
        self._put_many([entry])

    def _put_many(self, entries: Sequence[Entry]) -> None:
        """Put entries back (most recently used), under one lock; past
        :attr:`max_games` the least recently used leave (their runs released)."""
        evicted: list[Entry] = []
        now = time.monotonic()
        with self._lock:
            for entry in entries:
                old = self._entries.pop(entry.game_id, None)
                if old is not None and old is not entry:
                    evicted.append(old)
                entry.touched = now
                self._entries[entry.game_id] = entry
            while len(self._entries) > self.max_games:
                evicted.append(self._entries.popitem(last=False)[1])
        for gone in evicted:
            gone.kind.release(gone.run)

    def _discard(self, entry: Entry) -> None:
        """Drop ``entry`` (a failed item) wherever it is, and release its run once."""
        self._back = [e for e in self._back if e is not entry]
        with self._lock:
            if self._entries.get(entry.game_id) is entry:
                del self._entries[entry.game_id]
        entry.kind.release(entry.run)

    def forget(self, game_id: str) -> None:
        """Drop the entry of ``game_id`` (a command changed the game). Its run is released
        at once when no ``Run`` is being served, else by that call when it ends (runs of
        a pool are released by the thread advancing it)."""
        entry = self._take(game_id)
        if entry is None:
            return
        if self._running.acquire(blocking=False):
            try:
                entry.kind.release(entry.run)
            finally:
                self._running.release()
        else:
            self._released.append(entry)

    def _release_forgotten(self) -> None:
        while self._released:
            gone = self._released.pop()
            gone.kind.release(gone.run)

    def _new_entry(
        self, game_id: str, base_msg: engine_pb2.GameState, done: int, checkpoint: int = 0
    ) -> Entry:
        """An entry rebuilt from the recorded base: ``tick(base, done)``.

        Raises:
            GameError: the base does not decode, or is not running.
        """
        base = self._from_proto(base_msg)
        env = self._envelope_of(base_msg)
        start = _ticking_base(base)
        if engine.summary(start).phase != "running":
            raise GameError(ErrorCode.WRONG_PHASE, f"game {game_id} is not running")
        kind = next(k for k in self.kinds if k.accepts(start))
        run = kind.start(start)
        run.plan(checkpoint)
        if done:
            ran = kind.advance_planned([run], [done], [0])[0][0]
            if ran != done:  # the caller saw `done` generations run: the rules say otherwise
                kind.release(run)
                raise GameError(
                    ErrorCode.INTERNAL,
                    f"game {game_id}: {done} generations were reported run, the rules run {ran}",
                )
        return Entry(game_id, base, env, base_msg.state_hash or engine.state_hash(base), done, run, kind)

    def base_of(self, game_id: str, base_hash: str) -> Any | None:
        """The recorded state ``base_hash`` when it is the base of ``game_id``'s entry
        (as decoded, not upgraded), else None."""
        with self._lock:
            entry = self._entries.get(game_id)
            return entry.base if entry is not None and entry.base_hash == base_hash else None

    def state_after(self, game_id: str, base_hash: str, done: int) -> Any | None:
        """The state ``done`` generations after the recorded state ``base_hash`` when the
        entry of ``game_id`` holds it (else None: compute it from the base)."""
        with self._lock:
            entry = self._entries.get(game_id)
            if entry is None or entry.base_hash != base_hash or entry.done != done:
                return None
        if not self._running.acquire(blocking=False):
            return None  # a Run is advancing the runs: do not wait for it
        try:
            if entry.base_hash != base_hash or entry.done != done:
                return None
            return entry.run.state()
        finally:
            self._running.release()

    # ------------------------------------------------------------------ Run

    def run(self, request: engine_pb2.RunRequest) -> engine_pb2.RunReply:
        """Serve ``Engine.Run`` (module docstring): each item's entry found (or rebuilt
        from its ``base``), advanced, recorded when due, with the views asked for. A
        failing item answers FAILED and never stops the others."""
        return self.run_many([request])[0]

    def run_many(self, requests: Sequence[engine_pb2.RunRequest]) -> list[engine_pb2.RunReply]:
        """Serve several ``Engine.Run`` calls as one (the calls of one tick, coalesced by
        the servicer): their items advance together, in one kernel call per generation
        for each pool of games; one reply per request, in order."""
        items = [item for r in requests for item in r.items]
        ids = [item.game_id for item in items]  # read once (each read makes a str)
        if len(requests) > 1 and len(set(ids)) != len(ids):  # a game twice: one at a time
            return [self.run(r) for r in requests]
        # the replies' results are filled in place (no copy of items or results)
        replies = [engine_pb2.RunReply() for _ in requests]
        results = []
        at = 0
        for r, reply in zip(requests, replies, strict=True):
            add = reply.results.add
            n = len(r.items)
            results += [add(game_id=gid) for gid in ids[at : at + n]]
            at += n
        with self._running:
            try:
                self._run(items, ids, results)
            finally:
                self._release_forgotten()
        return replies

    def _run(
        self, items: Sequence[engine_pb2.RunItem], ids: list[str], results: list[engine_pb2.RunResult]
    ) -> None:
        self._back: list[Entry] = []  # entries to put back at the end (one lock)
        try:
            self._run_items(items, ids, results)
        finally:
            back, self._back = self._back, []
            self._put_many(back)

    def _run_items(
        self, items: Sequence[engine_pb2.RunItem], ids: list[str], results: list[engine_pb2.RunResult]
    ) -> None:
        """Advance ``items`` (their game ids ``ids``; one result each, filled in)."""
        with self._lock:  # every item's entry taken at once
            pop = self._entries.pop
            taken = [pop(gid, None) for gid in ids]
        work: list[tuple[int, engine_pb2.RunItem, Entry]] = []
        hits = 0
        for i, (item, entry) in enumerate(zip(items, taken, strict=True)):
            if entry is not None and entry.base_hash == item.base_hash and entry.done == item.done:
                work.append((i, item, entry))
                hits += 1
                continue
            if entry is not None and self._peek(results[i], item, entry):
                continue
            if entry is not None:
                self._put(entry)  # another base or done: keep it for whoever it serves
            if not item.base.state:
                self.misses += 1
                results[i].status = MISS
                continue
            try:
                if item.base.state_hash and item.base.state_hash != item.base_hash:
                    raise GameError(ErrorCode.MALFORMED, "base does not have the named base_hash")
                entry = self._new_entry(item.game_id, item.base, item.done, item.checkpoint)
                work.append((i, item, entry))
            except GameError as exc:
                self._fail(results[i], exc.code, exc.message)
            except Exception as exc:  # noqa: BLE001 - one bad game must not stop the others
                log.exception("run_rebuild_crashed", game_id=item.game_id)
                self._fail(results[i], ErrorCode.INTERNAL, f"{type(exc).__name__}: {exc}")
        self.hits += hits
        by_kind: dict[int, list[tuple[int, engine_pb2.RunItem, Entry]]] = {}
        for w in work:
            by_kind.setdefault(id(w[2].kind), []).append(w)
        for group in by_kind.values():
            kind = group[0][2].kind
            checkpoints = [it.checkpoint for _, it, _ in group]
            try:
                ran, generation, running = kind.advance_planned(
                    [e.run for _, _, e in group], [it.generations for _, it, _ in group], checkpoints
                )
            except Exception:  # noqa: BLE001
                log.exception("run_advance_crashed", games=len(group))
                for i, _, entry in group:
                    kind.release(entry.run)
                    self._fail(results[i], ErrorCode.INTERNAL, "advance failed")
                continue
            back = self._back
            for (i, item, entry), n, gen, on, checkpoint in zip(
                group, ran, generation, running, checkpoints, strict=True
            ):
                entry.done = done = entry.done + n
                result = results[i]
                result.ran = n
                result.done = done
                result.generation = gen
                if on and not (checkpoint and done >= checkpoint) and not item.record and not len(item.view_players):
                    back.append(entry)  # the common tick: nothing recorded, no views
                    continue
                try:
                    self._finish(result, item, entry, stopped=not on)
                except GameError as exc:
                    self._discard(entry)
                    self._fail(result, exc.code, exc.message)
                except Exception as exc:  # noqa: BLE001
                    log.exception("run_record_crashed", game_id=item.game_id)
                    self._discard(entry)
                    self._fail(result, ErrorCode.INTERNAL, f"{type(exc).__name__}: {exc}")

    def _peek(self, result: engine_pb2.RunResult, item: engine_pb2.RunItem, entry: Entry) -> bool:
        """A views-only item (no generations, no record, no base) on a run that went
        further than the caller knows: answer the views now and leave the run as it is
        (a GetView racing the holder's ticks)."""
        if (
            item.generations
            or item.record
            or item.base.state
            or entry.base_hash != item.base_hash
            or entry.done < item.done
        ):
            return False
        self._put(entry)
        state = entry.run.view_state()
        result.done = entry.done
        result.generation = entry.run.generation
        result.views.extend(
            view_dumps(engine.get_visible_state(state, pid or None)) for pid in item.view_players
        )
        return True

    @staticmethod
    def _fail(result: engine_pb2.RunResult, code: str, message: str) -> None:
        log.warning("run_failed", game_id=result.game_id, code=code, error=message)
        result.status = FAILED
        result.error = f"{code}: {message}"

    def _finish(
        self, result: engine_pb2.RunResult, item: engine_pb2.RunItem, entry: Entry, *, stopped: bool
    ) -> None:
        """Record when due (the run counted in ``entry.done`` and ``result`` already),
        render the views, put the entry back."""
        due = item.record or (item.checkpoint and entry.done >= item.checkpoint)
        view_state = None
        if (stopped or due) and (entry.done or stopped):
            after = entry.run.state()
            drafts, after, env = envelope.ticked(entry.base, entry.env, after)
            result.events.extend(
                engine_pb2.EventDraft(
                    type=d.type, actor=d.actor, payload=dumps(d.payload), state_hash=d.state_hash
                )
                for d in drafts
            )
            self._to_proto(after, env, result.state)
            view_state = after
            if stopped:
                entry.kind.release(entry.run)
            else:  # re-based on the recorded state: the next tick names it
                entry.base, entry.env, entry.base_hash, entry.done = (
                    after,
                    env,
                    result.state.state_hash,
                    0,
                )
                entry.run.rebase(after)
                self._back.append(entry)
        else:
            self._back.append(entry)
        if item.view_players:
            if view_state is None:
                view_state = entry.run.view_state()
            result.views.extend(
                view_dumps(engine.get_visible_state(view_state, pid or None)) for pid in item.view_players
            )
