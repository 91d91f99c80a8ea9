"""``Engine.Decides``: the session's Decide over one long-lived stream per engine replica
(services/engine/server.py ``Decides``, services/session/adapters/engine_client.py
``DecideStream``; docs/architecture/batching.md "Session to engine").

Real gRPC on loopback: the engine servicer in this process, or ``python -m
services.engine`` as a child for the kill and pause cases. Every answer over the stream
is the unary call's: the same reply bytes, the same ServiceError code, message and seq,
the same fail-over when the engine goes, the same error past the deadline; an engine
without ``Decides`` gets unary calls."""

from __future__ import annotations

import asyncio
import json
import random
import signal

import grpc
import pytest

import engine
from cellwar.v1 import engine_pb2, engine_pb2_grpc
from cellwar.v1.codes import CommandType, ErrorCode
from engine.errors import GameError
from engine.reenact import LogMismatch
from services.common.errors import ServiceError
from services.engine import server
from services.engine.server import create_server, to_proto
from services.session.adapters.engine_client import ENGINE_UNREACHABLE, EngineClient
from tests.engine.runkit import running_game
from tests.engine.test_cached_decide import _cellwar_commands, _life_commands
from tests.support.stack import EngineProcess

pytestmark = pytest.mark.timeout(120)

CONFIGS = {"life": {"width": 24, "height": 16, "budget": 60}, "cellwar": {"width": 8, "height": 8}}


async def _outcome(client: EngineClient, state, command: str, actor: int, payload: bytes, **kw):
    """The reply's bytes, or the refusal as ``(code, message, seq)``."""
    try:
        reply = await client.decide(state, command, actor, payload, **kw)
    except ServiceError as exc:
        return (exc.code, exc.message, exc.seq)
    return reply.SerializeToString()


async def _engine(**kw):
    srv, port = await create_server("127.0.0.1:0", **kw)
    return srv, f"127.0.0.1:{port}"


async def _created(client: EngineClient) -> engine_pb2.GameState:
    """A new CellWar game's state, no seat taken."""
    payload = json.dumps({"kind": "cellwar", "config": CONFIGS["cellwar"]}).encode()
    return (await client.decide(None, CommandType.CREATE, 0, payload)).state


async def _new_game(client: EngineClient, kind: str) -> engine_pb2.GameState:
    payload = json.dumps({"kind": kind, "config": CONFIGS[kind]}).encode()
    msg = (await client.decide(None, CommandType.CREATE, 0, payload)).state
    for name in ("a", "b"):
        msg = (await client.decide(msg, CommandType.JOIN, 0, json.dumps({"name": name}).encode())).state
    return msg


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", ["life", "cellwar"])
async def test_a_random_game_answers_the_same_over_the_stream_as_unary(kind, seed):
    """Seeded random commands (legal ones, refused ones, a payload that is not JSON, an
    unknown command): each answer over the stream is the unary call's, byte for byte."""
    srv, target = await _engine()
    streamed = EngineClient(target, timeout=10)
    unary = EngineClient(target, timeout=10, decide="unary")
    rnd = random.Random(seed)
    try:
        msg = await _new_game(streamed, kind)
        pick = _life_commands if kind == "life" else _cellwar_commands
        decided = refused = 0
        for step in range(40):
            state = server.from_proto(msg)
            if engine.summary(state).finished:
                break
            command, actor, payload = pick(rnd, state)
            raw = json.dumps(payload).encode()
            if step % 13 == 5:
                raw = b"{not json"
            elif step % 13 == 9:
                command = "no_such_command"
            kw = {"game_id": f"g{seed}"}
            if step % 3 == 0:
                kw["view_players"] = [0, actor]
            over_stream = await _outcome(streamed, msg, command, actor, raw, **kw)
            over_unary = await _outcome(unary, msg, command, actor, raw, **kw)
            assert over_stream == over_unary
            if isinstance(over_stream, bytes):
                msg = engine_pb2.DecideReply.FromString(over_stream).state
                decided += 1
            else:
                refused += 1
        assert decided >= 8 and refused >= 3
        assert streamed.engine_version == unary.engine_version == engine.ENGINE_VERSION
        assert streamed.replicas[0].decides.opened == 1
        assert not streamed.replicas[0].decides.unary_only
        assert unary.replicas[0].decides is None
    finally:
        await streamed.close()
        await unary.close()
        await srv.stop(0)


