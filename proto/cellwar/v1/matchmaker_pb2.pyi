from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateTicketRequest(_message.Message):
    __slots__ = ("kind", "players", "config", "name", "profile_id", "command_id")
    KIND_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROFILE_ID_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    kind: str
    players: int
    config: bytes
    name: str
    profile_id: str
    command_id: str
    def __init__(self, kind: _Optional[str] = ..., players: _Optional[int] = ..., config: _Optional[bytes] = ..., name: _Optional[str] = ..., profile_id: _Optional[str] = ..., command_id: _Optional[str] = ...) -> None: ...

class TicketRequest(_message.Message):
    __slots__ = ("ticket_id",)
    TICKET_ID_FIELD_NUMBER: _ClassVar[int]
    ticket_id: str
    def __init__(self, ticket_id: _Optional[str] = ...) -> None: ...

class Ticket(_message.Message):
    __slots__ = ("ticket_id", "status", "queue", "kind", "players", "config", "name", "profile_id", "created_at", "wait_s", "game_id", "player_id", "rating", "reason")
    TICKET_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROFILE_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    WAIT_S_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ticket_id: str
    status: str
    queue: str
    kind: str
    players: int
    config: bytes
    name: str
    profile_id: str
    created_at: float
    wait_s: float
    game_id: str
    player_id: int
    rating: float
    reason: str
    def __init__(self, ticket_id: _Optional[str] = ..., status: _Optional[str] = ..., queue: _Optional[str] = ..., kind: _Optional[str] = ..., players: _Optional[int] = ..., config: _Optional[bytes] = ..., name: _Optional[str] = ..., profile_id: _Optional[str] = ..., created_at: _Optional[float] = ..., wait_s: _Optional[float] = ..., game_id: _Optional[str] = ..., player_id: _Optional[int] = ..., rating: _Optional[float] = ..., reason: _Optional[str] = ...) -> None: ...

class QueuesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class QueueStats(_message.Message):
    __slots__ = ("queue", "kind", "players", "waiting", "in_games", "matches_last_minute", "median_wait_s", "p90_wait_s")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    IN_GAMES_FIELD_NUMBER: _ClassVar[int]
    MATCHES_LAST_MINUTE_FIELD_NUMBER: _ClassVar[int]
    MEDIAN_WAIT_S_FIELD_NUMBER: _ClassVar[int]
    P90_WAIT_S_FIELD_NUMBER: _ClassVar[int]
    queue: str
    kind: str
    players: int
    waiting: int
    in_games: int
    matches_last_minute: int
    median_wait_s: float
    p90_wait_s: float
    def __init__(self, queue: _Optional[str] = ..., kind: _Optional[str] = ..., players: _Optional[int] = ..., waiting: _Optional[int] = ..., in_games: _Optional[int] = ..., matches_last_minute: _Optional[int] = ..., median_wait_s: _Optional[float] = ..., p90_wait_s: _Optional[float] = ...) -> None: ...

class QueuesReply(_message.Message):
    __slots__ = ("queues",)
    QUEUES_FIELD_NUMBER: _ClassVar[int]
    queues: _containers.RepeatedCompositeFieldContainer[QueueStats]
    def __init__(self, queues: _Optional[_Iterable[_Union[QueueStats, _Mapping]]] = ...) -> None: ...

class LeaderboardRequest(_message.Message):
    __slots__ = ("kind", "players", "limit")
    KIND_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    kind: str
    players: int
    limit: int
    def __init__(self, kind: _Optional[str] = ..., players: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class RatingEntry(_message.Message):
    __slots__ = ("profile_id", "name", "kind", "players", "rating", "games", "mu", "sigma")
    PROFILE_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    profile_id: str
    name: str
    kind: str
    players: int
    rating: float
    games: int
    mu: float
    sigma: float
    def __init__(self, profile_id: _Optional[str] = ..., name: _Optional[str] = ..., kind: _Optional[str] = ..., players: _Optional[int] = ..., rating: _Optional[float] = ..., games: _Optional[int] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ...) -> None: ...

class LeaderboardReply(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[RatingEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[RatingEntry, _Mapping]]] = ...) -> None: ...

class RatingsRequest(_message.Message):
    __slots__ = ("profile_id",)
    PROFILE_ID_FIELD_NUMBER: _ClassVar[int]
    profile_id: str
    def __init__(self, profile_id: _Optional[str] = ...) -> None: ...

class RatingsReply(_message.Message):
    __slots__ = ("ratings",)
    RATINGS_FIELD_NUMBER: _ClassVar[int]
    ratings: _containers.RepeatedCompositeFieldContainer[RatingEntry]
    def __init__(self, ratings: _Optional[_Iterable[_Union[RatingEntry, _Mapping]]] = ...) -> None: ...
