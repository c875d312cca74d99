"""Relaying a turn the executor runs: one JSON body, or its events as SSE; a failed turn raises its error.

The gateway's server span covers the whole Execute call: it ends once the JSON
is answered or the relayed stream ends.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from agentic.v1 import executor_pb2
from agentic_core.errors import AgenticError, RelayedError, ServiceUnavailable
from agentic_core.sse import frame
from agentic_runtime.tracing import context_from, tracer
from fastapi import Request
from fastapi.responses import Response
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from agentic_gateway.context import gateway_of
from agentic_gateway.executor_client import TurnStream
from agentic_gateway.http import json_response
from agentic_gateway.metrics import REQUESTS, TURN_SECONDS
from agentic_gateway.relay.keepalive import COMMENT_FRAME, KeepaliveStreamingResponse

_tracer = tracer("agentic.gateway")
_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
CLIENT_CLOSED_REQUEST = 499  # nginx's status for a client that left; never seen by that client
StreamErrorFrame = Callable[[AgenticError], bytes]


# What a stream still running when the gateway's drain bound passes ends with.
SHUTDOWN_CUT = ServiceUnavailable("The gateway shut down before this turn finished; it was not stored. Retry it.",
                                  code="server_shutting_down")


def openai_stream_error(error: AgenticError) -> bytes:
    return frame("error", orjson.dumps({"type": "error", "code": error.code, "message": error.message, "param": None}))


async def run_on_executor(
    request: Request,
    execute_request: executor_pb2.ExecuteRequest | executor_pb2.ResponseRef,
    label: str,
    stream_error: StreamErrorFrame = openai_stream_error,
    keepalive: bytes = COMMENT_FRAME,
) -> Response:
    """Errors before the first event raise `AgenticError` (the app's handlers shape them); later ones end the
    stream with `stream_error`'s frame; `keepalive` fills silences. A `ResponseRef` relays a background response's
    stored events."""
    # The turn's trace starts here (or continues the caller's `traceparent`) and crosses to the executor.
    span = _tracer.start_span(f"POST {request.url.path}", context=context_from(request.headers), kind=SpanKind.SERVER)
    relaying = False
    try:
        with trace.use_span(span):
            response = await _answer(request, execute_request, label, stream_error, keepalive, span)
        relaying = isinstance(response, KeepaliveStreamingResponse)
        return response
    finally:
        if not relaying:
            span.end()


async def _answer(
    request: Request,
    execute_request: executor_pb2.ExecuteRequest | executor_pb2.ResponseRef,
    label: str,
    stream_error: StreamErrorFrame,
    keepalive: bytes,
    span: Span,
) -> Response:
    if isinstance(execute_request, executor_pb2.ExecuteRequest) and not execute_request.stream:
        return await _answer_json(request, execute_request, label)
    gateway = gateway_of(request)
    started = time.perf_counter()
    # A failure at any message raises the executor's AgenticError (or a 503/504 of the peer's own).
    executor = gateway.peers.executor
    call = (executor.execute(execute_request) if isinstance(execute_request, executor_pb2.ExecuteRequest)
            else executor.stream_response(execute_request))
    first_message = asyncio.ensure_future(call.__anext__())
    if not await _answered_first(request, first_message, label):
        call.cancel()
        return Response(status_code=CLIENT_CLOSED_REQUEST)
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
    return KeepaliveStreamingResponse(_relay(call, first, stream_error, span), headers=headers,
                                      interval=gateway.settings.sse_keepalive_seconds, keepalive=keepalive,
                                      cut_frame=stream_error(SHUTDOWN_CUT))


async def _answer_json(request: Request, execute_request: executor_pb2.ExecuteRequest, label: str) -> Response:
    """A JSON turn: one unary call (`Respond`), stopped if the client leaves before the answer."""
    gateway = gateway_of(request)
    started = time.perf_counter()
    reply = asyncio.ensure_future(gateway.peers.executor.respond(execute_request))
    if not await _answered_first(request, reply, label):
        return Response(status_code=CLIENT_CLOSED_REQUEST)
    response = reply.result()  # a failed turn raises its AgenticError here
    REQUESTS.labels(route=label, status=200).inc()
    TURN_SECONDS.labels(mode="json").observe(time.perf_counter() - started)
    return json_response(response)


async def _answered_first(request: Request, answer: asyncio.Future[Any], label: str) -> bool:
    """Waits for `answer` or the client's hang-up; a client that left first stops the turn rather than spend the
    model on nobody (False)."""
    hang_up = asyncio.ensure_future(_disconnected(request))
    await asyncio.wait({answer, hang_up}, return_when=asyncio.FIRST_COMPLETED)
    if not answer.done():
        answer.cancel()
        REQUESTS.labels(route=label, status=CLIENT_CLOSED_REQUEST).inc()
        return False
    hang_up.cancel()
    return True


def frames_of(message: executor_pb2.ExecuteEvent) -> bytes:
    """A stream message's SSE frames: one event, or several that were ready at once (one write)."""
    if message.WhichOneof("payload") == "events":
        return b"".join(frame(event.event_type, event.data) for event in message.events.events)
    return frame(message.event.event_type, message.event.data)


async def _disconnected(request: Request) -> None:
    """Returns when the client hangs up (the body is already read, so only the disconnect arrives)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _relay(
    call: TurnStream,
    first: executor_pb2.ExecuteEvent,
    stream_error: StreamErrorFrame,
    span: Span,
) -> AsyncIterator[bytes]:
    """One write per event, as it arrives; the turn's span ends with the stream."""
    try:
        yield frames_of(first)
        async for message in call:
            yield frames_of(message)
    except AgenticError as error:
        yield stream_error(error)
    finally:
        call.cancel()
        span.end()
