"""In-memory fakes of the session's ports (services/session/service_layer/ports.py) for unit tests of
the service layer (cosmicpython style): an event log with the JetStream store's contract
(fence, de-duplication by command id), a snapshot store, and the engine run in process
through the engine service's own request handlers (the real rules, no gRPC)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from google.protobuf.timestamp_pb2 import Timestamp

import engine
from cellwar.v1 import engine_pb2, events_pb2
from engine.errors import GameError
from services.common.errors import ServiceError
from services.engine import server as engine_service
from services.session.adapters.event_store import (
    ConcurrencyError,
    DuplicateCommandError,
    StoreUnavailable,
    msg_id,
)
from services.session.adapters.snapshots import Snapshot


@dataclass
class MemoryBackend:
    """What several :class:`MemoryEventLog` objects share (one "server"): every game's
    log as ``(stream seq, event)`` pairs, the de-duplication ids, the stream counter."""

    logs: dict[str, list[tuple[int, events_pb2.Event]]] = field(default_factory=dict)
    msg_ids: set[str] = field(default_factory=set)
    stream_seq: int = 0
    appends: int = 0
    races_lost: int = 0
    down: bool = False


class MemoryEventLog:
    """An :class:`services.session.ports.EventLog` in memory.

    Args:
        backend: shared by the logs of several "instances" (default: a new one).

    Attributes:
        before_append: an optional coroutine function called with the game id before each
            append (a test makes a rival write there to lose a race).
    """

    def __init__(self, backend: MemoryBackend | None = None) -> None:
        self.backend = backend or MemoryBackend()
        self.before_append: Callable[[str], Awaitable[None]] | None = None
        self._tail: dict[str, int] = {}

    def _check(self) -> None:
        if self.backend.down:
            raise StoreUnavailable("event store: the fake is down")

    async def append(
        self,
        game_id: str,
        events: Sequence[events_pb2.Event],
        expected_last_seq: int,
        command_id: str = "",
        *,
        system: int = 0,
    ) -> list[events_pb2.Event]:
        """Append all of ``events`` at once after ``expected_last_seq`` (the first
        ``system`` without the command id)."""
        if self.before_append is not None:
            hook, self.before_append = self.before_append, None
            await hook(game_id)
        self._check()
        log = self.backend.logs.setdefault(game_id, [])
        last = log[-1][1].seq if log else 0
        if last != expected_last_seq:
            self.backend.races_lost += 1
            raise ConcurrencyError(game_id, expected_last_seq)
        ids = (
            [msg_id(game_id, command_id, i) for i in range(len(events) - system)]
            if command_id
            else []
        )
        if any(i in self.backend.msg_ids for i in ids):
            raise DuplicateCommandError(game_id, command_id)
        now = Timestamp()
        now.GetCurrentTime()
        stored = []
        for i, draft in enumerate(events):
            event = events_pb2.Event()
            event.CopyFrom(draft)
            event.game_id = game_id
            event.seq = expected_last_seq + i + 1
            event.time.CopyFrom(now)
            event.command_id = command_id if i >= system else ""
            self.backend.stream_seq += 1
            log.append((self.backend.stream_seq, event))
            stored.append(event)
        self.backend.msg_ids.update(ids)
        self.backend.appends += 1
        self._tail[game_id] = self.backend.stream_seq
        return [events_pb2.Event.FromString(e.SerializeToString()) for e in stored]

    async def read(
        self,
        game_id: str,
        from_seq: int = 1,
        to_seq: int | None = None,
        *,
        start_stream_seq: int | None = None,
    ) -> list[events_pb2.Event]:
        """Events ``from_seq``..``to_seq`` (copies)."""
        self._check()
        log = self.backend.logs.get(game_id, [])
        out = [
            events_pb2.Event.FromString(e.SerializeToString())
            for s, e in log
            if s >= (start_stream_seq or 0)
            and e.seq >= from_seq
            and (to_seq is None or e.seq <= to_seq)
        ]
        if log:
            self._tail[game_id] = log[-1][0]
        return out

    async def read_pages(self, game_id: str, from_seq: int = 1, page: int = 1000):
        """The events from ``from_seq`` on, ``page`` at a time (copies)."""
        events = await self.read(game_id, from_seq)
        for start in range(0, len(events), page):
            yield events[start : start + page]

    async def last_seq(self, game_id: str) -> int:
        """The last per-game seq."""
        self._check()
        log = self.backend.logs.get(game_id, [])
        return log[-1][1].seq if log else 0

    def stream_seq_of(self, game_id: str) -> int:
        """Stream position of the game's last event as last seen here."""
        return self._tail.get(game_id, 0)

    def position_before(self, game_id: str, seq: int) -> int:
        """No shortcut in memory: the start."""
        return 0

    def forget(self, game_id: str) -> None:
        """Forget the game's tail."""
        self._tail.pop(game_id, None)

    def events(self, game_id: str) -> list[events_pb2.Event]:
        """The whole stored log of a game (for assertions)."""
        return [e for _, e in self.backend.logs.get(game_id, [])]

    def force(self, game_id: str, event: events_pb2.Event) -> None:
        """Append ``event`` as it is, unchecked (a damaged log for tests)."""
        self.backend.stream_seq += 1
        self.backend.logs.setdefault(game_id, []).append((self.backend.stream_seq, event))


