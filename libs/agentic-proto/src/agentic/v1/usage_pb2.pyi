from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class UsageEntry(_message.Message):
    __slots__ = ("tenant", "subject", "key_id", "model", "start_time", "input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens", "requests", "tool_calls", "tool_seconds")
    class ToolCallsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    TENANT_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REASONING_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    tenant: str
    subject: str
    key_id: str
    model: str
    start_time: int
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    reasoning_tokens: int
    requests: int
    tool_calls: _containers.ScalarMap[str, int]
    tool_seconds: float
    def __init__(self, tenant: _Optional[str] = ..., subject: _Optional[str] = ..., key_id: _Optional[str] = ..., model: _Optional[str] = ..., start_time: _Optional[int] = ..., input_tokens: _Optional[int] = ..., cached_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., reasoning_tokens: _Optional[int] = ..., requests: _Optional[int] = ..., tool_calls: _Optional[_Mapping[str, int]] = ..., tool_seconds: _Optional[float] = ...) -> None: ...

class UsageBatch(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[UsageEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[UsageEntry, _Mapping]]] = ...) -> None: ...

class UsageRecorded(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class UsageQuery(_message.Message):
    __slots__ = ("start_time", "end_time", "bucket_seconds", "by_tenant", "by_model", "by_key_id", "tenants", "models", "key_ids")
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_SECONDS_FIELD_NUMBER: _ClassVar[int]
    BY_TENANT_FIELD_NUMBER: _ClassVar[int]
    BY_MODEL_FIELD_NUMBER: _ClassVar[int]
    BY_KEY_ID_FIELD_NUMBER: _ClassVar[int]
    TENANTS_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    KEY_IDS_FIELD_NUMBER: _ClassVar[int]
    start_time: int
    end_time: int
    bucket_seconds: int
    by_tenant: bool
    by_model: bool
    by_key_id: bool
    tenants: _containers.RepeatedScalarFieldContainer[str]
    models: _containers.RepeatedScalarFieldContainer[str]
    key_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, start_time: _Optional[int] = ..., end_time: _Optional[int] = ..., bucket_seconds: _Optional[int] = ..., by_tenant: _Optional[bool] = ..., by_model: _Optional[bool] = ..., by_key_id: _Optional[bool] = ..., tenants: _Optional[_Iterable[str]] = ..., models: _Optional[_Iterable[str]] = ..., key_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class UsageRows(_message.Message):
    __slots__ = ("rows",)
    ROWS_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[UsageEntry]
    def __init__(self, rows: _Optional[_Iterable[_Union[UsageEntry, _Mapping]]] = ...) -> None: ...
