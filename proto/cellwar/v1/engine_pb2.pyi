from cellwar.v1 import events_pb2 as _events_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GameState(_message.Message):
    __slots__ = ("state", "state_hash", "kind", "phase", "generation", "finished", "turn", "players_joined", "max_players", "speed", "versions", "seq", "policy", "anchor", "turn_seq", "open_seats")
    STATE_FIELD_NUMBER: _ClassVar[int]
    STATE_HASH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_JOINED_FIELD_NUMBER: _ClassVar[int]
    MAX_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SPEED_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    ANCHOR_FIELD_NUMBER: _ClassVar[int]
    TURN_SEQ_FIELD_NUMBER: _ClassVar[int]
    OPEN_SEATS_FIELD_NUMBER: _ClassVar[int]
    state: bytes
    state_hash: str
    kind: str
    phase: str
    generation: int
    finished: bool
    turn: int
    players_joined: int
    max_players: int
    speed: int
    versions: _containers.RepeatedScalarFieldContainer[int]
    seq: int
    policy: Policy
    anchor: TurnAnchor
    turn_seq: int
    open_seats: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, state: _Optional[bytes] = ..., state_hash: _Optional[str] = ..., kind: _Optional[str] = ..., phase: _Optional[str] = ..., generation: _Optional[int] = ..., finished: _Optional[bool] = ..., turn: _Optional[int] = ..., players_joined: _Optional[int] = ..., max_players: _Optional[int] = ..., speed: _Optional[int] = ..., versions: _Optional[_Iterable[int]] = ..., seq: _Optional[int] = ..., policy: _Optional[_Union[Policy, _Mapping]] = ..., anchor: _Optional[_Union[TurnAnchor, _Mapping]] = ..., turn_seq: _Optional[int] = ..., open_seats: _Optional[_Iterable[int]] = ...) -> None: ...

class Policy(_message.Message):
    __slots__ = ("log_private", "private_reason", "spectators_live", "lobby_hidden_keys", "disconnect_timeout_s", "rollback_on_leave", "ticking", "expirable", "active_players", "progress_level", "turn_time_s", "spectator_delay_min_s", "spectators_see_all")
    LOG_PRIVATE_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_REASON_FIELD_NUMBER: _ClassVar[int]
    SPECTATORS_LIVE_FIELD_NUMBER: _ClassVar[int]
    LOBBY_HIDDEN_KEYS_FIELD_NUMBER: _ClassVar[int]
    DISCONNECT_TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    ROLLBACK_ON_LEAVE_FIELD_NUMBER: _ClassVar[int]
    TICKING_FIELD_NUMBER: _ClassVar[int]
    EXPIRABLE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_LEVEL_FIELD_NUMBER: _ClassVar[int]
    TURN_TIME_S_FIELD_NUMBER: _ClassVar[int]
    SPECTATOR_DELAY_MIN_S_FIELD_NUMBER: _ClassVar[int]
    SPECTATORS_SEE_ALL_FIELD_NUMBER: _ClassVar[int]
    log_private: bool
    private_reason: str
    spectators_live: bool
    lobby_hidden_keys: _containers.RepeatedScalarFieldContainer[str]
    disconnect_timeout_s: float
    rollback_on_leave: bool
    ticking: bool
    expirable: bool
    active_players: _containers.RepeatedScalarFieldContainer[int]
    progress_level: int
    turn_time_s: int
    spectator_delay_min_s: float
    spectators_see_all: bool
    def __init__(self, log_private: _Optional[bool] = ..., private_reason: _Optional[str] = ..., spectators_live: _Optional[bool] = ..., lobby_hidden_keys: _Optional[_Iterable[str]] = ..., disconnect_timeout_s: _Optional[float] = ..., rollback_on_leave: _Optional[bool] = ..., ticking: _Optional[bool] = ..., expirable: _Optional[bool] = ..., active_players: _Optional[_Iterable[int]] = ..., progress_level: _Optional[int] = ..., turn_time_s: _Optional[int] = ..., spectator_delay_min_s: _Optional[float] = ..., spectators_see_all: _Optional[bool] = ...) -> None: ...

