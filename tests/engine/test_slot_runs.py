"""Batched ticking changes nothing (docs/architecture/ticking.md "Ticking"): hard-edged
running Life games kept side by side in one pool (engine/life/slots.py) and advanced by
one kernel call per generation for all of them reach, generation for generation, the
state the plain path reaches (``engine.life.game.tick``), and stop where it stops; the
engine's ``Run`` of N random games in one call answers exactly what N calls of one game
each answer (events, states, hashes, views)."""

from __future__ import annotations

import random

import pytest

import engine
from cellwar.v1 import engine_pb2
from engine.api import encode_state
from engine.life import game as life
from engine.life import slots
from engine.life.slots import SlotPool, SlotRun
from services.engine.server import new_run_cache, to_proto
from tests.engine.runkit import (
    assert_records_go_on,
    assert_same_as_plain,
    games_of_one_shape,
    running_game,
)


def hard_games(seed: int) -> tuple[list, int]:
    """Several running hard-edged games of one random shape, and a checkpoint."""
    return games_of_one_shape(seed, tori=False, most=6)


@pytest.mark.parametrize(
    ("seed", "native"), [(seed, True) for seed in range(40)] + [(seed, False) for seed in range(20)]
)
def test_slot_runs_reach_the_plain_states_and_stop_where_it_stops(seed, native):
    """Both kernels: the native one (engine/life/_native.c, the default where it is built)
    and the numpy circuits."""
    games, checkpoint = hard_games(seed)
    rnd = random.Random(seed)
    pool = (
        SlotPool(
            games[0].config.height,
            games[0].config.width,
            (1, 2) if games[0].config.players == 2 else (1, 2, 3, 4),
            native=native,
        )
        if games
        else None
    )
    runs = [SlotRun(g, pool) for g in games]
    for run in runs:
        run.plan(checkpoint)
    while any(run.running and run.done < checkpoint for run in runs):
        # some games of the pool sit out some calls (other speeds, other calls)
        chosen = [r for r in runs if rnd.random() < 0.8] or runs
        n = rnd.randint(1, 4)
        slots.advance([(run, min(n, checkpoint - run.done)) for run in chosen])
        for base, run in zip(games, runs, strict=True):
            if run.done == checkpoint or not run.running:
                assert_same_as_plain(base, run)
    for base, run in zip(games, runs, strict=True):
        assert_same_as_plain(base, run)


@pytest.mark.parametrize("seed", range(6))
def test_a_recorded_slot_run_goes_on_from_its_record(seed):
    games, _ = hard_games(100 + seed)
    for base in games:
        run = SlotRun(base)
        assert_records_go_on(base, run, slots.advance)
        run.release()


def test_slots_are_given_back_and_reused_empty():
    game = running_game(5, 40, 30)
    pool = SlotPool(30, 40, (1, 2))
    first = SlotRun(game, pool)
    slots.advance([(first, 3)])
    slot = first.slot
    first.release()
    assert not pool.words([slot]).any()  # a freed slot holds an empty board
    again = SlotRun(game, pool)
    assert again.slot == slot
    slots.advance([(again, 3)])
    assert encode_state(again.state()) == encode_state(life.tick(game, 3))


def test_a_pool_grows_and_keeps_its_boards():
    games = [running_game(50 + k, 64, 20) for k in range(3)]
    pool = SlotPool(20, 64, (1, 2))
    runs = [SlotRun(games[k % 3], pool) for k in range(5 * pool.m + 3)]  # several growths
    slots.advance([(r, 2) for r in runs])
    for k, run in enumerate(runs):
        assert engine.state_hash(run.state()) == engine.state_hash(life.tick(games[k % 3], 2))


def _items(games, ids, bases, done, gens, checkpoint, with_base):
    return [
        engine_pb2.RunItem(
            game_id=gid,
            base_hash=bases[gid].state_hash,
            done=done[gid],
            generations=gens[gid],
            checkpoint=checkpoint,
            view_players=[0, 1],
            **({"base": bases[gid]} if with_base else {}),
        )
        for gid in ids
    ]


@pytest.mark.parametrize("seed", range(4))
def test_batched_run_equals_one_game_per_call(seed):
    """N random games (shapes mixed, tori too) ticked by one Run call per tick, against
    the same games ticked by one Run call per game (each its own cache; a game alone in
    a call is advanced alone, in a scratch pool): the same events, states, hashes,
    views, tick after tick."""
    rnd = random.Random(seed)
    games = {}
    for k in range(12):
        w, h = rnd.choice([(40, 30), (64, 20), (300, 300), (17, 23)])
        g = running_game(
            seed * 100 + k,
            w,
            h,
            players=rnd.choice([2, 4]),
            torus=rnd.random() < 0.2,
            fill=rnd.choice([0.05, 0.3]),
            max_generations=rnd.choice([20, 5000]),
        )
        if g is not None:
            games[f"g{k}"] = g
    batched, single = new_run_cache(), {gid: new_run_cache() for gid in games}
    state = {name: {gid: to_proto(g) for gid, g in games.items()} for name in ("b", "s")}
    done = {name: dict.fromkeys(games, 0) for name in ("b", "s")}
    live = set(games)
    for tick in range(30):
        gens = {gid: rnd.choice([1, 1, 2, 4]) for gid in games}
        ids = sorted(live)
        if not ids:
            break
        got_b = batched.run(
            engine_pb2.RunRequest(
                items=_items(games, ids, state["b"], done["b"], gens, 8, tick == 0)
            )
        ).results
        got_s = [
            single[gid]
            .run(
                engine_pb2.RunRequest(
                    items=_items(games, [gid], state["s"], done["s"], gens, 8, tick == 0)
                )
            )
            .results[0]
            for gid in ids
        ]
        for gid, rb, rs in zip(ids, got_b, got_s, strict=True):
            assert rb.status == rs.status == engine_pb2.RunResult.OK, (rb.error, rs.error)
            assert (rb.done, rb.generation, rb.ran) == (rs.done, rs.generation, rs.ran)
            assert [(e.type, e.payload, e.state_hash) for e in rb.events] == [
                (e.type, e.payload, e.state_hash) for e in rs.events
            ]
            assert rb.state.state == rs.state.state and rb.state.state_hash == rs.state.state_hash
            assert list(rb.views) == list(rs.views)
            for name, r in (("b", rb), ("s", rs)):
                if r.events:
                    state[name][gid], done[name][gid] = r.state, 0
                    if r.state.phase != "running":
                        live.discard(gid)
                else:
                    done[name][gid] = r.done


