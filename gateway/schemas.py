"""Request and response bodies of the REST contract (docs/api/index.md).

Bodies are validated here so a body that does not fit the schema is answered 422
``MALFORMED`` before any service is called. Rules (zones, budgets, turns) are the
engine's business: a well-formed action the rules refuse comes back as 409.
Every request model forbids unknown fields, as the engine does for configs.
"""

from __future__ import annotations

import functools
import sys
import unicodedata
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictInt,
    Tag,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

#: Most cells one place/erase action may carry (a whole 316×316 board).
MAX_CELLS_PER_ACTION = 100_000
#: Longest RLE text a stamp may carry (characters).
MAX_RLE_CHARS = 100_000
#: Largest board coordinate: the largest board side of any kind is 1024 (Life).
MAX_COORD = 1023
#: Smallest coordinate the schema lets through: a negative one is well-formed but off
#: every board, so the rules answer it (409 ``OUT_OF_ZONE``; a stamp may hang over the
#: top or left edge); below this bound it is 422 ``MALFORMED`` like any other number
#: out of range.
MIN_COORD = -1024
#: Largest sequence number a query may carry (int64; gRPC sends it as uint64).
MAX_INT64 = 2**63 - 1
#: Largest unit id (gRPC sends it as uint32).
MAX_UNIT_ID = 2**32 - 1
#: Longest display name (player or profile), in characters.
MAX_NAME_CHARS = 40
#: Largest budget / max_generations of a Life game (the engine's int32 bound).
MAX_INT32 = 2**31 - 1
#: Largest CellWar board side (engine/cellwar/config.py).
MAX_CELLWAR_SIDE = 64


def whole_numbers(value: Any) -> Any:
    """``value`` with every number that has no fractional part as an ``int`` (in nested
    objects and arrays too): ``3.0`` → ``3``; ``true``, ``"3"`` and ``3.5`` stay, so the
    strict ``int`` checks after this refuse them.

    Source: JSON Schema 2020-12 validation §6.1.1 ("integer": any number with a zero
    fractional part), which the OpenAPI document promises for every integer field.
    """
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) <= 2**63 else value
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    return value

#: Unicode categories a name may not contain: controls (NUL, tab, newline...), format
#: characters (RTL override U+202E, zero-width joiner, ...), surrogates, line and
#: paragraph separators. Private-use characters (Co) are allowed: they show as a glyph or
#: a box, never as nothing or as a reordering; refusing them would put 137,000 code
#: points into the published pattern (:func:`name_pattern`), which schemathesis' generator
#: walks one by one.
_NAME_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def check_display_name(value: str) -> str:
    """A name shown to other people: any script (``"Алиса"``, ``"李"``), but no control or
    format character and not blank; returned unchanged.

    Raises:
        ValueError: a forbidden character (named by its code point) or a blank name.
    """
    for char in value:
        if unicodedata.category(char) in _NAME_FORBIDDEN_CATEGORIES:
            raise ValueError(
                f"a name may not contain control or format characters (U+{ord(char):04X})"
            )
    if value and not value.strip():
        raise ValueError("a name may not be blank")
    return value


@functools.cache
def _forbidden_name_class() -> str:
    """A regex character class body (no brackets) of every code point whose category is
    in :data:`_NAME_FORBIDDEN_CATEGORIES`: ``\\uXXXX`` escapes in the BMP, the characters
    themselves above it (read alike by ECMA-262 in Unicode mode, Rust's regex and Python's
    ``re``); surrogates left out (no UTF-8 text holds one)."""
    ranges: list[tuple[int, int]] = []
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        if unicodedata.category(chr(code)) in _NAME_FORBIDDEN_CATEGORIES:
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))

    def esc(code: int) -> str:
        return f"\\u{code:04x}" if code <= 0xFFFF else chr(code)

    return "".join(esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in ranges)


