"""`data:` URLs (RFC 2397), as the OpenAI SDK sends images and files: read with a size bound, and written."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from agentic_core.errors import InvalidRequest


@dataclass(frozen=True, slots=True)
class DataUrl:
    media_type: str  # lower case, parameters dropped; "" when the URL named none
    data: bytes


def is_data_url(text: str) -> bool:
    return text[:5].lower() == "data:"


def parse_data_url(text: str, *, param: str, max_bytes: int, code: str = "invalid_value") -> DataUrl:
    """The bytes of a base64 `data:` URL; anything else, or more than `max_bytes` once decoded, is a 400 on `param`."""
    header, comma, payload = text.partition(",")
    if not is_data_url(header) or not comma:
        raise InvalidRequest(f"Invalid data URL in '{param}': expected 'data:<media type>;base64,<data>'.",
                             param=param, code=code)
    fields = [field.strip() for field in header[5:].split(";")]
    if "base64" not in (field.lower() for field in fields[1:]):
        raise InvalidRequest(f"Invalid data URL in '{param}': only base64 data URLs are accepted.", param=param, code=code)
    media_type = fields[0].lower()
    return DataUrl(media_type, decode_base64(payload, param=param, max_bytes=max_bytes, code=code))


def decode_base64(payload: str, *, param: str, max_bytes: int, code: str = "invalid_value") -> bytes:
    # Checked before decoding: 4 characters carry 3 bytes, so an oversized payload is refused unread.
    if len(payload) // 4 * 3 > max_bytes + 3:
        raise _too_large(param, max_bytes)
    try:
        data = base64.b64decode(payload.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidRequest(f"Invalid base64 data in '{param}'.", param=param, code=code) from None
    if len(data) > max_bytes:
        raise _too_large(param, max_bytes)
    return data


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


def _too_large(param: str, max_bytes: int) -> InvalidRequest:
    return InvalidRequest(f"The data in '{param}' is larger than this gateway accepts ({max_bytes} bytes).",
                          param=param, code="input_media_too_large")
