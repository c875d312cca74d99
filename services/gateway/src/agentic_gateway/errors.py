"""Every error the gateway returns, in the OpenAI shape."""

from __future__ import annotations

from agentic_core.errors import AgenticError, InvalidRequest, NotFound
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

_STATUS_MESSAGES = {404: "Unknown request URL", 405: "Method not allowed"}


def error_response(error: AgenticError) -> Response:
    return Response(content=error.body(), status_code=error.http_status, media_type="application/json")


async def agentic_error_handler(request: Request, error: AgenticError) -> Response:
    return error_response(error)


async def http_error_handler(request: Request, exc: StarletteHTTPException) -> Response:
    message = f"{_STATUS_MESSAGES.get(exc.status_code, exc.detail)}: {request.method} {request.url.path}."
    error = NotFound(message, code="unknown_url") if exc.status_code == 404 else InvalidRequest(message)
    error.http_status = exc.status_code
    return error_response(error)


async def validation_error_handler(request: Request, exc: RequestValidationError) -> Response:
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
    param = ".".join(str(part) for part in first.get("loc", ())[1:]) or None
    return error_response(InvalidRequest(f"Invalid value for '{param}': {first.get('msg')}.", param=param))
