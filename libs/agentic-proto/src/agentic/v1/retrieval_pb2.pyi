from agentic.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class UploadFileMetadata(_message.Message):
    __slots__ = ("principal", "filename", "purpose", "content_type", "expires_after_seconds")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    PURPOSE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AFTER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    filename: str
    purpose: str
    content_type: str
    expires_after_seconds: int
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., filename: _Optional[str] = ..., purpose: _Optional[str] = ..., content_type: _Optional[str] = ..., expires_after_seconds: _Optional[int] = ...) -> None: ...

class UploadFileChunk(_message.Message):
    __slots__ = ("metadata", "data")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    metadata: UploadFileMetadata
    data: bytes
    def __init__(self, metadata: _Optional[_Union[UploadFileMetadata, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class FileRef(_message.Message):
    __slots__ = ("principal", "file_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    file_id: str
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., file_id: _Optional[str] = ...) -> None: ...

class FileReply(_message.Message):
    __slots__ = ("file_id", "object")
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    file_id: str
    object: bytes
    def __init__(self, file_id: _Optional[str] = ..., object: _Optional[bytes] = ...) -> None: ...

class ListFilesRequest(_message.Message):
    __slots__ = ("principal", "purpose", "limit", "after", "ascending")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    PURPOSE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    ASCENDING_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    purpose: str
    limit: int
    after: str
    ascending: bool
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., purpose: _Optional[str] = ..., limit: _Optional[int] = ..., after: _Optional[str] = ..., ascending: _Optional[bool] = ...) -> None: ...

class FileContentInfo(_message.Message):
    __slots__ = ("filename", "bytes", "content_type")
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    filename: str
    bytes: int
    content_type: str
    def __init__(self, filename: _Optional[str] = ..., bytes: _Optional[int] = ..., content_type: _Optional[str] = ...) -> None: ...

class FileContentChunk(_message.Message):
    __slots__ = ("info", "data")
    INFO_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    info: FileContentInfo
    data: bytes
    def __init__(self, info: _Optional[_Union[FileContentInfo, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class ListReply(_message.Message):
    __slots__ = ("object",)
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    object: bytes
    def __init__(self, object: _Optional[bytes] = ...) -> None: ...

class DeletedReply(_message.Message):
    __slots__ = ("object",)
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    object: bytes
    def __init__(self, object: _Optional[bytes] = ...) -> None: ...

class CreateVectorStoreRequest(_message.Message):
    __slots__ = ("principal", "name", "metadata", "expires_after", "chunking_strategy", "file_ids")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AFTER_FIELD_NUMBER: _ClassVar[int]
    CHUNKING_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    FILE_IDS_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    name: str
    metadata: bytes
    expires_after: bytes
    chunking_strategy: bytes
    file_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., name: _Optional[str] = ..., metadata: _Optional[bytes] = ..., expires_after: _Optional[bytes] = ..., chunking_strategy: _Optional[bytes] = ..., file_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class VectorStoreRef(_message.Message):
    __slots__ = ("principal", "vector_store_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    VECTOR_STORE_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    vector_store_id: str
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., vector_store_id: _Optional[str] = ...) -> None: ...

class VectorStoreReply(_message.Message):
    __slots__ = ("vector_store_id", "object")
    VECTOR_STORE_ID_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    vector_store_id: str
    object: bytes
    def __init__(self, vector_store_id: _Optional[str] = ..., object: _Optional[bytes] = ...) -> None: ...

class UpdateVectorStoreRequest(_message.Message):
    __slots__ = ("principal", "vector_store_id", "set_name", "name", "metadata", "set_expires_after", "expires_after")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    VECTOR_STORE_ID_FIELD_NUMBER: _ClassVar[int]
    SET_NAME_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SET_EXPIRES_AFTER_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AFTER_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    vector_store_id: str
    set_name: bool
    name: str
    metadata: bytes
    set_expires_after: bool
    expires_after: bytes
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., vector_store_id: _Optional[str] = ..., set_name: _Optional[bool] = ..., name: _Optional[str] = ..., metadata: _Optional[bytes] = ..., set_expires_after: _Optional[bool] = ..., expires_after: _Optional[bytes] = ...) -> None: ...

class ListVectorStoresRequest(_message.Message):
    __slots__ = ("principal", "limit", "after", "before", "ascending")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    ASCENDING_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    limit: int
    after: str
    before: str
    ascending: bool
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., limit: _Optional[int] = ..., after: _Optional[str] = ..., before: _Optional[str] = ..., ascending: _Optional[bool] = ...) -> None: ...

class AddStoreFileRequest(_message.Message):
    __slots__ = ("principal", "vector_store_id", "file_id", "attributes", "chunking_strategy")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    VECTOR_STORE_ID_FIELD_NUMBER: _ClassVar[int]
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    CHUNKING_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    vector_store_id: str
    file_id: str
    attributes: bytes
    chunking_strategy: bytes
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., vector_store_id: _Optional[str] = ..., file_id: _Optional[str] = ..., attributes: _Optional[bytes] = ..., chunking_strategy: _Optional[bytes] = ...) -> None: ...

class StoreFileRef(_message.Message):
    __slots__ = ("principal", "vector_store_id", "file_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    VECTOR_STORE_ID_FIELD_NUMBER: _ClassVar[int]
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    vector_store_id: str
    file_id: str
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., vector_store_id: _Optional[str] = ..., file_id: _Optional[str] = ...) -> None: ...

class StoreFileReply(_message.Message):
    __slots__ = ("status", "object")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    status: str
    object: bytes
    def __init__(self, status: _Optional[str] = ..., object: _Optional[bytes] = ...) -> None: ...

class ListStoreFilesRequest(_message.Message):
    __slots__ = ("principal", "vector_store_id", "filter", "limit", "after", "before", "ascending")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    VECTOR_STORE_ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    ASCENDING_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    vector_store_id: str
    filter: str
    limit: int
    after: str
    before: str
    ascending: bool
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., vector_store_id: _Optional[str] = ..., filter: _Optional[str] = ..., limit: _Optional[int] = ..., after: _Optional[str] = ..., before: _Optional[str] = ..., ascending: _Optional[bool] = ...) -> None: ...

class UpdateStoreFileRequest(_message.Message):
    __slots__ = ("principal", "vector_store_id", "file_id", "attributes")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    VECTOR_STORE_ID_FIELD_NUMBER: _ClassVar[int]
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    vector_store_id: str
    file_id: str
    attributes: bytes
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., vector_store_id: _Optional[str] = ..., file_id: _Optional[str] = ..., attributes: _Optional[bytes] = ...) -> None: ...

