from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class Principal(_message.Message):
    __slots__ = ("tenant", "subject", "key_id", "admin")
    TENANT_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    ADMIN_FIELD_NUMBER: _ClassVar[int]
    tenant: str
    subject: str
    key_id: str
    admin: bool
    def __init__(self, tenant: _Optional[str] = ..., subject: _Optional[str] = ..., key_id: _Optional[str] = ..., admin: _Optional[bool] = ...) -> None: ...
