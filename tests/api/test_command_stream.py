"""The gateway's commands over ``Session.Commands`` (gateway/command_stream.py,
docs/architecture/batching.md "Gateway to session") on the real stack:

- a seeded random CellWar game, legal moves mixed with refused ones, answers over REST
  and over the socket exactly as with one unary call per command (status, body, seq),
  and records the same events and state hashes;
- the commands of many games at once share one stream per channel and get their own
  answers;
- a session stopped while commands wait on it: with one channel they are answered 503
  ``UNAVAILABLE`` (retryable), and retried with the same key on another instance they
  are applied once; with two channels (``FailoverStub``) they move to the other
  instance with the same command id and are applied once;
- a deadline fails as the unary call's; commands past the in-flight bound wait;
- a session without ``Commands`` (older) gets the commands as unary calls;
- the error a result carries is rebuilt as the unary call's (status, details, code, seq).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
import pytest

from cellwar.v1 import session_pb2, session_pb2_grpc
from gateway.app import create_app
from gateway.command_stream import rpc_error
from gateway.errors import from_rpc_error
from gateway.session_stub import StreamingSessionStub
from services.common.errors import ERROR_CODE_KEY, ERROR_SEQ_KEY
from services.common.grpcutil import FailoverStub
from services.common.settings import Settings
from tests.api.conftest import TEST_SECRET
from tests.api.test_ws_actions import CELLWAR, LIFE, bearer, frame, new_game, socket
from tests.support.client import SessionClient
from tests.support.serve import serve
from tests.support.stack import Stack, start_stack

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@contextlib.asynccontextmanager
async def gateway_at(session_addr: str, **settings: Any) -> AsyncIterator[tuple[Any, httpx.AsyncClient, str]]:
    """A gateway in front of ``session_addr`` with ``settings``: ``(app, http client, url)``."""
    app = create_app(Settings(session_addr=session_addr, secret=TEST_SECRET, **settings))
    async with serve(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        yield app, http, url


def _scrub(value: Any, game_id: str) -> Any:
    """``value`` with the game's id replaced (two games are compared)."""
    if isinstance(value, dict):
        return {k: _scrub(v, game_id) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, game_id) for v in value]
    if isinstance(value, str):
        return value.replace(game_id, "GAME")
    return value


async def _play(http: httpx.AsyncClient, url: str, seed: int, over_ws: bool) -> tuple[list, list]:
    """A seeded random CellWar game of at most 50 commands: the player to move sends a
    legal move (60%), or an end of turn, a move of a unit it does not have, a move off
    the board, or the other seat's command (refused, 409). Returns every answer (status,
    body; the game's id scrubbed) and the public log without times."""
    rng = random.Random(seed)
    game_id, tokens = await new_game(http, "cellwar", CELLWAR)
    answers: list[Any] = []
    async with contextlib.AsyncExitStack() as stack:
        sockets = [await stack.enter_async_context(socket(url, game_id, t)) for t in tokens] if over_ws else []
        for step in range(50):
            view = (await http.get(f"/game/{game_id}/state", headers=bearer(tokens[0]))).json()
            if view["phase"] != "playing":
                break
            seat = view["turn"] - 1
            legal = (await http.get(f"/game/{game_id}/valid_actions", headers=bearer(tokens[seat]))).json()["actions"]
            roll = rng.random()
            action: dict[str, Any] | None
            if legal and roll < 0.6:
                pick = rng.choice(legal)
                action = {"unit_id": pick["unit_id"], "dx": pick["dx"], "dy": pick["dy"]}
            elif roll < 0.7:
                action = None  # end of turn (refused while units may still act)
            elif roll < 0.8:
                action = {"unit_id": 99, "dx": 0, "dy": 1}
            elif roll < 0.9:
                action = {"unit_id": rng.choice([1, 2, 3, 4]), "dx": rng.choice([-1, 1]), "dy": 0}
            else:
                seat = 1 - seat  # not its turn
                action = {"unit_id": 2 - seat, "dx": 0, "dy": 1} if rng.random() < 0.5 else None
            if not legal and action is not None and roll < 0.6:
                action = None
            key = f"s{seed}-{step}"
            if over_ws:
                text = frame("action", key, action) if action is not None else frame("end_turn", key)
                reply = await sockets[seat].command(text)
                answers.append(_scrub({k: v for k, v in reply.items() if k != "id"}, game_id))
            else:
                path = "action" if action is not None else "end_turn"
                headers = {**bearer(tokens[seat]), "Idempotency-Key": key}
                answer = await http.post(f"/game/{game_id}/{path}", json=action, headers=headers)
                body = answer.json()
                reply = {"type": "result", **body} if answer.status_code == 200 else {
                    "type": "error", "status": answer.status_code, **body
                }
                answers.append(_scrub(reply, game_id))
    left = await http.post(f"/game/{game_id}/leave", headers=bearer(tokens[1]))
    assert left.status_code in (200, 409), left.text
    events = (await http.get(f"/game/{game_id}/events")).json()["events"]
    log = [_scrub({k: v for k, v in e.items() if k != "time"}, game_id) for e in events]
    return answers, log


