"""Replay tools over REST (docs/api/index.md "Replay tools"): fork, import, the event
log as JSON Lines, and delayed spectators.

- ``POST /game/{id}/fork {"seq"}`` → 201 ``{"game_id"}``: a new game starting with
  ``GameForked`` in the state at ``seq``, seats free (engine/fork.py). Anyone may fork a
  finished game; a running one only its players, while its log is public.
- ``POST /games/import`` (a JSON Lines log, or ``{"events": [...], "origin"?}``) → 201
  ``{"game_id", "events", "finished"}``: the engine decides every command again; a log
  it does not reproduce is 409 ``LOG_MISMATCH`` with the first bad ``seq`` (in the message
  and as ``error.seq``) and nothing is written. (409, not 422: the body fits the schema,
  the rules refuse it — the gateway's rule for every service refusal, gateway/errors.py.)
- ``GET /game/{id}/events?format=jsonl``, ``GET /game/{id}/state?spectate=1&delay_s=N``
  and ``WS /game/{id}/stream?spectate=1``: routes of gateway/routes/games.py and
  stream.py, streams in gateway/replay_streams.py.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import grpc
from fastapi import APIRouter, Body, Query, Request, status
from pydantic import ValidationError

from cellwar.v1 import events_pb2, session_pb2
from cellwar.v1.codes import ErrorCode
from gateway.deps import RPC_TIMEOUT_S, CommandId, OptionalPlayer, SessionDep, player_id_of
from gateway.errors import ApiError, Code, summarise_validation_errors
from gateway.replay_streams import JSONL
from gateway.responses import errors
from gateway.routes.games import GameId
from gateway.schemas import ForkBody, GameCreated, ImportedOut, ImportOrigin, name_pattern
from services.common.errors import error_from_rpc
from services.common.jsonwire import (
    LONG_NUMBER,
    MAX_EVENT_DEPTH,
    STATE_HASH,
    dumps,
    nested_deeper,
    unknown_log_fields,
)

router = APIRouter(tags=["replay"])

#: Deadline of an import (seconds): the engine decides every event of the log again.
IMPORT_TIMEOUT_S = 300.0


# --------------------------------------------------------------------------- fork


@router.post(
    "/game/{game_id}/fork",
    status_code=status.HTTP_201_CREATED,
    response_model=GameCreated,
    responses=errors(401, 403, 404, 409, 413, 422, 429, 503),
    openapi_extra={"security": [{}]},
    summary="Fork a game at an event",
    description="A new game whose first event `GameForked {from_game, from_seq, state_hash}` "
    "starts it in the state right after event `seq` (the same `state_hash` as recorded "
    "there), with every seat free: join it like a new game (the n-th join takes over the "
    "n-th seat still in the game, with its cells, units and budget). Anyone may fork a "
    "finished game; a game that is not finished only its players (their token), and not "
    "while its log is private (CellWar under fog, Life in blind placement): 403 FORBIDDEN. "
    "A `seq` beyond the game's last event is 409 `SEQ_OUT_OF_RANGE`.",
)
async def fork_game(
    game_id: GameId,
    body: Annotated[ForkBody, Body()],
    player: OptionalPlayer,
    session: SessionDep,
    cid: CommandId,
) -> GameCreated:
    """POST /game/{id}/fork ``{"seq"}`` → 201 ``{"game_id"}``."""
    try:
        reply = await session.ForkGame(
            session_pb2.ForkGameRequest(
                game_id=game_id, player_id=player_id_of(player), seq=body.seq, command_id=cid
            ),
            timeout=RPC_TIMEOUT_S,
        )
    except grpc.aio.AioRpcError as exc:
        if error_from_rpc(exc)[0] == ErrorCode.MALFORMED:
            # The only argument the schema cannot bound is seq against the game's last event.
            raise ApiError(409, Code.SEQ_OUT_OF_RANGE, exc.details() or "seq is beyond the last event") from exc
        raise
    return GameCreated(game_id=reply.game_id)


# --------------------------------------------------------------------------- import


def _malformed(message: str) -> ApiError:
    return ApiError(422, "MALFORMED", message)


def parse_log(body: bytes) -> tuple[list[Any], dict[str, Any] | None]:
    """The event objects of a log body and the document's ``origin``: JSON Lines (one event
    object per line, blank lines skipped) or the ``{"events": [...], "origin"?}`` document
    of ``GET /game/{id}/events``.

    Raises:
        ApiError: 422 ``MALFORMED`` (not UTF-8, no events, a line that is not JSON, naming
            the line; an event nested deeper than :data:`MAX_EVENT_DEPTH` levels).
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _malformed("the log is not UTF-8 text") from exc
    if not text.strip():
        raise _malformed("the log has no events")
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    except RecursionError as exc:
        raise _malformed(f"the log is nested deeper than {MAX_EVENT_DEPTH} levels") from exc
    events, origin = _log_items(whole, text)
    for n, item in enumerate(events, start=1):
        if nested_deeper(item, MAX_EVENT_DEPTH):
            raise _malformed(f"event {n} is nested deeper than {MAX_EVENT_DEPTH} levels")
    return events, origin


