from agentic.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class McpServer(_message.Message):
    __slots__ = ("server_label", "server_url", "connector_id", "headers")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SERVER_LABEL_FIELD_NUMBER: _ClassVar[int]
    SERVER_URL_FIELD_NUMBER: _ClassVar[int]
    CONNECTOR_ID_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    server_label: str
    server_url: str
    connector_id: str
    headers: _containers.ScalarMap[str, str]
    def __init__(self, server_label: _Optional[str] = ..., server_url: _Optional[str] = ..., connector_id: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ListToolsRequest(_message.Message):
    __slots__ = ("principal", "server", "allowed_tools")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SERVER_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_TOOLS_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    server: McpServer
    allowed_tools: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., server: _Optional[_Union[McpServer, _Mapping]] = ..., allowed_tools: _Optional[_Iterable[str]] = ...) -> None: ...

class McpTool(_message.Message):
    __slots__ = ("name", "description", "input_schema", "annotations")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    ANNOTATIONS_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    input_schema: bytes
    annotations: bytes
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema: _Optional[bytes] = ..., annotations: _Optional[bytes] = ...) -> None: ...

class ListToolsReply(_message.Message):
    __slots__ = ("tools",)
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    tools: _containers.RepeatedCompositeFieldContainer[McpTool]
    def __init__(self, tools: _Optional[_Iterable[_Union[McpTool, _Mapping]]] = ...) -> None: ...
