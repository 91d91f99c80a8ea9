"""The packed tick path and replays in the session's service layer
(docs/architecture/ticking.md), on the in-memory fakes (tests/support/fakes.py: the real
rules and the engine service's run cache in process, no NATS, no gRPC).

* A running game's generations are not recorded per tick: one ``GenerationsTicked{n}``
  at a checkpoint, when the board stabilises, or before a command (in the command's
  own append); every recorded hash equals the fold of the log (the plain path).
* The engine's run cache may lose a game (restart, another replica): the run is rebuilt
  from the last recorded state, with the same result.
* ``state_at`` (replays) folds from the nearest snapshot or kept state; scrubbing is
  served from the replay cache; a log without snapshots gets them filled in.
"""

from __future__ import annotations

import json

import pytest

import engine
from cellwar.v1.codes import CommandType, EventType
from services.common.jsonwire import dumps
from services.engine.server import new_run_cache
from services.session.domain.commands import Command
from services.session.entrypoints.ticker import RunPeek, Ticker
from services.session.service_layer.cache import GameCache
from services.session.service_layer.loop import CommandLoop
from services.session.service_layer.projections import SnapshotProjection
from tests.support.fakes import InProcessEngine, MemoryBackend, MemoryEventLog, MemorySnapshots

#: A torus: two gliders side by side never meet and never settle.
GLIDERS = {"width": 40, "height": 40, "players": 2, "budget": 200, "torus": True, "max_generations": 100_000}
GLIDER_1 = [[6, 5], [7, 6], [5, 7], [6, 7], [7, 7]]
GLIDER_2 = [[26, 5], [27, 6], [25, 7], [26, 7], [27, 7]]
#: Two blocks: stable at once.
BLOCKS = {"width": 20, "height": 20, "players": 2, "budget": 20}


class Leases:
    """This instance holds every lease (the lease machinery is tested on NATS)."""

    def holder(self, game_id: str) -> str:
        return "me"

    def holds(self, game_id: str) -> bool:
        return True

    async def acquire(self, game_ids) -> set[str]:
        return set(game_ids)


class Instance:
    def __init__(
        self,
        backend: MemoryBackend,
        snapshots: MemorySnapshots | None = None,
        unwatched_step_s: float = 0.125,
    ) -> None:
        self.store = MemoryEventLog(backend)
        self.engine = InProcessEngine()
        self.snapshots = snapshots or MemorySnapshots()
        leases = Leases()
        self.games = GameCache(
            self.store,
            self.snapshots,
            self.engine,
            snapshot_every=10,
            peek=RunPeek(leases, self.engine),
        )
        self.loop = CommandLoop(
            self.games,
            self.store,
            self.engine,
            projections=[SnapshotProjection(self.snapshots, self.store, 10)],
        )
        # 8 generations per second, a tick every 1/8 s, a checkpoint every 2 s; every game
        # steps every tick (as a watched game does), unless ``unwatched_step_s`` says
        self.ticker = Ticker(
            self.games, self.loop, leases, 8.0, 0.125, checkpoint_s=2.0, unwatched_step_s=unwatched_step_s
        )

    async def run(self, gid: str, type_: str, actor: int, payload: dict, key: str = ""):
        return await self.loop.handle(Command(gid, type_, actor, dumps(payload), key))

    async def start(self, config: dict, cells_1: list, cells_2: list) -> str:
        game = await self.loop.create("life", config)
        gid = game.game_id
        await self.run(gid, CommandType.JOIN, 0, {"name": "a"})
        await self.run(gid, CommandType.JOIN, 0, {"name": "b"})
        for pid, cells in ((1, cells_1), (2, cells_2)):
            await self.run(gid, CommandType.ACTION, pid, {"type": "place", "cells": cells})
            await self.run(gid, CommandType.END_TURN, pid, {})
        return gid

    async def ticks(self, n: int) -> None:
        for _ in range(n):
            await self.ticker.tick_once(0.125)


