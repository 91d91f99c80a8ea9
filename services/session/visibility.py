"""Who may read what of a game's past: the event log and replays (DESIGN §7 "a player gets
it fog-filtered; everyone gets it whole once the game is finished").

The log is **private** (:func:`fogged`, the one rule) while a CellWar game is not
finished (fog of war, DESIGN §5) and while a Life game is in ``waiting`` or
``placement`` (blind placement, DESIGN §3: the phase comes from the state's summary,
``GameState.phase``; campaign: one player, never private). While private:

  * a player (``player_id`` > 0) gets ``Engine.PlayerLog`` of the whole log (what it
    could see when each event happened, rule per kind: ``engine.cellwar.log``,
    ``engine.life.log``): hidden events left out, others reduced, no ``state_hash`` and
    no ``command_id`` on any event; ``time`` and ``engine_version`` are kept.
    ``from_seq`` filters the answer.
  * a spectator (no token, ``player_id`` 0) gets ``FORBIDDEN`` (403) for the log and for
    replays (the log would lift the fog). Its live view (:func:`check_live_view`) is
    refused only for CellWar (it would show no unit); a Life spectator's view in
    placement is the engine's blind view (an empty board).
  * a replay for a player is that player's view at ``seq`` (the engine's view of the
    state then is already fogged or blind).

Once the log is public again (a Life game past placement: the board is visible to all;
any finished game) everyone gets the whole log with hashes, and the asked view.

- CellWar, game finished: everyone gets the whole log with hashes, and a replay shows
  the whole board (the spectator view, with ``you`` set to the reader).
"""

from __future__ import annotations

import json

from cellwar.v1 import events_pb2
from services.common.errors import ServiceError
from services.common.jsonwire import dumps
from services.session.games import Game, Games

#: Kinds whose log and replays are fog-filtered while the game runs.
FOG_KINDS = frozenset({"cellwar"})

#: Kinds whose log is private only in some phases (blind placement, DESIGN §3): kind ->
#: phases of ``GameState.phase``.
BLIND_PHASES: dict[str, frozenset[str]] = {"life": frozenset({"waiting", "placement"})}


def _kind(game: Game) -> str:
    return game.meta.get("kind") or game.state.kind


def fogged(game: Game) -> bool:
    """The game's past is filtered per player now (module docstring): a CellWar game not
    finished, or a Life game in ``waiting``/``placement``."""
    if game.state.finished:
        return False
    kind = _kind(game)
    return kind in FOG_KINDS or game.state.phase in BLIND_PHASES.get(kind, ())


#: Config keys left out of the lobby (``Session.ListGames``, ``GET /games``) per kind:
#: a CellWar start position would show enemy units the players' views hide (DESIGN §5).
LOBBY_HIDDEN: dict[str, frozenset[str]] = {"cellwar": frozenset({"units"})}


def lobby_config(kind: str, config: dict) -> dict:
    """A game's config as the lobby shows it: without the keys of :data:`LOBBY_HIDDEN`
    (CellWar: board size, seats and timeout, no ``units``)."""
    hidden = LOBBY_HIDDEN.get(kind, frozenset())
    return {k: v for k, v in (config or {}).items() if k not in hidden}


def _forbidden(game: Game) -> ServiceError:
    if _kind(game) in FOG_KINDS:
        why = "is running under fog of war: only its players may see it (everyone may once it is finished)"
    else:
        why = "is in blind placement: only its players may see its log (everyone may once placement is over)"
    return ServiceError("FORBIDDEN", f"game {game.game_id} {why}")


def check_live_view(game: Game, player_id: int) -> None:
    """Refuse a spectator's live view of a game under fog of war now (a blind Life
    placement is not refused: the engine's spectator view of it is an empty board).

    Raises:
        ServiceError: ``FORBIDDEN`` for ``player_id`` 0 on a running CellWar game.
    """
    if _kind(game) in FOG_KINDS and not game.state.finished and player_id <= 0:
        raise _forbidden(game)


async def list_events(
    games: Games, game: Game, player_id: int, from_seq: int
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
    if not fogged(game) or (events and events[-1].type == "GameFinished"):
        return events[from_seq - 1 :]  # public meanwhile (placement over, or finished)
    by_seq = {e.seq: e for e in events}
    out = []
    for item in json.loads(await games.engine.player_log(events, player_id) or b"[]"):
        seq = int(item["seq"])
        if seq < from_seq:
            continue
        original = by_seq[int(item.get("log_seq", seq))]  # seq is the player's own number
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


async def replay(games: Games, game: Game, player_id: int, seq: int) -> bytes:
    """The view JSON of ``player_id`` (0 = spectator) right after event ``seq``.

    Raises:
        ServiceError: ``FORBIDDEN`` (a spectator while the log is private), ``MALFORMED``
            (seq out of range), ``GAME_BROKEN``, ``UNAVAILABLE``.
    """
    if fogged(game) and player_id <= 0:
        raise _forbidden(game)
    state = await games.state_at(game, seq)
    if _kind(game) in FOG_KINDS and game.state.finished and player_id > 0:
        data = json.loads(await games.render(game.game_id, seq, state, 0))
        data["you"] = player_id
        return dumps(data)
    return await games.render(game.game_id, seq, state, player_id)