async def test_a_refusal_with_a_seq_and_a_bug_answer_as_unary(monkeypatch):
    """A refusal carrying a seq and a rules bug (INTERNAL, logged) end the frame as the
    unary call ends: the same code, message and seq; the stream goes on."""
    real = server.decide

    def faulty(request, runs=None):
        if request.command.type == "mismatch":
            raise LogMismatch(ErrorCode.LOG_MISMATCH, 7, "state hash differs")
        if request.command.type == "bug":
            raise ZeroDivisionError("division by zero")
        return real(request, runs)

    monkeypatch.setattr(server, "decide", faulty)
    srv, target = await _engine()
    streamed = EngineClient(target, timeout=10)
    unary = EngineClient(target, timeout=10, decide="unary")
    try:
        msg = await _new_game(streamed, "cellwar")
        for command, expected in [
            ("mismatch", (ErrorCode.LOG_MISMATCH, "seq 7: state hash differs", 7)),
            ("bug", (ErrorCode.INTERNAL, "ZeroDivisionError: division by zero", None)),
        ]:
            assert await _outcome(streamed, msg, command, 1, b"{}") == expected
            assert await _outcome(unary, msg, command, 1, b"{}") == expected
        move = engine.get_valid_actions(server.from_proto(msg), 1, None)[0]
        payload = json.dumps({k: move[k] for k in ("unit_id", "dx", "dy")}).encode()
        again = await streamed.decide(msg, CommandType.ACTION, 1, payload)
        assert [e.type for e in again.events][:1] == ["ActionApplied"]
        assert streamed.replicas[0].decides.opened == 1
    finally:
        await streamed.close()
        await unary.close()
        await srv.stop(0)


async def test_a_frame_without_a_request_is_refused_and_the_stream_goes_on():
    srv, target = await _engine()
    channel = grpc.aio.insecure_channel(target)
    try:
        call = engine_pb2_grpc.EngineStub(channel).Decides()
        create = engine_pb2.DecideRequest(
            command=engine_pb2.Command(
                type=CommandType.CREATE,
                payload=json.dumps({"kind": "cellwar", "config": CONFIGS["cellwar"]}).encode(),
            )
        )
        await call.write(engine_pb2.DecideFrames(frames=[engine_pb2.DecideFrame(id=41)]))
        # two frames in one message, the first a repeat of a bad one
        await call.write(
            engine_pb2.DecideFrames(
                frames=[engine_pb2.DecideFrame(id=43), engine_pb2.DecideFrame(id=42, request=create)]
            )
        )
        await call.done_writing()
        answers = {}
        async for message in call:
            for answer in message.answers:
                answers[answer.id] = answer
        assert sorted(answers) == [41, 42, 43] and answers[43].code == ErrorCode.MALFORMED
        assert (answers[41].code, answers[41].message) == (
            ErrorCode.MALFORMED,
            "a decide frame carries a request",
        )
        assert not answers[41].HasField("seq") and not answers[41].HasField("reply")
        assert answers[42].code == "" and answers[42].engine_version == engine.ENGINE_VERSION
        assert answers[42].reply.state.kind == "cellwar"
        assert await call.code() == grpc.StatusCode.OK
    finally:
        await channel.close()
        await srv.stop(0)


async def test_decides_queued_together_travel_in_one_message_and_so_do_their_answers():
    """Frames queued while the stream's writer was busy leave in one ``DecideFrames``; the
    engine's answers ready together leave in one ``DecideAnswers``."""
    srv, target = await _engine()
    client = EngineClient(target, timeout=10)
    written: list[int] = []
    read: list[int] = []
    try:
        created = await _created(client)
        stream = client.replicas[0].decides
        messages, dispatch = stream._messages, stream._dispatch

        def counted_messages(outbox):
            out = messages(outbox)
            written.extend(len(m.frames) for m in out)
            return out

        def counted_dispatch(message):
            read.append(len(message.answers))
            dispatch(message)

        stream._messages, stream._dispatch = counted_messages, counted_dispatch
        payload = json.dumps({"name": "p"}).encode()
        replies = await asyncio.gather(
            *(client.decide(created, CommandType.JOIN, 0, payload) for _ in range(30))
        )
        assert [r.events[0].type for r in replies] == ["PlayerJoined"] * 30
        assert sum(written) == 30 and max(written) > 1, written
        assert sum(read) == 30 and max(read) > 1, read
    finally:
        await client.close()
        await srv.stop(0)


