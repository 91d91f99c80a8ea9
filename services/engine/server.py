"""The Engine gRPC service: the rules of :mod:`engine` behind a stateless grpc.aio server.

Every call carries the state it works on (``GameState.state`` = ``engine.encode_state``),
so any replica can serve any call. Rule errors (``engine.GameError``) become a gRPC
status with the machine code in trailing metadata (``services.common.errors``).
CPU-heavy work (Decide, Fold, Tick, Views) runs in a worker thread so the event loop
keeps answering health checks; numpy releases the GIL for much of a Life step.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import grpc
import structlog

import engine
from cellwar.v1 import engine_pb2, engine_pb2_grpc, events_pb2
from cellwar.v1.codes import CommandType, ErrorCode
from engine import api as engine_api
from engine import envelope
from engine.api import dumps
from engine.campaign import levels as campaign_levels
from engine.envelope import Anchor, Envelope
from engine.errors import GameError
from engine.fork import WAITING, seating_policy, seating_view
from engine.life import patterns as life_patterns
from engine.life.packed_runs import PackedLifeKind
from engine.policy import policy, revealed_view
from engine.reenact import Recorded, reenact
from services.common import grpcutil
from services.common.errors import ENGINE_VERSION_KEY, abort
from services.common.jsonwire import view_dumps
from services.common.streams import Linger, take_batch
from services.engine.runs import RunCache

log = structlog.get_logger("cellwar.engine")

SERVICE_NAME = engine_pb2.DESCRIPTOR.services_by_name["Engine"].full_name

T = TypeVar("T")

#: A Decide/Views/ValidActions on a state up to this size runs on the event loop (bytes;
#: a 300x300 Life state is about 270 kB and takes well under a millisecond).
INLINE_STATE_BYTES = 300_000


def _fill(msg: engine_pb2.GameState, *, policy: engine_pb2.Policy, **fields: Any) -> None:
    """Set ``fields`` (scalars) and ``policy`` on ``msg``."""
    for name, value in fields.items():
        setattr(msg, name, value)
    msg.policy.CopyFrom(policy)


def to_proto(
    state: Any, env: Envelope | None = None, into: engine_pb2.GameState | None = None
) -> engine_pb2.GameState:
    """The ``GameState`` message of an engine state: encoded bytes, hash, summary, and the
    envelope (``versions``, ``seq``, ``anchor``, ``open_seats``; none of it hashed) with
    the policy. While a fork has free seats (engine/fork.py) the summary reads
    ``waiting`` with the seats taken as ``players_joined``, and nothing ticks. Written
    into ``into`` (an empty message, e.g. a reply's field: no copy of the state) when
    given, else into a new message."""
    s = engine.summary(state)
    seats = env.open_seats if env is not None else ()
    p = seating_policy(policy(state), seats)
    msg = engine_pb2.GameState() if into is None else into
    _fill(
        msg,
        state=engine.encode_state(state),
        state_hash=engine.state_hash(state),
        kind=s.kind,
        phase=WAITING if seats else s.phase,
        generation=s.generation,
        finished=s.finished,
        turn=s.turn,
        players_joined=s.players_joined - len(seats),
        max_players=s.max_players,
        speed=s.speed,
        policy=engine_pb2.Policy(
            log_private=p.log_private,
            private_reason=p.private_reason,
            spectators_live=p.spectators_live,
            lobby_hidden_keys=list(p.lobby_hidden_keys),
            disconnect_timeout_s=p.disconnect_timeout_s,
            rollback_on_leave=p.rollback_on_leave,
            ticking=p.ticking,
            expirable=p.expirable,
            active_players=list(p.active_players),
            progress_level=p.progress_level,
            spectator_delay_min_s=p.spectator_delay_min_s,
            spectators_see_all=p.spectators_see_all,
            turn_time_s=p.turn_time_s,
        ),
    )
    if env is not None:
        msg.versions.extend(env.versions)
        msg.seq = env.seq
        msg.open_seats.extend(env.open_seats)
        msg.turn_seq = env.turn_seq
        if env.anchor is not None:
            a = env.anchor
            msg.anchor.CopyFrom(
                engine_pb2.TurnAnchor(
                    seq=a.seq,
                    state=a.state,
                    state_hash=a.state_hash,
                    removals=[_draft(d) for d in a.removals],
                )
            )
    return msg


def envelope_of(msg: engine_pb2.GameState) -> Envelope:
    """The :class:`engine.envelope.Envelope` a ``GameState`` message carries (empty for a
    message without one). Raises GameError MALFORMED for an anchor payload that is not JSON."""
    anchor = None
    if msg.HasField("anchor") and msg.anchor.state:
        a = msg.anchor
        anchor = Anchor(
            a.seq,
            a.state,
            a.state_hash,
            tuple(
                engine.EventDraft(d.type, d.actor, _json(d.payload, "anchor removal"), d.state_hash)
                for d in a.removals
            ),
        )
    return Envelope(msg.seq, tuple(msg.versions), anchor, msg.turn_seq, tuple(msg.open_seats))


#: Recently decoded or returned states by hash (their bytes kept to compare): a game's
#: next command names (``state_cached``) or ships the state its last one returned, so
#: most are found here.
_DECODED: OrderedDict[str, tuple[bytes, Any]] = OrderedDict()
#: The hash of the state each game's last decide here returned (game id -> hash), and
#: the games whose last state each such hash is (hash -> game ids). When a game moves
#: on, the state it left is dropped unless another game's last state is the same: its
#: next command names the new one, so the cache holds about one state per game rather
#: than every state it returned. A caller that names a dropped state after all (a
#: retry after a failed append) is answered ``STATE_MISS`` and ships it.
_LATEST: dict[str, str] = {}
_HOLDERS: dict[str, set[str]] = {}
#: Bytes of encoded states kept at most (their decoded copies take about as much again):
#: ~2,800 states of a 300x300 Life game.
_DECODED_MAX_BYTES = 256 * 1024 * 1024
#: Largest state kept (bytes).
_DECODED_MAX_STATE = 4 * 1024 * 1024
_DECODED_LOCK = threading.Lock()
_decoded_bytes = 0


def from_proto(msg: engine_pb2.GameState, game_id: str = "") -> Any:
    """The engine state in a ``GameState`` message (a recently decoded one when its bytes
    are the same: states are immutable values). With ``game_id`` (the base a caller
    shipped for that game's decide) the state becomes the game's last state
    (:func:`remember`), so the decide's own state drops it. Raises GameError MALFORMED."""
    if not msg.state:
        raise GameError(ErrorCode.MALFORMED, "a game state is required")
    data = msg.state
    key = msg.state_hash
    state = _recall(key, data)
    if state is None:
        state = engine.decode_state(data)
    elif not game_id:
        return state
    if key:
        remember(key, data, state, game_id)
    return state


def _recall(key: str, data: bytes | None = None) -> Any | None:
    """The decoded-state cache's state of hash ``key`` (when ``data`` is given: only if
    it was decoded from these bytes), marked recently used; None when not held."""
    if not key:
        return None
    with _DECODED_LOCK:
        hit = _DECODED.get(key)
        if hit is not None and (data is None or hit[0] == data):
            _DECODED.move_to_end(key)
            return hit[1]
    return None


def remember(key: str, data: bytes, state: Any, game_id: str = "") -> None:
    """Keep ``state`` (encoded as ``data``, hash ``key``) in the decoded-state cache
    (least recently used out past :data:`_DECODED_MAX_BYTES`); with ``game_id``, as
    that game's last state, dropping the one it had before (:data:`_LATEST`)."""
    global _decoded_bytes
    if len(data) > _DECODED_MAX_STATE:
        return
    with _DECODED_LOCK:
        old = _DECODED.pop(key, None)
        _decoded_bytes += len(data) - (len(old[0]) if old else 0)
        _DECODED[key] = (data, state)
        if game_id:
            _move_latest(game_id, key)
        while _decoded_bytes > _DECODED_MAX_BYTES:
            _drop(next(iter(_DECODED)))


def _drop(key: str) -> None:
    """Take state ``key`` out of the cache and out of :data:`_LATEST` (lock held)."""
    global _decoded_bytes
    hit = _DECODED.pop(key, None)
    if hit is not None:
        _decoded_bytes -= len(hit[0])
    for game_id in _HOLDERS.pop(key, ()):
        del _LATEST[game_id]


def _move_latest(game_id: str, key: str) -> None:
    """Make ``key`` the last state of ``game_id``; drop the one it leaves unless another
    game's last state is the same (lock held)."""
    before = _LATEST.get(game_id)
    if before == key:
        return
    _LATEST[game_id] = key
    _HOLDERS.setdefault(key, set()).add(game_id)
    if before is None:
        return
    holders = _HOLDERS[before]
    holders.discard(game_id)
    if not holders:
        _drop(before)


def cached_state(key: str, game_id: str = "", runs: RunCache | None = None) -> Any | None:
    """The state of hash ``key`` when this engine holds it (the decoded-state cache, or
    the base of ``game_id``'s run cache entry), else None."""
    state = _recall(key)
    if state is not None:
        return state
    if runs is not None and key and game_id:
        return runs.base_of(game_id, key)
    return None


def _json(data: bytes, what: str) -> Any:
    try:
        return json.loads(data or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise GameError(ErrorCode.MALFORMED, f"{what} is not valid JSON") from exc


def _draft(d: Any) -> engine_pb2.EventDraft:
    return engine_pb2.EventDraft(
        type=d.type, actor=d.actor, payload=dumps(d.payload), state_hash=d.state_hash
    )


def _given(msg: engine_pb2.GameState, game_id: str = "") -> tuple[Any | None, Envelope]:
    """The state and envelope of a request's ``state`` field (None, empty when unset);
    ``game_id``: as :func:`from_proto`."""
    if not msg.state:
        return None, Envelope()
    return from_proto(msg, game_id), envelope_of(msg)


def views_of(
    state: Any, wanted: set[int] | None = None, open_seats: tuple[int, ...] = ()
) -> list[bytes]:
    """JSON views of ``state`` for the spectator (index 0) and every seat taken (index =
    player id), without ``game_id``/``seq`` (the session adds them); with ``wanted``,
    only those players' (an empty entry for the others); while a fork has free seats,
    ``phase`` ``waiting`` and ``open_seats`` (engine/fork.py)."""
    seats = engine.summary(state).players_joined
    return [
        view_dumps(seating_view(engine.get_visible_state(state, pid or None), open_seats))
        if wanted is None or pid in wanted
        else b""
        for pid in range(seats + 1)
    ]


def decide(request: engine_pb2.DecideRequest, runs: RunCache | None = None) -> engine_pb2.DecideReply:
    """Run one command (:func:`engine.envelope.decide`: ``engine.decide``, removals with
    their rollback planned by the engine) and return its events, the state after them
    with its envelope, and the views asked for (``view_players`` with ``views_listed``;
    else every player's).

    ``generations_before`` > 0 (the packed tick path): the game ran that many
    generations since ``state`` without recording them; they are recorded first, by a
    ``GenerationsTicked`` of that count (``ticked`` = how many leading events record
    them), taken from the run cache when it holds that run, else ticked from ``state``
    (deterministic: the same state either way). A command that lands drops the game's
    run cache entry (its base is no longer the game's last recorded state).

    ``state_cached``: ``state`` has no bytes; the state of its ``state_hash`` is taken
    from this engine's caches (:func:`cached_state`), or the reply says ``STATE_MISS``
    (nothing decided; the caller sends the state). The state returned is kept there, so
    the game's next command can name it.

    Raises:
        GameError: the rules refuse the command (nothing recorded, the run goes on).
    """
    cmd = request.command
    if request.state_cached:
        state = cached_state(request.state.state_hash, request.game_id, runs)
        if state is None:
            return engine_pb2.DecideReply(status=engine_pb2.DecideReply.STATE_MISS)
        env = envelope_of(request.state)
    else:
        state, env = _given(request.state, request.game_id)
    payload = _json(cmd.payload, "command payload")
    if not isinstance(payload, dict):
        raise GameError(ErrorCode.MALFORMED, "command payload must be a JSON object")
    before: list[engine.EventDraft] = []
    if request.generations_before and state is not None:
        g = request.generations_before
        after = None
        if runs is not None and request.game_id:
            after = runs.state_after(request.game_id, request.state.state_hash, g)
        if after is None:
            after = engine.tick(engine_api.upgrade(state, engine.ENGINE_VERSION), g)
        before, state, env = envelope.ticked(state, env, after)
    drafts, new, env = envelope.decide(state, env, cmd.type, cmd.actor, payload)
    if runs is not None and request.game_id:
        runs.forget(request.game_id)
    wanted = set(request.view_players) if request.views_listed else None
    msg = to_proto(new, env)
    remember(msg.state_hash, msg.state, new, request.game_id)
    return engine_pb2.DecideReply(
        events=[_draft(d) for d in [*before, *drafts]],
        state=msg,
        views=views_of(new, wanted, env.open_seats),
        ticked=len(before),
    )


def fold(request: engine_pb2.FoldRequest) -> engine_pb2.GameState:
    """Fold recorded events onto a state and its envelope (or from GameCreated); an event
    without a seq takes the next one. Raises GameError."""
    state, env = _given(request.state)
    last = env.seq

    def events():
        nonlocal last
        for e in request.events:
            last = e.seq or last + 1
            yield last, e.type, e.actor, _json(e.payload, "event payload"), e.engine_version

    state, env = envelope.fold(state, env, events())
    if state is None:
        raise GameError(ErrorCode.MALFORMED, "nothing to fold: no state and no events")
    return to_proto(state, env)


def tick(request: engine_pb2.TickRequest) -> engine_pb2.TickReply:
    """Tick every item by up to its generations. A failing item gives an empty result
    (state unchanged, no events) and is logged, so one bad game never stops the others."""
    results = []
    for item in request.items:
        try:
            state, env = _given(item.state)
            if state is None:
                raise GameError(ErrorCode.MALFORMED, "a game state is required")
            before = engine.summary(state).generation
            drafts, new, env = envelope.tick(state, env, item.generations)
            ran = engine.summary(new).generation - before
            results.append(
                engine_pb2.TickResult(
                    state=to_proto(new, env) if drafts else item.state,
                    generations_run=max(ran, 0),
                    events=[_draft(d) for d in drafts],
                )
            )
        except GameError as exc:
            log.warning("tick_failed", code=exc.code, error=exc.message)
            results.append(engine_pb2.TickResult(state=item.state))
        except Exception:  # noqa: BLE001 - a rules bug in one game must not stop the others
            log.exception("tick_crashed", kind=item.state.kind)
            results.append(engine_pb2.TickResult(state=item.state))
    return engine_pb2.TickReply(results=results)


def views(request: engine_pb2.ViewsRequest) -> engine_pb2.ViewsReply:
    """JSON views of one state for each player id (0 = spectator); ``reveal``: with
    everything public (:func:`engine.policy.revealed_view`, a finished game's replay)."""
    state = from_proto(request.state)
    view = revealed_view if request.reveal else engine.get_visible_state
    seats = tuple(request.state.open_seats)
    return engine_pb2.ViewsReply(
        views=[view_dumps(seating_view(view(state, pid or None), seats)) for pid in request.player_ids]
    )


def valid_actions(request: engine_pb2.ValidActionsRequest) -> engine_pb2.ValidActionsReply:
    """JSON list of a player's legal actions (one unit, or all when unit_id is 0)."""
    state = from_proto(request.state)
    actions = engine.get_valid_actions(state, request.player_id, request.unit_id or None)
    return engine_pb2.ValidActionsReply(actions=dumps(actions))


def player_log(request: engine_pb2.PlayerLogRequest) -> engine_pb2.PlayerLogReply:
    """A player's filtered log as JSON (``engine.player_log``, by the kind in the log's
    ``GameCreated``: CellWar fog ``engine.cellwar.log``, Life blind placement
    ``engine.life.log``, campaign whole): a list of ``{"seq", "type", "actor",
    "payload"}``, no ``state_hash`` on a filtered event. Raises GameError."""
    events = [
        {
            "seq": e.seq,
            "type": e.type,
            "actor": e.actor,
            "payload": _json(e.payload, "event payload"),
            "state_hash": e.state_hash,
            "engine_version": e.engine_version,
        }
        for e in request.events
    ]
    return engine_pb2.PlayerLogReply(events=dumps(engine.player_log(events, request.player_id)))


def reenact_log(request: engine_pb2.ReenactRequest) -> engine_pb2.ReenactReply:
    """Decide a recorded log again (:func:`engine.reenact.reenact`) and return what the new
    game records: a finished log as recorded (``origin`` set in ``GameCreated``'s payload:
    the one given, else an earlier import's, else ``{}``; docs/ratings.md);
    an unfinished one as a fork of its last state (``GameForked`` with ``origin``, free
    seats), so it can be played on. Raises GameError (``LogMismatch`` with its ``seq``)."""
    origin = _json(request.origin, "origin") if request.origin else None
    if origin is not None and not isinstance(origin, dict):
        raise GameError(ErrorCode.MALFORMED, "origin must be a JSON object")
    events = [
        Recorded(
            e.seq, e.type, e.actor, _json(e.payload, f"event {e.seq} payload"), e.state_hash, e.engine_version
        )
        for e in request.events
    ]
    done = reenact(events)
    if done.finished:
        out = []
        for e in request.events:
            copy = events_pb2.Event()
            copy.CopyFrom(e)
            copy.ClearField("time")
            copy.game_id = ""
            copy.command_id = ""
            out.append(copy)
        # Always an ``origin`` object (the one given, else an earlier import's, else ``{}``),
        # whatever the file's GameCreated says: it marks the game as imported, so never
        # rated (docs/ratings.md).
        first = _json(out[0].payload, "event payload")
        earlier = first.get("origin") if isinstance(first.get("origin"), dict) else {}
        out[0].payload = dumps({**first, "origin": origin if origin is not None else earlier})
        return engine_pb2.ReenactReply(
            events=out,
            state=to_proto(done.state, done.envelope),
            views=views_of(done.state, open_seats=done.envelope.open_seats),
            finished=True,
        )
    command = {
        "from_game": str((origin or {}).get("game_id") or ""),
        "from_seq": len(events),
        **({"origin": origin} if origin is not None else {}),
    }
    drafts, new, env = envelope.decide(done.state, done.envelope, CommandType.FORK, 0, command)
    return engine_pb2.ReenactReply(
        events=[
            events_pb2.Event(
                type=d.type,
                actor=d.actor,
                payload=dumps(d.payload),
                state_hash=d.state_hash,
                engine_version=engine.ENGINE_VERSION,
            )
            for d in drafts
        ],
        state=to_proto(new, env),
        views=views_of(new, open_seats=env.open_seats),
        finished=False,
    )


@functools.lru_cache(maxsize=1)
def patterns_json() -> bytes:
    """The stamp library (``GET /patterns``) as JSON bytes: ``{"categories": {category: [ids]},
    "patterns": [{"id", "name", "category", "width", "height", "cells": [[x, y], ...],
    "source"}]}``, categories in the order still_lifes, oscillators, spaceships,
    methuselahs, guns (not key-sorted: the order is the library's); sizes in cells, ``x``
    the column, ``y`` the row. Computed once."""
    data = {"categories": life_patterns.categories(), "patterns": life_patterns.catalogue()}
    return json.dumps(data, separators=(",", ":")).encode()


@functools.lru_cache(maxsize=1)
def levels_json() -> bytes:
    """The campaign levels (``GET /campaign/levels``) without their enemy cells, as JSON
    bytes: a list of ``{"number", "name": {"en", "ru"}, "hint": {"en", "ru"}, "width",
    "height", "zone": [x0, y0, x1, y1], "budget", "hopeless"}`` (sizes and budgets in
    cells), in level order. Computed once."""
    return dumps(
        [
            {
                "number": lv.number,
                "name": {"en": lv.name_en, "ru": lv.name_ru},
                "hint": {"en": lv.hint_en, "ru": lv.hint_ru},
                "width": lv.width,
                "height": lv.height,
                "zone": list(lv.zone),
                "budget": lv.budget,
                "hopeless": lv.hopeless,
            }
            for lv in campaign_levels()
        ]
    )


def new_run_cache(max_games: int | None = None, *, packed: bool = True) -> RunCache:
    """The run cache of one engine process (:mod:`services.engine.runs`): running Life
    games bit-packed (:mod:`engine.life.packed_runs`) unless ``packed`` is False, other
    ticking kinds as plain states."""
    kwargs = {} if max_games is None else {"max_games": max_games}
    kinds = [PackedLifeKind()] if packed else []
    return RunCache(to_proto, envelope_of, from_proto, kinds=kinds, **kwargs)


#: Seconds a Run call waits for the other calls of its tick before the batch starts
#: (a session sends a tick as several calls at once, one per chunk of games).
RUN_COALESCE_S = 0.002
#: Seconds a batch waits at most for the calls its ``batch`` id still misses.
RUN_BATCH_WAIT_S = 0.05


class RunBatcher:
    """Coalesces concurrent ``Engine.Run`` calls into one :meth:`RunCache.run_many`, so
    that the games of one tick, sent in several calls, advance in one kernel call per
    generation (:mod:`engine.life.slots`): a batch starts :data:`RUN_COALESCE_S` after
    its first call, later while a call's ``batch`` id misses some of its
    ``batch_calls`` (at most :data:`RUN_BATCH_WAIT_S`). Calls arriving while a batch
    runs form the next batch. A batch that raises fails each of its calls."""

    def __init__(
        self, runs: RunCache, wait_s: float = RUN_COALESCE_S, batch_wait_s: float = RUN_BATCH_WAIT_S
    ) -> None:
        self.runs, self.wait_s, self.batch_wait_s = runs, wait_s, batch_wait_s
        self._queue: list[tuple[engine_pb2.RunRequest, asyncio.Future]] = []
        self._task: asyncio.Task | None = None

    async def run(self, request: engine_pb2.RunRequest) -> engine_pb2.RunReply:
        """The reply to ``request``, served with the calls that arrive with it."""
        future = asyncio.get_running_loop().create_future()
        self._queue.append((request, future))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._drain())
        return await future

    def _incomplete(self) -> bool:
        """Some queued call names a ``batch`` whose other calls have not all arrived."""
        counts: dict[str, int] = {}
        for request, _ in self._queue:
            if request.batch:
                counts[request.batch] = counts.get(request.batch, 0) + 1
        return any(r.batch and counts[r.batch] < r.batch_calls for r, _ in self._queue)

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._queue:
            start = loop.time()
            await asyncio.sleep(self.wait_s)
            while self._incomplete() and loop.time() - start < self.batch_wait_s:
                await asyncio.sleep(self.wait_s)
            batch, self._queue = self._queue, []
            try:
                replies = await asyncio.to_thread(self.runs.run_many, [r for r, _ in batch])
            except Exception as exc:  # noqa: BLE001 - handed to each caller
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), reply in zip(batch, replies, strict=True):
                if not future.done():
                    future.set_result(reply)


async def _refuse(context: grpc.aio.ServicerContext, exc: Exception, rpc: str) -> None:
    """Abort the call ``rpc`` for ``exc``: a :class:`GameError` with its code, message and
    seq; anything else (a bug, logged as ``engine_call_failed``) ``INTERNAL``. Raises the
    abort, always (called from the handler of ``exc``)."""
    if isinstance(exc, GameError):
        await abort(context, exc.code, exc.message, getattr(exc, "seq", None))
    log.exception("engine_call_failed", rpc=rpc)
    await abort(context, ErrorCode.INTERNAL, f"{type(exc).__name__}: {exc}")


#: Frames of one ``Decides`` stream served in worker threads at once; past it the stream's
#: next frames are not read (gRPC flow control holds the caller's writes).
DECIDES_IN_FLIGHT = 256
#: Bytes of states and views one ``DecideAnswers`` message carries at most (a larger
#: answer goes alone; the channels take messages up to 64 MiB).
ANSWERS_MAX_BYTES = 4 * 1024 * 1024


def _answer_bytes(answer: engine_pb2.DecideAnswer) -> int:
    reply = answer.reply
    return len(reply.state.state) + sum(len(v) for v in reply.views)


def _refusal(frame_id: int, exc: Exception) -> engine_pb2.DecideAnswer:
    """The ``Decides`` answer for a frame whose Decide raised ``exc``: what
    :func:`_refuse` aborts the unary call with (a :class:`GameError`'s code, message and
    seq; anything else, logged as ``engine_call_failed``, ``INTERNAL``)."""
    if isinstance(exc, GameError):
        answer = engine_pb2.DecideAnswer(id=frame_id, code=str(exc.code), message=exc.message)
        seq = getattr(exc, "seq", None)
        if seq is not None:
            answer.seq = int(seq)
        return answer
    log.exception("engine_call_failed", rpc="Decides", exc_info=exc)
    return engine_pb2.DecideAnswer(
        id=frame_id, code=ErrorCode.INTERNAL, message=f"{type(exc).__name__}: {exc}"
    )


class EngineServicer(engine_pb2_grpc.EngineServicer):
    """grpc.aio servicer. Fold, Tick and Run, and any call on a large state, run in a
    worker thread; a small Decide/Views runs inline (a thread hop costs more than the
    work). ``runs``: the run cache of ``Engine.Run`` (one per process)."""

    def __init__(self, runs: RunCache | None = None) -> None:
        self.runs = runs if runs is not None else new_run_cache()  # an empty cache is falsy
        self.batcher = RunBatcher(self.runs)
        #: Set when the server stops: ``Decides`` streams end (their callers move on).
        self.closing = asyncio.Event()

    async def _run(
        self,
        fn: Callable[[Any], T],
        request: Any,
        context: grpc.aio.ServicerContext,
        *,
        inline: bool = False,
    ) -> T:
        try:
            if inline and request.state.ByteSize() <= INLINE_STATE_BYTES:
                reply = fn(request)
            else:
                reply = await asyncio.to_thread(fn, request)
            context.set_trailing_metadata(((ENGINE_VERSION_KEY, engine.ENGINE_VERSION),))
            return reply
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the server
            await _refuse(context, exc, getattr(fn, "__name__", "call"))
        raise AssertionError("unreachable")  # abort always raises

    async def Decide(self, request, context):  # noqa: N802 - gRPC method name
        runs = self.runs
        inline = not request.generations_before
        return await self._run(lambda r: decide(r, runs), request, context, inline=inline)

    def _decide_frame(self, frame: engine_pb2.DecideFrame) -> engine_pb2.DecideAnswer:
        """The answer to one ``Decides`` frame (the unary ``Decide``'s reply or refusal)."""
        try:
            if not frame.HasField("request"):
                raise GameError(ErrorCode.MALFORMED, "a decide frame carries a request")
            reply = decide(frame.request, self.runs)
            return engine_pb2.DecideAnswer(
                id=frame.id, reply=reply, engine_version=engine.ENGINE_VERSION
            )
        except Exception as exc:  # noqa: BLE001 - a bug must not end the stream for the others
            return _refusal(frame.id, exc)

    async def Decides(self, request_iterator, context):  # noqa: N802
        """Decide frames of one caller (proto ``Decides``; docs/architecture/batching.md
        "Session to engine"). Each frame is served as :meth:`Decide` serves its request:
        on the event loop when unary would be inline (no ``generations_before``, a state
        up to :data:`INLINE_STATE_BYTES`), else in a worker thread (at most
        :data:`DECIDES_IN_FLIGHT` at once); each answer is written when ready, matched
        by the frame's id. A refusal or a bug answers its frame only; the stream ends
        when the caller ends it (then once every frame read is answered) or goes away.
        The headers (with ``cellwar-engine-version``) leave at once. Once the server
        stops (``closing``) frames still read are answered ``UNAVAILABLE`` (as a
        stopping server refuses a unary call: the caller moves them to another replica)
        and the stream ends once the decides running are answered, so an open stream
        does not hold the stop for its whole grace."""
        # headers at once: the caller writes its frames once it has them (so an engine
        # without Decides is told apart by its UNIMPLEMENTED status)
        await context.send_initial_metadata(((ENGINE_VERSION_KEY, engine.ENGINE_VERSION),))
        answers: asyncio.Queue[engine_pb2.DecideAnswer | None] = asyncio.Queue()
        slots = asyncio.Semaphore(DECIDES_IN_FLIGHT)
        tasks: set[asyncio.Task] = set()
        running = 0
        linger = Linger()

        async def threaded(frame: engine_pb2.DecideFrame) -> None:
            nonlocal running
            try:
                answer = await asyncio.to_thread(self._decide_frame, frame)
            except BaseException:  # cancelled with the stream: nobody waits for it
                running -= 1
                slots.release()
                raise
            running -= 1
            slots.release()
            answers.put_nowait(answer)

        async def read() -> None:
            nonlocal running
            async for message in request_iterator:
                for frame in message.frames:
                    if self.closing.is_set():
                        answers.put_nowait(
                            engine_pb2.DecideAnswer(
                                id=frame.id, code=ErrorCode.UNAVAILABLE, message="engine service is stopping"
                            )
                        )
                        continue
                    request = frame.request
                    if not request.generations_before and request.state.ByteSize() <= INLINE_STATE_BYTES:
                        answers.put_nowait(self._decide_frame(frame))
                        continue
                    await slots.acquire()
                    running += 1
                    task = asyncio.create_task(threaded(frame))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)

        reader = asyncio.create_task(read())
        reader.add_done_callback(lambda _: answers.put_nowait(None))
        stopping = asyncio.create_task(self.closing.wait())
        stopping.add_done_callback(lambda _: answers.put_nowait(None))
        try:
            while True:
                ready = [await answers.get()]
                if ready[0] is not None:
                    await linger.pause(lambda: answers.qsize() + 1)
                while not answers.empty():  # the answers ready together leave in one message
                    ready.append(answers.get_nowait())
                ready = [answer for answer in ready if answer is not None]
                while ready:
                    batch = take_batch(ready, _answer_bytes, ANSWERS_MAX_BYTES)
                    await context.write(engine_pb2.DecideAnswers(answers=batch))
                    linger.wrote()
                if (reader.done() or self.closing.is_set()) and not running and answers.empty():
                    break
            # (a stopping server leaves while the reader still waits for frames)
            if reader.done() and not reader.cancelled() and reader.exception() is not None:
                exc = reader.exception()
                if not isinstance(exc, (asyncio.CancelledError, grpc.aio.AbortError)):
                    log.warning("decide_stream_read_failed", error=repr(exc))
        finally:
            for task in (reader, stopping, *tasks):
                task.cancel()

    async def Run(self, request, context):  # noqa: N802
        try:
            reply = await self.batcher.run(request)
            context.set_trailing_metadata(((ENGINE_VERSION_KEY, engine.ENGINE_VERSION),))
            return reply
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the server
            await _refuse(context, exc, "Run")
        raise AssertionError("unreachable")  # abort always raises

    async def Fold(self, request, context):  # noqa: N802
        return await self._run(fold, request, context)

    async def Tick(self, request, context):  # noqa: N802
        return await self._run(tick, request, context)

    async def Views(self, request, context):  # noqa: N802
        return await self._run(views, request, context, inline=True)

    async def ValidActions(self, request, context):  # noqa: N802
        return await self._run(valid_actions, request, context, inline=True)

    async def PlayerLog(self, request, context):  # noqa: N802
        return await self._run(player_log, request, context)

    async def Patterns(self, request, context):  # noqa: N802
        return await self._run(
            lambda _: engine_pb2.PatternsReply(catalogue=patterns_json()), request, context
        )

    async def Levels(self, request, context):  # noqa: N802
        return await self._run(lambda _: engine_pb2.LevelsReply(levels=levels_json()), request, context)

    async def Reenact(self, request, context):  # noqa: N802
        return await self._run(reenact_log, request, context)


async def create_server(
    address: str = "127.0.0.1:0", *, runs: RunCache | None = None
) -> tuple[grpc.aio.Server, int]:
    """Build and start the Engine server on ``address`` (port 0 = a free port); ``runs``:
    its run cache (default: a new one).

    Returns ``(server, port)``; stop it with ``await server.stop(grace_seconds)`` (which
    first ends the ``Decides`` streams: :meth:`EngineServicer.Decides`).
    Health (SERVING for ``""`` and ``cellwar.v1.Engine``) and reflection are on.
    """
    server = grpcutil.new_server()
    servicer = EngineServicer(runs)
    engine_pb2_grpc.add_EngineServicer_to_server(servicer, server)
    stop = server.stop

    async def stopping(grace: float | None) -> None:
        servicer.closing.set()
        await stop(grace)

    server.stop = stopping  # type: ignore[method-assign]
    health = grpcutil.add_health_and_reflection(server, [SERVICE_NAME])
    port = grpcutil.bind(server, address)
    await server.start()
    await grpcutil.set_serving(health, [SERVICE_NAME], True)
    log.info("engine_started", address=address, port=port, engine_version=engine.ENGINE_VERSION)
    return server, port
