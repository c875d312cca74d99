"""Every HTTP error in the API's own shape: OpenAI's everywhere, Anthropic's under its routes.

`install_error_handlers` is the one place a domain error, an unknown route, a
malformed request or an unexpected exception becomes a response, for the
gateway and llm-d alike.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable

from agentic_core.errors import AgenticError, InternalError, InvalidRequest, NotFound
from agentic_core.messages.errors import anthropic_error, anthropic_status
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentic_runtime.tracing import context_from, tracer

log = logging.getLogger(__name__)
_tracer = tracer("agentic.http")

JSON = "application/json"
ErrorShape = Callable[[AgenticError], Response]
ErrorObserver = Callable[[Request, int], None]
_STATUS_MESSAGES = {404: "Unknown request URL", 405: "Method not allowed"}
CLIENT_CLOSED_REQUEST = 499  # nginx's name for it: counted in metrics, never sent


def openai_error_response(error: AgenticError) -> Response:
    return Response(content=error.body(), status_code=error.http_status, media_type=JSON)


def anthropic_error_response(error: AgenticError) -> Response:
    return Response(content=anthropic_error(error.http_status, error.body()),
                    status_code=anthropic_status(error.http_status), media_type=JSON)


class ErrorShapes:
    """Which wire shape a path answers errors in: Anthropic's under `anthropic_prefixes`, else OpenAI's."""

    def __init__(self, anthropic_prefixes: tuple[str, ...] = ()) -> None:
        self.anthropic_prefixes = anthropic_prefixes

    def for_path(self, path: str) -> ErrorShape:
        if self.anthropic_prefixes and path.startswith(self.anthropic_prefixes):
            return anthropic_error_response
        return openai_error_response


def _http_error(request: Request, exc: StarletteHTTPException) -> AgenticError:
    message = f"{_STATUS_MESSAGES.get(exc.status_code, exc.detail)}: {request.method} {request.url.path}."
    if exc.status_code == 404:
        return NotFound(message, code="unknown_url")
    error = InvalidRequest(message)
    error.http_status = exc.status_code
    return error


def _validation_error(exc: RequestValidationError) -> AgenticError:
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
    param = ".".join(str(part) for part in first.get("loc", ())[1:]) or None
    return InvalidRequest(f"Invalid value for '{param}': {first.get('msg')}.", param=param)


def log_unexpected(method: str, path: str, exc: BaseException, headers: list[tuple[bytes, bytes]]) -> None:
    """Once, in the caller's trace (or a new one) so the line has a trace id to quote, with the stack but never
    the request's content (nor the exception's message, which may quote it)."""
    carrier = {name.decode("latin-1"): value.decode("latin-1") for name, value in headers
               if name in (b"traceparent", b"tracestate")}
    stack = "".join(traceback.TracebackException.from_exception(exc).stack.format())
    with _tracer.start_as_current_span("unexpected error", context=context_from(carrier)):
        log.error("unexpected %s in %s %s\n%s", type(exc).__name__, method, path, stack)


class UnexpectedErrors:
    """An exception no handler claimed: logged once and answered as a 500 in the path's shape (uvicorn would
    answer plain text and log it again). After the response started, the stream just ends."""

    def __init__(self, app: ASGIApp, shapes: ErrorShapes, observe: ErrorObserver | None = None) -> None:
        self.app = app
        self.shapes = shapes
        self.observe = observe

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_tracking)
        except Exception as exc:
            log_unexpected(scope["method"], scope["path"], exc, scope.get("headers") or [])
            if started:  # too late for a status: end the body, so the server has nothing more to report
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            if self.observe is not None:
                self.observe(Request(scope), 500)
            response = self.shapes.for_path(scope["path"])(InternalError("The server had an error processing "
                                                                         "your request."))
            await response(scope, receive, send)


def install_error_handlers(app: FastAPI, shapes: ErrorShapes, observe: ErrorObserver | None = None) -> None:
    """Registers, once per app, the handlers that give every error route-appropriate shape.
    `observe(request, status)` is told of each error answered (metrics)."""

    def answer(request: Request, error: AgenticError) -> Response:
        if observe is not None:
            observe(request, error.http_status)
        if error.http_status >= 500:
            log.warning("%s %s failed (%d): %s", request.method, request.url.path, error.http_status, error.message)
        response = shapes.for_path(request.url.path)(error)
        if error.retry_after:
            response.headers["retry-after"] = error.retry_after
        if error.http_status == 408:  # the rest of the body may still be on its way: this connection is done
            response.headers["connection"] = "close"
        return response

    async def on_agentic_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, AgenticError)
        return answer(request, error)

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        return answer(request, _http_error(request, exc))

    async def on_validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return answer(request, _validation_error(exc))

    async def on_client_gone(request: Request, exc: Exception) -> Response:
        # The client went away while sending its body: its choice, not our failure (no one reads this answer).
        log.info("%s %s: the client disconnected before its request arrived", request.method, request.url.path)
        if observe is not None:
            observe(request, CLIENT_CLOSED_REQUEST)
        return Response(status_code=CLIENT_CLOSED_REQUEST)

    app.add_exception_handler(AgenticError, on_agentic_error)
    app.add_exception_handler(ClientDisconnect, on_client_gone)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_middleware(UnexpectedErrors, shapes=shapes, observe=observe)