class StoreFileContentReply(_message.Message):
    __slots__ = ("object",)
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    object: bytes
    def __init__(self, object: _Optional[bytes] = ...) -> None: ...

class BatchFile(_message.Message):
    __slots__ = ("file_id", "attributes", "chunking_strategy")
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    CHUNKING_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    file_id: str
    attributes: bytes
    chunking_strategy: bytes
    def __init__(self, file_id: _Optional[str] = ..., attributes: _Optional[bytes] = ..., chunking_strategy: _Optional[bytes] = ...) -> None: ...

class CreateFileBatchRequest(_message.Message):
    __slots__ = ("principal", "vector_store_id", "files", "attributes", "chunking_strategy")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    VECTOR_STORE_ID_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    CHUNKING_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    vector_store_id: str
    files: _containers.RepeatedCompositeFieldContainer[BatchFile]
    attributes: bytes
    chunking_strategy: bytes
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., vector_store_id: _Optional[str] = ..., files: _Optional[_Iterable[_Union[BatchFile, _Mapping]]] = ..., attributes: _Optional[bytes] = ..., chunking_strategy: _Optional[bytes] = ...) -> None: ...

class FileBatchRef(_message.Message):
    __slots__ = ("principal", "vector_store_id", "batch_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    VECTOR_STORE_ID_FIELD_NUMBER: _ClassVar[int]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    vector_store_id: str
    batch_id: str
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., vector_store_id: _Optional[str] = ..., batch_id: _Optional[str] = ...) -> None: ...

class FileBatchReply(_message.Message):
    __slots__ = ("status", "object")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    status: str
    object: bytes
    def __init__(self, status: _Optional[str] = ..., object: _Optional[bytes] = ...) -> None: ...

class ListFileBatchFilesRequest(_message.Message):
    __slots__ = ("principal", "vector_store_id", "batch_id", "filter", "limit", "after", "before", "ascending")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    VECTOR_STORE_ID_FIELD_NUMBER: _ClassVar[int]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    ASCENDING_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    vector_store_id: str
    batch_id: str
    filter: str
    limit: int
    after: str
    before: str
    ascending: bool
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., vector_store_id: _Optional[str] = ..., batch_id: _Optional[str] = ..., filter: _Optional[str] = ..., limit: _Optional[int] = ..., after: _Optional[str] = ..., before: _Optional[str] = ..., ascending: _Optional[bool] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("principal", "vector_store_ids", "queries", "filters", "max_num_results", "ranking_options", "rewrite_query")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    VECTOR_STORE_IDS_FIELD_NUMBER: _ClassVar[int]
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    MAX_NUM_RESULTS_FIELD_NUMBER: _ClassVar[int]
    RANKING_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    REWRITE_QUERY_FIELD_NUMBER: _ClassVar[int]
    principal: _common_pb2.Principal
    vector_store_ids: _containers.RepeatedScalarFieldContainer[str]
    queries: _containers.RepeatedScalarFieldContainer[str]
    filters: bytes
    max_num_results: int
    ranking_options: bytes
    rewrite_query: bool
    def __init__(self, principal: _Optional[_Union[_common_pb2.Principal, _Mapping]] = ..., vector_store_ids: _Optional[_Iterable[str]] = ..., queries: _Optional[_Iterable[str]] = ..., filters: _Optional[bytes] = ..., max_num_results: _Optional[int] = ..., ranking_options: _Optional[bytes] = ..., rewrite_query: _Optional[bool] = ...) -> None: ...

class SearchResult(_message.Message):
    __slots__ = ("file_id", "filename", "score", "attributes", "content", "vector_store_id")
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    VECTOR_STORE_ID_FIELD_NUMBER: _ClassVar[int]
    file_id: str
    filename: str
    score: float
    attributes: bytes
    content: _containers.RepeatedScalarFieldContainer[str]
    vector_store_id: str
    def __init__(self, file_id: _Optional[str] = ..., filename: _Optional[str] = ..., score: _Optional[float] = ..., attributes: _Optional[bytes] = ..., content: _Optional[_Iterable[str]] = ..., vector_store_id: _Optional[str] = ...) -> None: ...

class SearchReply(_message.Message):
    __slots__ = ("object", "results", "search_queries")
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    SEARCH_QUERIES_FIELD_NUMBER: _ClassVar[int]
    object: bytes
    results: _containers.RepeatedCompositeFieldContainer[SearchResult]
    search_queries: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, object: _Optional[bytes] = ..., results: _Optional[_Iterable[_Union[SearchResult, _Mapping]]] = ..., search_queries: _Optional[_Iterable[str]] = ...) -> None: ...
