"""``Engine.Decide`` by state hash (``state_cached``): the engine takes the state from its
caches (states it decoded or returned, the bases of its run cache), answers exactly what
a call shipping the state answers, and says ``STATE_MISS`` (deciding nothing) when it
does not hold the state; the caller then ships it. Concurrent ``Engine.Run`` calls are
served as one batch with the same results."""

from __future__ import annotations

import asyncio
import json
import random
from collections import OrderedDict

import pytest

import engine
from cellwar.v1 import engine_pb2
from cellwar.v1.codes import CommandType
from engine.errors import GameError
from services.engine import server
from services.engine.server import RunBatcher, decide, new_run_cache, to_proto
from tests.engine.runkit import running_game

OK, MISS = engine_pb2.DecideReply.OK, engine_pb2.DecideReply.STATE_MISS


def _request(state_msg, command, actor, payload, *, cached: bool, game_id: str = "g"):
    request = engine_pb2.DecideRequest(
        command=engine_pb2.Command(type=command, actor=actor, payload=json.dumps(payload).encode()),
        game_id=game_id,
        state_cached=cached,
    )
    if state_msg is not None:
        request.state.CopyFrom(state_msg)
        if cached:
            request.state.ClearField("state")
    return request


def _outcome(request, runs=None):
    """The reply, or the refusal's code."""
    try:
        return decide(request, runs)
    except GameError as exc:
        return exc.code


def _same(a, b) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    assert a.status == b.status == OK
    assert [(e.type, e.actor, e.payload, e.state_hash) for e in a.events] == [
        (e.type, e.actor, e.payload, e.state_hash) for e in b.events
    ]
    assert a.state == b.state
    assert list(a.views) == list(b.views)


def _count_batches(runs) -> list[int]:
    """The sizes of the batches ``runs`` (a run cache) serves from now on, as they come."""
    batches: list[int] = []
    real = runs.run_many
    runs.run_many = lambda requests: batches.append(len(requests)) or real(requests)  # type: ignore[method-assign]
    return batches


def _life_commands(rnd: random.Random, state) -> tuple[str, int, dict]:
    view = engine.summary(state)
    actor = view.turn or rnd.randint(1, 2)
    if view.phase in ("placement", "redraw") and rnd.random() < 0.7:
        x0, y0, x1, y1 = engine.get_visible_state(state, actor)["zone"]
        cells = [[rnd.randrange(x0, x1), rnd.randrange(y0, y1)] for _ in range(rnd.randint(1, 30))]
        return (
            CommandType.ACTION,
            actor,
            {"type": rnd.choice(["place", "place", "erase"]), "cells": cells},
        )
    if view.phase in ("placement", "redraw") and rnd.random() < 0.8:
        return CommandType.END_TURN, actor, {}
    action = rnd.choice(
        [
            {"type": "pause"},
            {"type": "resume"},
            {"type": "speed", "multiplier": rnd.choice([1, 2, 4])},
        ]
    )
    return CommandType.ACTION, actor, action


def _cellwar_commands(rnd: random.Random, state) -> tuple[str, int, dict]:
    actor = engine.summary(state).turn
    actions = engine.get_valid_actions(state, actor, None)
    if actions and rnd.random() < 0.8:
        a = rnd.choice(actions)
        return CommandType.ACTION, actor, {"unit_id": a["unit_id"], "dx": a["dx"], "dy": a["dy"]}
    return CommandType.END_TURN, actor, {}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["life", "cellwar"])