@functools.cache
@functools.cache
def name_pattern() -> str:
    """What :func:`check_display_name` accepts, as a regex for the OpenAPI document (the
    check enforces it): empty, or characters none of which is forbidden, at least one of
    them not whitespace (``str.isspace``, spelled out: ``\\s`` differs between regex
    engines). Computed once, when the document is first built."""
    forbidden = _forbidden_name_class()
    space = "".join(
        f"\\u{code:04x}"
        for code in range(0x10000)
        if chr(code).isspace() and unicodedata.category(chr(code)) not in _NAME_FORBIDDEN_CATEGORIES
    )
    return f"^(?:[^{forbidden}]*[^{forbidden}{space}][^{forbidden}]*)?$"


def _name_schema(schema: dict[str, Any]) -> None:
    schema["pattern"] = name_pattern()


#: A display name: 0..40 characters checked by :func:`check_display_name`.
DisplayName = Annotated[
    str,
    Field(max_length=MAX_NAME_CHARS, json_schema_extra=_name_schema),
    AfterValidator(check_display_name),
]


class _Strict(BaseModel):
    """A request body: unknown fields refused, integers as JSON Schema counts them
    (:func:`whole_numbers`), otherwise strict types."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _whole_numbers(cls, data: Any) -> Any:
        return whole_numbers(data)


#: The base of every request body (other modules' bodies too): see :class:`_Strict`.
RequestBody = _Strict


#: Longest turn timer, seconds (the engine's bound, engine/options.py).
MAX_TURN_TIME_S = 86_400

#: ``turn_time_s`` of a Life or CellWar config (docs/playing.md "Turn timers"): null or
#: absent = no timer.
TurnTimeS = Annotated[
    StrictInt | None,
    Field(
        ge=1,
        le=MAX_TURN_TIME_S,
        description="Seconds per turn (CellWar turns; Life placement turns and redraw rounds); "
        "null or absent: no timer. When it runs out the turn ends by itself (TurnTimedOut); "
        "views show `turn_deadline`.",
    ),
]
#: ``turn_time_s`` a matchmaking ticket may ask for: matchmade games always have a timer
#: (services/matchmaker/domain.py ``TICKET_TURN_TIME_S``; null keeps the default).
TicketTurnTimeS = Annotated[
    StrictInt | None,
    Field(
        ge=10,
        le=600,
        description="Seconds per turn, 10..600 (default: Life 90, CellWar 60; matchmade "
        "games always have a turn timer)",
    ),
]
#: ``rated`` of a Life or CellWar config: a game made by link that counts for ratings.
Rated = Annotated[
    StrictBool,
    Field(
        description="Count this game for ratings (seats joined with `X-Profile-Token` are "
        "rated when it finishes)"
    ),
]


# --------------------------------------------------------------------------- create


class LifeConfigBody(_Strict):
    """A Life game's config (B3/S23 with colours, the seed's Life rules). Omitted fields
    take the engine's defaults."""

    width: Annotated[StrictInt, Field(ge=8, le=1024, description="Board width in cells")] = 60
    height: Annotated[StrictInt, Field(ge=8, le=1024, description="Board height in cells")] = 60
    players: Annotated[Literal[2, 4], Field(description="Seats: 2 (halves) or 4 (quadrants)")] = 2
    budget: Annotated[
        StrictInt, Field(ge=0, le=MAX_INT32, description="Cells each player may place over the game")
    ] = 100
    torus: Annotated[StrictBool, Field(description="Wrap both axes (otherwise hard edges)")] = False
    max_generations: Annotated[
        StrictInt,
        Field(ge=1, le=MAX_INT32, description="The game ends by score after this many generations"),
    ] = 5000
    turn_time_s: TurnTimeS = None
    rated: Rated = False


class CampaignConfigBody(_Strict):
    """A campaign level (one of the seed's 103 levels)."""

    level: Annotated[StrictInt, Field(ge=1, le=103, description="Level number, 1..103")] = 1


class CellWarUnitBody(_Strict):
    """A unit of an explicit CellWar start position."""

    owner: Annotated[StrictInt, Field(ge=1, le=8, description="Player id owning the unit")]
    type: Literal["infantry", "fortification", "factory"]
    x: Annotated[
        StrictInt, Field(ge=0, le=MAX_CELLWAR_SIDE - 1, description="Column (< the board's width)")
    ]
    y: Annotated[
        StrictInt, Field(ge=0, le=MAX_CELLWAR_SIDE - 1, description="Row (< the board's height)")
    ]
    standing: Annotated[
        StrictInt | None,
        Field(ge=1, le=3, description="Fortifications only: standing counter 1..3 (3 = a factory)"),
    ] = None


