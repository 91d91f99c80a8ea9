"""Read models the command loop updates after each append (services/session/service_layer/loop.py):
snapshots (KV ``GAME_SNAPSHOTS``), the lobby directory (KV ``GAME_DIRECTORY``) and
campaign progress (KV ``PROFILES``). Each is rebuilt from the log when lost: none of
them is the truth, so a failed write is logged and never fails the command.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog

from cellwar.v1 import engine_pb2, events_pb2
from cellwar.v1.codes import EventType
from services.session.domain.game import Game
from services.session.domain.lobby import FINISHED, last_event_at
from services.session.service_layer.ports import (
    DirectoryPort,
    EventLog,
    ProgressStore,
    Rules,
    Snapshot,
    SnapshotRepository,
)

log = structlog.get_logger("cellwar.session.projections")


class SnapshotProjection:
    """The game's latest snapshot after each player's turn, at every change of phase or
    turn (the state where a turn began) and at the end; at least every ``every`` events
    one is also kept as history, which replays of earlier events fold from, and only
    then: the others only replace the latest, one KV write instead of three
    (docs/architecture/ticking.md "Replay from snapshots")."""

    def __init__(self, snapshots: SnapshotRepository, store: EventLog, every: int) -> None:
        self.snapshots = snapshots
        self.store = store
        self.every = every

    async def before(
        self, game: Game, events: Sequence[events_pb2.Event], state: engine_pb2.GameState
    ) -> None:
        """Nothing before the cache moves."""

    async def after(
        self, game: Game, events: Sequence[events_pb2.Event], before: engine_pb2.GameState
    ) -> None:
        """Snapshot the new state when due."""
        state = game.state
        history = game.seq - game.last_history_seq >= self.every
        due = (
            history
            or any(e.type == EventType.TURN_ENDED for e in events)
            or before.phase != state.phase
            or before.turn != state.turn
            or state.finished
        )
        if due:
            await self.snapshot(game, history=history)

    async def snapshot(self, game: Game, *, history: bool = True) -> None:
        """Store the game's current state as its latest snapshot, and (``history``) as a
        snapshot of its own that replays of earlier events fold from."""
        snap = Snapshot(game.seq, game.stream_seq or self.store.stream_seq_of(game.game_id), game.state)
        if await self.snapshots.put(game.game_id, snap, history=history):
            game.last_snapshot_seq = game.seq
            if history:
                game.last_history_seq = game.seq


def directory_entry(game: Game) -> dict[str, Any]:
    """The lobby entry of a game now (services/session/adapters/directory.py): the config without
    the keys the policy hides, ``lease`` while it is ticked or a timed turn runs (someone
    must hold it: services/session/entrypoints/timers.py), ``expirable`` while its seats are open,
    ``last_event_at`` when its last event was recorded, to the minute
    (:func:`services.session.domain.lobby.last_event_at`: the entry changes at most once a
    minute while a game runs)."""
    state = game.state
    hidden = set(state.policy.lobby_hidden_keys)
    config = {k: v for k, v in (game.meta.get("config") or {}).items() if k not in hidden}
    entry: dict[str, Any] = {
        "kind": game.meta.get("kind") or state.kind,
        "config": config,
        "created_at": game.meta.get("created_at", ""),
        "phase": FINISHED if state.finished else state.phase,
        "players_joined": state.players_joined,
        "max_players": state.max_players,
        "lease": bool((state.policy.ticking or game.timed) and not state.finished),
        "expirable": bool(state.policy.expirable and not state.finished),
    }
    if game.last_event_time:
        entry["last_event_at"] = last_event_at(game.last_event_time)
    if game.meta.get("profile_id"):
        entry["profile_id"] = game.meta["profile_id"]
    if game.meta.get("origin"):
        entry["origin"] = game.meta["origin"]
    return entry


class DirectoryProjection:
    """Writes a game's directory entry when it changes (a create always)."""

    def __init__(self, directory: DirectoryPort) -> None:
        self.directory = directory

    async def before(
        self, game: Game, events: Sequence[events_pb2.Event], state: engine_pb2.GameState
    ) -> None:
        """Nothing before the cache moves."""

    async def after(
        self, game: Game, events: Sequence[events_pb2.Event], before: engine_pb2.GameState
    ) -> None:
        """Write the entry when it differs from the mirror's."""
        entry = directory_entry(game)
        created = any(e.type == EventType.GAME_CREATED for e in events)
        if created or self.directory.entries.get(game.game_id) != entry:
            await self.directory.put(game.game_id, entry)


class ProgressProjection:
    """A finished game played for a profile: merge its outcome into the profile before the
    cache (and so any view) shows the end, so whoever sees the end sees the progress; a
    crash in between leaves the directory unfinished, and the merge is idempotent."""

    def __init__(self, profiles: ProgressStore, engine: Rules) -> None:
        self.profiles = profiles
        self.engine = engine

    async def before(
        self, game: Game, events: Sequence[events_pb2.Event], state: engine_pb2.GameState
    ) -> None:
        """Record progress when ``events`` finish a game with a profile."""
        profile_id = game.meta.get("profile_id")
        if not profile_id or not state.finished:
            return
        if any(e.type == EventType.GAME_FINISHED for e in events):
            await self.profiles.record_finished(game.game_id, profile_id, self.engine, state)

    async def after(
        self, game: Game, events: Sequence[events_pb2.Event], before: engine_pb2.GameState
    ) -> None:
        """Nothing after."""
