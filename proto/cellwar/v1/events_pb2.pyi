import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Event(_message.Message):
    __slots__ = ("game_id", "seq", "type", "actor", "payload", "engine_version", "time", "state_hash", "command_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    ENGINE_VERSION_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    STATE_HASH_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seq: int
    type: str
    actor: int
    payload: bytes
    engine_version: str
    time: _timestamp_pb2.Timestamp
    state_hash: str
    command_id: str
    def __init__(self, game_id: _Optional[str] = ..., seq: _Optional[int] = ..., type: _Optional[str] = ..., actor: _Optional[int] = ..., payload: _Optional[bytes] = ..., engine_version: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., state_hash: _Optional[str] = ..., command_id: _Optional[str] = ...) -> None: ...