#: A CellWar config with live spectators and rated (refused: docs/spectators.md), as a
#: JSON Schema the config and the create body must not match.
_LIVE_AND_RATED: dict[str, Any] = {
    "required": ["spectators", "rated"],
    "properties": {"spectators": {"const": "live"}, "rated": {"const": True}},
}


def _refuse_live_and_rated(spectators: Any, rated: bool, game: str = "a rated game") -> None:
    """Raises ApiError 422 ``LIVE_SPECTATORS_RATED`` for a rated game with live spectators
    (the engine refuses it too: engine/cellwar/config.py)."""
    if spectators == "live" and rated:
        from gateway.errors import ApiError  # an ApiError is answered as it is

        raise ApiError(
            422,
            "LIVE_SPECTATORS_RATED",
            f'{game} cannot have live spectators ("spectators": "live"); spectators '
            "may watch it once it has ended",
        )


class CellWarConfigBody(_Strict):
    """A CellWar game's config (the seed's CellWar rules: infantry, fortifications,
    factories under fog of war). Omitted fields take the engine's defaults."""

    width: Annotated[StrictInt, Field(ge=4, le=64, description="Board width in cells")] = 16
    height: Annotated[StrictInt, Field(ge=4, le=64, description="Board height in cells")] = 16
    players: Annotated[StrictInt, Field(ge=2, le=8, description="Seats, 2..8")] = 2
    units: Annotated[
        list[CellWarUnitBody] | None,
        Field(
            min_length=1,
            max_length=MAX_CELLWAR_SIDE * MAX_CELLWAR_SIDE,
            description="Replaces the default start (2 infantry each). The rules also "
            "want every unit on the board, one unit per cell, owners 1..players and a "
            "unit for every player (else 409 INVALID_CONFIG).",
        ),
    ] = None
    disconnect_timeout_s: Annotated[
        float | None, Field(gt=0, le=86_400, description="Seconds a lost player is waited for")
    ] = None
    turn_time_s: TurnTimeS = None
    rated: Rated = False
    spectators: Annotated[
        Literal["finished", "live"] | None,
        Field(
            description="`finished` (default): spectators may watch once the game has "
            "ended; `live`: delayed spectators (at least 10 s late) while it runs. `live` "
            "is refused in a rated game (422 `LIVE_SPECTATORS_RATED`; docs/spectators.md)"
        ),
    ] = None

    model_config = ConfigDict(extra="forbid", json_schema_extra={"not": _LIVE_AND_RATED})


class LifeTicketConfig(_Strict):
    """A matchmaking ticket's partial Life config: any of these fields (bounds as
    :class:`LifeConfigBody`); the queue fixes ``players``."""

    width: Annotated[StrictInt, Field(ge=8, le=1024, description="Board width in cells")] = 60
    height: Annotated[StrictInt, Field(ge=8, le=1024, description="Board height in cells")] = 60
    budget: Annotated[
        StrictInt, Field(ge=0, le=MAX_INT32, description="Cells each player may place over the game")
    ] = 100
    torus: Annotated[StrictBool, Field(description="Wrap both axes (otherwise hard edges)")] = False
    max_generations: Annotated[
        StrictInt,
        Field(ge=1, le=MAX_INT32, description="The game ends by score after this many generations"),
    ] = 5000
    turn_time_s: TicketTurnTimeS = None


