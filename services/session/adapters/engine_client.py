"""The session's only door to the rules: a client of the Engine gRPC service, spread over
its replicas.

``target`` names one or more engine addresses, comma separated
(``CELLWAR_ENGINE_ADDR=127.0.0.1:50051,127.0.0.1:50061``). Each gets its own channel
with gRPC's ``round_robin`` policy (so one DNS name with several addresses, e.g. a
Kubernetes headless service, spreads too); calls go to the channels in turn. Every call
has a deadline (``timeout``); a call that fails with ``UNAVAILABLE`` (the replica is down
or restarting) is retried at once on the next replica, and that replica is skipped for
:data:`DOWN_S` seconds. Engine calls are pure functions of their request, so a retry is
always safe.

Calls about one game (``Decide``, ``Run``) go first to the replica the game id hashes to
(affinity: the replica whose run cache holds the game, docs/architecture/ticking.md),
so ticks and commands of a game meet the same cache; correctness never depends on it
(a call elsewhere is a cache miss, answered from the state the session sends).

Every failure becomes :class:`services.common.errors.ServiceError` with the engine's
machine code unchanged (``OUT_OF_ZONE``, ``MALFORMED``, ...) or ``UNAVAILABLE`` when no
replica answers.

``Decide`` (``decide="stream"``, the default; ``CELLWAR_ENGINE_DECIDE``) goes over one
long-lived ``Engine.Decides`` stream per replica (:class:`DecideStream`,
docs/architecture/batching.md "Session to engine") instead of one unary call each: the
same replica order, affinity, deadline, errors and fail-over, each answer turned into
what the unary call ends with. A stream that breaks fails the decides it carried as a
unary ``UNAVAILABLE`` does (they go to the next replica; the next decide opens a new
stream); a replica that answers ``Decides`` ``UNIMPLEMENTED`` (an older engine) gets
unary calls from then on.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
import zlib
from collections.abc import Sequence
from typing import Any, Literal

import grpc
import structlog

from cellwar.v1 import engine_pb2, engine_pb2_grpc, events_pb2
from cellwar.v1.codes import ErrorCode
from services.common.errors import (
    ENGINE_VERSION_KEY,
    ERROR_CODE_KEY,
    ERROR_SEQ_KEY,
    ServiceError,
    error_from_rpc,
    error_seq_from_rpc,
    said_by_service,
    status_for,
)
from services.common.grpcutil import GRPC_OPTIONS
from services.common.streams import CorrelatedStream, call_error, expire, take_batch

log = structlog.get_logger("cellwar.session.engine_client")

#: Events per Fold call, so one message stays far below the gRPC size limit.
FOLD_CHUNK = 2000
#: ``Engine.Run`` items per call, and request bytes per call: a session's first tick
#: after a restart sends every running game's base state (~90 kB for 300x300), and a
#: call of 1,000 of them would pass gRPC's 64 MB message limit; a checkpoint's reply
#: carries a state per recorded game the same way.
RUN_CHUNK_ITEMS = 200
RUN_CHUNK_BYTES = 16 * 1024 * 1024
#: The message of ``UNAVAILABLE`` when no engine replica could be reached or answered in time.
ENGINE_UNREACHABLE = "the engine service is unavailable: no replica could be reached or answered in time"
#: Seconds a replica that answered UNAVAILABLE is skipped (unless all are down).
DOWN_S = 2.0
#: Extra deadline of a Reenact call per event of the log (seconds): a long Life log is
#: re-decided generation batch by generation batch.
REENACT_S_PER_EVENT = 0.01


def parse_targets(target: str) -> list[str]:
    """The addresses in ``target`` (comma separated, blanks ignored).

    Raises:
        ValueError: no address at all.
    """
    targets = [t.strip() for t in target.split(",") if t.strip()]
    if not targets:
        raise ValueError(f"no engine address in {target!r}")
    return targets


def decide_request(
    state: engine_pb2.GameState | None,
    command_type: str,
    actor: int,
    payload: bytes,
    *,
    game_id: str = "",
    generations_before: int = 0,
    view_players: Sequence[int] | None = None,
) -> engine_pb2.DecideRequest:
    """The ``Engine.Decide`` request of one command, with the whole ``state`` (None for
    ``create``) and ``view_players`` listed when given (None: every view)."""
    request = engine_pb2.DecideRequest(
        command=engine_pb2.Command(type=command_type, actor=actor, payload=payload),
        game_id=game_id,
        generations_before=generations_before,
    )
    if view_players is not None:
        request.view_players.extend(view_players)
        request.views_listed = True
    if state is not None:
        request.state.CopyFrom(state)
    return request


def answer_error(answer: engine_pb2.DecideAnswer) -> grpc.aio.AioRpcError:
    """The error the unary ``Decide`` ends with for the refusal ``answer``: status
    ``status_for(code)``, the message as details, ``cellwar-error-code`` and
    ``cellwar-error-seq`` (when the answer has a seq) in the trailing metadata."""
    trailing = [(ERROR_CODE_KEY, answer.code)]
    if answer.HasField("seq"):
        trailing.append((ERROR_SEQ_KEY, str(answer.seq)))
    return call_error(status_for(answer.code), answer.message, trailing)


class _Unimplemented(Exception):
    """The replica has no ``Decides`` (an older engine): decide by unary calls."""


#: Bytes of states one ``DecideFrames`` message carries at most (a larger one goes
#: alone; the channels take messages up to 64 MiB).
FRAMES_MAX_BYTES = 4 * 1024 * 1024


class DecideStream(CorrelatedStream):
    """The ``Engine.Decides`` stream of one replica, opened on first use and again after
    it broke (:class:`services.common.streams.CorrelatedStream`).

    :meth:`decide` sends one frame (a correlation id, the request; the frames queued
    together leave in one ``DecideFrames``) and waits for the answer of its id: the reply, or raises the :class:`grpc.aio.AioRpcError` the unary
    call would (the refusal's status and trailing metadata; ``DEADLINE_EXCEEDED``
    "Deadline Exceeded" past ``timeout``; ``UNAVAILABLE`` without a service code when the
    stream breaks or is closed). Frames leave in call order from one writer task.

    Args:
        stub: the replica's ``EngineStub``.
        name: the replica's address, for the log.
    """

    kind = "decide_stream"
    status_first = True  # an older engine is told apart by its UNIMPLEMENTED status
    ended_reason = "the engine ended the decide stream"
    closed_reason = "the engine decide stream was closed"

    def __init__(self, stub: engine_pb2_grpc.EngineStub, name: str = "") -> None:
        super().__init__(stub.Decides, name, log_key="target")

    async def decide(
        self, request: engine_pb2.DecideRequest, timeout: float
    ) -> engine_pb2.DecideAnswer:
        """The answer to ``request`` with an empty ``code`` (a refusal raises, above).

        Raises:
            grpc.aio.AioRpcError: as the unary call.
            _Unimplemented: the engine has no ``Decides``.
        """
        if self._closed:
            raise call_error(grpc.StatusCode.UNAVAILABLE, "the engine decide stream is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        frame_id = next(self._ids)
        self._pending[frame_id] = future
        self._queue(engine_pb2.DecideFrame(id=frame_id, request=request))
        timer = loop.call_later(max(timeout, 0.0), expire, future)
        try:
            answer = await future
        finally:
            timer.cancel()
            if self._pending.get(frame_id) is future:
                del self._pending[frame_id]
        if answer.code:
            raise answer_error(answer)
        return answer

    def _messages(self, outbox: list[engine_pb2.DecideFrame]) -> list[engine_pb2.DecideFrames]:
        # a decide that expired before it left is not sent; the frames queued together
        # leave in one message (up to FRAMES_MAX_BYTES of shipped states)
        live = [f for f in outbox if (fut := self._pending.get(f.id)) is not None and not fut.done()]
        outbox.clear()
        messages = []
        while live:
            frames = take_batch(live, lambda f: len(f.request.state.state), FRAMES_MAX_BYTES)
            messages.append(engine_pb2.DecideFrames(frames=frames))
        return messages

    def _dispatch(self, message: engine_pb2.DecideAnswers) -> None:
        pending = self._pending
        for answer in message.answers:
            future = pending.get(answer.id)
            if future is not None and not future.done():
                future.set_result(answer)

    def _fail(self, pending: dict[int, asyncio.Future], reason: str) -> None:
        if self.unary_only:
            log.warning("decide_stream_unimplemented", target=self.name, reason=reason)
        elif pending:
            log.warning("decide_stream_broken", target=self.name, decides=len(pending), reason=reason)
        for future in pending.values():
            if not future.done():
                future.set_exception(
                    _Unimplemented(reason)
                    if self.unary_only
                    else call_error(
                        grpc.StatusCode.UNAVAILABLE, f"the engine decide stream broke: {reason}"
                    )
                )


class _Replica:
    def __init__(self, target: str, stream: bool = False) -> None:
        self.target = target
        options = [*GRPC_OPTIONS, ("grpc.lb_policy_name", "round_robin")]
        self.channel = grpc.aio.insecure_channel(target, options=options)
        self.stub = engine_pb2_grpc.EngineStub(self.channel)
        self.decides = DecideStream(self.stub, target) if stream else None
        self.down_until = 0.0


class EngineClient:
    """Async calls to the Engine service (module docstring).

    Args:
        target: ``host:port`` of the engine service, or several, comma separated.
        timeout: deadline of one call (seconds).
        decide: ``"stream"``: ``Decide`` over each replica's :class:`DecideStream`;
            ``"unary"``: one unary call each (module docstring).
    """

    def __init__(
        self, target: str, timeout: float = 30.0, decide: Literal["stream", "unary"] = "stream"
    ) -> None:
        if decide not in ("stream", "unary"):
            raise ValueError(f"decide must be 'stream' or 'unary', not {decide!r}")
        self.target = target
        self.timeout = timeout
        self.replicas = [_Replica(t, stream=decide == "stream") for t in parse_targets(target)]
        self._turn = itertools.count()
        self._batches = itertools.count(1)
        self._batch_prefix = uuid.uuid4().hex[:12]
        #: Version of the rules that answered last (stamped on every event).
        self.engine_version = ""

    async def close(self) -> None:
        """End the decide streams and close every channel."""
        for replica in self.replicas:
            if replica.decides is not None:
                await replica.decides.aclose()
            await replica.channel.close()

    def affinity(self, key: str) -> int:
        """Index of the replica a game id goes to first (the same on every instance that
        lists the same replicas)."""
        return zlib.crc32(key.encode()) % len(self.replicas)

    def _order(self, key: str = "") -> list[_Replica]:
        """The replicas to try: the one ``key`` hashes to (else the next in turn) first;
        those marked down last (tried only when every other one failed too)."""
        n = len(self.replicas)
        start = self.affinity(key) if key else next(self._turn) % n
        ordered = [self.replicas[(start + i) % n] for i in range(n)]
        now = asyncio.get_running_loop().time()
        return [r for r in ordered if r.down_until <= now] + [
            r for r in ordered if r.down_until > now
        ]

    async def _call(self, name: str, request, key: str = "", timeout: float | None = None):
        attempts = self._order(key)
        if len(attempts) == 1:
            attempts = attempts * 2  # one replica: retry once (it may be restarting)
        error: tuple[str, str] = (ErrorCode.UNAVAILABLE, "no engine replica answered")
        for replica in attempts:
            try:
                reply = await self._invoke(replica, name, request, timeout or self.timeout)
                replica.down_until = 0.0
                return reply
            except grpc.aio.AioRpcError as exc:
                code, message = error_from_rpc(exc)
                if exc.code() != grpc.StatusCode.UNAVAILABLE:
                    raise ServiceError(code, message, error_seq_from_rpc(exc)) from exc
                replica.down_until = asyncio.get_running_loop().time() + DOWN_S
                log.warning("engine_replica_unavailable", target=replica.target, rpc=name, detail=message)
                # gRPC's own text (the replica's address, the socket error) stays in the log
                error = (code, message if said_by_service(exc) else ENGINE_UNREACHABLE)
        raise ServiceError(*error)

    async def _invoke(self, replica: _Replica, name: str, request: Any, timeout: float) -> Any:
        """The reply of the call ``name`` on ``replica`` (``Decide`` on its stream unless
        it has none or the engine has no ``Decides``); notes the engine version.
        Raises grpc.aio.AioRpcError as the unary call."""
        stream = replica.decides
        if name == "Decide" and stream is not None and not stream.unary_only:
            loop = asyncio.get_running_loop()
            start = loop.time()
            try:
                answer = await stream.decide(request, timeout)
                if answer.engine_version:
                    self.engine_version = answer.engine_version
                return answer.reply
            except _Unimplemented:
                timeout = max(timeout - (loop.time() - start), 0.001)
        call = getattr(replica.stub, name)(request, timeout=timeout)
        reply = await call
        for key, value in await call.trailing_metadata() or ():
            if key == ENGINE_VERSION_KEY:
                self.engine_version = str(value)
        return reply

    async def decide(
        self,
        state: engine_pb2.GameState | None,
        command_type: str,
        actor: int,
        payload: bytes,
        *,
        game_id: str = "",
        generations_before: int = 0,
        view_players: Sequence[int] | None = None,
    ) -> engine_pb2.DecideReply:
        """Run one command (``state`` None for ``create``): the events, the new state and
        the views (every player's, or those of ``view_players``). ``generations_before``:
        unrecorded generations run since ``state``, recorded first (``reply.ticked``
        leading events). Sent to ``game_id``'s replica first, naming the state by its
        hash (``state_cached``: the replica keeps the states it returned); on
        ``STATE_MISS`` (or an engine that predates it) sent again with the state.
        Raises ServiceError."""
        request = decide_request(
            state,
            command_type,
            actor,
            payload,
            game_id=game_id,
            generations_before=generations_before,
            view_players=view_players,
        )
        if state is not None and state.state_hash and state.state:
            request.state.ClearField("state")
            request.state_cached = True
            try:
                reply = await self._call("Decide", request, game_id)
                if reply.status != engine_pb2.DecideReply.STATE_MISS:
                    return reply
            except ServiceError as exc:
                if exc.code != ErrorCode.MALFORMED:  # an older engine: no state seen
                    raise
            request.state.state = state.state
            request.state_cached = False
        return await self._call("Decide", request, game_id)

    async def run(self, items: Sequence[engine_pb2.RunItem]) -> list[engine_pb2.RunResult]:
        """``Engine.Run`` of many games: each item goes to its game's replica (one call per
        replica, concurrently); results in the order of ``items``. A replica that does
        not answer is retried on the next (its items then MISS there, and the caller
        sends their bases). Raises ServiceError."""
        groups: dict[int, list[int]] = {}
        for i, item in enumerate(items):
            groups.setdefault(self.affinity(item.game_id), []).append(i)
        results: list[engine_pb2.RunResult | None] = [None] * len(items)
        # the calls to one replica carry one batch id and their count: the engine serves
        # them as one batch (one kernel call per generation for all their games)
        batch = f"{self._batch_prefix}-{next(self._batches)}"

        async def one(indices: list[int], calls: int) -> None:
            request = engine_pb2.RunRequest(items=[items[i] for i in indices])
            if calls > 1:
                request.batch, request.batch_calls = batch, calls
            reply = await self._call("Run", request, items[indices[0]].game_id)
            for i, result in zip(indices, reply.results, strict=True):
                results[i] = result

        calls = []
        for ix in groups.values():
            chunks = _run_chunks(items, ix)
            calls += [(chunk, len(chunks)) for chunk in chunks]
        await asyncio.gather(*(one(chunk, n) for chunk, n in calls))
        return [r for r in results if r is not None]

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
            state = await self._call("Fold", request)
        return state

    async def refresh(self, state: engine_pb2.GameState) -> engine_pb2.GameState:
        """``state`` as this engine describes it (``Engine.Fold`` of no events): its policy
        computed again, e.g. for a snapshot an older engine wrote (docs/spectators.md).
        Raises ServiceError."""
        request = engine_pb2.FoldRequest()
        request.state.CopyFrom(state)
        return await self._call("Fold", request)

    async def tick(self, items: Sequence[tuple[engine_pb2.GameState, int]]) -> engine_pb2.TickReply:
        """Tick many games in one call: ``(state, generations)`` each. Raises ServiceError."""
        request = engine_pb2.TickRequest(
            items=[engine_pb2.TickItem(state=s, generations=n) for s, n in items]
        )
        return await self._call("Tick", request)

    async def views(
        self, state: engine_pb2.GameState, player_ids: Sequence[int], *, reveal: bool = False
    ) -> list[bytes]:
        """JSON views of one state, in the order of ``player_ids`` (0 = spectator);
        ``reveal``: everything public (a finished game's replay). Raises ServiceError."""
        reply = await self._call(
            "Views",
            engine_pb2.ViewsRequest(state=state, player_ids=list(player_ids), reveal=reveal),
        )
        return list(reply.views)

    async def valid_actions(
        self, state: engine_pb2.GameState, player_id: int, unit_id: int
    ) -> bytes:
        """JSON list of legal actions. Raises ServiceError."""
        reply = await self._call(
            "ValidActions",
            engine_pb2.ValidActionsRequest(state=state, player_id=player_id, unit_id=unit_id),
        )
        return reply.actions

    async def patterns(self) -> bytes:
        """The Life stamp library as JSON (``{"categories", "patterns"}``). Raises ServiceError."""
        reply = await self._call("Patterns", engine_pb2.PatternsRequest())
        return reply.catalogue

    async def levels(self) -> bytes:
        """The campaign levels as JSON (list of ``{"number", "name", "hint", "width",
        "height", "zone", "budget", "hopeless"}``). Raises ServiceError."""
        reply = await self._call("Levels", engine_pb2.LevelsRequest())
        return reply.levels

    async def reenact(
        self, events: Sequence[events_pb2.Event], origin: bytes = b""
    ) -> engine_pb2.ReenactReply:
        """Decide a recorded log again (an import): the events the new game records, its
        state and views. One call (the engine needs the whole log); its deadline grows
        with the log (:data:`REENACT_S_PER_EVENT`). Raises ServiceError (``LOG_MISMATCH``
        etc. with ``seq``)."""
        request = engine_pb2.ReenactRequest(events=events, origin=origin)
        timeout = self.timeout + REENACT_S_PER_EVENT * len(events)
        return await self._call("Reenact", request, timeout=timeout)

    async def player_log(self, events: Sequence[events_pb2.Event], player_id: int) -> bytes:
        """A player's filtered view of a whole log, as JSON: a list of ``{"seq", "type",
        "actor", "payload", "log_seq"?}``. Raises ServiceError."""
        reply = await self._call(
            "PlayerLog", engine_pb2.PlayerLogRequest(events=events, player_id=player_id)
        )
        return reply.events


def _run_chunks(items: Sequence[engine_pb2.RunItem], indices: list[int]) -> list[list[int]]:
    """``indices`` cut into calls of at most :data:`RUN_CHUNK_ITEMS` items and
    :data:`RUN_CHUNK_BYTES` request bytes (an item bigger than that goes alone)."""
    chunks: list[list[int]] = []
    current: list[int] = []
    size = 0
    for i in indices:
        n = items[i].ByteSize()
        if current and (len(current) >= RUN_CHUNK_ITEMS or size + n > RUN_CHUNK_BYTES):
            chunks.append(current)
            current, size = [], 0
        current.append(i)
        size += n
    if current:
        chunks.append(current)
    return chunks
