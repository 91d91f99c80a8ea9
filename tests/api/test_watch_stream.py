"""The gateway's Watches over ``Session.Watches`` (gateway/watch_stream.py,
services/session/entrypoints/watches.py, docs/architecture/batching.md "Views to the
gateway") on the real stack:

- the watches of many games and players share one stream and see, update for update,
  what a Watch RPC of each sees (a command's change included);
- a watch that fails ends with the Watch RPC's error (status, details, code) and the
  others on the stream go on;
- cancelling a watch ends the player's presence on the session, as cancelling the RPC;
- a session that stops ends every watch ``UNAVAILABLE`` with the RPC's code, and the next
  watch opens a new stream (to the next session);
- a session without ``Watches`` (older) gets Watch RPCs, the watches open then included;
- an op opening an id already open ends that op's watch ``MALFORMED``, not the first.
"""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from cellwar.v1 import session_pb2, session_pb2_grpc
from gateway.errors import from_rpc_error
from gateway.session_stub import StreamingSessionStub
from services.common.errors import ERROR_CODE_KEY
from tests.api.test_command_stream import _act, _life_game, _streamed, stub_of
from tests.support.stack import Stack, start_stack

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


async def _next(call) -> session_pb2.WatchUpdate:
    """The next update of a Watch RPC's call or a streamed watch (StopAsyncIteration at
    a clean end)."""
    update = await asyncio.wait_for(call.read(), 20)
    if update is grpc.aio.EOF:
        raise StopAsyncIteration
    return update


def _seen(update: session_pb2.WatchUpdate) -> tuple[str, int, dict]:
    return update.type, update.seq, json.loads(update.view)


async def test_many_watches_share_one_stream_and_see_what_watch_rpcs_see(stack: Stack):
    async with _streamed(stack) as (client, streamed):
        games = [await _life_game(client) for _ in range(4)]
        keys = [(g, pid) for g in games for pid in (0, 1, 2)]
        unary = [client.stub.Watch(session_pb2.WatchRequest(game_id=g, player_id=p)) for g, p in keys]
        muxed = [streamed.Watch(session_pb2.WatchRequest(game_id=g, player_id=p)) for g, p in keys]
        try:
            assert streamed.watches.opened == 1 and streamed.watches.open == len(keys)
            for a, b in zip(unary, muxed, strict=True):
                assert _seen(await _next(b)) == _seen(await _next(a))
            # a change: the watch of the player who sees it (a blind placement: player 1's
            # own) sees it as its RPC does
            reply = await client.stub.Act(_act(games[0], "w-1", 3))
            for (g, pid), a, b in zip(keys, unary, muxed, strict=True):
                if (g, pid) != (games[0], 1):
                    continue
                rpc, streamed_update = _seen(await _next(a)), _seen(await _next(b))
                assert streamed_update == rpc and rpc[1] == reply.seq
        finally:
            for call in (*unary, *muxed):
                call.cancel()
        assert streamed.watches.open == 0 and streamed.watches.opened == 1


async def test_a_watch_that_fails_ends_with_the_rpcs_error_and_the_others_go_on(stack: Stack):
    async with _streamed(stack) as (client, streamed):
        game_id = await _life_game(client)
        kept = streamed.Watch(session_pb2.WatchRequest(game_id=game_id, player_id=1))
        await _next(kept)
        errors = []
        for stub in (client.stub, streamed):
            call = stub.Watch(session_pb2.WatchRequest(game_id="no-such-game", player_id=1))
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await _next(call)
            errors.append(info.value)
        rpc, muxed = errors
        assert (muxed.code(), muxed.details()) == (rpc.code(), rpc.details()) == (
            grpc.StatusCode.NOT_FOUND,
            rpc.details(),
        )
        assert (ERROR_CODE_KEY, "GAME_NOT_FOUND") in tuple(muxed.trailing_metadata())
        assert from_rpc_error(muxed).code == from_rpc_error(rpc).code == "GAME_NOT_FOUND"
        reply = await client.stub.Act(_act(game_id, "w-2", 4))
        update = await _next(kept)  # the stream goes on for the other watch
        assert update.seq == reply.seq
        kept.cancel()


async def test_cancelling_a_watch_ends_the_players_presence(stack: Stack):
    async with _streamed(stack) as (client, streamed):
        game_id = await _life_game(client)
        call = streamed.Watch(session_pb2.WatchRequest(game_id=game_id, player_id=2))
        await _next(call)
        game = await stack.session.games.get(game_id)
        assert game.watching == {2: 1}
        assert call.cancel() and not call.cancel()
        for _ in range(200):
            if not game.watching:
                break
            await asyncio.sleep(0.01)
        assert game.watching == {} and game.watchers == 0
        with pytest.raises(StopAsyncIteration):
            await _next(call)