async def test_a_seeded_random_game_answers_the_same_over_the_stream_as_unary(stack: Stack):
    async with (
        gateway_at(stack.session_target, session_commands="unary") as (unary_app, unary_http, unary_url),
        gateway_at(stack.session_target, session_commands="stream") as (stream_app, stream_http, stream_url),
    ):
        assert isinstance(unary_app.state.session, session_pb2_grpc.SessionStub)
        assert isinstance(stream_app.state.session, StreamingSessionStub)
        for seed in (5, 17):
            for over_ws in (False, True):
                unary = await _play(unary_http, unary_url, seed, over_ws)
                streamed = await _play(stream_http, stream_url, seed, over_ws)
                answers, log = streamed
                assert streamed == unary
                statuses = Counter(a.get("status", 200) for a in answers)
                assert statuses[200] > 10 and statuses[409] > 3, statuses
                codes = {a["error"]["code"] for a in answers if a["type"] == "error"}
                assert {"NOT_YOUR_TURN", "INVALID_ACTION"} <= codes, codes
                assert len(log) > 15 and all(e["state_hash"] for e in log)
                assert log[-1]["type"] == "GameFinished"
        # every command of that gateway went over its one stream
        assert stream_app.state.session.commands.opened == 1
        assert stream_app.state.session.commands.in_flight == 0


async def test_commands_of_many_games_at_once_share_one_stream(stack: Stack):
    async with gateway_at(stack.session_target) as (app, http, _):
        games = [await new_game(http, "life", LIFE) for _ in range(12)]

        async def place(game_id: str, token: str, x: int) -> tuple[int, Any]:
            answer = await http.post(
                f"/game/{game_id}/action",
                json={"type": "place", "cells": [[x, 3]]},
                headers={**bearer(token), "Idempotency-Key": f"{game_id}-{x}"},
            )
            return answer.status_code, answer.json()

        answers = await asyncio.gather(
            *(place(g, tokens[0], x) for g, tokens in games for x in (1, 2, 3))
        )
        assert [status for status, _ in answers] == [200] * 36
        by_game: dict[str, list[int]] = {}
        for (_, body), (game_id, _) in zip(
            answers, [g for g in games for _ in range(3)], strict=True
        ):
            assert body["view"]["game_id"] == game_id
            by_game.setdefault(game_id, []).append(body["seq"])
        # a game's three commands got three different seqs, in some order
        assert all(len(set(seqs)) == 3 for seqs in by_game.values())
        assert app.state.session.commands.opened == 1


# ------------------------------------------------------------- a session stopped mid-stream


class HeldReplies:
    """Holds the replies of ``app``'s commands once they are recorded (its
    ``loop.version_after`` waits), counting the commands held."""

    def __init__(self, app: Any) -> None:
        self.held = 0
        self.release = asyncio.Event()
        original = app.loop.version_after

        async def version_after(*args: Any, **kwargs: Any) -> Any:
            self.held += 1
            await self.release.wait()
            return await original(*args, **kwargs)

        app.loop.version_after = version_after

    async def wait(self, n: int, timeout_s: float = 20.0) -> None:
        async with asyncio.timeout(timeout_s):
            while self.held < n:
                await asyncio.sleep(0.01)


async def _applied(app: Any, game_id: str, key: str) -> int:
    """How many events of ``game_id`` player 1's command ``key`` recorded (the stored
    log; the session records a command id as ``p<seat>:<key>#<digest of the body>``)."""
    events = await app.store.read(game_id)
    return sum(1 for e in events if e.command_id.split("#")[0] == f"p1:{key}")


