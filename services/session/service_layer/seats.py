"""One seat per profile in a rated game (docs/ratings.md "One seat per profile").

A join of a rated game (``"rated": true`` in its config) with a profile — the session
passes the profile id the gateway read from a verified ``X-Profile-Token`` — is refused
with ``ALREADY_SEATED`` when a ``PlayerJoined`` of the game's log already names that
profile: one profile holding two seats would rate itself against itself (and its
opponent as losing to it).

:func:`check_seat` runs inside the command loop, under the game's lock, against the
seats the cached game knows (:attr:`Game.seated`, filled from the ``PlayerJoined``
events as the game takes them): no read of the log, but for a game rebuilt from a
snapshot the events before it, once (:meth:`GameCache.complete_commands`). A join
another instance recorded meanwhile loses the fence, and the loop checks again against
the newer log.
"""

from __future__ import annotations

import json
from typing import Any

from cellwar.v1.codes import CommandType, ErrorCode
from services.common.errors import ServiceError
from services.session.domain.game import Game
from services.session.service_layer.cache import GameCache


def join_profile(cmd_type: str, payload: bytes) -> str:
    """The profile id a join command carries (``""``: none, or not a join)."""
    if cmd_type != CommandType.JOIN:
        return ""
    try:
        data: Any = json.loads(payload or b"{}")
    except ValueError:
        return ""
    value = data.get("profile_id") if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def is_rated(game: Game) -> bool:
    """True when the game's config says ``"rated": true`` (GameCreated, or a fork's)."""
    config = game.meta.get("config") if isinstance(game.meta, dict) else None
    return isinstance(config, dict) and config.get("rated") is True


async def check_seat(games: GameCache, game: Game, cmd_type: str, payload: bytes) -> None:
    """Refuse a second seat of one profile in a rated game (module docstring).

    Args:
        games: the game cache (the events before a snapshot the game was rebuilt from
            are read once, when it does not know them yet).
        game: the cached game, its lock held by the caller.
        cmd_type / payload: the command (anything but a join with a profile passes).

    Raises:
        ServiceError: ``ALREADY_SEATED`` (409); ``UNAVAILABLE`` when the log cannot be read.
    """
    profile_id = join_profile(cmd_type, payload)
    if not profile_id or not is_rated(game) or game.seq <= 0:
        return
    if game.commands_from > 1:
        await games.complete_commands(game)
    seat = game.seated.get(profile_id)
    if seat is not None:
        raise ServiceError(
            ErrorCode.ALREADY_SEATED,
            f"this profile already holds seat {seat} of this rated game",
        )
