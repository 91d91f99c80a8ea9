"""What every bot of the public API shares (:class:`client.bots.life.LifeBot`,
:class:`client.bots.cellwar.CellWarBot`): a seat taken once, one socket per seat that
carries both the views and the commands (``api.commands``, docs/api/websocket.md
"Commands"; REST when it cannot be opened, as the SDK falls back), the loop that
follows the game's views (:meth:`ApiBot._follow`: the stream, polling when it is silent
or gone), the ``on_view`` progress callback and the ``on_command`` timing hook."""

from __future__ import annotations

import asyncio
import contextlib
import random
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from client.sdk import ApiError, AsyncCellWarClient, AsyncCommands, Seat

#: How long (seconds) the bots wait for a restarting server before they give up
#: (``retry_unavailable_s`` of the SDK's clients).
RETRY_UNAVAILABLE_S = 60.0

#: Ways a bot sends its commands: ``socket`` (its stream socket, which also brings the
#: views; REST whenever the SDK falls back) or ``rest`` (an HTTP request each, the views
#: from a stream of their own).
COMMANDS_OVER = ("socket", "rest")
#: A command refused 429 ``RATE_LIMITED`` (the seat's command bucket, 50/s by default: a
#: bot's turn of many units over the socket can outrun it) is sent again with the same
#: key after this many seconds, at most :data:`RATE_LIMITED_TRIES` times.
RATE_LIMITED_WAIT_S = 1.0
RATE_LIMITED_TRIES = 30


def said_retry(reason: str, wait_s: float) -> None:
    """The bots' ``on_retry``: one line on stderr per wait."""
    sys.stderr.write(f"server unavailable ({reason}); trying again in {wait_s:.2f} s\n")


@dataclass(frozen=True)
class CommandTiming:
    """One command a bot sent, as its ``on_command`` hook is told.

    Attributes:
        name: ``action`` or ``end_turn``.
        key: its idempotency key (the frame's ``id`` on the socket, ``Idempotency-Key``
            over REST).
        sent: ``time.monotonic()`` when it was sent (seconds).
        seconds: from the send until its answer (or error), retries and a fallback to
            REST included.
        over_socket: the socket was open when it was sent and still after its answer (a
            command that fell back to REST after the socket closed is False).
        status: 200, or the error's HTTP status (0 for no answer: a transport error).
        code: the error's machine code (``NOT_YOUR_TURN``, ...), None for an answer.
    """

    name: str
    key: str
    sent: float
    seconds: float
    over_socket: bool
    status: int
    code: str | None


OnCommand = Callable[[Any, CommandTiming], None]