async def _place_all(http: httpx.AsyncClient, games: list[tuple[str, list[str]]]) -> list[httpx.Response]:
    return await asyncio.gather(
        *(
            http.post(
                f"/game/{g}/action",
                json={"type": "place", "cells": [[2, 2]]},
                headers={**bearer(tokens[0]), "Idempotency-Key": f"held-{g}"},
            )
            for g, tokens in games
        )
    )


async def test_a_session_stopped_mid_stream_answers_503_and_a_retry_applies_once(stack: Stack):
    other = await start_stack(memory=stack.memory, instance_id="s-2")
    try:
        async with (
            gateway_at(stack.session_target) as (_, http, _),
            gateway_at(other.session_target) as (_, other_http, _),
        ):
            games = [await new_game(http, "life", LIFE) for _ in range(4)]
            held = HeldReplies(stack.session)
            sent = asyncio.create_task(_place_all(http, games))
            await held.wait(len(games))  # all recorded, none answered
            await stack.session.stop(grace=0.2)
            answers = await asyncio.wait_for(sent, 30)
            for answer in answers:
                assert answer.status_code == 503, answer.text
                assert answer.json()["error"]["code"] == "UNAVAILABLE"
                assert answer.headers.get("retry-after")
            # retried with the same key on the other instance: the recorded command's answer
            retried = await _place_all(other_http, games)
            assert [r.status_code for r in retried] == [200] * len(games)
            for (game_id, _), answer in zip(games, retried, strict=True):
                assert answer.json()["view"]["game_id"] == game_id
                assert await _applied(other.session, game_id, f"held-{game_id}") == 1
    finally:
        await other.stop()


async def test_a_session_stopped_mid_stream_moves_its_commands_to_the_next_instance(stack: Stack):
    other = await start_stack(memory=stack.memory, instance_id="s-2")
    try:
        addrs = f"{stack.session_target},{other.session_target}"
        async with gateway_at(addrs, session_failover_s=0.5) as (app, http, _):
            assert isinstance(app.state.session, FailoverStub)
            games = [await new_game(http, "life", LIFE) for _ in range(4)]
            held = HeldReplies(stack.session)
            sent = asyncio.create_task(_place_all(http, games))
            await held.wait(len(games))
            await stack.session.stop(grace=0.2)
            answers = await asyncio.wait_for(sent, 30)
            assert [a.status_code for a in answers] == [200] * len(games), [a.text for a in answers]
            for (game_id, _), answer in zip(games, answers, strict=True):
                body = answer.json()
                assert body["view"]["game_id"] == game_id
                assert await _applied(other.session, game_id, f"held-{game_id}") == 1
            assert app.state.session.moves >= len(games)
    finally:
        await other.stop()


# ------------------------------------------------------------- deadlines and backpressure


def _act(game_id: str, key: str, x: int = 2) -> session_pb2.ActRequest:
    """Player 1 places a cell at ``(x, 2)``."""
    action = f'{{"type":"place","cells":[[{x},2]]}}'.encode()
    return session_pb2.ActRequest(game_id=game_id, player_id=1, action=action, command_id=key)


@contextlib.asynccontextmanager
async def _streamed(stack: Stack, **kw: Any) -> AsyncIterator[tuple[SessionClient, StreamingSessionStub]]:
    """A client of the stack's session and a :class:`StreamingSessionStub` on its channel
    (``kw``: the stub's), both closed after."""
    client = SessionClient.open(stack.session_target)
    streamed = StreamingSessionStub(client.channel, **kw)
    try:
        yield client, streamed
    finally:
        await streamed.aclose()
        await client.close()


@contextlib.asynccontextmanager
async def stub_of(servicer: session_pb2_grpc.SessionServicer) -> AsyncIterator[StreamingSessionStub]:
    """A :class:`StreamingSessionStub` of a gRPC server of ``servicer`` on loopback (a
    fake session), all closed after."""
    server = grpc.aio.server()
    session_pb2_grpc.add_SessionServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    streamed = StreamingSessionStub(channel)
    try:
        yield streamed
    finally:
        await streamed.aclose()
        await channel.close()
        await server.stop(0)


async def _life_game(client: SessionClient) -> str:
    """A new Life game (:data:`LIFE`) with players p1 and p2 seated; its id."""
    game_id = await client.create(LIFE)
    for name in ("p1", "p2"):
        await client.join(game_id, name)
    return game_id