def test_a_cached_decide_equals_a_shipped_state_decide(kind, seed):
    rnd = random.Random(seed)
    config = (
        {"width": 24, "height": 16, "budget": 60} if kind == "life" else {"width": 8, "height": 8}
    )
    created = decide(
        _request(None, CommandType.CREATE, 0, {"kind": kind, "config": config}, cached=False)
    )
    msg = created.state
    for name in ("a", "b"):
        msg = decide(_request(msg, CommandType.JOIN, 0, {"name": name}, cached=False)).state
    pick = _life_commands if kind == "life" else _cellwar_commands
    decided = 0
    for _ in range(40):
        state = server.from_proto(msg)
        if engine.summary(state).finished:
            break
        command, actor, payload = pick(rnd, state)
        # by hash first: once the game has moved on from ``msg``, the engine drops it
        by_hash = _outcome(_request(msg, command, actor, payload, cached=True))
        shipped = _outcome(_request(msg, command, actor, payload, cached=False))
        _same(shipped, by_hash)
        if not isinstance(shipped, str):
            msg, decided = shipped.state, decided + 1
    assert decided >= 10


def test_a_miss_decides_nothing_and_the_shipped_state_is_decided():
    created = decide(
        _request(
            None,
            CommandType.CREATE,
            0,
            {"kind": "cellwar", "config": {"width": 8, "height": 8}},
            cached=False,
        )
    )
    server._DECODED.clear()
    request = _request(created.state, CommandType.JOIN, 0, {"name": "a"}, cached=True)
    reply = decide(request)
    assert reply.status == MISS and not reply.events and not reply.state.state
    again = decide(_request(created.state, CommandType.JOIN, 0, {"name": "a"}, cached=False))
    assert again.status == OK and [e.type for e in again.events] == ["PlayerJoined"]
    # the state returned is kept: the next command may name it
    follow = decide(_request(again.state, CommandType.JOIN, 0, {"name": "b"}, cached=True))
    assert follow.status == OK and follow.state.players_joined == 2


@pytest.fixture
def empty_cache(monkeypatch):
    """The engine's decoded-state cache (module state, one per process) empty for the test."""
    monkeypatch.setattr(server, "_DECODED", OrderedDict())
    monkeypatch.setattr(server, "_LATEST", {})
    monkeypatch.setattr(server, "_HOLDERS", {})
    monkeypatch.setattr(server, "_decoded_bytes", 0)


def _created(game_id: str):
    config = {"kind": "cellwar", "config": {"width": 8, "height": 8}}
    return decide(_request(None, CommandType.CREATE, 0, config, cached=False, game_id=game_id))


def _cached(msg) -> bool:
    return server.cached_state(msg.state_hash) is not None


def test_a_game_keeps_only_the_last_state_it_was_given(empty_cache):
    created = _created("g1")
    joined = decide(_request(created.state, CommandType.JOIN, 0, {"name": "a"}, cached=True, game_id="g1"))
    second = decide(_request(joined.state, CommandType.JOIN, 0, {"name": "b"}, cached=True, game_id="g1"))
    assert [_cached(r.state) for r in (created, joined, second)] == [False, False, True]
    assert list(server._DECODED) == [second.state.state_hash]
    assert server._decoded_bytes == len(second.state.state)
    # a retry that names a state the game left is a miss; shipped, it is decided again
    retry = _request(joined.state, CommandType.JOIN, 0, {"name": "b"}, cached=True, game_id="g1")
    assert decide(retry).status == MISS
    again = decide(_request(joined.state, CommandType.JOIN, 0, {"name": "b"}, cached=False, game_id="g1"))
    assert again.state == second.state and _cached(second.state)
    # the base it shipped was the game's last state only until the decide returned
    assert list(server._DECODED) == [second.state.state_hash]
    assert server._LATEST == {"g1": second.state.state_hash}


