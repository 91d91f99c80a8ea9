"""The gateway's stub of one session channel: ``Act`` and ``EndTurn`` over the channel's
command stream (gateway/command_stream.py), ``Watch`` over its watch stream
(gateway/watch_stream.py), every other method the generated stub's own."""

from __future__ import annotations

from typing import Any

import grpc

from cellwar.v1 import session_pb2_grpc
from gateway.command_stream import MAX_IN_FLIGHT, CommandStream, StreamedCommand
from gateway.watch_stream import WatchStream


class StreamingSessionStub:
    """A ``SessionStub`` of one channel whose ``Act`` and ``EndTurn`` go over the
    channel's :class:`CommandStream` and whose ``Watch`` goes over its
    :class:`WatchStream`; every other method is the stub's own.

    Args:
        channel: the session channel.
        max_in_flight: the stream's bound (:data:`MAX_IN_FLIGHT`).
        name: the instance's address, for the log.
    """

    def __init__(
        self, channel: grpc.aio.Channel, *, max_in_flight: int = MAX_IN_FLIGHT, name: str = ""
    ) -> None:
        self._stub = session_pb2_grpc.SessionStub(channel)
        self.commands = CommandStream(self._stub, max_in_flight=max_in_flight, name=name)
        self.Act = StreamedCommand(self.commands, "act")  # noqa: N815 - the gRPC method's name
        self.EndTurn = StreamedCommand(self.commands, "end_turn")  # noqa: N815
        self.watches = WatchStream(self._stub, name=name)
        self.Watch = self.watches.watch  # noqa: N815

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._stub, name)

    async def aclose(self) -> None:
        """End the command and watch streams (before the channel closes)."""
        await self.commands.aclose()
        await self.watches.aclose()


async def close_streams(session: Any) -> None:
    """End the command and watch streams of a session client (a :class:`StreamingSessionStub`, a
    ``FailoverStub`` over them, or a plain stub: nothing to do)."""
    stubs = getattr(session, "stubs", None) or [session]
    for stub in stubs:
        if isinstance(stub, StreamingSessionStub):
            await stub.aclose()
