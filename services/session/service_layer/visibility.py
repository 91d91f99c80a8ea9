"""Who may read what of a game's past: the event log and replays (a player gets
it fog-filtered, everyone gets it whole once the game is finished: docs/architecture/session.md
"Who may read a game's log").

The rule is the engine's, as data (``GameState.policy``, engine/policy.py): while
``log_private`` (CellWar until it is finished: fog of war; Life in ``waiting`` or
``placement``: blind placement):

  * a player (``player_id`` > 0) gets ``Engine.PlayerLog`` of the whole log (what it
    could see when each event happened): hidden events left out, others reduced, no
    ``state_hash`` and no ``command_id``; ``time`` and ``engine_version`` are copied from
    the recorded event. The engine numbers a filtered log in the player's own sequence
    (``seq`` 1..k, with ``log_seq`` the per-game seq, which the session reads and drops;
    a log without ``log_seq`` is numbered by the game's seqs). ``from_seq`` counts in
    that numbering.
  * a spectator (``player_id`` 0) gets ``FORBIDDEN`` (403) for the log and for replays,
    with the engine's reason. Its live view is refused while ``spectators_live`` is
    false (:func:`check_live_view`); a delayed view of a running CellWar game only when
    its config says ``"spectators": "live"`` (services/session/service_layer/spectators.py, else
    ``SPECTATORS_AFTER_END``). No unit of a running CellWar game reaches a client without
    a player token by any other way: not the lobby (the start units are hidden), not a
    fork (:func:`check_fork`), not ``valid_actions`` (a player's token only); the whole
    list is in docs/spectators.md.
  * a player's replay ``seq`` counts in the numbering of the log it reads: with its own
    numbering, ``seq`` k is the state after the event its k-th log item records; the
    view shown is the player's own (already fogged or blind) view then.

Once the log is public again (placement over; any finished game) everyone gets the whole
log with hashes, and a replay of a finished game shows everything (``Engine.Views`` with
``reveal``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from cellwar.v1 import events_pb2
from cellwar.v1.codes import ErrorCode, EventType
from services.common.errors import ServiceError
from services.common.jsonwire import dumps
from services.session.domain.game import Game, iso_time, merge_view
from services.session.service_layer.cache import GameCache


def fogged(game: Game) -> bool:
    """The game's past is filtered per player now (the engine's ``log_private``)."""
    return bool(game.policy.log_private) and not game.finished


def _forbidden(game: Game) -> ServiceError:
    why = game.policy.private_reason or "is private now: only its players may see it"
    return ServiceError(ErrorCode.FORBIDDEN, f"game {game.game_id} {why}")


def check_live_view(game: Game, player_id: int) -> None:
    """Refuse a spectator's live view while the engine's policy says spectators may not
    watch (a running CellWar game; a blind Life placement is watchable: the engine's
    spectator view of it is an empty board).

    Raises:
        ServiceError: ``FORBIDDEN`` for ``player_id`` 0.
    """
    if player_id <= 0 and not game.policy.spectators_live and not game.finished:
        raise _forbidden(game)


def check_fork(game: Game, player_id: int) -> None:
    """Who may fork a game (docs/replays.md: a finished game, or any game for its own
    players): anyone once it is finished; before, only its players, and only while its
    log is public (a fork carries the whole state: a fork of a CellWar game under fog or
    of a Life game in blind placement would show its player what it may not see).

    Raises:
        ServiceError: ``FORBIDDEN``.
    """
    if game.finished:
        return
    if player_id <= 0:
        raise ServiceError(
            ErrorCode.FORBIDDEN,
            f"game {game.game_id} is not finished: only its players may fork it (with their token)",
        )
    if fogged(game):
        why = game.policy.private_reason or "is private now"
        raise ServiceError(
            ErrorCode.FORBIDDEN,
            f"game {game.game_id} {why}; a fork would show all of it, so it can be forked once "
            "that is over",
        )


async def stream_events(
    games: GameCache, game: Game, player_id: int, from_seq: int
) -> AsyncIterator[list[events_pb2.Event]]:
    """The events of :func:`list_events`, in pages: a public log is read page by page
    from the store (never whole); a filtered log is computed whole by the engine (it
    folds the log from its start) and then given in pages.

    Raises:
        ServiceError: as :func:`list_events`.
    """
    if not fogged(game):
        async for page in games.store.read_pages(game.game_id, max(from_seq, 1)):
            yield page
        return
    events = await list_events(games, game, player_id, from_seq)
    for start in range(0, len(events), 1000):
        yield events[start : start + 1000]


async def player_items(games: GameCache, game: Game, player_id: int) -> list[dict] | None:
    """``Engine.PlayerLog`` of the whole log for ``player_id``: items ``{"seq", "type",
    "actor", "payload", "log_seq"}`` in the player's own numbering; None when the engine
    numbers filtered logs by the game's seqs (no ``log_seq``)."""
    events = await games.store.read(game.game_id)
    items = json.loads(await games.engine.player_log(events, player_id) or b"[]")
    if items and "log_seq" not in items[0]:
        return None
    return items


async def list_events(
    games: GameCache, game: Game, player_id: int, from_seq: int
) -> list[events_pb2.Event]:
    """The events from ``from_seq`` that ``player_id`` (0 = spectator) may read.

    Raises:
        ServiceError: ``FORBIDDEN`` (a spectator while the log is private),
            ``UNAVAILABLE``, engine codes for a log that does not fold.
    """
    from_seq = max(from_seq, 1)
    if not fogged(game):
        return await games.store.read(game.game_id, from_seq)
    if player_id <= 0:
        raise _forbidden(game)
    events = await games.store.read(game.game_id)
    if events and events[-1].type == EventType.GAME_FINISHED:
        return events[from_seq - 1 :]  # finished meanwhile: public
    by_seq = {e.seq: e for e in events}
    items = json.loads(await games.engine.player_log(events, player_id) or b"[]")
    out = []
    for item in items:
        seq = int(item["seq"])
        if seq < from_seq:
            continue
        original = by_seq[int(item.get("log_seq", seq))]
        event = events_pb2.Event(
            game_id=game.game_id,
            seq=seq,
            type=str(item["type"]),
            actor=int(item["actor"]),
            payload=dumps(item["payload"]),
            state_hash=str(item.get("state_hash", "")),  # none on a filtered event
            engine_version=original.engine_version,
        )
        event.time.CopyFrom(original.time)
        out.append(event)
    return out


async def replay(games: GameCache, game: Game, player_id: int, seq: int) -> bytes:
    """The view JSON of ``player_id`` (0 = spectator) right after event ``seq`` (in the
    numbering of the log the reader gets; module docstring). The view's ``seq`` is
    ``seq``.

    Raises:
        ServiceError: ``FORBIDDEN`` (a spectator while the log is private), ``MALFORMED``
            (seq out of range), ``GAME_BROKEN``, ``UNAVAILABLE``.
    """
    if fogged(game):
        if player_id <= 0:
            raise _forbidden(game)
        items = await player_items(games, game, player_id)
        log_seq = seq
        if items is not None:
            if not 1 <= seq <= len(items):
                raise ServiceError(ErrorCode.MALFORMED, f"seq must be within 1..{len(items)}")
            log_seq = int(items[seq - 1]["log_seq"])
        view, state = await games.replay_view_and_state(game, log_seq, player_id)
        return merge_view(view, game.game_id, seq, iso_time(await games.deadline_at(game, state)))
    view, state = await games.replay_view_and_state(game, seq, player_id, reveal=game.finished)
    return merge_view(view, game.game_id, seq, iso_time(await games.deadline_at(game, state)))
