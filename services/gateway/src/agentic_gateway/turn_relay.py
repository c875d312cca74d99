"""Relaying a turn the executor runs: one JSON body, or its events as SSE; a failed turn raises its error.

The gateway's server span covers the whole Execute call: it ends once the JSON
is answered or the relayed stream ends.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import orjson
from agentic.v1 import executor_pb2
from agentic_core.errors import AgenticError, RelayedError
from agentic_core.sse import frame
from agentic_runtime.grpc_client import ReplyStream
from agentic_runtime.tracing import context_from, tracer
from fastapi import Request
from fastapi.responses import Response, StreamingResponse
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from agentic_gateway.context import gateway_of
from agentic_gateway.http import json_response
from agentic_gateway.metrics import REQUESTS, TURN_SECONDS

_tracer = tracer("agentic.gateway")
_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
CLIENT_CLOSED_REQUEST = 499  # nginx's status for a client that left; never seen by that client
StreamErrorFrame = Callable[[AgenticError], bytes]
ExecuteStream = ReplyStream[executor_pb2.ExecuteEvent]


def openai_stream_error(error: AgenticError) -> bytes:
    return frame("error", orjson.dumps({"type": "error", "code": error.code, "message": error.message, "param": None}))


async def run_on_executor(
    request: Request,
    execute_request: executor_pb2.ExecuteRequest | executor_pb2.ResponseRef,
    label: str,
    stream_error: StreamErrorFrame = openai_stream_error,
) -> Response:
    """Errors before the first event raise `AgenticError` (the app's handlers shape them); later ones end the
    stream with `stream_error`'s frame. A `ResponseRef` relays a background response's stored events."""
    # The turn's trace starts here (or continues the caller's `traceparent`) and crosses to the executor.
    span = _tracer.start_span(f"POST {request.url.path}", context=context_from(request.headers), kind=SpanKind.SERVER)
    relaying = False
    try:
        with trace.use_span(span):
            response = await _answer(request, execute_request, label, stream_error, span)
        relaying = isinstance(response, StreamingResponse)
        return response
    finally:
        if not relaying:
            span.end()


async def _answer(
    request: Request,
    execute_request: executor_pb2.ExecuteRequest | executor_pb2.ResponseRef,
    label: str,
    stream_error: StreamErrorFrame,
    span: Span,
) -> Response:
    gateway = gateway_of(request)
    started = time.perf_counter()
    # The peer maps a failure at any message to the executor's AgenticError (or a 503/504 of its own).
    executor = gateway.peers.executor
    method = executor.Execute if isinstance(execute_request, executor_pb2.ExecuteRequest) else executor.StreamResponse
    call: ExecuteStream = gateway.peers.executor_peer.stream(method, execute_request,
                                                             timeout=gateway.settings.turn_timeout_seconds)
    first_message = asyncio.ensure_future(call.__anext__())
    hang_up = asyncio.ensure_future(_disconnected(request))
    await asyncio.wait({first_message, hang_up}, return_when=asyncio.FIRST_COMPLETED)
    if not first_message.done():
        # The client left before the first byte: stop the turn rather than spend the model on nobody.
        call.cancel()
        first_message.cancel()
        REQUESTS.labels(route=label, status=CLIENT_CLOSED_REQUEST).inc()
        return Response(status_code=CLIENT_CLOSED_REQUEST)
    hang_up.cancel()
    try:
        first = first_message.result()
    except StopAsyncIteration:
        raise RelayedError(502, AgenticError("The executor ended the turn without a result.").body()) from None
    REQUESTS.labels(route=label, status=200).inc()
    if first.WhichOneof("payload") == "response":
        TURN_SECONDS.labels(mode="json").observe(time.perf_counter() - started)
        return json_response(first.response)
    TURN_SECONDS.labels(mode="stream").observe(time.perf_counter() - started)
    headers = dict(_SSE_HEADERS)
    if isinstance(execute_request, executor_pb2.ExecuteRequest):
        headers["x-request-id"] = execute_request.request_id
    return StreamingResponse(_relay(call, first, stream_error, span), media_type="text/event-stream",
                             headers=headers)


async def _disconnected(request: Request) -> None:
    """Returns when the client hangs up (the body is already read, so only the disconnect arrives)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _relay(
    call: ExecuteStream,
    first: executor_pb2.ExecuteEvent,
    stream_error: StreamErrorFrame,
    span: Span,
) -> AsyncIterator[bytes]:
    """One write per event, as it arrives; the turn's span ends with the stream."""
    try:
        yield frame(first.event.event_type, first.event.data)
        async for message in call:
            yield frame(message.event.event_type, message.event.data)
    except AgenticError as error:
        yield stream_error(error)
    finally:
        call.cancel()
        span.end()