class CellWarTicketConfig(_Strict):
    """A matchmaking ticket's partial CellWar config (the default start; the queue fixes
    ``players``). A board too small for the default start of the queue's players is
    refused by the rules (409 ``INVALID_CONFIG``)."""

    width: Annotated[StrictInt, Field(ge=4, le=64, description="Board width in cells")] = 16
    height: Annotated[StrictInt, Field(ge=4, le=64, description="Board height in cells")] = 16
    disconnect_timeout_s: Annotated[
        float | None, Field(gt=0, le=86_400, description="Seconds a lost player is waited for")
    ] = None
    turn_time_s: TicketTurnTimeS = None

    @model_validator(mode="before")
    @classmethod
    def _no_live_spectators(cls, data: Any) -> Any:
        """A ticket asking for live spectators: 422 ``LIVE_SPECTATORS_RATED`` (matchmade
        games are rated; any other ``spectators`` is an unknown field, 422 ``MALFORMED``)."""
        if isinstance(data, dict):
            _refuse_live_and_rated(data.get("spectators"), True, "a matchmade game (rated)")
        return data


class CreateLife(_Strict):
    """Create a Life game."""

    kind: Literal["life"]
    config: LifeConfigBody = Field(default_factory=LifeConfigBody)
    rated: Annotated[StrictBool, Field(description="The same as `config.rated`")] = False


class CreateCampaign(_Strict):
    """Start a campaign level."""

    kind: Literal["campaign"]
    config: CampaignConfigBody = Field(default_factory=CampaignConfigBody)


class CreateCellWar(_Strict):
    """Create a CellWar game."""

    kind: Literal["cellwar"]
    config: CellWarConfigBody = Field(default_factory=CellWarConfigBody)
    rated: Annotated[StrictBool, Field(description="The same as `config.rated`")] = False

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "not": {
                "required": ["rated", "config"],
                "properties": {
                    "rated": {"const": True},
                    "config": {
                        "required": ["spectators"],
                        "properties": {"spectators": {"const": "live"}},
                    },
                },
            }
        },
    )

    @model_validator(mode="after")
    def _live_spectators_unrated(self) -> CreateCellWar:
        _refuse_live_and_rated(self.config.spectators, self.rated or self.config.rated)
        return self


CreateGameBody = Annotated[CreateLife | CreateCampaign | CreateCellWar, Field(discriminator="kind")]


def config_json(body: CreateLife | CreateCampaign | CreateCellWar) -> dict[str, Any]:
    """The config object sent to the session: only the fields the client gave (the
    engine fills and records the defaults); a body's ``"rated": true`` becomes
    ``config.rated``."""
    config = body.config.model_dump(exclude_unset=True, exclude_none=True)
    if getattr(body, "rated", False):
        config["rated"] = True
    return config


# --------------------------------------------------------------------------- join


class JoinBody(_Strict):
    """Take the next free seat."""

    name: Annotated[
        DisplayName,
        Field(
            min_length=1,
            description="Shown to the other players: 1..40 characters of any script, no "
            "control or format characters",
        ),
    ]


# --------------------------------------------------------------------------- actions

Coord = Annotated[
    StrictInt,
    Field(ge=MIN_COORD, le=MAX_COORD, description="-1024..1023 (negative: off the board)"),
]
Cell = Annotated[tuple[Coord, Coord], Field(description="[x, y]: column, row")]
Cells = Annotated[list[Cell], Field(min_length=1, max_length=MAX_CELLS_PER_ACTION)]


class PlaceAction(_Strict):
    """Place cells of your colour (all or nothing: zone and budget are checked first)."""

    type: Literal["place"]
    cells: Cells


class EraseAction(_Strict):
    """Erase your own cells (a cell placed this drawing turn refunds 1)."""

    type: Literal["erase"]
    cells: Cells


def _stamp_schema(schema: dict[str, Any]) -> None:
    """The OpenAPI shape of a stamp: ``pattern`` and ``rle`` are strings (never null) and
    exactly one of them is given."""
    props = schema.get("properties", {})
    for key in ("pattern", "rle"):
        if key in props:
            nullable = props[key].pop("anyOf", [])
            props[key].update(next((s for s in nullable if s.get("type") == "string"), {}))
            props[key].pop("default", None)
    schema["oneOf"] = [{"required": ["pattern"]}, {"required": ["rle"]}]


