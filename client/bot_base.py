"""What every bot of the public API shares (:class:`client.bots.life.LifeBot`,
:class:`client.bots.cellwar.CellWarBot`): a seat taken once, the views of the
WebSocket stream forwarded to a queue, the ``on_view`` progress callback."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from client.sdk import AsyncCellWarClient, Seat

#: How long (seconds) the bots wait for a restarting server before they give up
#: (``retry_unavailable_s`` of the SDK's clients).
RETRY_UNAVAILABLE_S = 60.0


def said_retry(reason: str, wait_s: float) -> None:
    """The bots' ``on_retry``: one line on stderr per wait."""
    sys.stderr.write(f"server unavailable ({reason}); trying again in {wait_s:.2f} s\n")


class ApiBot:
    """The base of a bot driven by the public API.

    Args:
        api: the client (shared between bots is fine).
        game_id: the game to join.
        name: the player name shown to others.
        seed: seeds the bot's own ``random.Random``.
        poll_s: seconds without a stream message after which the state is polled.
        on_view: called with (bot, view) for every view seen (progress display).
    """

    def __init__(
        self,
        api: AsyncCellWarClient,
        game_id: str,
        name: str,
        *,
        seed: int,
        poll_s: float,
        on_view: Callable[[Any, dict[str, Any]], Awaitable[None] | None] | None,
    ) -> None:
        self.api = api
        self.game_id = game_id
        self.name = name
        self.rng = random.Random(seed)
        self.poll_s = poll_s
        self.on_view = on_view
        self.seat: Seat | None = None
        self.actions_sent = 0

    async def play(self) -> dict[str, Any]:
        """Play until the game is finished; returns the final view."""
        raise NotImplementedError

    async def join(self) -> Seat:
        """Take a seat (once)."""
        if self.seat is None:
            self.seat = await self.api.join(self.game_id, self.name)
        return self.seat

    async def run(self) -> dict[str, Any]:
        """Join, then :meth:`play`. Returns the final view."""
        await self.join()
        return await self.play()

    async def _forward_views(self, seat: Seat, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        """Put the view of every stream message on ``queue`` until the stream ends
        (raises when it fails: network, 4xxx)."""
        async for message in self.api.stream(self.game_id, seat.token):
            view = message.get("view")
            if isinstance(view, dict):
                await queue.put(view)

    async def _notify(self, view: dict[str, Any]) -> None:
        if self.on_view is not None:
            result = self.on_view(self, view)
            if asyncio.iscoroutine(result):
                await result