class MemorySnapshots:
    """An :class:`services.session.ports.SnapshotRepository` in memory."""

    def __init__(self) -> None:
        self.snaps: dict[str, dict[int, Snapshot]] = {}
        self.latest_seq: dict[str, int] = {}

    async def put(self, game_id: str, snap: Snapshot, *, latest: bool = True) -> bool:
        """Keep a snapshot (the latest is the one of the greatest seq put as latest)."""
        self.snaps.setdefault(game_id, {})[snap.seq] = snap
        if latest:
            self.latest_seq[game_id] = max(self.latest_seq.get(game_id, 0), snap.seq)
        return True

    async def latest(self, game_id: str) -> Snapshot | None:
        """The newest snapshot put as latest."""
        snaps = self.snaps.get(game_id) or {}
        seq = self.latest_seq.get(game_id)
        return snaps.get(seq) if seq else None

    async def at_or_before(self, game_id: str, seq: int) -> Snapshot | None:
        """The snapshot with the greatest seq <= ``seq``."""
        snaps = self.snaps.get(game_id) or {}
        best = max((s for s in snaps if s <= seq), default=None)
        return None if best is None else snaps[best]


class InProcessEngine:
    """An :class:`services.session.ports.Rules` running the engine service's handlers in
    this process (the real rules and envelope, no network). ``calls`` counts each RPC."""

    def __init__(self) -> None:
        self.engine_version = engine.ENGINE_VERSION
        self.calls: dict[str, int] = {}
        self.runs = engine_service.new_run_cache()

    def _run(self, name: str, fn, request):
        self.calls[name] = self.calls.get(name, 0) + 1
        try:
            return fn(request)
        except GameError as exc:
            raise ServiceError(exc.code, exc.message, getattr(exc, "seq", None)) from exc

    async def decide(
        self,
        state,
        command_type,
        actor,
        payload,
        *,
        game_id="",
        generations_before=0,
        view_players=None,
    ) -> engine_pb2.DecideReply:
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
        return self._run("Decide", lambda r: engine_service.decide(r, self.runs), request)

    async def run(self, items) -> list[engine_pb2.RunResult]:
        request = engine_pb2.RunRequest(items=list(items))
        return list(self._run("Run", self.runs.run, request).results)

    async def fold(self, state, events):
        if not events:
            return state
        request = engine_pb2.FoldRequest(events=list(events))
        if state is not None:
            request.state.CopyFrom(state)
        return self._run("Fold", engine_service.fold, request)

    async def tick(self, items):
        request = engine_pb2.TickRequest(
            items=[engine_pb2.TickItem(state=s, generations=n) for s, n in items]
        )
        return self._run("Tick", engine_service.tick, request)

    async def views(self, state, player_ids, *, reveal: bool = False) -> list[bytes]:
        request = engine_pb2.ViewsRequest(state=state, player_ids=list(player_ids), reveal=reveal)
        return list(self._run("Views", engine_service.views, request).views)

    async def valid_actions(self, state, player_id, unit_id) -> bytes:
        request = engine_pb2.ValidActionsRequest(state=state, player_id=player_id, unit_id=unit_id)
        return self._run("ValidActions", engine_service.valid_actions, request).actions

    async def player_log(self, events, player_id) -> bytes:
        request = engine_pb2.PlayerLogRequest(events=list(events), player_id=player_id)
        return self._run("PlayerLog", engine_service.player_log, request).events

    async def reenact(self, events, origin: bytes = b"") -> engine_pb2.ReenactReply:
        request = engine_pb2.ReenactRequest(events=list(events), origin=origin)
        return self._run("Reenact", engine_service.reenact_log, request)
