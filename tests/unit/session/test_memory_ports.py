"""The in-memory ports (services/session/adapters/memory.py) keep the contracts the
session relies on: the event log's fence, de-duplication window and faults; the KV
subset's revisions, compare-and-set, TTLs and expiry markers, and watches; the
follower's feed and the pub/sub's wildcards. Two sessions built on one
:class:`MemoryServer` serve each other's games as two instances on one NATS do."""

from __future__ import annotations

import asyncio
import json

import nats.errors
import nats.js.errors
import pytest
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue

from cellwar.v1 import events_pb2
from services.common.nats.kv import KvMirror, put_with_ttl
from services.session.adapters.event_store import ConcurrencyError as StoreConcurrencyError
from services.session.adapters.leases import Leases
from services.session.adapters.memory import (
    MemoryBackend,
    MemoryEventLog,
    MemoryFollower,
    MemoryKeyValue,
    MemoryServer,
    subject_matches,
)
from services.session.bootstrap import bootstrap, memory_ports
from services.session.domain.commands import Command
from services.session.service_layer.ports import (
    ConcurrencyError,
    DuplicateCommandError,
    StoreUnavailable,
)
from tests.support.fakes import InProcessEngine
from tests.support.stack import make_settings


def draft(n: int) -> events_pb2.Event:
    return events_pb2.Event(type="ActionApplied", actor=1, payload=b"{}", state_hash=f"h{n}")


async def test_the_log_is_fenced_by_the_expected_last_seq():
    log = MemoryEventLog()
    stored = await log.append("g1", [draft(1), draft(2)], 0, "c1")
    assert [(e.seq, e.command_id, e.game_id) for e in stored] == [(1, "c1", "g1"), (2, "c1", "g1")]
    with pytest.raises(ConcurrencyError) as lost:
        await log.append("g1", [draft(3)], 1)
    assert lost.value.expected_last_seq == 1
    assert StoreConcurrencyError is ConcurrencyError  # the old name is the port's
    assert await log.last_seq("g1") == 2 and log.backend.races_lost == 1
    again = await log.append("g1", [draft(3)], 2, "c2", system=0)
    assert again[0].seq == 3
    assert [e.seq for e in await log.read("g1", 2)] == [2, 3]
    assert [e.seq for e in await log.read("g1", 1, 2)] == [1, 2]


async def test_a_command_id_is_a_duplicate_within_the_window_only():
    backend = MemoryBackend(duplicate_window_s=0.2)
    a, b = MemoryEventLog(backend), MemoryEventLog(backend)
    await a.append("g", [draft(1)], 0, "k")
    with pytest.raises(DuplicateCommandError):
        await b.append("g", [draft(2)], 1, "k")  # another instance, same id
    await b.append("other", [draft(1)], 0, "k")  # the id is scoped by game
    await asyncio.sleep(0.25)
    assert [e.seq for e in await b.append("g", [draft(2)], 1, "k")] == [2]
    # the first ``system`` events carry no command id and no message id
    mixed = await a.append("g", [draft(3), draft(4)], 2, "k2", system=1)
    assert [e.command_id for e in mixed] == ["", "k2"]


async def test_a_server_that_is_down_answers_store_unavailable():
    server = MemoryServer()
    log = MemoryEventLog(server.events)
    await log.append("g", [draft(1)], 0)
    server.down = True
    for call in (log.read("g"), log.last_seq("g"), log.append("g", [draft(2)], 1)):
        with pytest.raises(StoreUnavailable) as down:
            await call
        assert down.value.code == "UNAVAILABLE"
    kv = server.bucket("B")
    with pytest.raises(nats.errors.TimeoutError):
        await kv.put("k", b"v")
    server.down = False
    assert await log.last_seq("g") == 1


async def test_kv_revisions_and_compare_and_set():
    kv = MemoryKeyValue("B")
    first = await kv.create("k", b"1")
    with pytest.raises(nats.js.errors.KeyWrongLastSequenceError):
        await kv.create("k", b"again")
    second = await kv.update("k", b"2", last=first)
    with pytest.raises(nats.js.errors.KeyWrongLastSequenceError):
        await kv.update("k", b"3", last=first)
    entry = await kv.get("k")
    assert (entry.value, entry.revision) == (b"2", second) and second > first
    with pytest.raises(nats.js.errors.KeyWrongLastSequenceError):
        await kv.delete("k", last=first)
    await kv.delete("k", last=second)
    with pytest.raises(nats.js.errors.KeyNotFoundError):
        await kv.get("k")
    await kv.create("k", b"back")  # a deleted key may be created again
    assert await kv.keys() == ["k"]
    await kv.purge("k")
    with pytest.raises(nats.js.errors.NoKeysError):
        await kv.keys()


