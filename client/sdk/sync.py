"""The blocking client: the operations of :mod:`client.sdk.ops` run on ``httpx.Client``
and ``websockets.sync`` (notebooks, scripts, a policy's thread)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import websockets
import websockets.sync.client
from websockets.exceptions import ConnectionClosed

from client.sdk import core
from client.sdk.core import DEFAULT_TIMEOUT_S, RetryHook, tls_context
from client.sdk.ops import CommandOperations, Operations, Steps, install


def _run(owner: Any, steps: Steps) -> Any:
    """Run an operation's steps on ``owner`` (each a blocking method); its result."""
    reply: Any = None
    error: Exception | None = None
    while True:
        try:
            name, args, kwargs = steps.throw(error) if error is not None else steps.send(reply)
        except StopIteration as done:
            return done.value
        try:
            reply, error = getattr(owner, name)(*args, **kwargs), None
        except Exception as exc:  # noqa: BLE001 - thrown into the operation, which decides
            reply, error = None, exc


def _blocking(op: Callable[..., Steps]) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _run(self, op(self, *args, **kwargs))

    return method


class CellWarClient(Operations):
    """Blocking client with the same methods as :class:`AsyncCellWarClient`.

    Args:
        base_url: e.g. ``"http://localhost:8000"``.
        timeout: seconds per HTTP request (and per command's answer on a socket).
        transport: an httpx transport (tests).
        retry_unavailable_s, on_retry: as :class:`AsyncCellWarClient`.

    Use as ``with CellWarClient(url) as api: ...`` or call :meth:`close`. All methods
    raise :class:`ApiError` on an error answer and ``httpx.HTTPError`` when the server
    cannot be reached. :meth:`wait_for_match` polls (no ticket stream).
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
        retry_unavailable_s: float = 0.0,
        on_retry: RetryHook | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout
        self._http = httpx.Client(
            base_url=self.base_url, timeout=timeout, transport=transport, verify=tls_context()
        )
        self.retry_unavailable_s = retry_unavailable_s
        self.on_retry = on_retry

    def __enter__(self) -> CellWarClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One request with its retries (:class:`client.sdk.core._Retries`); the JSON answer."""
        retries = core._Retries(self.retry_unavailable_s, method, kwargs, self.on_retry)
        while True:
            try:
                response = self._http.request(method, path, **kwargs)
            except core._RESTARTING as exc:
                wait = retries.after_error(exc)
            else:
                wait = retries.after(response)
                if wait is None:
                    return response.json()
            time.sleep(wait)

    def _sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def events_jsonl(self, game_id: str, token: str | None = None, from_seq: int = 0) -> Iterator[dict[str, Any]]:
        """The event log streamed as JSON Lines (``?format=jsonl``), one event at a time."""
        method, path, kwargs = core._jsonl_request(game_id, token, from_seq)
        with self._http.stream(method, path, **kwargs) as r:
            if not r.is_success:
                r.read()
                core._raise_for_error(r)
            for line in r.iter_lines():
                if line.strip():
                    yield json.loads(line)

    # -- WebSocket streams

    def stream(self, game_id: str, token: str | None = None) -> Iterator[dict[str, Any]]:
        """Blocking iterator over the stream's messages; ends after ``finished``.

        Raises:
            ApiError: the server closed the stream with an error code (4401, 4404, ...).
        """
        # the token as the subprotocol bearer.<token>, never in the URL (it would reach logs)
        yield from self._messages(core.stream_url(self.base_url, game_id, None), core.stream_subprotocols(token))

    def spectate(self, game_id: str, delay_s: float | None = None) -> Iterator[dict[str, Any]]:
        """A delayed spectator's stream (see :meth:`AsyncCellWarClient.spectate`)."""
        yield from self._messages(core.spectate_url(self.base_url, game_id, delay_s))

    def watch_ticket(self, ticket_id: str, ticket_token: str) -> Iterator[dict[str, Any]]:
        """The ticket now and at each status change; ends after a final status."""
        url = core.ticket_stream_url(self.base_url, ticket_id, None)
        yield from self._messages(url, core.stream_subprotocols(ticket_token), core._ticket_final)

    def _messages(
        self, url: str, subprotocols: list[str] | None = None, is_last: Callable[[dict[str, Any]], bool] = core._finished
    ) -> Iterator[dict[str, Any]]:
        """The JSON messages of a stream WebSocket (see :meth:`AsyncCellWarClient._messages`:
        a socket a restart or a fault closed is opened again while ``retry_unavailable_s``
        lasts)."""
        stream = core._Reopening(is_last, self.retry_unavailable_s, self.on_retry)
        while True:
            try:
                ws = websockets.sync.client.connect(url, **core._ws_options(subprotocols, stream.open_timeout()))
            except core._NO_SOCKET as exc:
                wait = stream.not_opened(exc)
            else:
                stream.opened()
                with ws, contextlib.suppress(ConnectionClosed):
                    for raw in ws:
                        message = stream.read(raw)
                        if message is not None:
                            yield message
                            if stream.done:
                                return
                wait = stream.after_close(ws.close_code, ws.close_reason)
                if wait is None:
                    return
            time.sleep(wait)

    def commands(self, game_id: str, token: str) -> Commands:
        """The seat's commands over its stream socket, falling back to REST without one
        (see :meth:`AsyncCellWarClient.commands`)::

            with api.commands(game_id, seat.token) as cmds:
                answer = cmds.act({"unit_id": 7, "dx": 1, "dy": 0})   # {"seq", "view"}
                cmds.end_turn()
        """
        return Commands(self, game_id, token)


