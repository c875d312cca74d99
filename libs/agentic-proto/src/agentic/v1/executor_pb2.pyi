from agentic.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ResponseRef(_message.Message):
    __slots__ = ("principal", "response_id", "starting_after")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    STARTING_AFTER_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    response_id: str
    starting_after: int
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., response_id: _Optional[str] = ..., starting_after: _Optional[int] = ...) -> None: ...

class TokenCount(_message.Message):
    __slots__ = ("input_tokens", "method")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    method: str
    def __init__(self, input_tokens: _Optional[int] = ..., method: _Optional[str] = ...) -> None: ...

class ExecuteRequest(_message.Message):
    __slots__ = ("request_json", "principal", "stream", "request_id", "api", "response_id")
    REQUEST_JSON_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    API_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    request_json: bytes
    principal: _common_pb2.Principal
    stream: bool
    request_id: str
    api: str
    response_id: str
    def __init__(self, request_json: _Optional[bytes] = ..., principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., stream: _Optional[bool] = ..., request_id: _Optional[str] = ..., api: _Optional[str] = ..., response_id: _Optional[str] = ...) -> None: ...

class ExecuteEvent(_message.Message):
    __slots__ = ("event", "response", "events")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    event: StreamEvent
    response: bytes
    events: StreamEvents
    def __init__(self, event: _Optional[_Union[StreamEvent, _Mapping]] = ..., response: _Optional[bytes] = ..., events: _Optional[_Union[StreamEvents, _Mapping]] = ...) -> None: ...

class ResponseJson(_message.Message):
    __slots__ = ("response",)
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    response: bytes
    def __init__(self, response: _Optional[bytes] = ...) -> None: ...

class StreamEvents(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[StreamEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[StreamEvent, _Mapping]]] = ...) -> None: ...

class StreamEvent(_message.Message):
    __slots__ = ("event_type", "sequence_number", "data")
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    event_type: str
    sequence_number: int
    data: bytes
    def __init__(self, event_type: _Optional[str] = ..., sequence_number: _Optional[int] = ..., data: _Optional[bytes] = ...) -> None: ...
