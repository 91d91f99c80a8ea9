"""Commands sent over ``WS /game/{id}/stream`` (docs/api/websocket.md "Commands").

A client may send, on its player socket, the frames

- ``{"type": "action", "id": KEY, "action": {...}}`` (``action``: the REST body of
  ``POST /game/{id}/action``),
- ``{"type": "end_turn", "id": KEY}`` (``POST /game/{id}/end_turn``),

and the server answers each, in the order they were sent, with
``{"type": "result", "id": KEY, "seq": n, "view": {...}}`` (REST's ``{"seq", "view"}``)
or ``{"type": "error", "id": KEY, "status": 409, "error": {"code", "message"}}`` (REST's
status and body; + ``"retry_after"`` seconds with 429 and 503). ``id`` is the command
id with the rules of REST's ``Idempotency-Key`` (1..200 printable ASCII characters, no
space; a key belongs to one game and one player, shared with REST: a command resent
with the same key, over either, is applied once and answered with the same ``seq``; the
same key with another body → 422 ``IDEMPOTENCY_KEY_REUSED``). Validation and the
session call are REST's own (gateway/commands.py).

The legal moves a CellWar player asks before an action come the same way, so a move
needs no HTTP request: ``{"type": "valid_actions", "id": KEY, "unit_id": 7}``
(``unit_id`` left out or null: every unit of the player's) is answered, in order with
the commands, with ``{"type": "valid_actions", "id": KEY, "actions": [...]}`` (REST's
``GET /game/{id}/valid_actions`` body) or REST's error frame. It is a read: ``id`` only
pairs the answer with the question (the same characters as a command's), nothing is
recorded, and asking again is harmless.

A frame that is not a command is answered with an error frame and nothing is applied;
the socket stays open (``id`` is the frame's ``id`` when it is a string, else null):

=====================================================  ======  ======================
frame                                                  status  code
=====================================================  ======  ======================
above ``CELLWAR_WS_MAX_MESSAGE_BYTES`` (4 KiB)          413     ``PAYLOAD_TOO_LARGE``
not JSON, not an object, a field beyond the type's      422     ``MALFORMED``
``id`` missing or not a valid key, ``action`` not a     422     ``MALFORMED``
valid action body (REST's message), ``unit_id`` not
null or an integer 1..2³²-1
another ``type``                                        422     ``UNKNOWN_FRAME_TYPE``
a command on a spectator's socket (no player token)     403     ``FORBIDDEN``
over the seat's command bucket (REST's, shared)         429     ``RATE_LIMITED``
the player token expired since the socket opened        401     ``TOKEN_EXPIRED``
=====================================================  ======  ======================

Limits: a player's command frame takes a token from the seat's command bucket, the
one its REST commands take from (``CELLWAR_RATE_LIMIT_PER_S`` 50/s, burst 100:
``gateway.limits.player_bucket_key``); a ``valid_actions`` frame takes none, as REST's
``GET`` takes none (the socket answers its frames one at a time). Both give the
socket's own flood bucket
(``CELLWAR_WS_MESSAGES_PER_S`` 5/s, burst 20) its token back
(``gateway.limits.WS_CREDIT_KEY``): commands go as fast over the socket as over REST,
while anything else (bad frames, a spectator's frames) still closes the socket with
1008 after the burst.

Order: one reader decodes and checks frames as they come and queues their replies (at
most :data:`MAX_PENDING` waiting; then it stops reading until one is done), one worker
runs them one after the other (the session call, then the reply), so replies leave in
the order of the frames and a command starts after the previous one was answered (the
session call is a frame of the gateway's one ``Session.Commands`` stream per session
channel, gateway/command_stream.py, beside the commands of every other socket). View
frames of the socket are sent meanwhile by the stream's pump; a command's ``result``
and the ``view`` frame of the same change come in either order.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import re
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import grpc
import orjson
import structlog
from fastapi import WebSocket
from pydantic import BaseModel

from gateway import commands
from gateway.deps import COMMAND_ID_MAX_CHARS, COMMAND_ID_MIN_CHARS
from gateway.errors import ApiError, Code, from_rpc_error
from gateway.limits import (
    TOO_MANY_REQUESTS,
    WS_CREDIT_KEY,
    WS_TOO_LARGE_KEY,
    player_bucket_key,
    refusal,
)
from gateway.schemas import MAX_UNIT_ID
from gateway.wire import error_frame, result_frame, seq_view_json, valid_actions_frame
from services.common.jsonwire import IDEMPOTENCY_KEY_PATTERN

if TYPE_CHECKING:
    from gateway.limits import TokenBuckets
    from gateway.observability import Metrics
    from gateway.tokens import TokenSigner

log = structlog.get_logger("gateway.ws_commands")

#: A run of 19 digits in a frame: a number that may lie outside 64 bits (-2**63 has 19
#: digits). orjson reads such a number as a float, so ``99999999999999999999`` would be
#: refused as "not a valid integer" where REST's body (the standard library's ``json``)
#: is refused as too large.
_LONG_DIGITS = re.compile(r"[0-9]{19}")
_LONG_DIGITS_BYTES = re.compile(rb"[0-9]{19}")


def _loads(data: str | bytes) -> Any:
    """A frame's JSON value as REST reads a body (the same value, so the same answer): by
    orjson, or by ``json`` where a number may lie outside int64 (orjson reads it as a
    float) or orjson refuses what ``json`` takes (``NaN``, ``Infinity``, ``1e400``).
    Raises ValueError (``orjson.JSONDecodeError`` is one) for text that is not JSON."""
    if (_LONG_DIGITS if isinstance(data, str) else _LONG_DIGITS_BYTES).search(data):
        return json.loads(data)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


#: Replies a socket may have waiting in order (commands queued behind the running one);
#: past it the socket's frames are not read until one is answered.
MAX_PENDING = 32
#: Longest wait for the commands already read when the game's stream ends (seconds).
FINISH_TIMEOUT_S = 15.0


class FrameType(StrEnum):
    """``type`` of the frames of the game stream (docs/api/websocket.md)."""

    # server → client
    VIEW = "view"
    FINISHED = "finished"
    RESULT = "result"
    ERROR = "error"
    # client → server
    ACTION = "action"
    END_TURN = "end_turn"
    # both ways: the question and its answer
    VALID_ACTIONS = "valid_actions"


#: The fields each command frame may have (others: ``MALFORMED``, as REST's strict bodies).
_FIELDS: dict[str, frozenset[str]] = {
    FrameType.ACTION: frozenset({"type", "id", "action"}),
    FrameType.END_TURN: frozenset({"type", "id"}),
    FrameType.VALID_ACTIONS: frozenset({"type", "id", "unit_id"}),
}
#: What a client may send (the message of an unknown type names them).
_SENT = "'action', 'end_turn' or 'valid_actions'"
_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN.removeprefix("^").removesuffix("$"))


def check_command_id(value: Any) -> str:
    """The command id of a frame: a string of 1..200 printable ASCII characters without
    spaces (REST's ``Idempotency-Key`` rules, gateway/deps.py).

    Raises:
        ApiError: 422 ``MALFORMED``.
    """
    if (
        not isinstance(value, str)
        or not COMMAND_ID_MIN_CHARS <= len(value) <= COMMAND_ID_MAX_CHARS
        or _KEY.fullmatch(value) is None
    ):
        raise ApiError(
            422,
            Code.MALFORMED,
            f"id: a command frame needs an 'id' of {COMMAND_ID_MIN_CHARS}..{COMMAND_ID_MAX_CHARS} "
            "printable ASCII characters without spaces (the Idempotency-Key rules)",
        )
    return value


@dataclass(frozen=True)
class Command:
    """A checked command frame: ``type`` (``action`` / ``end_turn`` / ``valid_actions``),
    its id, the action (``action``), the unit asked about (``valid_actions``; None: every
    unit)."""

    type: str
    id: str
    action: BaseModel | None = None
    unit_id: int | None = None


def check_unit_id(value: Any) -> int | None:
    """The ``unit_id`` of a ``valid_actions`` frame: None (every unit) or an integer
    1..:data:`gateway.schemas.MAX_UNIT_ID` (a float with no fraction, ``4.0``, is that
    integer, as REST's query parameter takes ``?unit_id=4.0``).

    Raises:
        ApiError: 422 ``MALFORMED``.
    """
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_UNIT_ID:
        raise ApiError(
            422, Code.MALFORMED, f"unit_id: a unit id is an integer 1..{MAX_UNIT_ID}, or null for every unit"
        )
    return value


@dataclass(frozen=True)
class Refusal:
    """The error frame of a frame refused before any session call."""

    type: str
    id: str | None
    error: ApiError
    retry_after_s: int | None = None


#: Results whose view frame a socket remembers, to leave out when the Watch sends it.
SHOWN_KEPT = 8
#: How a view frame of the Watch begins (gateway/wire.py ``seq_view_json``).
_VIEW_HEAD = '{"type":"view","seq":'


def _frame_seq(frame: str) -> int:
    """The ``seq`` of a view frame that begins with :data:`_VIEW_HEAD`."""
    start = len(_VIEW_HEAD)
    return int(frame[start : frame.index(",", start)])


#: Seconds a socket's Watch frames wait at most for the result of the command running
#: (the frame of its change, when it comes first, is then left out).
HOLD_MAX_S = 0.25


class CommandChannel:
    """The commands of one game stream socket: :meth:`read` decodes and checks what the
    client sends, :meth:`work` runs and answers it in order.

    Args:
        websocket: the accepted socket.
        game_id: the game of the path.
        token: the socket's player token (None: a spectator; its commands are 403).
        player_id: the token's seat (0 for a spectator).
        session: the session stub.
        signer: verifies ``token`` again at each command (401 ``TOKEN_EXPIRED`` once it
            expired while the socket was open, as REST answers it).
        buckets: the seats' command buckets shared with REST (None: no rate limit).
        metrics: the gateway's metrics.
    """

    def __init__(
        self,
        websocket: WebSocket,
        game_id: str,
        token: str | None,
        player_id: int,
        session: Any,
        signer: TokenSigner,
        buckets: TokenBuckets | None,
        metrics: Metrics,
    ) -> None:
        self.websocket = websocket
        self.game_id = game_id
        self.token = token
        self.player_id = player_id
        self.session = session
        self.signer = signer
        self.buckets = buckets
        self.metrics = metrics
        self._credit = websocket.scope.get(WS_CREDIT_KEY)
        self._queue: asyncio.Queue[Command | Refusal] = asyncio.Queue(MAX_PENDING)
        #: The view frames the last results stand for (a result's frame may come after
        #: the next command's result), and the Watch frames held while a command runs
        #: (:meth:`deliver`).
        self._shown: collections.deque[str] = collections.deque(maxlen=SHOWN_KEPT)
        self._result_seq = 0  # the newest seq a result sent on this socket carried
        self._running = False
        self._held: list[str] = []
        self._hold_timer: asyncio.TimerHandle | None = None
        self._releasing: set[asyncio.Task] = set()
        self._frame_counters: dict[str, Any] = {}
        self._counters: dict[tuple[str, int], Any] = {}
        self._timers: dict[str, Any] = {}

    # ------------------------------------------------------------------ reading

    async def read(self) -> None:
        """Read the client's frames until it disconnects, queueing a reply for each."""
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            try:
                item = self.decode(message)
            except Exception as exc:  # noqa: BLE001 - a bug: answered INTERNAL, the socket goes on
                log.exception("ws_frame_error", error=repr(exc))
                item = Refusal("invalid", None, ApiError(500, Code.INTERNAL, "internal error"))
            await self._queue.put(item)

    def decode(self, message: dict[str, Any]) -> Command | Refusal:
        """The command of a ``websocket.receive`` message, or the refusal to answer.

        Checks, in REST's order: the frame's shape and id, the seat (a spectator's
        socket: 403), the command bucket (429), the token (401), the action body (422).
        """
        if WS_TOO_LARGE_KEY in message:
            return Refusal(
                "invalid",
                None,
                ApiError(
                    413,
                    Code.PAYLOAD_TOO_LARGE,
                    f"a frame of {message[WS_TOO_LARGE_KEY]} bytes is above the stream's limit "
                    "(CELLWAR_WS_MAX_MESSAGE_BYTES); send this command over REST",
                ),
            )
        data = message.get("text")
        if data is None:
            data = message.get("bytes") or b""
        try:
            frame = _loads(data)
        except ValueError:  # orjson's JSONDecodeError and json's alike
            return Refusal("invalid", None, ApiError(422, Code.MALFORMED, "a frame is one JSON object in UTF-8"))
        if not isinstance(frame, dict):
            return Refusal("invalid", None, ApiError(422, Code.MALFORMED, "a frame is one JSON object"))
        raw_id = frame.get("id")
        echo = raw_id if isinstance(raw_id, str) else None
        kind = frame.get("type")
        fields = _FIELDS.get(kind) if isinstance(kind, str) else None
        if fields is None:
            return Refusal(
                "invalid",
                echo,
                ApiError(
                    422,
                    Code.UNKNOWN_FRAME_TYPE,
                    (
                        f"a frame needs a type: {_SENT}"
                        if kind is None
                        else f"unknown frame type {orjson.dumps(kind).decode()}: a client sends {_SENT}"
                    )[:300],
                ),
            )
        try:
            extra = sorted(set(frame) - fields)
            if extra:
                raise ApiError(422, Code.MALFORMED, f"{extra[0]}: Extra inputs are not permitted"[:300])
            key = check_command_id(raw_id)
        except ApiError as err:
            return Refusal(kind, echo, err)
        if self.token is None:
            return Refusal(
                kind,
                key,
                ApiError(
                    403,
                    Code.FORBIDDEN,
                    "a spectator's stream cannot act: open it with a player token",
                ),
            )
        # A command: the seat's command bucket pays for it, not the socket's. A question
        # (valid_actions) is free, as REST's GET is: the socket answers one frame at a time.
        if self._credit is not None:
            self._credit()
        if self.buckets is not None and kind != FrameType.VALID_ACTIONS:
            wait = self.buckets.take(player_bucket_key(self.game_id, self.player_id))
            if wait > 0:
                after, message = refusal(wait, TOO_MANY_REQUESTS)
                return Refusal(kind, key, ApiError(429, Code.RATE_LIMITED, message), after)
        try:
            self.signer.verify(self.token, self.game_id)
            if kind == FrameType.ACTION:
                if "action" not in frame:
                    raise ApiError(422, Code.MALFORMED, "action: Field required (the REST action body)")
                return Command(kind, key, commands.parse_action(frame["action"]))
            if kind == FrameType.VALID_ACTIONS:
                return Command(kind, key, unit_id=check_unit_id(frame.get("unit_id")))
        except ApiError as err:
            return Refusal(kind, key, err)
        return Command(kind, key)

    # ------------------------------------------------------------------ working

    async def work(self) -> None:
        """Answer the queued frames one after the other until cancelled."""
        while True:
            item = await self._queue.get()
            try:
                await self._answer(item)
            finally:
                self._queue.task_done()

    async def finish(
        self, timeout_s: float | None = FINISH_TIMEOUT_S, worker: asyncio.Task | None = None
    ) -> None:
        """Wait until every frame read so far is answered (at most ``timeout_s``), or until
        ``worker`` (the task of :meth:`work`) ends: once it failed (the client went, a
        send raised) nothing more is answered."""
        joined = asyncio.ensure_future(self._queue.join())
        try:
            waits = {joined} if worker is None else {joined, worker}
            await asyncio.wait(waits, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            joined.cancel()

    async def _answer(self, item: Command | Refusal) -> None:
        started = time.perf_counter()
        if isinstance(item, Refusal):
            text, status = error_frame(item.id, item.error, item.retry_after_s), item.error.status
        else:
            self._running = item.type != FrameType.VALID_ACTIONS  # a read: no view to hold back
            try:
                text, status = await self._run(item)
            finally:
                self._running = False
        await self.websocket.send_text(text)
        await self._release()
        counter = self._counters.get((item.type, status))
        if counter is None:  # labels() costs more than the rest of the bookkeeping
            counter = self._counters[(item.type, status)] = self.metrics.ws_commands.labels(item.type, str(status))
        counter.inc()
        if isinstance(item, Command):
            timer = self._timers.get(item.type)
            if timer is None:
                timer = self._timers[item.type] = self.metrics.ws_command_latency.labels(item.type)
            timer.observe(time.perf_counter() - started)

    async def _run(self, command: Command) -> tuple[str, int]:
        """The reply frame of ``command`` and its status (200 for a result)."""
        try:
            if command.type == FrameType.VALID_ACTIONS:
                actions = await commands.valid_actions(self.session, self.game_id, self.player_id, command.unit_id)
                return valid_actions_frame(command.id, actions), 200
            if command.type == FrameType.ACTION:
                assert command.action is not None
                seq, view = await commands.act(
                    self.session, self.game_id, self.player_id, command.action, command.id
                )
            else:
                seq, view = await commands.end_turn(self.session, self.game_id, self.player_id, command.id)
        except grpc.RpcError as exc:
            err = from_rpc_error(exc)
            if err.status >= 500:
                log.warning("ws_command_failed", code=err.code, status=err.status, message=err.message)
            return error_frame(command.id, err), err.status
        except Exception as exc:  # noqa: BLE001 - answered INTERNAL, as REST's handler does
            log.exception("ws_command_error", error=repr(exc))
            return error_frame(command.id, ApiError(500, Code.INTERNAL, "internal error")), 500
        # the Watch frame of this seq and view would tell this socket nothing new
        self._shown.append(seq_view_json(seq, view, "view").decode())
        self._result_seq = max(self._result_seq, seq)
        return result_frame(command.id, seq, view), 200

    # ------------------------------------------------------------------ the Watch frames

    async def deliver(self, frame: str) -> None:
        """Send ``frame``, a frame of the socket's shared Watch, unless a command's result
        on this socket stood for it: a view frame with the seq and view of that result, or
        an older view than a result sent (docs/api/websocket.md "Commands"). While a
        command runs, its change may come on the Watch before its result: frames
        (``finished`` too) are held until the answer is sent, then sent (the ones it
        stands for left out), at most :data:`HOLD_MAX_S` (a command that takes longer
        lets them go)."""
        if self._running:
            self._held.append(frame)
            if self._hold_timer is None:
                loop = asyncio.get_running_loop()
                self._hold_timer = loop.call_later(HOLD_MAX_S, self._hold_expired)
            return
        await self._send(frame)

    def _hold_expired(self) -> None:
        """A command ran past :data:`HOLD_MAX_S` (a slow or failing session): what it
        held goes now, as it would have without the command."""
        self._hold_timer = None
        task = asyncio.get_running_loop().create_task(self._release_quietly())
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    async def _release_quietly(self) -> None:
        with contextlib.suppress(Exception):  # the socket went meanwhile: nothing to send
            await self._release()

    def stop(self) -> None:
        """The socket is done: nothing held is sent any more."""
        if self._hold_timer is not None:
            self._hold_timer.cancel()
            self._hold_timer = None
        for task in self._releasing:
            task.cancel()
        self._held = []

    async def _release(self) -> None:
        if self._hold_timer is not None:
            self._hold_timer.cancel()
            self._hold_timer = None
        held, self._held = self._held, []
        for frame in held:
            await self._send(frame)

    async def _send(self, frame: str) -> None:
        if frame in self._shown:  # a result carried it
            self._shown.remove(frame)
            return
        if frame.startswith(_VIEW_HEAD) and _frame_seq(frame) < self._result_seq:
            return  # older than a result this socket has: it tells nothing new
        await self.websocket.send_text(frame)
        kind = frame[9 : frame.index('"', 9)]  # {"type":"<kind>",... (gateway/wire.py)
        counter = self._frame_counters.get(kind)
        if counter is None:  # labels() costs more than the send's bookkeeping
            counter = self._frame_counters[kind] = self.metrics.ws_messages.labels(kind)
        counter.inc()
