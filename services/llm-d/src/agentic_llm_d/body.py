"""Reading a request body under a size limit (413 `body_too_large` beyond it)."""

from __future__ import annotations

from agentic_core.errors import InvalidRequest, PayloadTooLarge
from fastapi import Request


def too_large(what: str = "request body") -> PayloadTooLarge:
    return PayloadTooLarge(f"{what} too large", code="body_too_large")


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            declared_size = int(declared)
        except ValueError:
            raise InvalidRequest("The Content-Length header is not a number.", code="invalid_request_error") from None
        if declared_size > limit:
            raise too_large()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large()
        chunks.append(chunk)
    return b"".join(chunks)
