"""Idempotency of game commands: keys scoped per game and acting player, a digest of
the command body, and the map of recorded commands rebuilt from the log (a retry is
answered however late it comes; the same key with another body is
``IDEMPOTENCY_KEY_REUSED``)."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cellwar.v1 import events_pb2
from cellwar.v1.codes import ErrorCode
from services.common.errors import ServiceError

if TYPE_CHECKING:
    from services.session.domain.game import Game


@dataclass(frozen=True)
class CommandResult:
    """A command found in the log: the seq of its last event, the player it concerns and
    ``digest`` (:func:`command_digest`; "" in logs written before digests)."""

    seq: int
    player_id: int
    digest: str = ""


def command_key(actor: int, command_id: str) -> str:
    """The session's idempotency key of a game command: ``p<actor>:<command_id>``.

    Keys are scoped by game (each game keeps its own map; the store's ``Nats-Msg-Id``
    starts with the game id) and here by the acting player, so one player's key never
    answers another's command. A join (actor 0, no seat yet) is scoped to the game only.
    """
    return f"p{actor}:{command_id}"


def command_digest(command_type: str, payload: bytes) -> str:
    """16 hex characters of sha256 over the command type and its JSON payload: a key
    sent again with another body is told apart from a retry."""
    return hashlib.sha256(command_type.encode() + b"\0" + payload).hexdigest()[:16]


def recorded_command_id(key: str, digest: str) -> str:
    """What an event's ``command_id`` holds: ``<key>#<digest>``."""
    return f"{key}#{digest}" if digest else key


def parse_command_id(recorded: str) -> tuple[str, str]:
    """``(key, digest)`` of an event's ``command_id`` (digest "" when none was recorded)."""
    key, sep, digest = recorded.rpartition("#")
    if sep and len(digest) == 16 and all(c in "0123456789abcdef" for c in digest):
        return key, digest
    return recorded, ""


def game_id_for(command_id: str) -> str:
    """The id of a new game: derived from the create command's id (so a retried create
    finds its game), else random. 12 hex characters, URL-safe."""
    if command_id:
        return hashlib.sha256(b"cellwar-create:" + command_id.encode()).hexdigest()[:12]
    return uuid.uuid4().hex[:12]


def remember_command(commands: dict[str, CommandResult], event: events_pb2.Event) -> None:
    """Record the command id of ``event`` (the first event of a command gives its player,
    the last its seq)."""
    if not event.command_id:
        return
    key, digest = parse_command_id(event.command_id)
    first = commands.get(key)
    commands[key] = CommandResult(event.seq, first.player_id if first else event.actor, digest)


def repeated_command(game: Game, key: str, digest: str) -> CommandResult | None:
    """The recorded result of command ``key`` in ``game`` (None when it is new).

    Raises:
        ServiceError: ``IDEMPOTENCY_KEY_REUSED`` when the key was recorded with another
            body (digest).
    """
    result = game.commands.get(key) if key else None
    if result is not None and result.digest and digest and result.digest != digest:
        raise ServiceError(
            ErrorCode.IDEMPOTENCY_KEY_REUSED,
            "this Idempotency-Key was already used for a different request; "
            "use a new key for a new request",
        )
    return result