async def test_a_command_past_its_timeout_fails_as_the_unary_call_does(stack: Stack):
    async with _streamed(stack) as (client, streamed):
        game_id = await _life_game(client)
        held = HeldReplies(stack.session)
        failures = []
        for x, (stub, key) in enumerate(((client.stub, "unary"), (streamed, "streamed"))):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.Act(_act(game_id, key, x), timeout=0.3)
            failures.append(caught.value)
        assert [e.code() for e in failures] == [grpc.StatusCode.DEADLINE_EXCEEDED] * 2
        assert [e.details() for e in failures] == ["Deadline Exceeded"] * 2
        api = [from_rpc_error(e) for e in failures]
        assert [(a.status, a.code, a.message) for a in api] == [(api[0].status, api[0].code, api[0].message)] * 2
        assert (api[0].status, api[0].code) == (503, "UNAVAILABLE")
        held.release.set()
        assert streamed.commands.in_flight == 0


async def test_commands_past_the_in_flight_bound_wait_for_a_slot(stack: Stack):
    async with _streamed(stack, max_in_flight=2) as (client, streamed):
        games = [await _life_game(client) for _ in range(5)]
        held = HeldReplies(stack.session)
        calls = [asyncio.ensure_future(streamed.Act(_act(g, f"bound-{g}"), timeout=30)) for g in games]
        await held.wait(2)
        await asyncio.sleep(0.3)
        assert (held.held, streamed.commands.in_flight) == (2, 2)  # three wait in the gateway
        held.release.set()
        replies = await asyncio.gather(*calls)
        assert [r.player_id for r in replies] == [1] * 5 and held.held == 5
        assert streamed.commands.in_flight == 0


async def test_the_raw_stream_answers_each_frame_by_id_as_unary_calls_fail(stack: Stack):
    client = SessionClient.open(stack.session_target)
    try:
        unary_errors = []
        for request in (_act("nosuchgame", "a"), _act("nosuchgame", "b")):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await client.stub.Act(request, timeout=10)
            unary_errors.append(caught.value)
        call = client.stub.Commands()
        await call.write(
            session_pb2.CommandFrames(
                frames=[
                    session_pb2.CommandFrame(id=41, act=_act("nosuchgame", "a"), timeout_s=10),
                    session_pb2.CommandFrame(id=42),  # no command
                ]
            )
        )
        results = {}
        while len(results) < 2:
            for result in (await call.read()).results:
                results[result.id] = result.error
        await call.done_writing()
        assert await call.read() is grpc.aio.EOF  # the stream ends once its frames are answered
        found = rpc_error(results[41])
        assert (found.code(), found.details(), tuple(found.trailing_metadata())) == (
            unary_errors[0].code(),
            unary_errors[0].details(),
            tuple(unary_errors[0].trailing_metadata()),
        )
        assert found.code() == grpc.StatusCode.NOT_FOUND
        assert (results[42].status, results[42].code) == (grpc.StatusCode.INVALID_ARGUMENT.value[0], "MALFORMED")
    finally:
        await client.close()


class _OlderSession(session_pb2_grpc.SessionServicer):
    """A session without ``Commands`` (the generated base answers it UNIMPLEMENTED)."""

    async def Act(self, request, context):  # noqa: N802
        return session_pb2.CommandReply(seq=len(request.command_id), player_id=request.player_id)

    async def EndTurn(self, request, context):  # noqa: N802
        return session_pb2.CommandReply(seq=100, player_id=request.player_id)


async def test_a_session_without_the_stream_gets_unary_calls():
    async with stub_of(_OlderSession()) as streamed:
        first = await asyncio.gather(
            *(streamed.Act(_act("g", "k" * n), timeout=10) for n in range(1, 6)),
            streamed.EndTurn(session_pb2.EndTurnRequest(game_id="g", player_id=2, command_id="e"), timeout=10),
        )
        assert [r.seq for r in first] == [1, 2, 3, 4, 5, 100]
        assert streamed.commands.unary_only and streamed.commands.opened == 1
        later = await streamed.Act(_act("g", "later"), timeout=10)
        assert (later.seq, later.player_id, streamed.commands.opened) == (5, 1, 1)


# ------------------------------------------------------------- a result's error, rebuilt


