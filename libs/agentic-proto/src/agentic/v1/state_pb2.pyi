from agentic.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BackgroundRef(_message.Message):
    __slots__ = ("principal", "response_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    response_id: str
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., response_id: _Optional[str] = ...) -> None: ...

class BackgroundUpdate(_message.Message):
    __slots__ = ("principal", "response_id", "status", "response")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    response_id: str
    status: str
    response: bytes
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., response_id: _Optional[str] = ..., status: _Optional[str] = ..., response: _Optional[bytes] = ...) -> None: ...

class BackgroundState(_message.Message):
    __slots__ = ("status", "previous_status", "response", "cancel_requested")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_STATUS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    CANCEL_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    status: str
    previous_status: str
    response: bytes
    cancel_requested: bool
    def __init__(self, status: _Optional[str] = ..., previous_status: _Optional[str] = ..., response: _Optional[bytes] = ..., cancel_requested: _Optional[bool] = ...) -> None: ...

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
    __slots__ = ("items", "model_views")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    MODEL_VIEWS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedScalarFieldContainer[bytes]
    model_views: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, items: _Optional[_Iterable[bytes]] = ..., model_views: _Optional[_Iterable[bytes]] = ...) -> None: ...

class PersistTurnRequest(_message.Message):
    __slots__ = ("principal", "response_id", "previous_response_id", "response", "input_items", "output_items", "model", "status", "store_response", "conversation_id", "lease_token", "conversation_items")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    INPUT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STORE_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ITEMS_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    response_id: str
    previous_response_id: str
    response: bytes
    input_items: _containers.RepeatedCompositeFieldContainer[Item]
    output_items: _containers.RepeatedCompositeFieldContainer[Item]
    model: str
    status: str
    store_response: bool
    conversation_id: str
    lease_token: str
    conversation_items: _containers.RepeatedCompositeFieldContainer[Item]
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., response_id: _Optional[str] = ..., previous_response_id: _Optional[str] = ..., response: _Optional[bytes] = ..., input_items: _Optional[_Iterable[_Union[Item, _Mapping]]] = ..., output_items: _Optional[_Iterable[_Union[Item, _Mapping]]] = ..., model: _Optional[str] = ..., status: _Optional[str] = ..., store_response: _Optional[bool] = ..., conversation_id: _Optional[str] = ..., lease_token: _Optional[str] = ..., conversation_items: _Optional[_Iterable[_Union[Item, _Mapping]]] = ...) -> None: ...

class PersistTurnReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Item(_message.Message):
    __slots__ = ("id", "data", "visibility", "linked_item_id", "model_view")
    ID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    LINKED_ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_VIEW_FIELD_NUMBER: _ClassVar[int]
    id: str
    data: bytes
    visibility: str
    linked_item_id: str
    model_view: bytes
    def __init__(self, id: _Optional[str] = ..., data: _Optional[bytes] = ..., visibility: _Optional[str] = ..., linked_item_id: _Optional[str] = ..., model_view: _Optional[bytes] = ...) -> None: ...

class ConversationRef(_message.Message):
    __slots__ = ("principal", "conversation_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    conversation_id: str
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., conversation_id: _Optional[str] = ...) -> None: ...

class ConversationItemRef(_message.Message):
    __slots__ = ("principal", "conversation_id", "item_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    conversation_id: str
    item_id: str
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., conversation_id: _Optional[str] = ..., item_id: _Optional[str] = ...) -> None: ...

class CreateConversationRequest(_message.Message):
    __slots__ = ("principal", "conversation_id", "metadata", "items")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    conversation_id: str
    metadata: bytes
    items: _containers.RepeatedCompositeFieldContainer[Item]
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., conversation_id: _Optional[str] = ..., metadata: _Optional[bytes] = ..., items: _Optional[_Iterable[_Union[Item, _Mapping]]] = ...) -> None: ...

class UpdateConversationRequest(_message.Message):
    __slots__ = ("principal", "conversation_id", "metadata")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    conversation_id: str
    metadata: bytes
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., conversation_id: _Optional[str] = ..., metadata: _Optional[bytes] = ...) -> None: ...

class ConversationReply(_message.Message):
    __slots__ = ("conversation",)
    CONVERSATION_FIELD_NUMBER: _ClassVar[int]
    conversation: bytes
    def __init__(self, conversation: _Optional[bytes] = ...) -> None: ...

class DeleteConversationReply(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class AppendConversationItemsRequest(_message.Message):
    __slots__ = ("principal", "conversation_id", "items")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    conversation_id: str
    items: _containers.RepeatedCompositeFieldContainer[Item]
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., conversation_id: _Optional[str] = ..., items: _Optional[_Iterable[_Union[Item, _Mapping]]] = ...) -> None: ...

class ListConversationItemsRequest(_message.Message):
    __slots__ = ("principal", "conversation_id", "limit", "after", "ascending")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    ASCENDING_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    conversation_id: str
    limit: int
    after: str
    ascending: bool
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., conversation_id: _Optional[str] = ..., limit: _Optional[int] = ..., after: _Optional[str] = ..., ascending: _Optional[bool] = ...) -> None: ...

class BeginConversationTurnRequest(_message.Message):
    __slots__ = ("principal", "conversation_id", "lease_token", "lease_seconds")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LEASE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    conversation_id: str
    lease_token: str
    lease_seconds: float
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., conversation_id: _Optional[str] = ..., lease_token: _Optional[str] = ..., lease_seconds: _Optional[float] = ...) -> None: ...

class ConversationTurn(_message.Message):
    __slots__ = ("items", "model_views")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    MODEL_VIEWS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedScalarFieldContainer[bytes]
    model_views: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, items: _Optional[_Iterable[bytes]] = ..., model_views: _Optional[_Iterable[bytes]] = ...) -> None: ...

class EndConversationTurnRequest(_message.Message):
    __slots__ = ("principal", "conversation_id", "lease_token")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    conversation_id: str
    lease_token: str
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., conversation_id: _Optional[str] = ..., lease_token: _Optional[str] = ...) -> None: ...

class EndConversationTurnReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PersistSplitTurnRequest(_message.Message):
    __slots__ = ("turn", "digest")
    TURN_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    turn: PersistTurnRequest
    digest: str
    def __init__(self, turn: _Optional[_Union[PersistTurnRequest, _Mapping]] = ..., digest: _Optional[str] = ...) -> None: ...

class PersistSplitTurnReply(_message.Message):
    __slots__ = ("replayed", "response")
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    replayed: bool
    response: bytes
    def __init__(self, replayed: _Optional[bool] = ..., response: _Optional[bytes] = ...) -> None: ...