def test_a_state_shipped_after_a_miss_is_dropped_once_the_game_moves_on(empty_cache):
    created = _created("g1")
    joined = decide(_request(created.state, CommandType.JOIN, 0, {"name": "a"}, cached=True, game_id="g1"))
    server._DECODED.clear()  # as after a restart of the engine
    server._LATEST.clear()
    server._HOLDERS.clear()
    server._decoded_bytes = 0
    named = _request(joined.state, CommandType.JOIN, 0, {"name": "b"}, cached=True, game_id="g1")
    assert decide(named).status == MISS
    shipped = decide(_request(joined.state, CommandType.JOIN, 0, {"name": "b"}, cached=False, game_id="g1"))
    assert shipped.status == OK and shipped.state.players_joined == 2
    assert list(server._DECODED) == [shipped.state.state_hash]
    assert server._decoded_bytes == len(shipped.state.state)
    # a refused command leaves the game on the state it shipped
    refused = _request(shipped.state, CommandType.JOIN, 0, {"name": "c"}, cached=False, game_id="g1")
    assert _outcome(refused) == "GAME_FULL"
    assert list(server._DECODED) == [shipped.state.state_hash]
    assert server._LATEST == {"g1": shipped.state.state_hash}


def test_a_state_two_games_are_on_stays_until_both_leave_it(empty_cache):
    a, b = _created("ga"), _created("gb")
    assert a.state.state_hash == b.state.state_hash  # the same config: the same state
    a1 = decide(_request(a.state, CommandType.JOIN, 0, {"name": "x"}, cached=True, game_id="ga"))
    assert _cached(b.state) and _cached(a1.state)  # gb is still on it
    b1 = decide(_request(b.state, CommandType.JOIN, 0, {"name": "y"}, cached=True, game_id="gb"))
    assert b1.status == OK and not _cached(b.state)
    assert server._LATEST == {"ga": a1.state.state_hash, "gb": b1.state.state_hash}


def test_what_the_bound_evicts_leaves_the_last_state_table(empty_cache, monkeypatch):
    monkeypatch.setattr(server, "_DECODED_MAX_BYTES", 5 * len(_created("g0").state.state))
    rnd = random.Random(7)
    last = {}
    for step in range(200):
        game_id = f"g{rnd.randrange(12)}"
        msg = last.get(game_id) or _created(game_id).state
        reply = _outcome(_request(msg, CommandType.JOIN, 0, {"name": f"p{step}"}, cached=False, game_id=game_id))
        if not isinstance(reply, str):
            last[game_id] = reply.state
    assert 0 < server._decoded_bytes <= server._DECODED_MAX_BYTES
    assert server._decoded_bytes == sum(len(data) for data, _ in server._DECODED.values())
    assert set(server._LATEST.values()) <= set(server._DECODED)
    assert {g for games in server._HOLDERS.values() for g in games} == set(server._LATEST)
    assert all(server._LATEST[g] == h for h, games in server._HOLDERS.items() for g in games)


def test_a_running_game_is_found_as_the_base_of_its_run():
    game = running_game(3, 40, 30)
    base = to_proto(game)
    runs = new_run_cache()
    item = engine_pb2.RunItem(game_id="g", base_hash=base.state_hash, generations=3, base=base)
    assert runs.run(engine_pb2.RunRequest(items=[item])).results[0].done == 3
    server._DECODED.clear()
    pause = {"type": "pause"}
    request = _request(base, CommandType.ACTION, 1, pause, cached=True)
    request.generations_before = 3
    cached = decide(request, runs)
    shipped_request = _request(base, CommandType.ACTION, 1, pause, cached=False)
    shipped_request.generations_before = 3
    _same(cached, decide(shipped_request, new_run_cache()))
    assert cached.ticked == 1 and cached.state.phase == "paused"


def test_concurrent_run_calls_are_one_batch_with_the_same_results():
    games = [running_game(20 + k, 40, 30) for k in range(6)]
    bases = [to_proto(g) for g in games]

    def request(ks):
        return engine_pb2.RunRequest(
            items=[
                engine_pb2.RunItem(
                    game_id=f"g{k}",
                    base_hash=bases[k].state_hash,
                    generations=2,
                    base=bases[k],
                    view_players=[0],
                )
                for k in ks
            ]
        )

    runs = new_run_cache()
    batches = _count_batches(runs)
    batcher = RunBatcher(runs)

    async def together():
        return await asyncio.gather(*(batcher.run(request(ks)) for ks in ([0, 1], [2, 3, 4], [5])))

    replies = asyncio.run(together())
    assert batches == [3]
    alone = new_run_cache().run(request(range(6))).results
    got = [r for reply in replies for r in reply.results]
    assert [(r.game_id, r.done, r.generation, list(r.views)) for r in got] == [
        (r.game_id, r.done, r.generation, list(r.views)) for r in alone
    ]