class StampAction(_Strict):
    """Stamp a library pattern (``pattern``) or your own RLE (``rle``); top-left at (x, y)
    after ``rotation`` quarter turns clockwise. Cells outside your zone are skipped."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_stamp_schema)

    type: Literal["stamp"]
    pattern: Annotated[str | None, Field(min_length=1, max_length=64, description="e.g. glider")] = None
    rle: Annotated[str | None, Field(min_length=1, max_length=MAX_RLE_CHARS)] = None
    x: Annotated[Coord, Field(description="Column of the top-left live cell, -1024..1023")]
    y: Annotated[Coord, Field(description="Row of the top-left live cell, -1024..1023")]
    rotation: Annotated[StrictInt, Field(ge=0, le=3, description="Quarter turns clockwise")] = 0

    @model_validator(mode="before")
    @classmethod
    def _no_null_source(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in ("pattern", "rle"):
                if key in data and data[key] is None:
                    raise ValueError(f"'{key}' must be a string when given (not null)")
        return data

    @model_validator(mode="after")
    def _one_source(self) -> StampAction:
        if (self.pattern is None) == (self.rle is None):
            raise ValueError("give exactly one of 'pattern' or 'rle'")
        return self


class SpeedAction(_Strict):
    """Set the simulation speed multiplier (× 8 generations/s)."""

    type: Literal["speed"]
    multiplier: Literal[1, 2, 4, 8]

    @field_validator("multiplier", mode="before")
    @classmethod
    def _not_a_boolean(cls, value: Any) -> Any:
        # the literal's lax check takes true for 1 (true == 1 in Python): refused as
        # the strict integers of the other bodies refuse it
        if isinstance(value, bool):
            raise PydanticCustomError("literal_error", "Input should be 1, 2, 4 or 8")
        return value


class _Bare(_Strict):
    """An action with no argument."""


class ResetTurnAction(_Bare):
    """Undo everything you placed in this drawing turn."""

    type: Literal["reset_turn"]


class PauseAction(_Bare):
    """Pause the simulation."""

    type: Literal["pause"]


class ResumeAction(_Bare):
    """Resume the simulation."""

    type: Literal["resume"]


class ProposeFinishAction(_Bare):
    """Offer to end the game now (ends when every remaining player agreed)."""

    type: Literal["propose_finish"]


class ResignAction(_Bare):
    """Give up: you are out."""

    type: Literal["resign"]


class RestartAction(_Bare):
    """Campaign: restart the level."""

    type: Literal["restart"]


class UnitMove(_Strict):
    """CellWar: what unit ``unit_id`` does toward (dx, dy); (0, 0) means stay."""

    unit_id: Annotated[StrictInt, Field(ge=0, le=MAX_UNIT_ID)]
    dx: Annotated[StrictInt, Field(ge=-1, le=1)]
    dy: Annotated[StrictInt, Field(ge=-1, le=1)]


_LIFE_TYPES = (
    "place", "erase", "stamp", "reset_turn", "pause", "resume", "speed",
    "propose_finish", "resign", "restart",
)


#: The fields of a CellWar move: a body without ``type`` naming any of them is a move.
_MOVE_FIELDS = ("unit_id", "dx", "dy")


def _action_tag(value: Any) -> str | None:
    """Discriminator: the Life ``type``, or ``"move"`` for a CellWar body without one that
    names a move's field; None (the union's own error) for anything else: an unknown
    ``type``, an object naming neither, a value that is not an object."""
    if isinstance(value, dict):
        if "type" in value:
            kind = value["type"]
            return kind if kind in _LIFE_TYPES else None
        return "move" if any(name in value for name in _MOVE_FIELDS) else None
    if isinstance(value, BaseModel):
        return getattr(value, "type", "move")
    return None


ActionBody = Annotated[
    Annotated[PlaceAction, Tag("place")]
    | Annotated[EraseAction, Tag("erase")]
    | Annotated[StampAction, Tag("stamp")]
    | Annotated[ResetTurnAction, Tag("reset_turn")]
    | Annotated[PauseAction, Tag("pause")]
    | Annotated[ResumeAction, Tag("resume")]
    | Annotated[SpeedAction, Tag("speed")]
    | Annotated[ProposeFinishAction, Tag("propose_finish")]
    | Annotated[ResignAction, Tag("resign")]
    | Annotated[RestartAction, Tag("restart")]
    | Annotated[UnitMove, Tag("move")],
    Discriminator(
        _action_tag,
        custom_error_type="invalid_action",
        custom_error_message="unknown action: an action is a JSON object with 'type' one of "
        f"{[t for t in _LIFE_TYPES if t != 'restart']} (Life; 'restart' too in the campaign), "
        "or a CellWar move {unit_id, dx, dy}",
    ),
]


def action_json(action: BaseModel) -> dict[str, Any]:
    """The action object sent to the session (JSON-ready; cells as [x, y] lists)."""
    data = action.model_dump(exclude_none=True)
    if "cells" in data:
        data["cells"] = [list(c) for c in data["cells"]]
    return data


# --------------------------------------------------------------------------- answers


class GameCreated(BaseModel):
    """Answer of POST /game/create."""

    game_id: str


class Joined(BaseModel):
    """Answer of POST /game/{id}/join: keep the token, it is your seat."""

    player_id: int = Field(description="Seat number, from 1")
    player_token: str = Field(description="Send as `Authorization: Bearer <token>`")


class CommandResult(BaseModel):
    """Answer of a command: the sequence number of its (last) event and your view after it."""

    seq: int
    view: dict[str, Any]


class EventOut(BaseModel):
    """One event of a game's log."""

    seq: int
    type: str = Field(description="Past tense: GameCreated, PlayerJoined, ActionApplied, ...")
    actor: int = Field(description="Player id; 0 = the system")
    payload: dict[str, Any]
    time: str = Field(description="ISO 8601, UTC")
    state_hash: str | None = Field(
        None,
        description="sha256 of the canonical state after the event; absent in a fog-filtered "
        "CellWar log (a running game read by a player)",
    )
    engine_version: str