async def test_kv_ttls_and_expiry_markers_reach_watchers():
    kv = MemoryKeyValue("LEASES", ttl_s=0.15, expiry_markers=True)
    await kv.put("old", b"x")
    watcher = await kv.watch(">")
    assert (await watcher.updates(1)).key == "old"
    assert await watcher.updates(1) is None  # the current keys are all in
    await put_with_ttl(kv, "short", b"y", 0.05)  # nats.py's path: KeyValue._js.publish
    assert (await watcher.updates(1)).value == b"y"
    expired = await watcher.updates(1)
    assert (expired.key, expired.operation) == ("short", KV_PURGE)
    renewed = await kv.update("old", b"x2", last=(await kv.get("old")).revision)
    assert (await watcher.updates(1)).revision == renewed
    gone = await watcher.updates(1)
    assert (gone.key, gone.operation) == ("old", KV_PURGE)  # TTL counted from the update
    with pytest.raises(nats.js.errors.KeyNotFoundError):
        await kv.get("old")
    await kv.delete("nothing")
    assert (await watcher.updates(1)).operation == KV_DEL
    await watcher.stop()
    assert await watcher.updates(1) is KeyValue.KeyWatcher.STOP_ITER


async def test_the_kv_mirror_and_the_leases_run_unchanged_on_it():
    server = MemoryServer()
    seen: dict[str, bytes | None] = {}
    kv = server.bucket("GAME_LEASES", ttl_s=0.3, expiry_markers=True)
    mirror = KvMirror(kv, lambda key, value, rev: seen.__setitem__(key, value))
    await mirror.start()
    assert await mirror.wait_ready(1)
    lost: list[str] = []
    a = Leases(kv, "a", 0.3, on_lost=lost.append)
    b = Leases(server.bucket("GAME_LEASES"), "b", 0.3)
    await a.mirror.start()
    await b.mirror.start()
    assert await a.acquire(["g1", "g2"]) == {"g1", "g2"}
    await asyncio.sleep(0.01)
    assert seen == {"g1": b"a", "g2": b"a"} and b.holder("g1") == "a"
    assert await b.acquire(["g1"]) == set()  # held by a live instance
    await a.release("g2")
    await asyncio.sleep(0.01)
    assert seen["g2"] is None and b.holder("g2") is None
    await asyncio.sleep(0.4)  # a stops renewing: its lease expires, b may take it
    assert await b.acquire(["g1"]) == {"g1"}
    await asyncio.sleep(0.01)
    assert lost == ["g1"] and not a.holds("g1")
    for part in (mirror, a.mirror, b.mirror):
        await part.stop()
    server.close()


async def test_the_follower_feed_and_the_pub_sub():
    server = MemoryServer()
    got: list[tuple[str, int, int]] = []
    early = MemoryEventLog(server.events)
    await early.append("g", [draft(1)], 0)  # before the follower starts: not delivered
    follower = MemoryFollower(
        server.events, lambda gid, data, s: got.append((gid, events_pb2.Event.FromString(data).seq, s))
    )
    await follower.start()
    await early.append("g", [draft(2), draft(3)], 1)
    await MemoryEventLog(server.events).append("h", [draft(1)], 0)
    assert got == []  # delivered on the event loop, after the append
    await asyncio.sleep(0)
    assert got == [("g", 2, 2), ("g", 3, 3), ("h", 1, 4)]
    await follower.stop()
    await early.append("g", [draft(4)], 3)
    await asyncio.sleep(0)
    assert len(got) == 3

    assert subject_matches("games.*.progress", "games.g1.progress")
    assert not subject_matches("games.*.progress", "games.g1.interest")
    assert subject_matches("games.>", "games.g1.progress")
    assert not subject_matches("games.>", "games")
    one, two = server.connect(), server.connect()
    heard: list[tuple[str, bytes]] = []

    async def on_msg(msg) -> None:
        heard.append((msg.subject, msg.data))

    await two.subscribe("games.*.progress", cb=on_msg)
    await one.publish("games.g1.progress", b"p")
    await one.publish("games.g1.interest", b"i")
    await asyncio.sleep(0.01)
    assert heard == [("games.g1.progress", b"p")]
    await two.drain()
    assert two.is_closed
    await one.publish("games.g1.progress", b"late")
    await asyncio.sleep(0.01)
    assert heard == [("games.g1.progress", b"p")]


async def test_two_sessions_on_one_memory_server_follow_each_other():
    server = MemoryServer()
    apps = []
    for name in ("m-1", "m-2"):
        settings = make_settings("nats://no-nats.invalid:1", instance_id=name)
        ports = memory_ports(server, settings=settings, engine=InProcessEngine())
        apps.append(await bootstrap(ports, settings))
    a, b = apps
    try:
        game = await a.loop.create("life", {"width": 20, "height": 20, "players": 2, "budget": 5})
        seen_on_b = await b.games.get(game.game_id)  # loaded from the shared log
        assert seen_on_b.seq == 1
        await a.loop.handle(Command.join(game.game_id, "alice", "", "j1"))
        for _ in range(100):
            if seen_on_b.seq == 2:
                break
            await asyncio.sleep(0.01)
        assert seen_on_b.seq == 2 and seen_on_b.state.state_hash == game.state.state_hash
        entry = b.directory.entries[game.game_id]  # a's projection, b's mirror
        assert entry["players_joined"] == 1 and json.dumps(entry)
        assert a.nc is None and b.nc is None
    finally:
        for app in apps:
            await app.stop(grace=0.1)
        server.close()