def _log_items(whole: Any, text: str) -> tuple[list[Any], dict[str, Any] | None]:
    """The event objects and origin of a parsed body (``whole``; None: JSON Lines)."""
    if isinstance(whole, dict) and "events" in whole:
        unknown = unknown_log_fields(whole)
        if unknown:
            raise _malformed(unknown)
        events = whole["events"]
        if not isinstance(events, list):
            raise _malformed("events must be a list of event objects")
        origin = whole.get("origin")
        if origin is not None and not isinstance(origin, dict):
            raise _malformed("origin must be an object {game_id?, file?}")
        return events, origin
    if isinstance(whole, dict):
        return [whole], None  # a JSON Lines log of one line
    if isinstance(whole, list):
        return whole, None
    events = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            events.append(json.loads(line))
        except ValueError as exc:
            # Python's int-size limit is a plain ValueError, with no .msg
            raise _malformed(f"line {n} is not JSON: {getattr(exc, 'msg', LONG_NUMBER)}") from exc
        except RecursionError as exc:
            raise _malformed(f"line {n} is nested deeper than {MAX_EVENT_DEPTH} levels") from exc
    return events, None


def to_event(item: Any, n: int) -> events_pb2.Event:
    """One REST-shaped event object as a ``cellwar.v1.Event`` (``time`` is not kept: the
    new game records its own).

    Raises:
        ApiError: 422 ``MALFORMED`` naming event ``n`` (1-based) and the field.
    """

    def bad(why: str) -> ApiError:
        return _malformed(f"event #{n}: {why}")

    def whole(value: Any) -> Any:
        """A JSON number with no fraction is an integer (JSON Schema's rule): 3.0 is 3."""
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value

    if not isinstance(item, dict):
        raise bad("an event must be a JSON object")
    seq, etype, actor, payload = (item.get(k) for k in ("seq", "type", "actor", "payload"))
    seq, actor = whole(seq), whole(actor)
    if not isinstance(seq, int) or isinstance(seq, bool) or not 1 <= seq <= 2**53 - 1:
        raise bad(f"seq must be an integer >= 1, got {seq!r}")
    if not isinstance(etype, str) or not 1 <= len(etype) <= 64:
        raise bad(f"type must be an event type name, got {etype!r}")
    if not isinstance(actor, int) or isinstance(actor, bool) or not 0 <= actor <= 2**32 - 1:
        raise bad(f"actor must be an integer >= 0, got {actor!r}")
    if not isinstance(payload, dict):
        raise bad("payload must be a JSON object")
    state_hash, version = item.get("state_hash", ""), item.get("engine_version", "")
    if "state_hash" in item and not (isinstance(state_hash, str) and STATE_HASH.fullmatch(state_hash)):
        raise bad(f"state_hash must be 64 hex characters, got {state_hash!r:.80}")
    if "time" in item and not isinstance(item["time"], str):
        raise bad(f"time must be a string, got {item['time']!r:.80}")
    if not isinstance(version, str) or len(version) > 32:
        raise bad("engine_version must be a string of at most 32 characters")
    return events_pb2.Event(
        seq=seq,
        type=etype,
        actor=actor,
        payload=dumps(payload),
        state_hash=state_hash,
        engine_version=version,
    )