async def test_fifty_concurrent_decides_are_answered_by_id():
    """50 decides at once on one stream, small ones answered on the engine's loop and
    ones with ``generations_before`` in worker threads (so answers leave out of order):
    each gets its own request's unary answer."""
    srv, target = await _engine()
    streamed = EngineClient(target, timeout=30)
    unary = EngineClient(target, timeout=30, decide="unary")
    running = to_proto(running_game(5, 64, 40, torus=True, max_generations=100_000))
    try:
        created = await _created(streamed)
        calls = []
        for k in range(50):
            if k % 2:
                calls.append((running, CommandType.ACTION, 1, b'{"type": "pause"}', f"r{k}", 40 * k))
            else:
                name = json.dumps({"name": f"p{k}"}).encode()
                calls.append((created, CommandType.JOIN, 0, name, f"c{k}", 0))

        async def both(state, command, actor, payload, game_id, before):
            kw = {"game_id": game_id, "generations_before": before}
            return await _outcome(streamed, state, command, actor, payload, **kw), kw

        results = await asyncio.gather(*(both(*c) for c in calls))
        for (state, command, actor, payload, _, _), (got, kw) in zip(calls, results, strict=True):
            assert got == await _outcome(unary, state, command, actor, payload, **kw)
        assert [g for g, _ in results if not isinstance(g, bytes)] == []
        ticked = [engine_pb2.DecideReply.FromString(g) for g, _ in results[1::2]]
        assert [r.events[0].type for r in ticked] == ["GenerationsTicked"] * 25
        assert len({r.state.state_hash for r in ticked}) > 1
        assert streamed.replicas[0].decides.opened == 1
    finally:
        await streamed.close()
        await unary.close()
        await srv.stop(0)


async def _stalled_decides(client: EngineClient, state, n: int):
    """``n`` decides sent to a stopped engine, not answered yet."""
    tasks = [
        asyncio.ensure_future(
            client.decide(state, CommandType.JOIN, 0, json.dumps({"name": f"n{k}"}).encode(), game_id="g")
        )
        for k in range(n)
    ]
    await asyncio.sleep(0.3)
    assert not any(t.done() for t in tasks)
    return tasks


async def _after_restart(client: EngineClient, state) -> engine_pb2.DecideReply:
    """The first decide that succeeds once the engine serves again (the channel may still
    wait out its reconnect backoff, at most 1 s: grpcutil.GRPC_OPTIONS)."""
    for _ in range(50):
        try:
            return await client.decide(state, CommandType.JOIN, 0, b'{"name": "late"}', game_id="g")
        except ServiceError as exc:
            assert exc.code == ErrorCode.UNAVAILABLE
            await asyncio.sleep(0.1)
    raise AssertionError("no decide succeeded within 5 s of the restart")


async def test_an_engine_killed_mid_stream_fails_its_decides_as_unavailable_and_a_restart_serves():
    proc = await EngineProcess().start()
    client = EngineClient(proc.target, timeout=20)
    try:
        created = await _created(client)
        proc.proc.send_signal(signal.SIGSTOP)
        tasks = await _stalled_decides(client, created, 10)
        proc.kill()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(o, ServiceError) for o in outcomes), outcomes
        assert {o.code for o in outcomes} == {ErrorCode.UNAVAILABLE}
        assert {o.message for o in outcomes} == {ENGINE_UNREACHABLE}  # no address, no errno
        assert client.replicas[0].decides.opened >= 2  # the retry opened a stream again
        opened = client.replicas[0].decides.opened
        await proc.start()
        joined = await _after_restart(client, created)
        assert joined.state.players_joined == 1
        assert client.replicas[0].decides.opened > opened
        assert not client.replicas[0].decides.unary_only
    finally:
        await client.close()
        proc.kill()


async def test_an_engine_killed_mid_stream_moves_its_decides_to_the_other_replica():
    proc = await EngineProcess().start()
    srv, other = await _engine()
    client = EngineClient(f"{proc.target},{other}", timeout=20)
    unary = EngineClient(other, timeout=20, decide="unary")
    game_id = next(g for g in (f"g{k}" for k in range(100)) if client.affinity(g) == 0)
    try:
        created = await _created(client)
        proc.proc.send_signal(signal.SIGSTOP)
        tasks = [
            asyncio.ensure_future(
                client.decide(created, CommandType.JOIN, 0, json.dumps({"name": f"n{k}"}).encode(), game_id=game_id)
            )
            for k in range(10)
        ]
        await asyncio.sleep(0.3)
        assert not any(t.done() for t in tasks)
        proc.kill()
        replies = await asyncio.gather(*tasks)
        for k, reply in enumerate(replies):
            payload = json.dumps({"name": f"n{k}"}).encode()
            expected = await unary.decide(created, CommandType.JOIN, 0, payload, game_id=game_id)
            assert reply.SerializeToString() == expected.SerializeToString()
        assert client.replicas[0].down_until > 0
        assert client.replicas[1].decides.opened == 1
    finally:
        await client.close()
        await unary.close()
        await srv.stop(0)
        proc.kill()


