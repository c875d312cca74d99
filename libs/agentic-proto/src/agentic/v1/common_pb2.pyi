from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class Principal(_message.Message):
    __slots__ = ("tenant", "subject")
    TENANT_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    tenant: str
    subject: str
    def __init__(self, tenant: _Optional[str] = ..., subject: _Optional[str] = ...) -> None: ...

class ApiError(_message.Message):
    __slots__ = ("http_status", "body")
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    http_status: int
    body: bytes
    def __init__(self, http_status: _Optional[int] = ..., body: _Optional[bytes] = ...) -> None: ...