def test_the_session_client_names_the_state_and_ships_it_on_a_miss(monkeypatch):
    """The session's engine client sends a command with the state's hash only; on
    ``STATE_MISS`` it sends it again with the state (services/session/adapters/engine_client.py)."""
    from services.session.adapters.engine_client import EngineClient

    seen: list[tuple[bool, bool]] = []
    real = server.decide

    def spy(request, runs=None):
        seen.append((request.state_cached, bool(request.state.state)))
        return real(request, runs)

    monkeypatch.setattr(server, "decide", spy)

    async def scenario():
        srv, port = await server.create_server("127.0.0.1:0")
        client = EngineClient(f"127.0.0.1:{port}", timeout=10)
        try:
            config = json.dumps({"kind": "cellwar", "config": {"width": 8, "height": 8}}).encode()
            created = await client.decide(None, CommandType.CREATE, 0, config)
            joined = await client.decide(created.state, CommandType.JOIN, 0, b'{"name": "a"}')
            server._DECODED.clear()  # as after a restart, or on another replica
            second = await client.decide(joined.state, CommandType.JOIN, 0, b'{"name": "b"}')
            return joined, second
        finally:
            await client.close()
            await srv.stop(0)

    joined, second = asyncio.run(scenario())
    assert [e.type for e in joined.events] == ["PlayerJoined"]
    assert second.state.players_joined == 2 and second.status == OK
    # create ships nothing; join by hash (hit); join by hash (miss), then shipped
    assert seen == [(False, False), (True, False), (True, False), (False, True)]


def test_the_calls_of_one_batch_id_wait_for_each_other():
    game = running_game(40, 40, 30)
    base = to_proto(game)
    runs = new_run_cache()
    batches = _count_batches(runs)
    batcher = RunBatcher(runs, wait_s=0.002, batch_wait_s=5.0)

    def request(k):
        item = engine_pb2.RunItem(
            game_id=f"g{k}", base_hash=base.state_hash, generations=1, base=base
        )
        return engine_pb2.RunRequest(items=[item], batch="tick1", batch_calls=2)

    async def late_second():
        first = asyncio.ensure_future(batcher.run(request(0)))
        await asyncio.sleep(0.05)  # far past the coalescing wait
        second = await batcher.run(request(1))
        return await first, second

    first, second = asyncio.run(late_second())
    assert batches == [2]
    assert first.results[0].done == second.results[0].done == 1


def test_the_session_client_sends_a_tick_as_one_batch(monkeypatch):
    """The engine client cuts a tick into calls and marks them as one batch; the engine
    serves them as one (services/session/adapters/engine_client.py)."""
    from services.session.adapters import engine_client
    from services.session.adapters.engine_client import EngineClient

    monkeypatch.setattr(engine_client, "RUN_CHUNK_ITEMS", 2)
    game = running_game(41, 40, 30)
    base = to_proto(game)
    runs = new_run_cache()
    batches = _count_batches(runs)
    items = [
        engine_pb2.RunItem(game_id=f"g{k}", base_hash=base.state_hash, generations=1, base=base)
        for k in range(5)
    ]

    async def scenario():
        srv, port = await server.create_server("127.0.0.1:0", runs=runs)
        client = EngineClient(f"127.0.0.1:{port}", timeout=10)
        try:
            return await client.run(items)
        finally:
            await client.close()
            await srv.stop(0)

    results = asyncio.run(scenario())
    assert [r.game_id for r in results] == [f"g{k}" for k in range(5)]
    assert all(r.done == 1 for r in results)
    assert batches == [3]
