"""In-memory fakes of the session's ports for unit tests of the service layer (cosmicpython
style). The event log, the snapshots and the rest of the in-memory ports live in
services/session/adapters/memory.py (imported from here too); the engine run in process
through the engine service's own request handlers (the real rules, no gRPC) is here,
as the session never imports the engine, with a clock the test moves and a log that
counts its reads; and the keeper's neighbours for its lease pass (a leases bucket that
takes every create, nobody's presence, a lobby of entries)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import engine
from cellwar.v1 import engine_pb2
from engine.errors import GameError
from services.common.errors import ServiceError
from services.engine import server as engine_service
from services.session.adapters.engine_client import decide_request
from services.session.adapters.memory import MemoryBackend, MemoryEventLog, MemorySnapshots

__all__ = [
    "Clock",
    "CountingLog",
    "InProcessEngine",
    "LeaseKv",
    "Lobby",
    "NoPresence",
    "MemoryBackend",
    "MemoryEventLog",
    "MemorySnapshots",
]


class Clock:
    """A clock the test moves: ``clock()`` is :attr:`now` (seconds)."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class LeaseKv:
    """A GAME_LEASES bucket that takes every create and records every delete."""

    def __init__(self) -> None:
        self.creates: list[str] = []
        self.deleted: list[str] = []

    async def create(self, key, value):
        self.creates.append(key)
        return len(self.creates)

    async def delete(self, key, last=None):
        self.deleted.append(key)


class NoPresence:
    """Presence that tracks nobody."""

    def tracks(self, game_id) -> bool:
        return False

    def tracked_games(self) -> set[str]:
        return set()

    async def run_clocks(self, games) -> None:
        pass


class Lobby:
    """The directory's mirror: ``entries`` by game id, written by :meth:`put`."""

    def __init__(self, entries: dict) -> None:
        self.entries = entries

    async def put(self, game_id, entry) -> None:
        self.entries[game_id] = entry


class CountingLog(MemoryEventLog):
    """The fake log, counting the reads of events as ``(from_seq, to_seq)``."""

    def __init__(self, backend: MemoryBackend) -> None:
        super().__init__(backend)
        self.reads: list[tuple[int, int | None]] = []

    async def read(self, game_id, from_seq=1, to_seq=None, **kwargs):
        self.reads.append((from_seq, to_seq))
        return await super().read(game_id, from_seq, to_seq, **kwargs)


class InProcessEngine:
    """A :class:`~services.session.service_layer.ports.Rules` running the engine service's
    own request handlers in this process (the real rules and envelope, no network), for
    unit tests of the service layer. ``calls`` counts each RPC by name."""

    def __init__(self) -> None:
        self._service = engine_service
        self.engine_version = engine.ENGINE_VERSION
        self.calls: dict[str, int] = {}
        self.runs = engine_service.new_run_cache()

    def _run(self, name: str, fn: Callable[[Any], Any], request: Any) -> Any:
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
        """``Engine.Decide`` (the state always sent whole)."""
        request = decide_request(
            state,
            command_type,
            actor,
            payload,
            game_id=game_id,
            generations_before=generations_before,
            view_players=view_players,
        )
        return self._run("Decide", lambda r: self._service.decide(r, self.runs), request)

    async def run(self, items) -> list[engine_pb2.RunResult]:
        """``Engine.Run`` on this process's run cache."""
        request = engine_pb2.RunRequest(items=list(items))
        return list(self._run("Run", self.runs.run, request).results)

    async def fold(self, state, events):
        """``Engine.Fold`` (no events: ``state`` as it is)."""
        if not events:
            return state
        request = engine_pb2.FoldRequest(events=list(events))
        if state is not None:
            request.state.CopyFrom(state)
        return self._run("Fold", self._service.fold, request)

    async def refresh(self, state):
        """``Engine.Fold`` of no events: the state's policy computed again."""
        request = engine_pb2.FoldRequest()
        request.state.CopyFrom(state)
        return self._run("Fold", self._service.fold, request)

    async def tick(self, items):
        """``Engine.Tick``."""
        request = engine_pb2.TickRequest(
            items=[engine_pb2.TickItem(state=s, generations=n) for s, n in items]
        )
        return self._run("Tick", self._service.tick, request)

    async def views(self, state, player_ids, *, reveal: bool = False) -> list[bytes]:
        """``Engine.Views``."""
        request = engine_pb2.ViewsRequest(state=state, player_ids=list(player_ids), reveal=reveal)
        return list(self._run("Views", self._service.views, request).views)

    async def valid_actions(self, state, player_id, unit_id) -> bytes:
        """``Engine.ValidActions``."""
        request = engine_pb2.ValidActionsRequest(state=state, player_id=player_id, unit_id=unit_id)
        return self._run("ValidActions", self._service.valid_actions, request).actions

    async def player_log(self, events, player_id) -> bytes:
        """``Engine.PlayerLog``."""
        request = engine_pb2.PlayerLogRequest(events=list(events), player_id=player_id)
        return self._run("PlayerLog", self._service.player_log, request).events

    async def reenact(self, events, origin: bytes = b"") -> engine_pb2.ReenactReply:
        """``Engine.Reenact``."""
        request = engine_pb2.ReenactRequest(events=list(events), origin=origin)
        return self._run("Reenact", self._service.reenact_log, request)
