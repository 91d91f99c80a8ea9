"""The one exception the rules raise, with a machine code that travels unchanged to HTTP."""

from __future__ import annotations

from cellwar.v1.codes import ErrorCode


class GameError(Exception):
    """A rule refused a command; nothing was changed.

    Attributes:
        code: machine code, e.g. ``"OUT_OF_ZONE"``, ``"BUDGET_EXCEEDED"``,
            ``"NOT_YOUR_TURN"``, ``"WRONG_PHASE"``, ``"GAME_FULL"``, ``"GAME_FINISHED"``,
            ``"INVALID_ACTION"`` (a rule refuses it), ``"UNKNOWN_PLAYER"``,
            ``"UNIT_ALREADY_ACTED"``, ``"UNITS_NOT_DONE"``, ``"NO_CHANGE"`` (the command
            would change nothing; engine version 2+), ``"INVALID_CONFIG"`` and
            ``"MALFORMED"`` (the last two: input that does not fit the schema; HTTP 422).
        message: a sentence for a person.
    """

    #: Codes that mean "the input does not fit the schema" (gRPC INVALID_ARGUMENT, HTTP 422);
    #: every other code is a rule refusing the command (FAILED_PRECONDITION, HTTP 409).
    SCHEMA_CODES = frozenset({"INVALID_CONFIG", "MALFORMED"})

    def __init__(self, code: ErrorCode, message: str) -> None:
        """``code``: a member of :class:`cellwar.v1.codes.ErrorCode` (docs/api/errors.md);
        it is kept as its plain string value, so ``exc.code == "MALFORMED"`` and
        ``exc.code == ErrorCode.MALFORMED`` both hold and it serialises unchanged."""
        text = str(code)
        super().__init__(f"{text}: {message}")
        self.code: str = text
        self.message = message


#: Machine code of a command that would change nothing (engine version 2+: placing on an
#: own live cell, erasing an empty cell, a speed already set, ...); HTTP 409 like every
#: rule code (docs/api/errors.md).
NO_CHANGE = ErrorCode.NO_CHANGE
