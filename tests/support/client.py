"""A small async client of the Session gRPC service for tests (JSON in, dicts out)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import grpc

from cellwar.v1 import engine_pb2, engine_pb2_grpc, session_pb2, session_pb2_grpc
from services.common.errors import error_from_rpc


def dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


class SessionClient:
    """``await SessionClient.open(target)``; every method returns parsed JSON views."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.stub = session_pb2_grpc.SessionStub(channel)

    @classmethod
    def open(cls, target: str) -> SessionClient:
        return cls(grpc.aio.insecure_channel(target))

    async def close(self) -> None:
        await self.channel.close()

    async def create(self, config: dict, kind: str = "life", command_id: str = "") -> str:
        reply = await self.stub.CreateGame(
            session_pb2.CreateGameRequest(kind=kind, config=dumps(config), command_id=command_id)
        )
        return reply.game_id

    async def join(self, game_id: str, name: str, command_id: str = "") -> session_pb2.CommandReply:
        return await self.stub.Join(
            session_pb2.JoinRequest(game_id=game_id, name=name, command_id=command_id)
        )

    async def act(self, game_id: str, player_id: int, action: dict, command_id: str = ""):
        return await self.stub.Act(
            session_pb2.ActRequest(
                game_id=game_id, player_id=player_id, action=dumps(action), command_id=command_id
            )
        )

    async def end_turn(self, game_id: str, player_id: int, command_id: str = ""):
        return await self.stub.EndTurn(
            session_pb2.EndTurnRequest(game_id=game_id, player_id=player_id, command_id=command_id)
        )

    async def view(self, game_id: str, player_id: int = 0) -> dict:
        reply = await self.stub.GetView(
            session_pb2.GetViewRequest(game_id=game_id, player_id=player_id)
        )
        return json.loads(reply.view)

    async def events(self, game_id: str, from_seq: int = 0, player_id: int = 0) -> list:
        """The log as ``player_id`` may read it (0 = spectator: FORBIDDEN while it is
        private, e.g. a Life game in waiting or placement)."""
        reply = await self.stub.ListEvents(
            session_pb2.ListEventsRequest(game_id=game_id, from_seq=from_seq, player_id=player_id)
        )
        return list(reply.events)

    async def replay(self, game_id: str, seq: int, player_id: int = 0) -> dict:
        reply = await self.stub.Replay(
            session_pb2.ReplayRequest(game_id=game_id, seq=seq, player_id=player_id)
        )
        return json.loads(reply.view)

    async def wait_finished(self, game_id: str, players: list[int], timeout: float = 30.0) -> dict:
        """Poll until the game is finished; in ``redraw`` every player says ready (an empty
        round ends the game). Returns the spectator view (seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            view = await self.view(game_id)
            if view["phase"] == "finished":
                return view
            if view["phase"] == "redraw":
                for pid in players:
                    try:
                        await self.end_turn(game_id, pid)
                    except grpc.aio.AioRpcError as exc:
                        if error_from_rpc(exc)[0] not in (
                            "WRONG_PHASE",
                            "GAME_FINISHED",
                            "INVALID_ACTION",
                        ):
                            raise
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"game {game_id} not finished after {timeout} s: {view['phase']}"
                )
            await asyncio.sleep(0.05)


async def fold_from_scratch(engine_target: str, events: list) -> engine_pb2.GameState:
    """Fold a whole log with the Engine service (no snapshot)."""
    async with grpc.aio.insecure_channel(engine_target) as channel:
        stub = engine_pb2_grpc.EngineStub(channel)
        return await stub.Fold(engine_pb2.FoldRequest(events=events), timeout=60)
