"""The commands of a game (the imperative; its events are past tense): one dataclass and
one constructor per command, so every caller writes the same payload bytes.

A payload is compact, key-sorted JSON (:func:`services.common.jsonwire.dumps`): the
idempotency digest of a command compares bytes (services/session/domain/idempotency.py),
so a retry built by another caller, or on another instance, must spell its payload the
same way. The shapes are the engine's (``Engine.Decide``, proto/cellwar/v1/engine.proto):

==================  =====  ==========================================  ======================
constructor         actor  payload                                     command id
==================  =====  ==========================================  ======================
``join``            0      ``{"name", "profile_id"?}``                 the client's
``act``             seat   the action object                           the client's
``end_turn``        seat   ``{}``                                      the client's
``leave``           seat   ``{"player_id", "reason": "left"}``         the client's
``disconnect``      0      ``{"player_id", "reason": "disconnected"}`` ``disconnect:p<seat>``
``time_out``        0      ``{"turn_seq"}``                            ``timeout:<turn_seq>``
``expire``          0      ``{}``                                      ``expire``
==================  =====  ==========================================  ======================

The system's command ids (a disconnect, a timeout, an expiry) are the same on every
instance, so two instances that both send one record it once. ``create``, ``fork`` and
imports are not game commands (:class:`services.session.service_layer.loop.CommandLoop`
runs them itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cellwar.v1.codes import CommandType, RemovalReason
from services.common.jsonwire import dumps

#: The payload of a command without arguments (``end_turn``, ``expire``).
EMPTY_PAYLOAD = b"{}"
#: Command id of an expiry (the same on every instance).
EXPIRE_COMMAND_ID = "expire"


def disconnect_command_id(player_id: int) -> str:
    """The command id of a removal for being away: ``disconnect:p<player_id>``, the same
    on every instance."""
    return f"disconnect:p{player_id}"


def timeout_command_id(turn_seq: int) -> str:
    """The command id of the timeout of the turn that began at ``turn_seq``:
    ``timeout:<turn_seq>``, the same on every instance (so it lands once)."""
    return f"timeout:{turn_seq}"


@dataclass(frozen=True)
class Command:
    """A command for one game (module docstring: build it with a constructor).

    Attributes:
        game_id: the game.
        type: the command type (not ``create`` nor ``fork``: see :class:`CommandLoop`).
        actor: the acting player (0 = the system: a join, a disconnect, an expiry).
        payload: JSON bytes, compact and key-sorted (the digest compares bytes).
        command_id: the client's idempotency key ("" = none), scoped per player by the
            command loop.
    """

    game_id: str
    type: CommandType
    actor: int
    payload: bytes = EMPTY_PAYLOAD
    command_id: str = ""

    @classmethod
    def join(cls, game_id: str, name: str, profile_id: str = "", command_id: str = "") -> Command:
        """Take a seat: ``{"name", "profile_id"?}`` (the profile only when given; the
        engine records it in a rated game only)."""
        body: dict[str, str] = {"name": name}
        if profile_id:
            body["profile_id"] = profile_id
        return cls(game_id, CommandType.JOIN, 0, dumps(body), command_id)

    @classmethod
    def act(cls, game_id: str, player_id: int, action: dict[str, Any], command_id: str = "") -> Command:
        """Player ``player_id``'s action: the action object as the player sent it (the
        engine checks its shape)."""
        return cls(game_id, CommandType.ACTION, player_id, dumps(action), command_id)

    @classmethod
    def end_turn(cls, game_id: str, player_id: int, command_id: str = "") -> Command:
        """Player ``player_id`` ends its turn: ``{}``."""
        return cls(game_id, CommandType.END_TURN, player_id, EMPTY_PAYLOAD, command_id)

    @classmethod
    def remove_player(
        cls,
        game_id: str,
        player_id: int,
        reason: RemovalReason,
        *,
        actor: int = 0,
        command_id: str = "",
    ) -> Command:
        """Remove seat ``player_id`` for ``reason``: ``{"player_id", "reason"}``, sent by
        ``actor`` (0 = the system; prefer :meth:`leave` and :meth:`disconnect`)."""
        body = {"player_id": player_id, "reason": str(reason)}
        return cls(game_id, CommandType.REMOVE_PLAYER, actor, dumps(body), command_id)

    @classmethod
    def leave(cls, game_id: str, player_id: int, command_id: str = "") -> Command:
        """Player ``player_id`` leaves the game (the same command as a disconnect past its
        timeout, sent by the player: reason ``left``)."""
        return cls.remove_player(
            game_id, player_id, RemovalReason.LEFT, actor=player_id, command_id=command_id
        )

    @classmethod
    def disconnect(cls, game_id: str, player_id: int) -> Command:
        """The system removes player ``player_id``, away past the disconnect timeout
        (reason ``disconnected``; command id :func:`disconnect_command_id`)."""
        return cls.remove_player(
            game_id,
            player_id,
            RemovalReason.DISCONNECTED,
            command_id=disconnect_command_id(player_id),
        )

    @classmethod
    def time_out(cls, game_id: str, turn_seq: int) -> Command:
        """The system ends the timed turn that began at event ``turn_seq``:
        ``{"turn_seq"}`` (command id :func:`timeout_command_id`)."""
        return cls(
            game_id,
            CommandType.TIME_OUT,
            0,
            dumps({"turn_seq": turn_seq}),
            timeout_command_id(turn_seq),
        )

    @classmethod
    def expire(cls, game_id: str) -> Command:
        """The system expires a game whose seats stayed open too long: ``{}`` (command id
        :data:`EXPIRE_COMMAND_ID`)."""
        return cls(game_id, CommandType.EXPIRE, 0, EMPTY_PAYLOAD, EXPIRE_COMMAND_ID)