def test_a_slot_released_while_its_pool_advances_is_freed_after():
    game = running_game(6, 40, 30)
    pool = SlotPool(30, 40, (1, 2))
    kept, gone = SlotRun(game, pool), SlotRun(game, pool)
    pool.busy = True  # as while another thread advances the pool
    gone.release()
    assert pool.pending == [gone.slot] and gone.slot not in pool.free
    pool.busy = False
    slots.advance([(kept, 2)])
    assert pool.pending == [] and gone.slot in pool.free
    assert not pool.words([gone.slot]).any()
    assert encode_state(kept.state()) == encode_state(life.tick(game, 2))


def test_games_not_advanced_leave_the_pool_and_come_back_as_they_were():
    games = [running_game(70 + k, 40, 30) for k in range(4)]
    pool = SlotPool(30, 40, (1, 2))
    runs = [SlotRun(g, pool) for g in games]
    for run in runs:
        run.plan(9)
    slots.advance([(r, 2) for r in runs])
    slots.advance([(r, 3) for r in runs[:3]])  # the fourth is parked, not advanced
    assert runs[3].parked is not None and runs[3].done == 2
    assert int(pool.running.sum()) == 3
    slots.advance([(r, 4) for r in runs])  # back in a slot
    assert runs[3].parked is None
    for base, run, done in zip(games, runs, [9, 9, 9, 6], strict=True):
        assert run.done == done
        assert encode_state(run.state()) == encode_state(life.tick(base, done))


def test_a_run_forgotten_while_a_run_call_is_served_is_released_by_that_call():
    game = running_game(8, 40, 30)
    base = to_proto(game)
    cache = new_run_cache()
    item = engine_pb2.RunItem(game_id="g", base_hash=base.state_hash, generations=1, base=base)
    cache.run(engine_pb2.RunRequest(items=[item]))
    run = cache._entries["g"].run
    with cache._running:  # as while another thread serves a Run call
        cache.forget("g")
        assert not run.released and len(cache) == 0
    cache.run(engine_pb2.RunRequest())
    assert run.released


def test_the_kernel_sweeps_only_the_strips_up_to_the_last_game():
    game = running_game(9, 40, 30)
    pool = SlotPool(30, 40, (1, 2), strips=8, native=True)
    runs = [SlotRun(game, pool) for _ in range(pool.m + 1)]  # the lowest slots: two strips
    assert sorted(r.slot for r in runs) == list(range(pool.m + 1))
    slots.advance([(r, 3) for r in runs])
    assert pool.program.strips_run == 2
    for run in runs:
        assert encode_state(run.state()) == encode_state(life.tick(game, 3))


def test_after_a_peak_the_games_left_move_down_and_the_empty_strips_are_not_swept():
    games = [running_game(90 + k, 40, 30) for k in range(3)]
    pool = SlotPool(30, 40, (1, 2), native=True)
    runs = [SlotRun(games[k % 3], pool) for k in range(6 * pool.m)]
    slots.advance([(r, 2) for r in runs])
    assert pool.program.strips_run == 6
    # the peak passes: all but the last few games end, those in the top strip stay
    kept = runs[-3:]
    for run in runs[:-3]:
        run.release()
    assert pool.strips_used() == 6
    slots.advance([(r, 3) for r in kept])
    assert sorted(r.slot for r in kept) == [0, 1, 2]  # moved to the lowest free slots
    assert pool.program.strips_run == 1
    assert all(not pool.words([s]).any() for s in range(3, pool.size))  # the rest is empty
    for k, run in zip(range(6 * pool.m - 3, 6 * pool.m), kept, strict=True):
        assert run.done == 5
        assert encode_state(run.state()) == encode_state(life.tick(games[k % 3], 5))
    assert pool.strips == 2  # one strip used, and a quarter more (at least one): cut down
    fresh = SlotRun(games[0], pool)  # a new game takes the lowest free slot
    assert fresh.slot == 3
    more = [SlotRun(games[k % 3], pool) for k in range(3 * pool.m)]  # the pool grows again
    slots.advance([(r, 2) for r in [*kept, fresh, *more]])
    assert pool.strips >= 4 and pool.program.strips_run == 4
    assert encode_state(kept[0].state()) == encode_state(life.tick(games[(6 * pool.m - 3) % 3], 7))
    for k, run in enumerate(more):
        assert encode_state(run.state()) == encode_state(life.tick(games[k % 3], 2))
