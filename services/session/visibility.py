"""Who may read what of a game's past: the event log and replays (DESIGN §7 "a player gets
it fog-filtered; everyone gets it whole once the game is finished").

- Kinds without fog of war (Life, campaign): the whole log and the asked view, for
  everyone (unchanged behaviour).
- CellWar, game not finished:

  * a player (``player_id`` > 0) gets ``Engine.PlayerLog`` of the whole log (what its
    fog let it see when each event happened, see ``engine.cellwar.log``): hidden events
    left out, others reduced, no ``state_hash`` and no ``command_id`` on any event;
    ``time`` and ``engine_version`` are kept. ``from_seq`` filters the answer.
  * a spectator (no token, ``player_id`` 0) gets ``FORBIDDEN`` (403) for the log and for
    replays (the log would lift the fog); its live view shows no unit until the end.
  * a replay for a player is that player's view at ``seq`` (the engine's view of the
    state then is already fogged).

- CellWar, game finished: everyone gets the whole log with hashes, and a replay shows
  the whole board (the spectator view, with ``you`` set to the reader).
"""

from __future__ import annotations

import json

from cellwar.v1 import events_pb2
from services.common.errors import ServiceError
from services.session.games import Game, Games

#: Kinds whose log and replays are fog-filtered while the game runs.
FOG_KINDS = frozenset({"cellwar"})


def fogged(game: Game) -> bool:
    """The game's past is filtered per player now (a CellWar game not finished)."""
    kind = game.meta.get("kind") or game.state.kind
    return kind in FOG_KINDS and not game.state.finished


def _forbidden(game: Game) -> ServiceError:
    return ServiceError(
        "FORBIDDEN",
        f"game {game.game_id} is running under fog of war: only its players may see it "
        "(everyone may once it is finished)",
    )


def check_live_view(game: Game, player_id: int) -> None:
    """Refuse a spectator's live view of a game whose board is fogged now.

    Raises:
        ServiceError: ``FORBIDDEN`` for ``player_id`` 0 on a running CellWar game.
    """
    if fogged(game) and player_id <= 0:
        raise _forbidden(game)


async def list_events(
    games: Games, game: Game, player_id: int, from_seq: int
) -> list[events_pb2.Event]:
    """The events from ``from_seq`` that ``player_id`` (0 = spectator) may read.

    Raises:
        ServiceError: ``FORBIDDEN`` (a spectator of a running CellWar game),
            ``UNAVAILABLE``, engine codes for a log that does not fold.
    """
    from_seq = max(from_seq, 1)
    if not fogged(game):
        return await games.store.read(game.game_id, from_seq)
    if player_id <= 0:
        raise _forbidden(game)
    events = await games.store.read(game.game_id)
    if events and events[-1].type == "GameFinished":  # finished meanwhile: all is public
        return events[from_seq - 1 :]
    by_seq = {e.seq: e for e in events}
    out = []
    for item in json.loads(await games.engine.player_log(events, player_id) or b"[]"):
        seq = int(item["seq"])
        if seq < from_seq:
            continue
        original = by_seq[seq]
        event = events_pb2.Event(
            game_id=game.game_id,
            seq=seq,
            type=str(item["type"]),
            actor=int(item["actor"]),
            payload=json.dumps(item["payload"], separators=(",", ":"), sort_keys=True).encode(),
            engine_version=original.engine_version,
        )
        event.time.CopyFrom(original.time)
        out.append(event)
    return out


async def replay(games: Games, game: Game, player_id: int, seq: int) -> bytes:
    """The view JSON of ``player_id`` (0 = spectator) right after event ``seq``.

    Raises:
        ServiceError: ``FORBIDDEN`` (a spectator of a running CellWar game), ``MALFORMED``
            (seq out of range), ``GAME_BROKEN``, ``UNAVAILABLE``.
    """
    if fogged(game) and player_id <= 0:
        raise _forbidden(game)
    state = await games.state_at(game, seq)
    kind = game.meta.get("kind") or game.state.kind
    if kind in FOG_KINDS and game.state.finished and player_id > 0:
        data = json.loads(await games.render(game.game_id, seq, state, 0))
        data["you"] = player_id
        return json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    return await games.render(game.game_id, seq, state, player_id)