class EventsOut(BaseModel):
    """Answer of GET /game/{id}/events."""

    events: list[EventOut]


class GameSummaryOut(BaseModel):
    """A lobby entry."""

    game_id: str
    kind: str
    phase: str
    players_joined: int
    max_players: int
    config: dict[str, Any]


class GamesOut(BaseModel):
    """Answer of GET /games: one page of the lobby."""

    games: list[GameSummaryOut]
    next_cursor: str | None = Field(
        default=None, description="Pass as `cursor` for the next page; null on the last page"
    )


class ValidActionsOut(BaseModel):
    """Answer of GET /game/{id}/valid_actions: ``{"unit_id", "dx", "dy", "kind"}`` each."""

    actions: list[dict[str, Any]]


class ErrorDetail(BaseModel):
    """The inside of an error body."""

    code: str = Field(description="Machine code, e.g. OUT_OF_ZONE")
    message: str
    seq: int | None = Field(
        None, description="The event the error is about (an imported log's first bad seq)"
    )


class ErrorOut(BaseModel):
    """Every error: ``{"error": {"code", "message"}}``."""

    error: ErrorDetail


class Status(BaseModel):
    """Answer of /healthz and /readyz."""

    status: str


# --------------------------------------------------------------------------- replay tools


class ForkBody(_Strict):
    """Body of POST /game/{id}/fork."""

    seq: StrictInt = Field(
        ge=1, le=2**53 - 1, description="The event whose state the fork starts in (a JSON-safe integer)"
    )


class ImportOrigin(_Strict):
    """Where an imported log came from (kept in the new game's first event)."""

    # shown to people with the game (its origin): no control or format characters
    game_id: Annotated[str, AfterValidator(check_display_name)] | None = Field(
        None,
        min_length=1,
        max_length=64,
        description="The game it was exported from",
        json_schema_extra=_name_schema,
    )
    file: Annotated[str, AfterValidator(check_display_name)] | None = Field(
        None, min_length=1, max_length=255, description="The file's name", json_schema_extra=_name_schema
    )


class ImportedOut(BaseModel):
    """Answer of POST /games/import."""

    game_id: str
    events: int = Field(description="Events the new game recorded")
    finished: bool = Field(
        description="The log ended with a finished game (else the new game is a fork of its "
        "last state, with free seats)"
    )
