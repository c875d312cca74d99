"""Compressed request bodies (`Content-Encoding: gzip | deflate | zstd`), decoded within a size limit.

Agent clients compress large requests (Codex sends zstd). The limit that guards
the services applies to what the body becomes, not to what crossed the wire, so
every decoder here stops one byte past the limit: a decompression bomb costs at
most the limit in memory and ends as a 413.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable

import zstandard
from agentic_core.errors import AgenticError, InvalidRequest

TooLarge = Callable[[int, int | None], AgenticError]

SUPPORTED_ENCODINGS = ("gzip", "deflate", "zstd")
_ALIASES = {"x-gzip": "gzip", "identity": ""}


class UnsupportedEncoding(AgenticError):
    http_status = 415
    error_type = "invalid_request_error"
    default_code = "unsupported_content_encoding"


def encodings_of(header: str | None) -> list[str]:
    """The codings applied to the body, in the order they were applied ("identity" dropped)."""
    if not header:
        return []
    codings = []
    for raw in header.split(","):
        coding = raw.strip().lower()
        coding = _ALIASES.get(coding, coding)
        if not coding:
            continue
        if coding not in SUPPORTED_ENCODINGS:
            raise UnsupportedEncoding(
                f"Content-Encoding {raw.strip()!r} is not supported; use one of {', '.join(SUPPORTED_ENCODINGS)}.")
        codings.append(coding)
    return codings


def decode_body(body: bytes, codings: list[str], limit: int, too_large: TooLarge, invalid_code: str | None = None) -> bytes:
    """Undo `codings` (last applied first); refused with `too_large(limit, None)` once past `limit` bytes."""
    for coding in reversed(codings):
        try:
            body = _zstd(body, limit) if coding == "zstd" else _zlib(body, coding, limit)
        except (zlib.error, zstandard.ZstdError, EOFError):
            raise InvalidRequest(f"The request body is not valid {coding} data.", code=invalid_code) from None
        if len(body) > limit:
            raise too_large(limit, None)
    return body


def _zlib(body: bytes, coding: str, limit: int) -> bytes:
    # HTTP's "deflate" is the zlib format; some clients send a raw deflate stream, which is accepted too.
    wbits = 16 + zlib.MAX_WBITS if coding == "gzip" else zlib.MAX_WBITS
    if coding == "deflate" and body[:1] and (body[0] & 0x0F) != 8:
        wbits = -zlib.MAX_WBITS
    decoder = zlib.decompressobj(wbits)
    out = decoder.decompress(body, limit + 1)
    if len(out) > limit:
        return out
    if not decoder.eof:
        raise EOFError("truncated")
    return out


def _zstd(body: bytes, limit: int) -> bytes:
    # A frame need not declare its size: read through a stream capped one byte past the limit. The stream
    # reader does not notice a truncated frame, so a body within the limit is decoded once more, frame by
    # frame, which also proves each frame complete (bounded: it yields the same bytes).
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(body), read_across_frames=True) as reader:
        out = bytearray()
        while len(out) <= limit:
            chunk = reader.read(min(1 << 20, limit + 1 - len(out)))
            if not chunk:
                break
            out += chunk
    if len(out) > limit:
        return bytes(out)
    remaining = body
    while remaining:
        decoder = zstandard.ZstdDecompressor().decompressobj()
        decoder.decompress(remaining)
        if not decoder.eof:
            raise EOFError("truncated")
        remaining = decoder.unused_data
    return bytes(out)
