"""Reading a request body under the configured size limit."""

from __future__ import annotations

from agentic_core.errors import InvalidRequest, PayloadTooLarge
from fastapi import Request


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            declared_size = int(declared)
        except ValueError:
            raise InvalidRequest("The Content-Length header is not a number.") from None
        if declared_size > limit:
            raise PayloadTooLarge(f"The request body is {declared_size} bytes; the limit is {limit} bytes.")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"The request body exceeds the limit of {limit} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)