#: One event object of a log (the REST shape of ``GET /game/{id}/events``).
_EVENT_SCHEMA = {
    "type": "object",
    "required": ["seq", "type", "actor", "payload"],
    "properties": {
        "seq": {"type": "integer", "minimum": 1, "maximum": 2**53 - 1},
        "type": {"type": "string", "minLength": 1, "maxLength": 64},
        "actor": {"type": "integer", "minimum": 0, "maximum": 2**32 - 1},
        "payload": {"type": "object"},
        "time": {"type": "string"},
        "state_hash": {"type": "string", "pattern": f"^{STATE_HASH.pattern}$"},
        "engine_version": {"type": "string", "maxLength": 32},
    },
}

_IMPORT_BODY = {
    "requestBody": {
        "required": True,
        "description": "The whole log of a game: the `{\"events\": [...]}` document of GET "
        "/game/{id}/events, optionally with `\"origin\": {\"game_id\"?, \"file\"?}`; or "
        f"the same events as JSON Lines (`Content-Type: {JSONL}`, one event object per line, "
        "as `cellwar export` writes; a line that is not JSON is 422 `MALFORMED`). At most "
        "CELLWAR_MAX_BODY_BYTES (413 above).",
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "events": {"type": "array", "minItems": 1, "items": _EVENT_SCHEMA},
                        "origin": {
                            "type": "object",
                            "additionalProperties": False,
                            "properties": {
                                "game_id": {
                                    "type": "string",
                                    "minLength": 1,
                                    "maxLength": 64,
                                    "pattern": name_pattern(),
                                },
                                "file": {
                                    "type": "string",
                                    "minLength": 1,
                                    "maxLength": 255,
                                    "pattern": name_pattern(),
                                },
                            },
                        },
                    },
                    "required": ["events"],
                }
            },
        },
    }
}


def _name_query(max_length: int, what: str) -> Any:
    """A query parameter shown to people later: 1..``max_length`` characters, none of
    them a control or format character (:func:`gateway.schemas.name_pattern`)."""
    return Query(
        min_length=1,
        max_length=max_length,
        pattern=name_pattern(),
        description=f"{what} (no control or format characters)",
    )


@router.post(
    "/games/import",
    status_code=status.HTTP_201_CREATED,
    response_model=ImportedOut,
    responses=errors(404, 409, 413, 422, 429, 503),
    summary="Import a game from its log",
    description="Creates a new game from an exported log. The engine decides every command "
    "again (create, joins, actions, turn ends, ticks, removals) under the engine version "
    "that recorded it and compares each event with the recorded one; a log it does not "
    "reproduce is refused with 409 `LOG_MISMATCH` naming the first bad `seq` (also "
    "`error.seq`; `MALFORMED` for a gap or an event without `state_hash`, "
    "`UNKNOWN_ENGINE_VERSION`), and nothing is written. A finished log is copied as recorded, with "
    "`origin` added to its first event; a log that stops before the end becomes a fork of "
    "its last state (free seats, playable on). Origin: the document's `origin`, or the "
    "query's `origin_game_id` / `origin_file`.",
    openapi_extra=_IMPORT_BODY,
)
async def import_game(
    request: Request,
    session: SessionDep,
    cid: CommandId,
    origin_game_id: Annotated[str | None, _name_query(64, "The game the log was exported from")] = None,
    origin_file: Annotated[str | None, _name_query(255, "The log file's name")] = None,
) -> ImportedOut:
    """POST /games/import → 201 ``{"game_id", "events", "finished"}``."""
    items, origin = parse_log(await request.body())
    if not items:
        raise _malformed("the log has no events")
    events = [to_event(item, n) for n, item in enumerate(items, start=1)]
    merged = dict(origin or {})
    if origin_game_id is not None:
        merged["game_id"] = origin_game_id
    if origin_file is not None:
        merged["file"] = origin_file
    try:
        checked = ImportOrigin.model_validate(merged).model_dump(exclude_none=True)
    except ValidationError as exc:
        raise _malformed("origin: " + summarise_validation_errors(list(exc.errors()))) from exc
    reply = await session.ImportGame(
        session_pb2.ImportGameRequest(
            events=events, origin=dumps(checked) if checked else b"", command_id=cid
        ),
        timeout=IMPORT_TIMEOUT_S,
    )
    request.state.game_id = reply.game_id
    return ImportedOut(game_id=reply.game_id, events=reply.events, finished=reply.finished)