class ApiBot:
    """The base of a bot driven by the public API.

    Args:
        api: the client (shared between bots is fine).
        game_id: the game to join.
        name: the player name shown to others.
        seed: seeds the bot's own ``random.Random``.
        poll_s: seconds without a stream message after which the state is polled.
        on_view: called with (bot, view) for every view seen (progress display).
        commands: one of :data:`COMMANDS_OVER` (default ``socket``).
        on_command: called with (bot, :class:`CommandTiming`) after every command.

    Raises:
        ValueError: ``commands`` not one of :data:`COMMANDS_OVER`.
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
        commands: str = "socket",
        on_command: OnCommand | None = None,
    ) -> None:
        if commands not in COMMANDS_OVER:
            raise ValueError(f"commands must be one of {COMMANDS_OVER}, got {commands!r}")
        self.api = api
        self.game_id = game_id
        self.name = name
        self.rng = random.Random(seed)
        self.poll_s = poll_s
        self.on_view = on_view
        self.commands_over = commands
        self.on_command = on_command
        self.seat: Seat | None = None
        self.actions_sent = 0
        #: The seat's socket while :meth:`play` runs (``socket`` mode), else None.
        self.cmds: AsyncCommands | None = None
        #: The newest view :meth:`_follow` handed on (None before the first).
        self.last_view: dict[str, Any] | None = None

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

    @contextlib.asynccontextmanager
    async def _socket(self, seat: Seat) -> AsyncIterator[None]:
        """The seat's command socket as :attr:`cmds` for the block (``socket`` mode; a
        socket that cannot be opened leaves every command to REST and the views to
        polling, as a failed stream does)."""
        if self.commands_over != "socket":
            yield
            return
        async with self.api.commands(self.game_id, seat.token) as cmds:
            self.cmds = cmds
            try:
                yield
            finally:
                self.cmds = None

    async def _follow(
        self,
        seat: Seat,
        act: Callable[[dict[str, Any]], Awaitable[None]],
        *,
        out: Callable[[dict[str, Any]], bool] = lambda _view: False,
        ended_poll_s: float | None = None,
    ) -> dict[str, Any]:
        """Follow the game for ``seat`` (its command socket for the block, see
        :meth:`_socket`): every view is told to ``on_view``, then ``await act(view)``,
        until a view is finished or ``out(view)``, which is returned.

        The views: the state now, then each view of the stream (:meth:`_read_stream`);
        the state is polled after ``poll_s`` seconds without one, at once when the stream
        ends, and from then on every ``ended_poll_s`` seconds (None: ``poll_s``).
        """
        async with self._socket(seat):
            queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
            reader = asyncio.create_task(self._read_stream(seat, queue))
            wait_s = self.poll_s
            try:
                await queue.put(await self.api.state(self.game_id, seat.token))
                while True:
                    try:
                        view = await asyncio.wait_for(queue.get(), timeout=wait_s)
                    except TimeoutError:
                        view = await self.api.state(self.game_id, seat.token)
                    if view is None:  # the stream ended: polling takes over
                        wait_s = self.poll_s if ended_poll_s is None else ended_poll_s
                        view = await self.api.state(self.game_id, seat.token)
                    self.last_view = view
                    await self._notify(view)
                    if view.get("phase") == "finished" or out(view):
                        return view
                    await act(view)
            finally:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await reader

    async def _read_stream(self, seat: Seat, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        """:meth:`_forward_views`, then None on ``queue`` once the stream ended or failed
        (network, 4xxx): polling takes over."""
        try:
            await self._forward_views(seat, queue)
        except Exception:  # the stream failed (network, 4xxx): polling takes over
            pass
        await queue.put(None)

    async def _forward_views(self, seat: Seat, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        """Put the view of every stream message on ``queue`` until the stream ends
        (raises when it fails: network, 4xxx). The messages come from the command
        socket when there is one, else from a stream of their own."""
        messages = self.cmds.messages() if self.cmds is not None else self.api.stream(self.game_id, seat.token)
        async for message in messages:
            view = message.get("view")
            if isinstance(view, dict):
                await queue.put(view)

    async def command(self, action: dict[str, Any] | None) -> dict[str, Any]:
        """Send one command of the seat: ``action`` (an action object of the contract), or
        the end of the turn for None; over the socket when it is open, else REST (same
        answers, same errors). Counts it in ``actions_sent``; tells ``on_command``.
        Returns ``{"seq", "view"}``.

        A 429 ``RATE_LIMITED`` is waited out (:data:`RATE_LIMITED_WAIT_S`) and the
        command sent again with the same key, at most :data:`RATE_LIMITED_TRIES` times.

        Raises:
            ApiError: the server refused it; httpx.HTTPError: unreachable.
        """
        assert self.seat is not None, "join first"
        self.actions_sent += 1
        key = str(uuid.uuid4())
        cmds = self.cmds
        socket_before = cmds is not None and cmds.over_socket
        status, code = 200, None
        sent = time.monotonic()
        try:
            for _ in range(RATE_LIMITED_TRIES - 1):
                try:
                    return await self._send(cmds, action, key)
                except ApiError as err:
                    if err.status != 429:
                        raise
                await asyncio.sleep(RATE_LIMITED_WAIT_S)  # the same key: applied once
            return await self._send(cmds, action, key)
        except ApiError as err:
            status, code = err.status, err.code
            raise
        except Exception as exc:
            status, code = 0, type(exc).__name__
            raise
        finally:
            if self.on_command is not None:
                self.on_command(
                    self,
                    CommandTiming(
                        name="end_turn" if action is None else "action",
                        key=key,
                        sent=sent,
                        seconds=time.monotonic() - sent,
                        over_socket=socket_before and cmds is not None and cmds.over_socket,
                        status=status,
                        code=code,
                    ),
                )

    async def _send(self, cmds: AsyncCommands | None, action: dict[str, Any] | None, key: str) -> dict[str, Any]:
        """One try of :meth:`command`: over the seat's socket when there is one, else REST."""
        assert self.seat is not None
        if cmds is not None:
            if action is None:
                return await cmds.end_turn(idempotency_key=key)
            return await cmds.act(action, idempotency_key=key)
        if action is None:
            return await self.api.end_turn(self.game_id, self.seat.token, idempotency_key=key)
        return await self.api.act(self.game_id, self.seat.token, action, idempotency_key=key)

    async def _notify(self, view: dict[str, Any]) -> None:
        if self.on_view is not None:
            result = self.on_view(self, view)
            if asyncio.iscoroutine(result):
                await result
