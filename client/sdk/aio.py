"""The asynchronous client: the operations of :mod:`client.sdk.ops` run on
``httpx.AsyncClient`` and ``websockets`` (asyncio)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import websockets
from websockets.exceptions import ConnectionClosed

from client.sdk import core
from client.sdk.core import DEFAULT_TIMEOUT_S, ApiError, RetryHook, Seat, tls_context
from client.sdk.ops import CommandOperations, Operations, Steps, install


async def _run(owner: Any, steps: Steps) -> Any:
    """Run an operation's steps on ``owner`` (each a coroutine method); its result."""
    reply: Any = None
    error: Exception | None = None
    while True:
        try:
            name, args, kwargs = steps.throw(error) if error is not None else steps.send(reply)
        except StopIteration as done:
            return done.value
        try:
            reply, error = await getattr(owner, name)(*args, **kwargs), None
        except Exception as exc:  # noqa: BLE001 - thrown into the operation, which decides
            reply, error = None, exc


def _coroutine(op: Callable[..., Steps]) -> Callable[..., Any]:
    async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await _run(self, op(self, *args, **kwargs))

    return method


class AsyncCellWarClient(Operations):
    """Asynchronous client of one CellWar server.

    Args:
        base_url: e.g. ``"http://localhost:8000"``.
        timeout: seconds per HTTP request (and per command's answer on a socket).
        transport: an httpx transport (e.g. ``httpx.ASGITransport(app)`` in tests).
        retry_unavailable_s: for how long (seconds) a call safe to repeat (a GET, or a
            POST with its Idempotency-Key) is tried again while the server is unavailable
            (503, or nothing listening: a restart); 0 (default) = fail at once.
        on_retry: ``on_retry(reason, wait_s)``, told before each wait of a retry.

    Use as ``async with AsyncCellWarClient(url) as api: ...`` or call :meth:`aclose`.
    All methods raise :class:`ApiError` on an error answer and ``httpx.HTTPError`` when
    the server cannot be reached.
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        transport: httpx.AsyncBaseTransport | None = None,
        retry_unavailable_s: float = 0.0,
        on_retry: RetryHook | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout
        self._http = httpx.AsyncClient(
            base_url=self.base_url, timeout=timeout, transport=transport, verify=tls_context()
        )
        self.retry_unavailable_s = retry_unavailable_s
        self.on_retry = on_retry

    async def __aenter__(self) -> AsyncCellWarClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._http.aclose()

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One request with its retries (:class:`client.sdk.core._Retries`); the JSON answer."""
        retries = core._Retries(self.retry_unavailable_s, method, kwargs, self.on_retry)
        while True:
            try:
                response = await self._http.request(method, path, **kwargs)
            except core._RESTARTING as exc:
                wait = retries.after_error(exc)
            else:
                wait = retries.after(response)
                if wait is None:
                    return response.json()
            await asyncio.sleep(wait)

    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def wait_for_match(
        self, ticket_id: str, ticket_token: str, *, timeout: float = 330.0, poll_s: float = 0.25
    ) -> Seat:
        """Wait until the ticket ends (its stream, else polling every ``poll_s`` seconds)
        and return the matched seat.

        Raises:
            ApiError: the ticket ended without a match (code ``TICKET_CANCELLED`` /
                ``TICKET_EXPIRED``), or the server refused.
            TimeoutError: still searching after ``timeout`` seconds.
        """

        async def wait() -> Seat:
            try:
                last = None
                async for message in self.watch_ticket(ticket_id, ticket_token):
                    last = message
                if last is not None and core._ticket_final(last):
                    return core._seat_of(last)
            except (*core._NO_SOCKET, ApiError):
                pass  # fall back to polling (a proxy without WebSocket, a dropped stream)
            return await _run(self, Operations.wait_for_match(self, ticket_id, ticket_token, timeout=timeout,
                                                              poll_s=poll_s))

        return await asyncio.wait_for(wait(), timeout)

    async def events_jsonl(
        self, game_id: str, token: str | None = None, from_seq: int = 0
    ) -> AsyncIterator[dict[str, Any]]:
        """The event log streamed as JSON Lines (``?format=jsonl``), one event at a time."""
        method, path, kwargs = core._jsonl_request(game_id, token, from_seq)
        async with self._http.stream(method, path, **kwargs) as r:
            if not r.is_success:
                await r.aread()
                core._raise_for_error(r)
            async for line in r.aiter_lines():
                if line.strip():
                    yield json.loads(line)

    # -- WebSocket streams

    async def stream(self, game_id: str, token: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """Messages of the game's WebSocket stream: ``{"type": "view" | "finished", "seq",
        "view"}``; ends after ``finished`` (or when the server closes cleanly).

        Raises:
            ApiError: the server closed the stream with an error (4401 → status 401, ...).
        """
        # the token as the subprotocol bearer.<token>, never in the URL (it would reach logs)
        async for message in self._messages(core.stream_url(self.base_url, game_id, None), core.stream_subprotocols(token)):
            yield message

    async def spectate(self, game_id: str, delay_s: float | None = None) -> AsyncIterator[dict[str, Any]]:
        """A delayed spectator's stream: ``{"type": "view" | "finished", "seq", "view"}``
        of the game as it was ``delay_s`` seconds ago; ends after ``finished``.

        Raises:
            ApiError: the server closed the stream with an error.
        """
        async for message in self._messages(core.spectate_url(self.base_url, game_id, delay_s)):
            yield message

    async def watch_ticket(self, ticket_id: str, ticket_token: str) -> AsyncIterator[dict[str, Any]]:
        """The ticket now and at each status change (``{"type": "ticket", ...}``); ends
        after a final status. Raises ApiError for a stream closed with an error."""
        url = core.ticket_stream_url(self.base_url, ticket_id, None)
        async for message in self._messages(url, core.stream_subprotocols(ticket_token), core._ticket_final):
            yield message

    async def _messages(
        self, url: str, subprotocols: list[str] | None = None, is_last: Callable[[dict[str, Any]], bool] = core._finished
    ) -> AsyncIterator[dict[str, Any]]:
        """The JSON messages of a stream WebSocket until the last one or a clean close;
        a socket a restart or a fault closed (:data:`core.REOPEN_CLOSE_CODES`) is opened
        again while ``retry_unavailable_s`` lasts (the stream goes on with the state
        then: its first message may repeat the last one), else its
        ``ApiError(503, "UNAVAILABLE")`` is raised. An opening that fails as in a
        restart (nothing listening, a proxy's 502/503/504) is tried again within the same
        budget; past it the first opening's error is raised as it came
        (:class:`core._Reopening`)."""
        stream = core._Reopening(is_last, self.retry_unavailable_s, self.on_retry)
        while True:
            try:
                ws = await websockets.connect(url, **core._ws_options(subprotocols, stream.open_timeout()))
            except core._NO_SOCKET as exc:
                wait = stream.not_opened(exc)
            else:
                stream.opened()
                async with ws:
                    with contextlib.suppress(ConnectionClosed):
                        async for raw in ws:
                            message = stream.read(raw)
                            if message is not None:
                                yield message
                                if stream.done:
                                    return
                wait = stream.after_close(ws.close_code, ws.close_reason)
                if wait is None:
                    return
            await asyncio.sleep(wait)

    def commands(self, game_id: str, token: str) -> AsyncCommands:
        """The seat's commands over its stream socket (one round trip on an open socket
        instead of an HTTP request each), falling back to REST without one::

            async with api.commands(game_id, seat.token) as cmds:
                answer = await cmds.act({"unit_id": 7, "dx": 1, "dy": 0})   # {"seq", "view"}
                await cmds.end_turn()
                async for message in cmds.messages():   # the stream's own frames
                    ...

        Raises (from the commands): :class:`ApiError` as the REST calls do.
        """
        return AsyncCommands(self, game_id, token)


install(AsyncCellWarClient, Operations, _coroutine)


class AsyncCommands(CommandOperations):
    """The commands of one seat over its stream socket (see
    :meth:`AsyncCellWarClient.commands`): ``act(action)``, ``end_turn()`` (each
    ``{"seq", "view"}``), and :meth:`messages`, the socket's stream frames (``view``,
    ``finished``) as :meth:`AsyncCellWarClient.stream` gives them. Commands may be sent
    from several tasks at once; each waits for its own answer.

    Attributes:
        open_error: why the socket could not be opened (then every command goes over
            REST), else None.
    """

    def __init__(self, client: AsyncCellWarClient, game_id: str, token: str) -> None:
        super().__init__(client, game_id, token)
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._arrived = asyncio.Event()
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._close_code: int | None = None
        self._close_reason: str | None = None

    async def __aenter__(self) -> AsyncCommands:
        url = core.stream_url(self._client.base_url, self.game_id, None)
        try:
            self._ws = await websockets.connect(url, **core._ws_options(core.stream_subprotocols(self.token)))
        except core._NO_SOCKET as exc:
            self.open_error = exc
        else:
            self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the socket (commands after this go over REST)."""
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader

    @property
    def over_socket(self) -> bool:
        """Whether commands go over the socket now (else over REST)."""
        return self._reader is not None and not self._reader.done()

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        """The socket's stream messages (``{"type": "view" | "finished", "seq", "view"}``;
        the answers of commands are not among them); ends after ``finished`` or a clean
        close. Unread messages are kept up to :data:`client.sdk.core.MESSAGES_KEPT`.

        Raises:
            ApiError: the server closed the socket with an error (4401 → status 401, ...).
            OSError, websockets.WebSocketException: the socket could not be opened.
        """
        if self.open_error is not None:
            raise self.open_error
        while True:
            while self._kept:
                message = self._kept.popleft()
                yield message
                if core._finished(message):
                    return
            if not self.over_socket:
                err = self._frames.close_error(self._close_code, self._close_reason)
                if err is not None:
                    raise err
                return
            self._arrived.clear()
            await self._arrived.wait()

    async def _read(self) -> None:
        """Sort the socket's frames (answers to their commands, the rest kept for
        :meth:`messages`) until it closes; then the commands still waiting go over REST."""
        try:
            async for raw in self._ws:
                oldest = next((key for key, answer in self._pending.items() if not answer.done()), None)
                key, item = self._frames.sort(raw, oldest)
                views = self._frames.take_views()
                if views:
                    self._kept.extend(views)
                    self._arrived.set()
                if key is not None:
                    waiting = self._pending.get(key)
                    if waiting is not None and not waiting.done():
                        waiting.set_result(item)
                elif item is not None:
                    self._kept.append(item)
                    self._arrived.set()
        except ConnectionClosed:
            pass
        finally:
            self._close_code, self._close_reason = self._ws.close_code, self._ws.close_reason
            for waiting in self._pending.values():
                if not waiting.done():
                    waiting.set_result(core.FALLBACK)
            self._arrived.set()

    async def _exchange(self, key: str, frame: str) -> Any:
        """Send one command's frame and wait for its answer (:data:`core.FALLBACK` when the
        socket closes first or no answer comes within the client's timeout)."""
        answer = self._pending[key] = asyncio.get_running_loop().create_future()
        try:
            await self._ws.send(frame)
            return await asyncio.wait_for(answer, self._client.timeout_s)
        except (ConnectionClosed, TimeoutError):
            return core.FALLBACK
        finally:
            self._pending.pop(key, None)

    async def _rest(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return await getattr(self._client, name)(*args, **kwargs)


install(AsyncCommands, CommandOperations, _coroutine)
