from agentic.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetResponseRequest(_message.Message):
    __slots__ = ("principal", "response_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    response_id: str
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., response_id: _Optional[str] = ...) -> None: ...

class StoredResponse(_message.Message):
    __slots__ = ("response",)
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    response: bytes
    def __init__(self, response: _Optional[bytes] = ...) -> None: ...

class DeleteResponseRequest(_message.Message):
    __slots__ = ("principal", "response_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    response_id: str
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., response_id: _Optional[str] = ...) -> None: ...

class DeleteResponseReply(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class ListInputItemsRequest(_message.Message):
    __slots__ = ("principal", "response_id", "limit", "after", "before", "ascending")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    ASCENDING_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    response_id: str
    limit: int
    after: str
    before: str
    ascending: bool
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., response_id: _Optional[str] = ..., limit: _Optional[int] = ..., after: _Optional[str] = ..., before: _Optional[str] = ..., ascending: _Optional[bool] = ...) -> None: ...

class ItemPage(_message.Message):
    __slots__ = ("items", "has_more")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Item]
    has_more: bool
    def __init__(self, items: _Optional[_Iterable[_Union[Item, _Mapping]]] = ..., has_more: _Optional[bool] = ...) -> None: ...

class RehydrateRequest(_message.Message):
    __slots__ = ("principal", "previous_response_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    previous_response_id: str
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., previous_response_id: _Optional[str] = ...) -> None: ...

class History(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, items: _Optional[_Iterable[bytes]] = ...) -> None: ...

class PersistTurnRequest(_message.Message):
    __slots__ = ("principal", "response_id", "previous_response_id", "response", "input_items", "output_items", "model", "status")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    INPUT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    response_id: str
    previous_response_id: str
    response: bytes
    input_items: _containers.RepeatedCompositeFieldContainer[Item]
    output_items: _containers.RepeatedCompositeFieldContainer[Item]
    model: str
    status: str
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., response_id: _Optional[str] = ..., previous_response_id: _Optional[str] = ..., response: _Optional[bytes] = ..., input_items: _Optional[_Iterable[_Union[Item, _Mapping]]] = ..., output_items: _Optional[_Iterable[_Union[Item, _Mapping]]] = ..., model: _Optional[str] = ..., status: _Optional[str] = ...) -> None: ...

class PersistTurnReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Item(_message.Message):
    __slots__ = ("id", "data")
    ID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    data: bytes
    def __init__(self, id: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...
