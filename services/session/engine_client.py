"""The session's only door to the rules: a client of the Engine gRPC service.

Every failure becomes :class:`services.common.errors.ServiceError` with the engine's
machine code unchanged (``OUT_OF_ZONE``, ``MALFORMED``, ...) or ``UNAVAILABLE`` when the
engine does not answer.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc

from cellwar.v1 import engine_pb2, engine_pb2_grpc, events_pb2
from services.common.errors import ENGINE_VERSION_KEY, ServiceError, error_from_rpc
from services.common.grpcutil import GRPC_OPTIONS

#: Events per Fold call, so one message stays far below the gRPC size limit.
FOLD_CHUNK = 2000


class EngineClient:
    """Async calls to the Engine service.

    Args:
        target: ``host:port`` of the engine service.
        timeout: deadline of one call (seconds).
    """

    def __init__(self, target: str, timeout: float = 30.0) -> None:
        self.target = target
        self.timeout = timeout
        self.channel = grpc.aio.insecure_channel(target, options=GRPC_OPTIONS)
        self.stub = engine_pb2_grpc.EngineStub(self.channel)
        #: Version of the rules that answered last (stamped on every event).
        self.engine_version = ""

    async def close(self) -> None:
        """Close the channel."""
        await self.channel.close()

    async def _call(self, method, request):
        try:
            call = method(request, timeout=self.timeout)
            reply = await call
            for key, value in await call.trailing_metadata() or ():
                if key == ENGINE_VERSION_KEY:
                    self.engine_version = str(value)
            return reply
        except grpc.aio.AioRpcError as exc:
            code, message = error_from_rpc(exc)
            raise ServiceError(code, message) from exc

    async def decide(
        self, state: engine_pb2.GameState | None, command_type: str, actor: int, payload: bytes
    ) -> engine_pb2.DecideReply:
        """Run one command (``state`` None for ``create``). Raises ServiceError."""
        request = engine_pb2.DecideRequest(
            command=engine_pb2.Command(type=command_type, actor=actor, payload=payload)
        )
        if state is not None:
            request.state.CopyFrom(state)
        return await self._call(self.stub.Decide, request)

    async def fold(
        self, state: engine_pb2.GameState | None, events: Sequence[events_pb2.Event]
    ) -> engine_pb2.GameState | None:
        """Fold ``events`` onto ``state`` (None = from GameCreated), in chunks of
        :data:`FOLD_CHUNK` events. Returns ``state`` unchanged for no events.
        Raises ServiceError."""
        for start in range(0, len(events), FOLD_CHUNK):
            request = engine_pb2.FoldRequest(events=events[start : start + FOLD_CHUNK])
            if state is not None:
                request.state.CopyFrom(state)
            state = await self._call(self.stub.Fold, request)
        return state

    async def tick(self, items: Sequence[tuple[engine_pb2.GameState, int]]) -> engine_pb2.TickReply:
        """Tick many games in one call: ``(state, generations)`` each. Raises ServiceError."""
        request = engine_pb2.TickRequest(
            items=[engine_pb2.TickItem(state=s, generations=n) for s, n in items]
        )
        return await self._call(self.stub.Tick, request)

    async def views(self, state: engine_pb2.GameState, player_ids: Sequence[int]) -> list[bytes]:
        """JSON views of one state, in the order of ``player_ids`` (0 = spectator)."""
        reply = await self._call(
            self.stub.Views, engine_pb2.ViewsRequest(state=state, player_ids=list(player_ids))
        )
        return list(reply.views)

    async def valid_actions(
        self, state: engine_pb2.GameState, player_id: int, unit_id: int
    ) -> bytes:
        """JSON list of legal actions. Raises ServiceError."""
        reply = await self._call(
            self.stub.ValidActions,
            engine_pb2.ValidActionsRequest(state=state, player_id=player_id, unit_id=unit_id),
        )
        return reply.actions

    async def patterns(self) -> bytes:
        """The Life stamp library as JSON (``{"categories", "patterns"}``). Raises ServiceError."""
        reply = await self._call(self.stub.Patterns, engine_pb2.PatternsRequest())
        return reply.catalogue

    async def levels(self) -> bytes:
        """The campaign levels as JSON (list of ``{"number", "name", "hint", "width",
        "height", "zone", "budget", "hopeless"}``). Raises ServiceError."""
        reply = await self._call(self.stub.Levels, engine_pb2.LevelsRequest())
        return reply.levels

    async def player_log(self, events: Sequence[events_pb2.Event], player_id: int) -> bytes:
        """A player's fog-filtered view of a whole log (CellWar), as JSON: a list of
        ``{"seq", "type", "actor", "payload"}``. Raises ServiceError."""
        reply = await self._call(
            self.stub.PlayerLog, engine_pb2.PlayerLogRequest(events=events, player_id=player_id)
        )
        return reply.events
