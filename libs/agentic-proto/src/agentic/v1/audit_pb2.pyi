from agentic.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AuditRecord(_message.Message):
    __slots__ = ("id", "type", "principal", "details")
    ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    id: str
    type: str
    principal: _common_pb2.Principal
    details: bytes
    def __init__(self, id: _Optional[str] = ..., type: _Optional[str] = ..., principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., details: _Optional[bytes] = ...) -> None: ...

class AuditBatch(_message.Message):
    __slots__ = ("records",)
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[AuditRecord]
    def __init__(self, records: _Optional[_Iterable[_Union[AuditRecord, _Mapping]]] = ...) -> None: ...

class AuditAppended(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AuditQuery(_message.Message):
    __slots__ = ("tenants", "types", "resource_ids", "gt", "gte", "lt", "lte", "limit", "after", "before")
    TENANTS_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    GT_FIELD_NUMBER: _ClassVar[int]
    GTE_FIELD_NUMBER: _ClassVar[int]
    LT_FIELD_NUMBER: _ClassVar[int]
    LTE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    tenants: _containers.RepeatedScalarFieldContainer[str]
    types: _containers.RepeatedScalarFieldContainer[str]
    resource_ids: _containers.RepeatedScalarFieldContainer[str]
    gt: int
    gte: int
    lt: int
    lte: int
    limit: int
    after: str
    before: str
    def __init__(self, tenants: _Optional[_Iterable[str]] = ..., types: _Optional[_Iterable[str]] = ..., resource_ids: _Optional[_Iterable[str]] = ..., gt: _Optional[int] = ..., gte: _Optional[int] = ..., lt: _Optional[int] = ..., lte: _Optional[int] = ..., limit: _Optional[int] = ..., after: _Optional[str] = ..., before: _Optional[str] = ...) -> None: ...

class AuditPage(_message.Message):
    __slots__ = ("records", "effective_at", "has_more")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_AT_FIELD_NUMBER: _ClassVar[int]
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[AuditRecord]
    effective_at: _containers.RepeatedScalarFieldContainer[int]
    has_more: bool
    def __init__(self, records: _Optional[_Iterable[_Union[AuditRecord, _Mapping]]] = ..., effective_at: _Optional[_Iterable[int]] = ..., has_more: _Optional[bool] = ...) -> None: ...