class TurnAnchor(_message.Message):
    __slots__ = ("seq", "state", "state_hash", "removals")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STATE_HASH_FIELD_NUMBER: _ClassVar[int]
    REMOVALS_FIELD_NUMBER: _ClassVar[int]
    seq: int
    state: bytes
    state_hash: str
    removals: _containers.RepeatedCompositeFieldContainer[EventDraft]
    def __init__(self, seq: _Optional[int] = ..., state: _Optional[bytes] = ..., state_hash: _Optional[str] = ..., removals: _Optional[_Iterable[_Union[EventDraft, _Mapping]]] = ...) -> None: ...

class Command(_message.Message):
    __slots__ = ("type", "actor", "payload")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    type: str
    actor: int
    payload: bytes
    def __init__(self, type: _Optional[str] = ..., actor: _Optional[int] = ..., payload: _Optional[bytes] = ...) -> None: ...

class EventDraft(_message.Message):
    __slots__ = ("type", "actor", "payload", "state_hash")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    STATE_HASH_FIELD_NUMBER: _ClassVar[int]
    type: str
    actor: int
    payload: bytes
    state_hash: str
    def __init__(self, type: _Optional[str] = ..., actor: _Optional[int] = ..., payload: _Optional[bytes] = ..., state_hash: _Optional[str] = ...) -> None: ...

class DecideRequest(_message.Message):
    __slots__ = ("state", "command", "game_id", "generations_before", "view_players", "views_listed", "state_cached")
    STATE_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    GENERATIONS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    VIEW_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    VIEWS_LISTED_FIELD_NUMBER: _ClassVar[int]
    STATE_CACHED_FIELD_NUMBER: _ClassVar[int]
    state: GameState
    command: Command
    game_id: str
    generations_before: int
    view_players: _containers.RepeatedScalarFieldContainer[int]
    views_listed: bool
    state_cached: bool
    def __init__(self, state: _Optional[_Union[GameState, _Mapping]] = ..., command: _Optional[_Union[Command, _Mapping]] = ..., game_id: _Optional[str] = ..., generations_before: _Optional[int] = ..., view_players: _Optional[_Iterable[int]] = ..., views_listed: _Optional[bool] = ..., state_cached: _Optional[bool] = ...) -> None: ...

class DecideReply(_message.Message):
    __slots__ = ("status", "events", "state", "views", "ticked")
    class Status(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        OK: _ClassVar[DecideReply.Status]
        STATE_MISS: _ClassVar[DecideReply.Status]
    OK: DecideReply.Status
    STATE_MISS: DecideReply.Status
    STATUS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    VIEWS_FIELD_NUMBER: _ClassVar[int]
    TICKED_FIELD_NUMBER: _ClassVar[int]
    status: DecideReply.Status
    events: _containers.RepeatedCompositeFieldContainer[EventDraft]
    state: GameState
    views: _containers.RepeatedScalarFieldContainer[bytes]
    ticked: int
    def __init__(self, status: _Optional[_Union[DecideReply.Status, str]] = ..., events: _Optional[_Iterable[_Union[EventDraft, _Mapping]]] = ..., state: _Optional[_Union[GameState, _Mapping]] = ..., views: _Optional[_Iterable[bytes]] = ..., ticked: _Optional[int] = ...) -> None: ...

class DecideFrame(_message.Message):
    __slots__ = ("id", "request")
    ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    id: int
    request: DecideRequest
    def __init__(self, id: _Optional[int] = ..., request: _Optional[_Union[DecideRequest, _Mapping]] = ...) -> None: ...

class DecideFrames(_message.Message):
    __slots__ = ("frames",)
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    frames: _containers.RepeatedCompositeFieldContainer[DecideFrame]
    def __init__(self, frames: _Optional[_Iterable[_Union[DecideFrame, _Mapping]]] = ...) -> None: ...

class DecideAnswers(_message.Message):
    __slots__ = ("answers",)
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    answers: _containers.RepeatedCompositeFieldContainer[DecideAnswer]
    def __init__(self, answers: _Optional[_Iterable[_Union[DecideAnswer, _Mapping]]] = ...) -> None: ...

class DecideAnswer(_message.Message):
    __slots__ = ("id", "reply", "code", "message", "seq", "engine_version")
    ID_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    ENGINE_VERSION_FIELD_NUMBER: _ClassVar[int]
    id: int
    reply: DecideReply
    code: str
    message: str
    seq: int
    engine_version: str
    def __init__(self, id: _Optional[int] = ..., reply: _Optional[_Union[DecideReply, _Mapping]] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., seq: _Optional[int] = ..., engine_version: _Optional[str] = ...) -> None: ...

class FoldRequest(_message.Message):
    __slots__ = ("state", "events")
    STATE_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    state: GameState
    events: _containers.RepeatedCompositeFieldContainer[_events_pb2.Event]
    def __init__(self, state: _Optional[_Union[GameState, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_events_pb2.Event, _Mapping]]] = ...) -> None: ...

