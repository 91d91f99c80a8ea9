"""The names every CellWar process shares: event types, command types and error codes.

A tiny module of the wire contract, next to the ``.proto`` files it belongs to, written
with the standard library only: the engine (numpy + stdlib) and the services (which
never import ``engine``) both import it as ``cellwar.v1.codes``, so a value is spelt in
one place. The members are :class:`enum.StrEnum`, so ``EventType.TURN_ENDED ==
"TurnEnded"`` and they go into protobuf string fields and JSON unchanged.

Importing this module imports nothing but :mod:`enum` (``cellwar/__init__.py`` and
``cellwar/v1/__init__.py`` are empty; the generated ``*_pb2`` stubs are separate modules).
"""

from __future__ import annotations

from enum import StrEnum


class EventType(StrEnum):
    """Types of recorded events (past tense; payloads in proto/cellwar/v1/events.proto)."""

    GAME_CREATED = "GameCreated"
    PLAYER_JOINED = "PlayerJoined"
    ACTION_APPLIED = "ActionApplied"
    CONTROL_CHANGED = "ControlChanged"
    TURN_ENDED = "TurnEnded"
    GENERATIONS_TICKED = "GenerationsTicked"
    PLAYER_REMOVED = "PlayerRemoved"
    ROLLED_BACK = "RolledBack"
    GAME_EXPIRED = "GameExpired"
    TURN_TIMED_OUT = "TurnTimedOut"
    GAME_FINISHED = "GameFinished"
    #: The first event of a fork: the state at ``from_seq`` of ``from_game`` (engine/fork.py).
    GAME_FORKED = "GameForked"


class CommandType(StrEnum):
    """Types of commands the engine decides (``Engine.Decide``, ``Command.type``)."""

    CREATE = "create"
    JOIN = "join"
    ACTION = "action"
    END_TURN = "end_turn"
    REMOVE_PLAYER = "remove_player"
    EXPIRE = "expire"
    #: Start a new game in a given state (``Engine.Decide`` with that state; engine/fork.py).
    FORK = "fork"
    TIME_OUT = "time_out"


class RemovalReason(StrEnum):
    """``PlayerRemoved.reason``: why a player left the game."""

    LEFT = "left"
    DISCONNECTED = "disconnected"
    RESIGNED = "resigned"


class ErrorCode(StrEnum):
    """Machine codes that travel unchanged from the engine or a service to HTTP
    (gRPC status mapping: services/common/errors.py; HTTP: gateway/errors.py; table:
    docs/api/errors.md)."""

    # the input does not fit the schema (gRPC INVALID_ARGUMENT, HTTP 422)
    MALFORMED = "MALFORMED"
    INVALID_CONFIG = "INVALID_CONFIG"
    IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
    # a rule refuses the command (gRPC FAILED_PRECONDITION, HTTP 409)
    OUT_OF_ZONE = "OUT_OF_ZONE"
    BUDGET_EXCEEDED = "BUDGET_EXCEEDED"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    WRONG_PHASE = "WRONG_PHASE"
    GAME_FULL = "GAME_FULL"
    GAME_FINISHED = "GAME_FINISHED"
    INVALID_ACTION = "INVALID_ACTION"
    NO_CHANGE = "NO_CHANGE"
    UNIT_ALREADY_ACTED = "UNIT_ALREADY_ACTED"
    UNITS_NOT_DONE = "UNITS_NOT_DONE"
    UNKNOWN_PLAYER = "UNKNOWN_PLAYER"
    LEVEL_LOCKED = "LEVEL_LOCKED"
    ALREADY_QUEUED = "ALREADY_QUEUED"
    ALREADY_MATCHED = "ALREADY_MATCHED"
    #: A profile that already holds a seat of this rated game joined it again (409).
    ALREADY_SEATED = "ALREADY_SEATED"
    # services
    GAME_NOT_FOUND = "GAME_NOT_FOUND"
    PROFILE_NOT_FOUND = "PROFILE_NOT_FOUND"
    TICKET_NOT_FOUND = "TICKET_NOT_FOUND"
    UNAUTHORIZED = "UNAUTHORIZED"
    FORBIDDEN = "FORBIDDEN"
    CONFLICT = "CONFLICT"
    RATE_LIMITED = "RATE_LIMITED"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    UNAVAILABLE = "UNAVAILABLE"
    GAME_BROKEN = "GAME_BROKEN"
    INTERNAL = "INTERNAL"
    # replay tools (docs/architecture/replay-tools.md)
    #: An imported log whose re-decided events differ from the recorded ones (422; the
    #: error names the first bad ``seq``).
    LOG_MISMATCH = "LOG_MISMATCH"
    #: An imported log written by an engine version this engine does not know (422).
    UNKNOWN_ENGINE_VERSION = "UNKNOWN_ENGINE_VERSION"
    #: A delayed spectator asked for a game none of whose events is old enough yet (409).
    NOT_YET_VISIBLE = "NOT_YET_VISIBLE"
    # spectators of fog games (docs/spectators.md)
    #: A spectator asked to watch a running game whose creator did not ask for live
    #: spectators (CellWar ``"spectators": "finished"``, the default): it may watch once
    #: the game has ended (409).
    SPECTATORS_AFTER_END = "SPECTATORS_AFTER_END"
    #: ``"spectators": "live"`` in a rated (or matchmade) game's config (422).
    LIVE_SPECTATORS_RATED = "LIVE_SPECTATORS_RATED"