async def test_a_decide_past_its_deadline_fails_as_unary_and_the_stream_stays():
    proc = await EngineProcess().start()
    streamed = EngineClient(proc.target, timeout=0.3)
    unary = EngineClient(proc.target, timeout=0.3, decide="unary")
    try:
        created = await _created(streamed)
        proc.proc.send_signal(signal.SIGSTOP)
        over_stream = await _outcome(streamed, created, CommandType.JOIN, 0, b'{"name": "x"}')
        over_unary = await _outcome(unary, created, CommandType.JOIN, 0, b'{"name": "x"}')
        assert over_stream == over_unary == (ErrorCode.UNAVAILABLE, "Deadline Exceeded", None)
        proc.proc.send_signal(signal.SIGCONT)
        joined = await streamed.decide(created, CommandType.JOIN, 0, b'{"name": "y"}')
        assert joined.state.players_joined == 1
        assert streamed.replicas[0].decides.opened == 1
    finally:
        await streamed.close()
        await unary.close()
        proc.kill()


class _UnaryOnly(engine_pb2_grpc.EngineServicer):
    """An engine of the generated servicer base with only the unary Decide."""

    async def Decide(self, request, context):  # noqa: N802 - gRPC method name
        try:
            return server.decide(request)
        except GameError as exc:
            await server._refuse(context, exc, "Decide")


async def _unary_only_engine(registered: bool) -> tuple[grpc.aio.Server, str]:
    """``registered``: the generated base registers ``Decides`` (it answers
    UNIMPLEMENTED); else only ``Decide`` is known (an engine built before ``Decides``)."""
    srv = grpc.aio.server()
    if registered:
        engine_pb2_grpc.add_EngineServicer_to_server(_UnaryOnly(), srv)
    else:
        handler = grpc.unary_unary_rpc_method_handler(
            _UnaryOnly().Decide,
            request_deserializer=engine_pb2.DecideRequest.FromString,
            response_serializer=engine_pb2.DecideReply.SerializeToString,
        )
        srv.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(server.SERVICE_NAME, {"Decide": handler}),)
        )
    port = srv.add_insecure_port("127.0.0.1:0")
    await srv.start()
    return srv, f"127.0.0.1:{port}"


@pytest.mark.parametrize("registered", [True, False])
async def test_an_engine_without_decides_gets_unary_calls(registered):
    srv, target = await _unary_only_engine(registered)
    client = EngineClient(target, timeout=10)
    try:
        first = await asyncio.gather(*(_new_game(client, "cellwar") for _ in range(3)))
        assert [m.players_joined for m in first] == [2, 2, 2]
        stream = client.replicas[0].decides
        assert stream.unary_only and stream.opened == 1
        refused = await _outcome(client, first[0], CommandType.JOIN, 0, b'{"name": "c"}')
        assert refused[0] == ErrorCode.GAME_FULL
        assert stream.opened == 1
    finally:
        await client.close()
        await srv.stop(0)


async def test_a_stopping_engine_ends_its_streams_and_its_decides_move_on():
    """A stopping engine answers the frames it still reads UNAVAILABLE and ends the
    stream once its decides are answered, so its stop does not wait out the grace and
    the session's decides go to the other replica."""
    first, one = await _engine()
    second, other = await _engine()
    client = EngineClient(f"{one},{other}", timeout=20)
    unary = EngineClient(other, timeout=20, decide="unary")
    game_id = next(g for g in (f"g{k}" for k in range(100)) if client.affinity(g) == 0)
    try:
        created = await _created(client)
        await client.decide(created, CommandType.JOIN, 0, b'{"name": "a"}', game_id=game_id)
        stream = client.replicas[0].decides
        assert stream.opened == 1
        stop = asyncio.ensure_future(first.stop(60))
        await asyncio.wait_for(asyncio.shield(stop), 10)  # not the 60 s grace
        for _ in range(100):  # the stream's end reaches the client's reader
            if stream._call is None:
                break
            await asyncio.sleep(0.02)
        assert stream._call is None  # the engine ended it
        reply = await client.decide(created, CommandType.JOIN, 0, b'{"name": "b"}', game_id=game_id)
        expected = await unary.decide(created, CommandType.JOIN, 0, b'{"name": "b"}', game_id=game_id)
        assert reply.SerializeToString() == expected.SerializeToString()
        assert client.replicas[0].down_until > 0 and client.replicas[1].decides.opened == 1
    finally:
        await client.close()
        await unary.close()
        await second.stop(0)
