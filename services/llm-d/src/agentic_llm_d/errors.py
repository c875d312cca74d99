"""Every error llm-d returns, as `{"error": {"message", "type", "code", "param"}}`."""

from __future__ import annotations

import logging

from agentic_core.errors import AgenticError, InternalError, InvalidRequest, NotFound
from fastapi import Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)


def error_response(error: AgenticError) -> Response:
    return Response(content=error.body(), status_code=error.http_status, media_type="application/json")


async def agentic_error_handler(request: Request, error: AgenticError) -> Response:
    if error.http_status >= 500:
        log.warning("%s %s failed (%d): %s", request.method, request.url.path, error.http_status, error.message)
    return error_response(error)


async def http_error_handler(request: Request, exc: StarletteHTTPException) -> Response:
    if exc.status_code == 404:
        error: AgenticError = NotFound(f"Unknown request URL: {request.method} {request.url.path}.", code="unknown_url")
    else:
        error = InvalidRequest(f"{exc.detail}: {request.method} {request.url.path}.", code="invalid_request_error")
        error.http_status = exc.status_code
    return error_response(error)


async def unexpected_error_handler(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error in %s %s", request.method, request.url.path)
    return error_response(InternalError("internal error"))