install(CellWarClient, Operations, _blocking)


class Commands(CommandOperations):
    """The blocking commands of one seat over its stream socket (see
    :class:`client.sdk.AsyncCommands`), for one thread: a command reads the socket until
    its answer, keeping the stream frames it reads on the way for :meth:`messages`.

    Attributes:
        open_error: why the socket could not be opened (then every command goes over
            REST), else None.
    """

    def __init__(self, client: CellWarClient, game_id: str, token: str) -> None:
        super().__init__(client, game_id, token)
        self._ws: Any = None
        self._socket = contextlib.ExitStack()
        self._closed: ConnectionClosed | None = None

    def __enter__(self) -> Commands:
        url = core.stream_url(self._client.base_url, self.game_id, None)
        try:
            connect = websockets.sync.client.connect(url, **core._ws_options(core.stream_subprotocols(self.token)))
            self._ws = self._socket.enter_context(connect)
        except core._NO_SOCKET as exc:
            self.open_error = exc
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the socket (commands after this go over REST)."""
        self._socket.close()
        self._ws = None

    @property
    def over_socket(self) -> bool:
        """Whether commands go over the socket now (else over REST)."""
        return self._ws is not None and self._closed is None

    def messages(self) -> Iterator[dict[str, Any]]:
        """The socket's stream messages (see :meth:`AsyncCommands.messages`).

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
                if self._closed is not None:
                    self._frames.closed(self._closed)
                return
            self._receive(None, None)

    def _receive(self, timeout: float | None, waiting: str | None) -> tuple[str | None, Any]:
        """One frame sorted (:meth:`core._CommandFrames.sort`; ``waiting``: the command waiting
        for its answer), a stream message kept; ``(None, None)`` once the socket is closed.

        Raises:
            TimeoutError: no frame within ``timeout`` seconds.
        """
        try:
            key, item = self._frames.sort(self._ws.recv(timeout), waiting)
        except ConnectionClosed as exc:
            self._closed = exc
            return None, None
        self._kept.extend(self._frames.take_views())
        if key is None and item is not None:
            self._kept.append(item)
        return key, item

    def _exchange(self, key: str, frame: str) -> Any:
        """Send one command's frame and read until its answer (:data:`core.FALLBACK` when the
        socket closes first or no answer comes within the client's timeout)."""
        deadline = time.monotonic() + self._client.timeout_s
        try:
            self._ws.send(frame)
            while self.over_socket:
                got, answer = self._receive(max(0.0, deadline - time.monotonic()), key)
                if got == key:
                    return answer
        except ConnectionClosed as exc:  # from send: the socket was closed
            self._closed = exc
        except TimeoutError:
            pass
        return core.FALLBACK

    def _rest(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._client, name)(*args, **kwargs)


install(Commands, CommandOperations, _blocking)
