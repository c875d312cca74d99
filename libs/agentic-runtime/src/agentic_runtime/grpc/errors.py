"""Domain errors across gRPC: one server interceptor, one client-side decoder.

The OpenAI-shaped body and HTTP status travel in trailing metadata, so the
service that faces the client relays them exactly.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import orjson
from agentic_core.errors import AgenticError, PayloadTooLarge, RelayedError, ServiceUnavailable, UpstreamTimeout
from opentelemetry import context as otel_context

from agentic_runtime.logs import bind_principal
from agentic_runtime.tracing import context_from

log = logging.getLogger(__name__)
_Context = grpc.aio.ServicerContext[Any, Any]

ERROR_BODY_KEY = "agentic-error-bin"
HTTP_STATUS_KEY = "agentic-http-status"
RETRY_AFTER_KEY = "agentic-retry-after"

_STATUS_CODES = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    404: grpc.StatusCode.NOT_FOUND,
    409: grpc.StatusCode.ABORTED,
    413: grpc.StatusCode.RESOURCE_EXHAUSTED,
    429: grpc.StatusCode.RESOURCE_EXHAUSTED,
    503: grpc.StatusCode.UNAVAILABLE,
    504: grpc.StatusCode.DEADLINE_EXCEEDED,
}


def status_code_for(error: AgenticError) -> grpc.StatusCode:
    return _STATUS_CODES.get(error.http_status, grpc.StatusCode.INTERNAL)


# The error travels in trailers, which share gRPC's metadata limit (8 KiB by default) with everything else: a
# message that quotes a client's input is cut to fit, else the peer sees a transport error instead of ours.
MAX_ERROR_MESSAGE_CHARS = 1024
_MAX_ERROR_BODY_BYTES = 4 * MAX_ERROR_MESSAGE_CHARS


def _short(text: str) -> str:
    return text if len(text) <= MAX_ERROR_MESSAGE_CHARS else text[:MAX_ERROR_MESSAGE_CHARS] + "…"


def error_trailers(error: AgenticError) -> tuple[str, tuple[tuple[str, str | bytes], ...]]:
    """The status details and trailing metadata that carry `error`, within the metadata limit."""
    body = error.body()
    if len(body) > _MAX_ERROR_BODY_BYTES:
        shape = error.to_dict()
        fields = shape["error"]
        for key in ("message", "param", "code"):
            if isinstance(fields.get(key), str):
                fields[key] = _short(fields[key])
        body = orjson.dumps(shape)
    trailers: tuple[tuple[str, str | bytes], ...] = ((ERROR_BODY_KEY, body), (HTTP_STATUS_KEY, str(error.http_status)))
    if error.retry_after:
        trailers += ((RETRY_AFTER_KEY, error.retry_after),)
    return _short(error.message), trailers


async def _abort(context: _Context, error: AgenticError) -> None:
    details, trailers = error_trailers(error)
    await context.abort(status_code_for(error), details, trailing_metadata=trailers)


def _continue_trace(context: _Context) -> None:
    """The caller's trace, current for this call's task (its own, so no detach): logs carry its trace id."""
    otel_context.attach(context_from(context.invocation_metadata()))


async def _fail(context: _Context, method: str, exc: Exception) -> None:
    """Ends the call with the status the exception stands for (never returns)."""
    if isinstance(exc, AgenticError):
        await _abort(context, exc)
    if isinstance(exc, (grpc.aio.AbortError, grpc.aio.UsageError)):
        raise exc
    log.error("unhandled error in %s", method, exc_info=exc)
    await context.abort(grpc.StatusCode.INTERNAL, "internal error")


def _name_principal(request: Any) -> None:
    """The log lines of a call made for a principal name it (tenant, subject, key id; never a secret)."""
    principal = getattr(request, "principal", None)
    if principal is not None and principal.tenant:
        bind_principal(principal)


class ErrorInterceptor(grpc.aio.ServerInterceptor):
    """Maps `AgenticError` to its status; anything else becomes a sanitised INTERNAL."""

    async def intercept_service(self, continuation: Callable[..., Awaitable[Any]], details: Any) -> Any:
        handler = await continuation(details)
        if handler is None:
            return None
        method = details.method
        if handler.unary_unary is not None:
            inner_unary = handler.unary_unary

            async def unary_unary(request: Any, context: _Context) -> Any:
                _continue_trace(context)
                _name_principal(request)
                try:
                    return await inner_unary(request, context)
                except Exception as exc:
                    await _fail(context, method, exc)

            return grpc.unary_unary_rpc_method_handler(
                unary_unary,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            async def unary_stream(request: Any, context: _Context) -> AsyncIterator[Any]:
                _continue_trace(context)
                _name_principal(request)
                try:
                    async for message in inner_stream(request, context):
                        yield message
                except Exception as exc:
                    await _fail(context, method, exc)

            return grpc.unary_stream_rpc_method_handler(
                unary_stream,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_unary is not None:  # uploads: the principal is in the first message, named by the servicer
            inner_upload = handler.stream_unary

            async def stream_unary(requests: AsyncIterator[Any], context: _Context) -> Any:
                _continue_trace(context)
                try:
                    return await inner_upload(requests, context)
                except Exception as exc:
                    await _fail(context, method, exc)

            return grpc.stream_unary_rpc_method_handler(
                stream_unary,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler


def error_from_rpc(exc: grpc.aio.AioRpcError, peer: str) -> AgenticError:
    """The domain error a failed call stands for, as the client should see it."""
    metadata = exc.trailing_metadata() or ()
    body = status = retry_after = None
    for key, value in metadata:
        if key == ERROR_BODY_KEY:
            body = value
        elif key == HTTP_STATUS_KEY:
            status = value
        elif key == RETRY_AFTER_KEY:
            retry_after = str(value)
    if body is not None and status is not None:
        relayed = RelayedError(int(status), body if isinstance(body, bytes) else str(body).encode())
        relayed.retry_after = retry_after
        return relayed
    code = exc.code()
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return UpstreamTimeout(f"The {peer} service did not answer in time.", code=f"{peer}_timeout")
    if code == grpc.StatusCode.UNAVAILABLE:
        return ServiceUnavailable(f"The {peer} service is unavailable.", code=f"{peer}_unavailable")
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:  # gRPC's own: a message over the size limit, sent or received
        return PayloadTooLarge(f"A message to or from the {peer} service was over the size limit.",
                               code=f"{peer}_message_too_large")
    return RelayedError(
        500,
        AgenticError(f"The {peer} service failed.", code="internal_error").body(),
    )
