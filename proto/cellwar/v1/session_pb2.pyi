from cellwar.v1 import events_pb2 as _events_pb2
from cellwar.v1 import engine_pb2 as _engine_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateGameRequest(_message.Message):
    __slots__ = ("kind", "config", "command_id", "profile_id")
    KIND_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    PROFILE_ID_FIELD_NUMBER: _ClassVar[int]
    kind: str
    config: bytes
    command_id: str
    profile_id: str
    def __init__(self, kind: _Optional[str] = ..., config: _Optional[bytes] = ..., command_id: _Optional[str] = ..., profile_id: _Optional[str] = ...) -> None: ...

class CreateGameReply(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class JoinRequest(_message.Message):
    __slots__ = ("game_id", "name", "command_id", "profile_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    PROFILE_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    name: str
    command_id: str
    profile_id: str
    def __init__(self, game_id: _Optional[str] = ..., name: _Optional[str] = ..., command_id: _Optional[str] = ..., profile_id: _Optional[str] = ...) -> None: ...

class ActRequest(_message.Message):
    __slots__ = ("game_id", "player_id", "action", "command_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    player_id: int
    action: bytes
    command_id: str
    def __init__(self, game_id: _Optional[str] = ..., player_id: _Optional[int] = ..., action: _Optional[bytes] = ..., command_id: _Optional[str] = ...) -> None: ...

class EndTurnRequest(_message.Message):
    __slots__ = ("game_id", "player_id", "command_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    player_id: int
    command_id: str
    def __init__(self, game_id: _Optional[str] = ..., player_id: _Optional[int] = ..., command_id: _Optional[str] = ...) -> None: ...

class LeaveRequest(_message.Message):
    __slots__ = ("game_id", "player_id", "command_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    player_id: int
    command_id: str
    def __init__(self, game_id: _Optional[str] = ..., player_id: _Optional[int] = ..., command_id: _Optional[str] = ...) -> None: ...

class CommandReply(_message.Message):
    __slots__ = ("seq", "player_id", "view")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    seq: int
    player_id: int
    view: bytes
    def __init__(self, seq: _Optional[int] = ..., player_id: _Optional[int] = ..., view: _Optional[bytes] = ...) -> None: ...

class GetViewRequest(_message.Message):
    __slots__ = ("game_id", "player_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    player_id: int
    def __init__(self, game_id: _Optional[str] = ..., player_id: _Optional[int] = ...) -> None: ...

class ViewReply(_message.Message):
    __slots__ = ("seq", "view")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    seq: int
    view: bytes
    def __init__(self, seq: _Optional[int] = ..., view: _Optional[bytes] = ...) -> None: ...

class ListEventsRequest(_message.Message):
    __slots__ = ("game_id", "player_id", "from_seq")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    player_id: int
    from_seq: int
    def __init__(self, game_id: _Optional[str] = ..., player_id: _Optional[int] = ..., from_seq: _Optional[int] = ...) -> None: ...

class ListEventsReply(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_events_pb2.Event]
    def __init__(self, events: _Optional[_Iterable[_Union[_events_pb2.Event, _Mapping]]] = ...) -> None: ...

class ReplayRequest(_message.Message):
    __slots__ = ("game_id", "player_id", "seq")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    player_id: int
    seq: int
    def __init__(self, game_id: _Optional[str] = ..., player_id: _Optional[int] = ..., seq: _Optional[int] = ...) -> None: ...

class GetValidActionsRequest(_message.Message):
    __slots__ = ("game_id", "player_id", "unit_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    UNIT_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    player_id: int
    unit_id: int
    def __init__(self, game_id: _Optional[str] = ..., player_id: _Optional[int] = ..., unit_id: _Optional[int] = ...) -> None: ...

class GetValidActionsReply(_message.Message):
    __slots__ = ("actions",)
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    actions: bytes
    def __init__(self, actions: _Optional[bytes] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("game_id", "player_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    player_id: int
    def __init__(self, game_id: _Optional[str] = ..., player_id: _Optional[int] = ...) -> None: ...

class WatchUpdate(_message.Message):
    __slots__ = ("type", "seq", "view")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    type: str
    seq: int
    view: bytes
    def __init__(self, type: _Optional[str] = ..., seq: _Optional[int] = ..., view: _Optional[bytes] = ...) -> None: ...

class ListGamesRequest(_message.Message):
    __slots__ = ("page_size", "cursor")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    cursor: str
    def __init__(self, page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class GameSummary(_message.Message):
    __slots__ = ("game_id", "kind", "phase", "players_joined", "max_players", "config")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_JOINED_FIELD_NUMBER: _ClassVar[int]
    MAX_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    kind: str
    phase: str
    players_joined: int
    max_players: int
    config: bytes
    def __init__(self, game_id: _Optional[str] = ..., kind: _Optional[str] = ..., phase: _Optional[str] = ..., players_joined: _Optional[int] = ..., max_players: _Optional[int] = ..., config: _Optional[bytes] = ...) -> None: ...

class ListGamesReply(_message.Message):
    __slots__ = ("games", "next_cursor")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[GameSummary]
    next_cursor: str
    def __init__(self, games: _Optional[_Iterable[_Union[GameSummary, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class CreateProfileRequest(_message.Message):
    __slots__ = ("name", "command_id")
    NAME_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    command_id: str
    def __init__(self, name: _Optional[str] = ..., command_id: _Optional[str] = ...) -> None: ...

class GetProfileRequest(_message.Message):
    __slots__ = ("profile_id",)
    PROFILE_ID_FIELD_NUMBER: _ClassVar[int]
    profile_id: str
    def __init__(self, profile_id: _Optional[str] = ...) -> None: ...

class Profile(_message.Message):
    __slots__ = ("profile_id", "data")
    PROFILE_ID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    profile_id: str
    data: bytes
    def __init__(self, profile_id: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class RunProgress(_message.Message):
    __slots__ = ("game_id", "seq", "base_hash", "done", "generation", "player_ids", "views")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    BASE_HASH_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    PLAYER_IDS_FIELD_NUMBER: _ClassVar[int]
    VIEWS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seq: int
    base_hash: str
    done: int
    generation: int
    player_ids: _containers.RepeatedScalarFieldContainer[int]
    views: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, game_id: _Optional[str] = ..., seq: _Optional[int] = ..., base_hash: _Optional[str] = ..., done: _Optional[int] = ..., generation: _Optional[int] = ..., player_ids: _Optional[_Iterable[int]] = ..., views: _Optional[_Iterable[bytes]] = ...) -> None: ...

class RunInterest(_message.Message):
    __slots__ = ("game_id", "player_ids")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_IDS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    player_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, game_id: _Optional[str] = ..., player_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class ForkGameRequest(_message.Message):
    __slots__ = ("game_id", "player_id", "seq", "command_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    player_id: int
    seq: int
    command_id: str
    def __init__(self, game_id: _Optional[str] = ..., player_id: _Optional[int] = ..., seq: _Optional[int] = ..., command_id: _Optional[str] = ...) -> None: ...

class ImportGameRequest(_message.Message):
    __slots__ = ("events", "origin", "command_id")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_events_pb2.Event]
    origin: bytes
    command_id: str
    def __init__(self, events: _Optional[_Iterable[_Union[_events_pb2.Event, _Mapping]]] = ..., origin: _Optional[bytes] = ..., command_id: _Optional[str] = ...) -> None: ...

class ImportGameReply(_message.Message):
    __slots__ = ("game_id", "events", "finished")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    events: int
    finished: bool
    def __init__(self, game_id: _Optional[str] = ..., events: _Optional[int] = ..., finished: _Optional[bool] = ...) -> None: ...

class SpectateRequest(_message.Message):
    __slots__ = ("game_id", "delay_s")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    DELAY_S_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    delay_s: float
    def __init__(self, game_id: _Optional[str] = ..., delay_s: _Optional[float] = ...) -> None: ...

class WatchOp(_message.Message):
    __slots__ = ("id", "open")
    ID_FIELD_NUMBER: _ClassVar[int]
    OPEN_FIELD_NUMBER: _ClassVar[int]
    id: int
    open: WatchRequest
    def __init__(self, id: _Optional[int] = ..., open: _Optional[_Union[WatchRequest, _Mapping]] = ...) -> None: ...

class WatchOps(_message.Message):
    __slots__ = ("ops",)
    OPS_FIELD_NUMBER: _ClassVar[int]
    ops: _containers.RepeatedCompositeFieldContainer[WatchOp]
    def __init__(self, ops: _Optional[_Iterable[_Union[WatchOp, _Mapping]]] = ...) -> None: ...

class WatchFrame(_message.Message):
    __slots__ = ("id", "update", "end", "error")
    ID_FIELD_NUMBER: _ClassVar[int]
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    id: int
    update: WatchUpdate
    end: bool
    error: CommandError
    def __init__(self, id: _Optional[int] = ..., update: _Optional[_Union[WatchUpdate, _Mapping]] = ..., end: _Optional[bool] = ..., error: _Optional[_Union[CommandError, _Mapping]] = ...) -> None: ...

class WatchFrames(_message.Message):
    __slots__ = ("frames",)
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    frames: _containers.RepeatedCompositeFieldContainer[WatchFrame]
    def __init__(self, frames: _Optional[_Iterable[_Union[WatchFrame, _Mapping]]] = ...) -> None: ...

class CommandFrame(_message.Message):
    __slots__ = ("id", "act", "end_turn", "timeout_s")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACT_FIELD_NUMBER: _ClassVar[int]
    END_TURN_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    id: int
    act: ActRequest
    end_turn: EndTurnRequest
    timeout_s: float
    def __init__(self, id: _Optional[int] = ..., act: _Optional[_Union[ActRequest, _Mapping]] = ..., end_turn: _Optional[_Union[EndTurnRequest, _Mapping]] = ..., timeout_s: _Optional[float] = ...) -> None: ...

class CommandFrames(_message.Message):
    __slots__ = ("frames",)
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    frames: _containers.RepeatedCompositeFieldContainer[CommandFrame]
    def __init__(self, frames: _Optional[_Iterable[_Union[CommandFrame, _Mapping]]] = ...) -> None: ...

class CommandError(_message.Message):
    __slots__ = ("status", "details", "code", "seq")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    status: int
    details: str
    code: str
    seq: int
    def __init__(self, status: _Optional[int] = ..., details: _Optional[str] = ..., code: _Optional[str] = ..., seq: _Optional[int] = ...) -> None: ...

class CommandResult(_message.Message):
    __slots__ = ("id", "reply", "error")
    ID_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    id: int
    reply: CommandReply
    error: CommandError
    def __init__(self, id: _Optional[int] = ..., reply: _Optional[_Union[CommandReply, _Mapping]] = ..., error: _Optional[_Union[CommandError, _Mapping]] = ...) -> None: ...

class CommandResults(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[CommandResult]
    def __init__(self, results: _Optional[_Iterable[_Union[CommandResult, _Mapping]]] = ...) -> None: ...
