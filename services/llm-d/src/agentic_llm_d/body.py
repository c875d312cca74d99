"""Reading a request body under a size limit, with the reference's 413 `body_too_large` wording."""

from __future__ import annotations

from agentic_core.errors import PayloadTooLarge
from agentic_runtime.http.service import read_body as _read_body
from fastapi import Request


def too_large(what: str = "request body") -> PayloadTooLarge:
    return PayloadTooLarge(f"{what} too large", code="body_too_large")


async def read_body(request: Request, limit: int) -> bytes:
    return await _read_body(request, limit, lambda _limit, _size: too_large(), invalid_code="invalid_request_error")