class TickItem(_message.Message):
    __slots__ = ("state", "generations")
    STATE_FIELD_NUMBER: _ClassVar[int]
    GENERATIONS_FIELD_NUMBER: _ClassVar[int]
    state: GameState
    generations: int
    def __init__(self, state: _Optional[_Union[GameState, _Mapping]] = ..., generations: _Optional[int] = ...) -> None: ...

class TickRequest(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[TickItem]
    def __init__(self, items: _Optional[_Iterable[_Union[TickItem, _Mapping]]] = ...) -> None: ...

class TickResult(_message.Message):
    __slots__ = ("state", "generations_run", "events")
    STATE_FIELD_NUMBER: _ClassVar[int]
    GENERATIONS_RUN_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    state: GameState
    generations_run: int
    events: _containers.RepeatedCompositeFieldContainer[EventDraft]
    def __init__(self, state: _Optional[_Union[GameState, _Mapping]] = ..., generations_run: _Optional[int] = ..., events: _Optional[_Iterable[_Union[EventDraft, _Mapping]]] = ...) -> None: ...

class TickReply(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[TickResult]
    def __init__(self, results: _Optional[_Iterable[_Union[TickResult, _Mapping]]] = ...) -> None: ...

class RunItem(_message.Message):
    __slots__ = ("game_id", "base_hash", "done", "generations", "checkpoint", "record", "view_players", "base")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    BASE_HASH_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    GENERATIONS_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    VIEW_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    BASE_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    base_hash: str
    done: int
    generations: int
    checkpoint: int
    record: bool
    view_players: _containers.RepeatedScalarFieldContainer[int]
    base: GameState
    def __init__(self, game_id: _Optional[str] = ..., base_hash: _Optional[str] = ..., done: _Optional[int] = ..., generations: _Optional[int] = ..., checkpoint: _Optional[int] = ..., record: _Optional[bool] = ..., view_players: _Optional[_Iterable[int]] = ..., base: _Optional[_Union[GameState, _Mapping]] = ...) -> None: ...

class RunRequest(_message.Message):
    __slots__ = ("items", "batch", "batch_calls")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    BATCH_CALLS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[RunItem]
    batch: str
    batch_calls: int
    def __init__(self, items: _Optional[_Iterable[_Union[RunItem, _Mapping]]] = ..., batch: _Optional[str] = ..., batch_calls: _Optional[int] = ...) -> None: ...

class RunResult(_message.Message):
    __slots__ = ("game_id", "status", "done", "generation", "ran", "events", "state", "views", "error")
    class Status(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        OK: _ClassVar[RunResult.Status]
        MISS: _ClassVar[RunResult.Status]
        FAILED: _ClassVar[RunResult.Status]
    OK: RunResult.Status
    MISS: RunResult.Status
    FAILED: RunResult.Status
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    RAN_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    VIEWS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    status: RunResult.Status
    done: int
    generation: int
    ran: int
    events: _containers.RepeatedCompositeFieldContainer[EventDraft]
    state: GameState
    views: _containers.RepeatedScalarFieldContainer[bytes]
    error: str
    def __init__(self, game_id: _Optional[str] = ..., status: _Optional[_Union[RunResult.Status, str]] = ..., done: _Optional[int] = ..., generation: _Optional[int] = ..., ran: _Optional[int] = ..., events: _Optional[_Iterable[_Union[EventDraft, _Mapping]]] = ..., state: _Optional[_Union[GameState, _Mapping]] = ..., views: _Optional[_Iterable[bytes]] = ..., error: _Optional[str] = ...) -> None: ...

class RunReply(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[RunResult]
    def __init__(self, results: _Optional[_Iterable[_Union[RunResult, _Mapping]]] = ...) -> None: ...

class ViewsRequest(_message.Message):
    __slots__ = ("state", "player_ids", "reveal")
    STATE_FIELD_NUMBER: _ClassVar[int]
    PLAYER_IDS_FIELD_NUMBER: _ClassVar[int]
    REVEAL_FIELD_NUMBER: _ClassVar[int]
    state: GameState
    player_ids: _containers.RepeatedScalarFieldContainer[int]
    reveal: bool
    def __init__(self, state: _Optional[_Union[GameState, _Mapping]] = ..., player_ids: _Optional[_Iterable[int]] = ..., reveal: _Optional[bool] = ...) -> None: ...

class ViewsReply(_message.Message):
    __slots__ = ("views",)
    VIEWS_FIELD_NUMBER: _ClassVar[int]
    views: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, views: _Optional[_Iterable[bytes]] = ...) -> None: ...

class ValidActionsRequest(_message.Message):
    __slots__ = ("state", "player_id", "unit_id")
    STATE_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    UNIT_ID_FIELD_NUMBER: _ClassVar[int]
    state: GameState
    player_id: int
    unit_id: int
    def __init__(self, state: _Optional[_Union[GameState, _Mapping]] = ..., player_id: _Optional[int] = ..., unit_id: _Optional[int] = ...) -> None: ...

class ValidActionsReply(_message.Message):
    __slots__ = ("actions",)
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    actions: bytes
    def __init__(self, actions: _Optional[bytes] = ...) -> None: ...

class PatternsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PatternsReply(_message.Message):
    __slots__ = ("catalogue",)
    CATALOGUE_FIELD_NUMBER: _ClassVar[int]
    catalogue: bytes
    def __init__(self, catalogue: _Optional[bytes] = ...) -> None: ...

class LevelsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LevelsReply(_message.Message):
    __slots__ = ("levels",)
    LEVELS_FIELD_NUMBER: _ClassVar[int]
    levels: bytes
    def __init__(self, levels: _Optional[bytes] = ...) -> None: ...

class PlayerLogRequest(_message.Message):
    __slots__ = ("events", "player_id")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_events_pb2.Event]
    player_id: int
    def __init__(self, events: _Optional[_Iterable[_Union[_events_pb2.Event, _Mapping]]] = ..., player_id: _Optional[int] = ...) -> None: ...

class PlayerLogReply(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: bytes
    def __init__(self, events: _Optional[bytes] = ...) -> None: ...

class ReenactRequest(_message.Message):
    __slots__ = ("events", "origin")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_events_pb2.Event]
    origin: bytes
    def __init__(self, events: _Optional[_Iterable[_Union[_events_pb2.Event, _Mapping]]] = ..., origin: _Optional[bytes] = ...) -> None: ...

class ReenactReply(_message.Message):
    __slots__ = ("events", "state", "views", "finished")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    VIEWS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_events_pb2.Event]
    state: GameState
    views: _containers.RepeatedScalarFieldContainer[bytes]
    finished: bool
    def __init__(self, events: _Optional[_Iterable[_Union[_events_pb2.Event, _Mapping]]] = ..., state: _Optional[_Union[GameState, _Mapping]] = ..., views: _Optional[_Iterable[bytes]] = ..., finished: _Optional[bool] = ...) -> None: ...
