"""Removing a player: leave (``Session.Leave``) and disconnect past the timeout (presence).

DESIGN §5 and the CellWar seed ("Отключение игрока"): a player who goes during its own
turn takes the game back to the snapshot after the previous player's turn, then it and
all its units are removed and the turn passes on; outside its own turn it is removed at
once. One player left: the engine finishes the game (``GameFinished`` follows).

The session never interprets the rules; it reads only summary fields of opaque states
(``turn``, ``finished``) and the recorded events:

- **When a rollback applies**: a ``cellwar`` game, not finished, whose summary ``turn``
  is the player going. Other kinds (Life) only remove.
- **The turn start** (:func:`turn_start`): the state after the last event that changed
  the summary ``turn`` (after the previous player's ``TurnEnded``, after the last
  ``PlayerJoined`` at game start, or after a removal or elimination that passed the
  turn). It is found from the last ``TurnEnded``/``PlayerJoined`` (whose snapshot the
  session keeps in KV ``GAME_SNAPSHOTS``, see ``Games._applied``) by folding the events
  after it one at a time with ``Engine.Fold`` and watching ``turn``.
- **The events**, appended together with the expected last seq: ``RolledBack``
  ``{"to_seq", "state": base64 of that engine state}`` whose ``state_hash`` is the one
  recorded at ``to_seq`` (checked by folding it: ``Engine.Fold`` of a ``RolledBack``
  decodes the state); then ``PlayerRemoved`` again for every other player removed after
  ``to_seq`` (a removal is never undone by a rollback); then ``PlayerRemoved`` of the
  player via ``Engine.Decide(remove_player)`` (+ ``GameFinished`` when one is left).
  Nothing was done in the turn yet (``to_seq`` is the last seq): no ``RolledBack``.
- ``actor``: the player for a leave, 0 (the system) for a disconnect.
"""

from __future__ import annotations

import structlog

from cellwar.v1 import engine_pb2, events_pb2
from services.common.errors import ServiceError
from services.common.jsonwire import dumps
from services.session.games import (
    MAX_ATTEMPTS,
    CommandResult,
    Game,
    Games,
    command_digest,
    command_key,
    recorded_command_id,
    repeated_command,
)
from services.session.store import ConcurrencyError, DuplicateCommandError, StoreUnavailable

log = structlog.get_logger("cellwar.session.rollback")

#: Game kinds whose players are rolled back when they go during their own turn.
ROLLBACK_KINDS = frozenset({"cellwar"})
#: Events after which a turn may begin without a later change (scan anchors).
_ANCHORS = frozenset({"GameCreated", "PlayerJoined", "TurnEnded"})


def rolls_back(game: Game, player_id: int) -> bool:
    """A removal of ``player_id`` now starts with a rollback (its own turn of a running
    CellWar game)."""
    kind = game.meta.get("kind") or game.state.kind
    return (
        kind in ROLLBACK_KINDS
        and not game.state.finished
        and player_id > 0
        and game.state.turn == player_id
    )


async def turn_start(games: Games, game: Game) -> tuple[int, engine_pb2.GameState]:
    """``(seq, state)`` of the moment the current turn began (module docstring).

    Raises:
        ServiceError: ``GAME_BROKEN`` (a fold does not give the recorded hash),
            ``UNAVAILABLE``.
    """
    events = await games.store.read(game.game_id, 1, game.seq)
    anchor = max((e.seq for e in events if e.type in _ANCHORS), default=1)
    state = await games.state_at(game, anchor)
    best_seq, best = anchor, state
    for event in events[anchor:]:
        nxt = await games.engine.fold(state, [event])
        if nxt is None or nxt.state_hash != event.state_hash:
            raise ServiceError(
                "GAME_BROKEN", f"fold to seq {event.seq} does not match the recorded hash"
            )
        if nxt.turn != state.turn:
            best_seq, best = event.seq, nxt
        state = nxt
    return best_seq, best


async def _plan(
    games: Games, game: Game, player_id: int, reason: str, actor: int
) -> tuple[list[events_pb2.Event], engine_pb2.GameState]:
    """The events of the removal, planned by the engine (rollback first when due)."""
    reply = await games.engine.decide(
        game.state, "remove_player", actor, dumps({"player_id": player_id, "reason": reason})
    )
    return games._events(reply.events, reply.state), reply.state


async def remove_player(
    games: Games,
    game_id: str,
    player_id: int,
    reason: str,
    *,
    actor: int,
    command_id: str = "",
) -> tuple[Game, CommandResult]:
    """Remove ``player_id`` from a game (``reason`` ``"left"`` or ``"disconnected"``),
    rolling back first when it is its own CellWar turn (module docstring).

    Runs under the game's lock like a command: a command id already in the log returns
    the recorded result; a lost append race reloads and retries.

    Raises:
        ServiceError: ``GAME_NOT_FOUND``, ``GAME_FINISHED``, ``UNKNOWN_PLAYER`` (from the
            engine), ``GAME_BROKEN``, ``CONFLICT`` (lost the race :data:`MAX_ATTEMPTS`
            times), ``UNAVAILABLE``.
    """
    key = command_key(actor, command_id) if command_id else ""
    digest = (
        command_digest("remove_player", dumps({"player_id": player_id, "reason": reason}))
        if command_id
        else ""
    )
    game = await games.get(game_id)
    async with game.lock:
        for attempt in range(MAX_ATTEMPTS):
            if game.stale:
                await games.reload(game)
            if game.broken:
                raise ServiceError("GAME_BROKEN", f"game {game_id} cannot be replayed: {game.broken}")
            repeated = repeated_command(game, key, digest)
            if repeated is not None:
                return game, repeated
            try:
                events, state = await _plan(games, game, player_id, reason, actor)
            except ServiceError as exc:
                if exc.code in ("UNAVAILABLE", "INTERNAL") or attempt == MAX_ATTEMPTS - 1:
                    raise
                if await games.store.last_seq(game_id) == game.seq:
                    raise
                game.stale = True
                continue
            try:
                stored = await games.store.append(
                    game_id, events, game.seq, recorded_command_id(key, digest)
                )
            except (ConcurrencyError, DuplicateCommandError) as exc:
                log.info("append_race_lost", game_id=game_id, attempt=attempt + 1, error=str(exc))
                game.stale = True
                continue
            except StoreUnavailable:
                game.stale = True
                raise
            result = CommandResult(stored[-1].seq, player_id, digest)
            if key:
                game.commands[key] = result
            await games._applied(game, stored, state)
            log.info(
                "player_removed",
                game_id=game_id,
                player_id=player_id,
                reason=reason,
                seq=result.seq,
                events=[e.type for e in stored],
            )
            return game, result
    raise ServiceError("CONFLICT", f"game {game_id} changed {MAX_ATTEMPTS} times meanwhile; retry")