async def redraw_placements(a: Instance, gid: str) -> None:
    """Place single cells in turn while the game is in redraw (up to 30, none ending a
    turn): many events."""
    for k in range(30):
        if a.games.games[gid].state.phase != "redraw":
            break
        pid = 1 + k % 2
        cell = [2 + k // 4 + (10 if pid == 2 else 0), 6 + 2 * (k // 2 % 2)]
        await a.run(gid, CommandType.ACTION, pid, {"type": "place", "cells": [cell]})


def folds_to_every_hash(events) -> None:
    """Every recorded hash equals the fold of the log up to it (the plain path)."""
    state = None
    for e in events:
        state = engine.apply_event(
            state, e.type, e.actor, json.loads(e.payload), engine_version=e.engine_version
        )
        assert engine.state_hash(state) == e.state_hash, f"seq {e.seq} ({e.type})"


def counts(events) -> list[int]:
    return [json.loads(e.payload)["count"] for e in events if e.type == EventType.GENERATIONS_TICKED]


@pytest.fixture
def backend() -> MemoryBackend:
    return MemoryBackend()


async def test_ticks_are_not_recorded_until_the_checkpoint(backend):
    a = Instance(backend)
    gid = await a.start(GLIDERS, GLIDER_1, GLIDER_2)
    recorded = len(a.store.events(gid))
    await a.ticks(10)
    game = a.games.games[gid]
    assert len(a.store.events(gid)) == recorded  # 10 ticks, nothing written
    assert game.run_done == 10 and game.generation == 10
    assert json.loads((await a.games.view(game, 1))[1])["generation"] == 10
    await a.ticks(6)  # 16 generations: 2 s of running at speed 1
    events = a.store.events(gid)
    assert counts(events) == [16] and len(events) == recorded + 1
    assert game.run_done == 0 and game.state.generation == 16
    folds_to_every_hash(events)


async def test_the_checkpoints_of_one_tick_are_appended_together(backend):
    """Games whose checkpoints fall in the same tick have their appends in flight at
    once (the event store can commit them as one batch), each recorded as alone."""
    import asyncio

    a = Instance(backend)
    gids = [await a.start(GLIDERS, GLIDER_1, GLIDER_2) for _ in range(3)]
    before = {gid: len(a.store.events(gid)) for gid in gids}
    append, in_flight, most = a.store.append, [0], [0]

    async def slow_append(*args, **kwargs):
        in_flight[0] += 1
        most[0] = max(most[0], in_flight[0])
        try:
            await asyncio.sleep(0.01)  # an fsync's wait: the others start meanwhile
            return await append(*args, **kwargs)
        finally:
            in_flight[0] -= 1

    a.store.append = slow_append
    await a.ticks(16)  # 2 s of running: every game's checkpoint in the same tick
    assert most[0] == 3
    for gid in gids:
        events = a.store.events(gid)
        assert counts(events) == [16] and len(events) == before[gid] + 1
        assert a.games.games[gid].state.generation == 16
        folds_to_every_hash(events)


def steps_of(instance: Instance, gid: str) -> list[int]:
    """The generations of each ``Engine.Run`` item of game ``gid`` from now on (not
    counting an item sent again with its base after a MISS)."""
    steps: list[int] = []
    run = instance.engine.run

    async def counting(items):
        steps.extend(i.generations for i in items if i.game_id == gid and not i.base.state)
        return await run(items)

    instance.engine.run = counting
    return steps


async def test_a_game_nobody_watches_steps_every_half_second(backend):
    """Its generations run 4 at a time at every 4th tick (1 at the first): the same rate
    of 8 per second, a quarter of the items; its checkpoint is recorded at the step that
    reaches it, and every recorded hash is the fold's."""
    a = Instance(backend, unwatched_step_s=0.5)
    gid = await a.start(GLIDERS, GLIDER_1, GLIDER_2)
    steps = steps_of(a, gid)
    await a.ticks(16)
    game = a.games.games[gid]
    assert steps == [1, 4, 4, 4] and game.run_done == 13 and game.generation == 13
    await a.ticks(1)  # the step past the checkpoint (16 generations) records it
    events = a.store.events(gid)
    assert steps == [1, 4, 4, 4, 4] and counts(events) == [17]
    assert game.run_done == 0 and game.state.generation == 17
    folds_to_every_hash(events)
    # the same 17 generations a step at a time: the same board
    b = Instance(MemoryBackend())
    gid_b = await b.start(GLIDERS, GLIDER_1, GLIDER_2)
    await b.ticks(17)
    view_a = json.loads((await a.games.view(game, 1))[1])
    view_b = json.loads((await b.games.view(b.games.games[gid_b], 1))[1])
    assert view_a["generation"] == view_b["generation"] == 17
    assert view_a["board"] == view_b["board"]


async def test_a_watched_game_steps_every_tick_from_the_next_tick(backend):
    """A Watch stream opens between two steps: the next tick runs what the game owes and
    every tick after runs one generation; closed again, the game waits for the next
    common step."""
    a = Instance(backend, unwatched_step_s=0.5)
    gid = await a.start(GLIDERS, GLIDER_1, GLIDER_2)
    steps = steps_of(a, gid)
    await a.ticks(3)  # ticks 0..2: the first step (1), then owing 2
    game = a.games.games[gid]
    game.watching[1] = 1
    await a.ticks(3)  # ticks 3..5
    assert steps == [1, 3, 1, 1] and game.generation == 6
    game.watching[1] = 0
    await a.ticks(4)  # ticks 6..9: the common step at tick 8 (3 owed)
    assert steps == [1, 3, 1, 1, 3] and game.generation == 9


async def test_a_command_records_the_run_first_in_its_own_append(backend):
    a = Instance(backend)
    gid = await a.start(GLIDERS, GLIDER_1, GLIDER_2)
    await a.ticks(5)
    appends = backend.appends
    outcome = await a.run(gid, CommandType.ACTION, 1, {"type": "pause"}, key="k-pause")
    events = a.store.events(gid)
    assert backend.appends == appends + 1  # one append: the generations, then the command
    assert [e.type for e in events[-2:]] == [EventType.GENERATIONS_TICKED, "ControlChanged"]
    assert counts(events) == [5]
    assert events[-2].command_id == "" and events[-1].command_id.startswith("p1:k-pause")
    assert outcome.seq == events[-1].seq and outcome.player_id == 1
    assert json.loads((await a.games.view(outcome.game, 1))[1])["phase"] == "paused"
    folds_to_every_hash(events)
    # the retry is answered from the log, nothing more is written
    again = await a.run(gid, CommandType.ACTION, 1, {"type": "pause"}, key="k-pause")
    assert again.repeated and again.seq == outcome.seq and len(a.store.events(gid)) == len(events)


async def test_a_refused_command_leaves_the_run_going(backend):
    a = Instance(backend)
    gid = await a.start(GLIDERS, GLIDER_1, GLIDER_2)
    await a.ticks(3)
    before = len(a.store.events(gid))
    with pytest.raises(Exception):  # noqa: B017 - any rule refusal
        await a.run(gid, CommandType.ACTION, 1, {"type": "place", "cells": [[1, 1]]})  # running
    assert len(a.store.events(gid)) == before and a.games.games[gid].run_done == 3
    await a.ticks(13)
    assert counts(a.store.events(gid)) == [16]
    folds_to_every_hash(a.store.events(gid))


async def test_a_stable_board_is_recorded_at_once(backend):
    a = Instance(backend)
    gid = await a.start(BLOCKS, [[1, 1], [2, 1], [1, 2], [2, 2]], [[15, 1], [16, 1], [15, 2], [16, 2]])
    await a.ticks(1)
    events = a.store.events(gid)
    assert counts(events) == [1] and a.games.games[gid].state.phase == "redraw"
    folds_to_every_hash(events)


async def test_a_run_lost_by_the_engine_is_rebuilt_the_same(backend):
    a = Instance(backend)
    b = Instance(MemoryBackend())
    gid_a = await a.start(GLIDERS, GLIDER_1, GLIDER_2)
    gid_b = await b.start(GLIDERS, GLIDER_1, GLIDER_2)
    caches = [b.engine.runs]
    for step in range(40):
        await a.ticks(1)
        await b.ticks(1)
        if step % 7 == 3:  # b's engine restarts (or the call went to another replica)
            b.engine.runs = new_run_cache()
            caches.append(b.engine.runs)
    ea, eb = a.store.events(gid_a), b.store.events(gid_b)
    assert [e.state_hash for e in ea] == [e.state_hash for e in eb]
    assert counts(ea) == [16, 16] == counts(eb)
    assert a.engine.runs.misses == 1  # the first tick only
    assert sum(c.misses for c in caches) == len(caches)  # one per lost cache
    folds_to_every_hash(eb)


async def test_a_replay_folds_from_snapshots_and_kept_states(backend):
    snapshots = MemorySnapshots()
    a = Instance(backend, snapshots)
    gid = await a.start(BLOCKS, [[1, 1], [2, 1], [1, 2]], [[15, 1], [16, 1], [15, 2]])
    await a.ticks(2)  # the L-shapes become blocks: stable, redraw
    assert a.games.games[gid].state.phase == "redraw"
    await redraw_placements(a, gid)
    events = a.store.events(gid)
    assert len(events) > 25
    b = Instance(backend, MemorySnapshots())  # another instance, no snapshot at all
    game_b = await b.games.get(gid)
    # the first load filled snapshots in every 10 events
    assert sorted(b.snapshots.snaps[gid]) == [s for s in range(10, len(events), 10)]
    state = None
    for e in events:  # every replayed state is the fold from scratch
        state = engine.apply_event(state, e.type, e.actor, json.loads(e.payload), engine_version=e.engine_version)
        replayed = await b.games.state_at(game_b, e.seq)
        assert replayed.state_hash == engine.state_hash(state) == e.state_hash
    # scrubbing back over kept states: no snapshot read, no event read, no fold
    folds = b.engine.calls.get("Fold", 0)
    for seq in range(len(events) - 1, 0, -3):
        await b.games.state_at(game_b, seq)
    assert b.engine.calls.get("Fold", 0) == folds and b.games.replays.hits >= 8
    # a view rendered once per kept state
    views = b.engine.calls.get("Views", 0)
    first = await b.games.replay_view(game_b, 5, 0)
    assert await b.games.replay_view(game_b, 5, 0) == first
    assert b.engine.calls.get("Views", 0) == views + 1


async def test_a_turns_snapshot_is_the_latest_and_history_is_kept_every_snapshot_every_events(backend):
    """The snapshot after a turn or a change of phase or turn only replaces the game's
    latest; one is kept as history (its own key and the index: what replays of earlier
    events fold from) at least every ``snapshot_every`` events (10 here), and only then."""
    snapshots = MemorySnapshots()
    puts: list[tuple[int, bool]] = []
    put = snapshots.put

    async def recording_put(game_id, snap, **kw):
        puts.append((snap.seq, kw.get("history", True)))
        return await put(game_id, snap, **kw)

    snapshots.put = recording_put
    a = Instance(backend, snapshots)
    gid = await a.start(BLOCKS, [[1, 1], [2, 1], [1, 2]], [[15, 1], [16, 1], [15, 2]])
    await a.ticks(2)  # the L-shapes become blocks: stable, redraw
    await redraw_placements(a, gid)
    events = a.store.events(gid)
    assert len(events) == 38
    # created (1), the second join starts the placement (3), two turns ended (5, 7), the
    # tick that recorded the redraw (8): the latest only; then history every 10 events
    assert puts == [(1, False), (3, False), (5, False), (7, False), (8, False), (10, True), (20, True), (30, True)]
    assert sorted(snapshots.snaps[gid]) == [10, 20, 30]
    latest = await snapshots.latest(gid)
    assert (latest.seq, latest.state.state_hash) == (30, events[29].state_hash)
    assert (await snapshots.at_or_before(gid, 36)).seq == 30
    assert (await snapshots.at_or_before(gid, 29)).seq == 20  # the latest is past 29
    assert await snapshots.at_or_before(gid, 9) is None  # the turns' snapshots were replaced
    # a replay of any event folds from the nearest history snapshot or the start
    game = a.games.games[gid]
    for e in events:
        assert (await a.games.state_at(game, e.seq)).state_hash == e.state_hash


async def test_a_rebuild_reads_from_its_snapshot_and_old_keys_when_needed(backend):
    snapshots = MemorySnapshots()
    a = Instance(backend, snapshots)
    gid = await a.start(BLOCKS, [[1, 1], [2, 1], [1, 2]], [[15, 1], [16, 1], [15, 2]])
    await a.run(gid, CommandType.ACTION, 1, {"type": "speed", "multiplier": 2}, key="early")
    await a.ticks(2)
    for k in range(12):
        pid = 1 + k % 2
        cell = [3 + k // 2 + (10 if pid == 2 else 0), 9]
        await a.run(gid, CommandType.ACTION, pid, {"type": "place", "cells": [cell]})
    log = a.store.events(gid)
    assert max(snapshots.snaps[gid]) >= 10
    b = Instance(backend, snapshots)
    reads: list[tuple] = []
    real_read = b.store.read

    async def counting_read(game_id, from_seq=1, to_seq=None, **kw):
        reads.append((from_seq, to_seq))
        return await real_read(game_id, from_seq, to_seq, **kw)

    b.store.read = counting_read
    game = await b.games.get(gid)
    assert game.state.state_hash == log[-1].state_hash and game.commands_from > 1
    assert all(f == 1 and t == 1 or f >= game.commands_from for f, t in reads)  # never the whole log
    # a retry of a command recorded before the snapshot is answered from the log
    again = await b.run(gid, CommandType.ACTION, 1, {"type": "speed", "multiplier": 2}, key="early")
    assert again.repeated and game.commands_from == 1
    assert len(b.store.events(gid)) == len(log)