def test_a_results_error_is_the_unary_calls_error():
    error = session_pb2.CommandError(
        status=grpc.StatusCode.INVALID_ARGUMENT.value[0], details="seq 7 differs", code="LOG_MISMATCH", seq=7
    )
    exc = rpc_error(error)
    assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT and exc.details() == "seq 7 differs"
    assert tuple(exc.trailing_metadata()) == ((ERROR_CODE_KEY, "LOG_MISMATCH"), (ERROR_SEQ_KEY, "7"))
    api = from_rpc_error(exc)
    assert (api.status, api.code, api.message, api.seq) == (409, "LOG_MISMATCH", "seq 7 differs", 7)
    rule = rpc_error(
        session_pb2.CommandError(status=grpc.StatusCode.FAILED_PRECONDITION.value[0], details="no", code="OUT_OF_ZONE")
    )
    assert tuple(rule.trailing_metadata()) == ((ERROR_CODE_KEY, "OUT_OF_ZONE"),)
    assert (from_rpc_error(rule).status, from_rpc_error(rule).code) == (409, "OUT_OF_ZONE")
    stopping = rpc_error(session_pb2.CommandError(status=grpc.StatusCode.UNAVAILABLE.value[0], details="stopping"))
    assert tuple(stopping.trailing_metadata()) == ()
    assert (from_rpc_error(stopping).status, from_rpc_error(stopping).code) == (503, "UNAVAILABLE")


