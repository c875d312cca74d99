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