async def test_a_session_that_stops_ends_every_watch_unavailable_and_the_next_opens_a_new_stream(stack: Stack):
    other = await start_stack(memory=stack.memory, instance_id="s-2")
    client_other = None
    try:
        async with _streamed(stack) as (client, streamed):
            game_id = await _life_game(client)
            calls = [streamed.Watch(session_pb2.WatchRequest(game_id=game_id, player_id=p)) for p in (0, 1, 2)]
            for call in calls:
                await _next(call)
            await stack.session.stop(grace=0.2)
            for call in calls:
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    while True:
                        await _next(call)
                assert info.value.code() == grpc.StatusCode.UNAVAILABLE
                assert from_rpc_error(info.value).status == 503
        # a gateway on the other instance: a new stream, the same game
        from tests.support.client import SessionClient

        client_other = SessionClient.open(other.session_target)
        again = StreamingSessionStub(client_other.channel)
        try:
            call = again.Watch(session_pb2.WatchRequest(game_id=game_id, player_id=1))
            assert (await _next(call)).type == "view"
            assert again.watches.opened == 1
            call.cancel()
        finally:
            await again.aclose()
    finally:
        if client_other is not None:
            await client_other.close()
        await other.stop()


class _OlderSession(session_pb2_grpc.SessionServicer):
    """A session without ``Watches`` (the generated base answers it UNIMPLEMENTED)."""

    async def Watch(self, request, context):  # noqa: N802
        for seq in (1, 2):
            yield session_pb2.WatchUpdate(type="view", seq=seq, view=request.game_id.encode())
        yield session_pb2.WatchUpdate(type="finished", seq=3, view=b"end")


async def test_a_session_without_the_stream_gets_watch_rpcs():
    async with stub_of(_OlderSession()) as streamed:
        first = [streamed.Watch(session_pb2.WatchRequest(game_id=f"g{k}", player_id=1)) for k in range(3)]
        for k, call in enumerate(first):
            got = [(u.type, u.seq, u.view) async for u in call]
            assert got == [("view", 1, f"g{k}".encode()), ("view", 2, f"g{k}".encode()), ("finished", 3, b"end")]
        assert streamed.watches.unary_only and streamed.watches.opened == 1
        later = streamed.Watch(session_pb2.WatchRequest(game_id="later", player_id=1))
        assert [u.seq async for u in later] == [1, 2, 3]
        assert streamed.watches.opened == 1


async def test_an_id_opened_twice_ends_the_second_malformed_and_keeps_the_first(stack: Stack):
    async with _streamed(stack) as (client, _):
        game_id = await _life_game(client)
        call = client.stub.Watches()
        try:
            await call.initial_metadata()
            request = session_pb2.WatchRequest(game_id=game_id, player_id=1)
            await call.write(session_pb2.WatchOps(ops=[session_pb2.WatchOp(id=7, open=request)]))
            first = await asyncio.wait_for(call.read(), 20)
            assert [(f.id, f.end, f.update.type) for f in first.frames] == [(7, False, "view")]
            await call.write(session_pb2.WatchOps(ops=[session_pb2.WatchOp(id=7, open=request)]))
            second = await asyncio.wait_for(call.read(), 20)
            (frame,) = second.frames
            assert (frame.id, frame.end, frame.error.code) == (7, True, "MALFORMED")
            reply = await client.stub.Act(_act(game_id, "w-3", 5))
            third = await asyncio.wait_for(call.read(), 20)  # the first watch goes on
            assert [(f.id, f.end, f.update.seq) for f in third.frames] == [(7, False, reply.seq)]
        finally:
            call.cancel()


async def test_watches_past_the_queue_bound_wait_for_the_writer_and_all_get_through(stack: Stack, monkeypatch):
    from services.session.entrypoints import watches

    monkeypatch.setattr(watches, "FRAMES_MAX", 1)  # every second frame waits for the writer
    async with _streamed(stack) as (client, streamed):
        games = [await _life_game(client) for _ in range(3)]
        calls = [streamed.Watch(session_pb2.WatchRequest(game_id=g, player_id=p)) for g in games for p in (0, 1, 2)]
        firsts = [await _next(call) for call in calls]
        assert [u.type for u in firsts] == ["view"] * 9
        assert {json.loads(u.view)["game_id"] for u in firsts} == set(games)
        for call in calls:
            call.cancel()


class _DroppingSession(session_pb2_grpc.SessionServicer):
    """A session whose ``Watches`` stream breaks once a watch is open."""

    async def Watches(self, request_iterator, context):  # noqa: N802
        await context.send_initial_metadata(())
        await request_iterator.__anext__()
        await context.abort(grpc.StatusCode.UNAVAILABLE, "dropped")


async def test_a_broken_stream_fails_its_watches_unavailable_and_logs_without_a_callers_context():
    import structlog

    async with stub_of(_DroppingSession()) as streamed:
        with structlog.testing.capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
            with structlog.contextvars.bound_contextvars(game_id="g-first", player_id=1):
                call = streamed.Watch(session_pb2.WatchRequest(game_id="g-first", player_id=1))
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await _next(call)
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE
        assert tuple(info.value.trailing_metadata()) == ()  # no service code: retryable
        (broken,) = [e for e in logs if e["event"] == "watch_stream_broken"]
        assert broken["watches"] == 1 and "game_id" not in broken and "player_id" not in broken