def test_a_message_of_the_stream_stops_at_its_byte_budget():
    from gateway import command_stream
    from services.session.entrypoints import grpc_service

    big = b"x" * (command_stream.FRAMES_MAX_BYTES // 2 + 1)
    frames = [
        session_pb2.CommandFrame(id=i, act=session_pb2.ActRequest(action=big)) for i in range(1, 4)
    ] + [session_pb2.CommandFrame(id=4, end_turn=session_pb2.EndTurnRequest())]
    batches = []
    while frames:
        batches.append([f.id for f in command_stream._take(frames)])
    assert batches == [[1], [2], [3, 4]]  # one big action per message; the end of turn rides along
    view = b"v" * (grpc_service.RESULTS_MAX_BYTES + 1)
    results = [session_pb2.CommandResult(id=i, reply=session_pb2.CommandReply(view=view)) for i in (1, 2)]
    results.append(session_pb2.CommandResult(id=3, error=session_pb2.CommandError(status=9)))
    batches = []
    while results:
        batches.append([r.id for r in grpc_service._take(results)])
    assert batches == [[1], [2], [3]]  # a view above the budget still goes, alone


# ------------------------------------------------------------- the gateway's side alone


class _FakeCall:
    """One ``Commands`` call of :class:`_FakeStub`: what is written, results to read."""

    def __init__(self) -> None:
        self.written: list[session_pb2.CommandFrame] = []
        self.messages: list[int] = []  # frames per message written
        self.results: asyncio.Queue = asyncio.Queue()
        self.gate = asyncio.Event()  # cleared: a write waits
        self.gate.set()

    async def write(self, message: session_pb2.CommandFrames) -> None:
        await self.gate.wait()
        self.written.extend(message.frames)
        self.messages.append(len(message.frames))

    async def read(self) -> Any:
        return await self.results.get()

    def cancel(self) -> None:
        self.results.put_nowait(grpc.aio.EOF)

    def answer(self, command_id: int) -> None:
        reply = session_pb2.CommandReply(seq=command_id)
        self.results.put_nowait(
            session_pb2.CommandResults(results=[session_pb2.CommandResult(id=command_id, reply=reply)])
        )


class _FakeStub:
    """A ``SessionStub`` whose ``Commands`` calls are :class:`_FakeCall` s."""

    def __init__(self) -> None:
        self.calls: list[_FakeCall] = []

    def Commands(self) -> _FakeCall:  # noqa: N802 - the gRPC method's name
        self.calls.append(_FakeCall())
        return self.calls[-1]

    Act = EndTurn = None


@contextlib.asynccontextmanager
async def _opened_stream() -> AsyncIterator[tuple[Any, _FakeCall, asyncio.Future]]:
    """A gateway ``CommandStream`` on a :class:`_FakeStub`, its stream opened by a first
    command (``first``, written, not answered): (stream, its call, that command)."""
    from gateway.command_stream import CommandStream

    stub = _FakeStub()
    stream = CommandStream(stub)
    try:
        first = stream.submit("act", _act("g", "first"), 10)
        await asyncio.sleep(0.05)
        yield stream, stub.calls[0], first
    finally:
        await stream.aclose()


async def test_commands_queued_in_the_turn_that_woke_the_writer_leave_in_one_message():
    async with _opened_stream() as (stream, call, first):
        call.answer(call.written[0].id)
        await first
        # a command wakes the idle writer; another one is queued by a callback of the
        # turn the writer wakes in (a second socket's frame read meanwhile)
        later: list[asyncio.Future] = []
        second = stream.submit("act", _act("h", "second"), 10)
        asyncio.get_running_loop().call_soon(
            lambda: later.append(stream.submit("act", _act("i", "third"), 10))
        )
        await asyncio.sleep(0.05)
        assert [f.act.command_id for f in call.written] == ["first", "second", "third"]
        assert call.messages == [1, 2]
        for frame in call.written[1:]:
            call.answer(frame.id)
        assert [(await f).seq for f in (second, later[0])] == [2, 3]


async def test_a_busy_stream_waits_for_frames_that_come_one_at_a_time_but_not_for_a_burst():
    from services.common.streams import FEW

    async with _opened_stream() as (stream, call, first):
        # every write counts as a moment ago; a long wait, so the test reads the order only
        stream._linger.linger_s, stream._linger.busy_s = 0.5, 60.0
        call.answer(call.written[0].id)
        await first
        second = stream.submit("act", _act("h", "second"), 10)
        await asyncio.sleep(0.1)
        assert call.messages == [1]  # one frame waits for company
        third = stream.submit("act", _act("i", "third"), 10)
        await asyncio.sleep(0.8)
        assert call.messages == [1, 2]  # the frame that came meanwhile rode along
        burst = [stream.submit("act", _act(f"b{i}", f"burst-{i}"), 10) for i in range(FEW)]
        await asyncio.sleep(0.1)
        assert call.messages == [1, 2, FEW]  # a message's worth of frames leaves at once
        for frame in call.written[1:]:
            call.answer(frame.id)
        assert [(await f).seq for f in (second, third, *burst)] == list(range(2, 4 + FEW))


async def test_a_command_cancelled_or_expired_before_it_left_is_not_sent():
    async with _opened_stream() as (stream, call, first):
        call.gate.clear()  # the next write waits (gRPC flow control)
        held = stream.submit("act", _act("g", "held"), 10)
        await asyncio.sleep(0.05)  # the writer took it and waits in write()
        expired = stream.submit("act", _act("g", "expired"), 0.01)
        gone = stream.submit("act", _act("g", "gone"), 10)
        kept = stream.submit("end_turn", session_pb2.EndTurnRequest(game_id="g", player_id=1, command_id="k"), 10)
        gone.cancel()  # the caller went
        await asyncio.sleep(0.1)
        assert expired.exception().code() == grpc.StatusCode.DEADLINE_EXCEEDED
        call.gate.set()
        await asyncio.sleep(0.05)
        assert [f.end_turn.command_id or f.act.command_id for f in call.written] == ["first", "held", "k"]
        for frame in call.written:
            call.answer(frame.id)
        assert [(await f).seq for f in (first, held, kept)] == [1, 2, 5]
        await asyncio.sleep(0)  # the slots are given back by the futures' callbacks
        assert stream.in_flight == 0


async def test_a_command_that_waited_for_a_slot_sends_what_is_left_of_its_timeout():
    from gateway.command_stream import CommandStream

    stub = _FakeStub()
    stream = CommandStream(stub, max_in_flight=1)
    try:
        first = stream.submit("act", _act("g", "first"), 10)
        second = stream.submit("act", _act("g", "second"), 10)
        await asyncio.sleep(0.3)
        call = stub.calls[0]
        assert [f.timeout_s for f in call.written] == [pytest.approx(10, abs=0.05)]
        call.answer(1)
        await first
        await asyncio.sleep(0.05)
        assert [f.act.command_id for f in call.written] == ["first", "second"]
        assert 9.0 < call.written[1].timeout_s < 9.8  # 0.3 s of its 10 s went waiting
        call.answer(2)
        assert (await second).seq == 2
    finally:
        await stream.aclose()


async def test_commands_waiting_for_a_slot_fail_when_the_stream_closes_and_open_no_stream():
    from gateway.command_stream import CommandStream

    stub = _FakeStub()
    stream = CommandStream(stub, max_in_flight=1)
    sent = stream.submit("act", _act("g", "sent"), 10)
    waiting = stream.submit("act", _act("g", "waiting"), 10)
    await asyncio.sleep(0.05)
    await stream.aclose()
    await asyncio.sleep(0.05)
    for future in (sent, waiting):
        assert future.done()
        assert future.exception().code() == grpc.StatusCode.UNAVAILABLE
    assert len(stub.calls) == 1 and stream.opened == 1  # the freed slot opened no new stream
