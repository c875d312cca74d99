"""Running a turn on the executor and answering the client: one JSON body, or the events relayed as SSE."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import grpc
import orjson
from agentic.v1 import executor_pb2
from agentic_core.errors import AgenticError, RelayedError
from agentic_core.sse import frame
from agentic_runtime.grpc_errors import error_from_rpc
from agentic_runtime.tracing import carrier, context_from, tracer
from fastapi import Request
from fastapi.responses import Response, StreamingResponse
from opentelemetry.trace import SpanKind

from agentic_gateway.http import json_response
from agentic_gateway.metrics import REQUESTS, TURN_SECONDS

_tracer = tracer("agentic.gateway")
_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
CLIENT_CLOSED_REQUEST = 499  # nginx's status for a client that left; never seen by that client
StreamErrorFrame = Callable[[AgenticError], bytes]


def openai_stream_error(error: AgenticError) -> bytes:
    return frame("error", orjson.dumps({"type": "error", "code": error.code, "message": error.message, "param": None}))


async def run_on_executor(
    request: Request,
    execute_request: executor_pb2.ExecuteRequest,
    label: str,
    stream_error: StreamErrorFrame = openai_stream_error,
) -> Response:
    """Errors before the first event raise `AgenticError` (the caller shapes them); in-band errors are relayed as sent."""
    gateway = request.app.state.gateway
    started = time.perf_counter()
    # The turn's trace starts here (or continues the caller's `traceparent`) and crosses to the executor.
    with _tracer.start_as_current_span(f"POST {request.url.path}", context=context_from(request.headers),
                                       kind=SpanKind.SERVER):
        metadata = tuple(carrier().items())
    call = gateway.peers.executor.Execute(execute_request, timeout=gateway.settings.turn_timeout_seconds,
                                          metadata=metadata)
    messages = call.__aiter__()
    first_message = asyncio.ensure_future(messages.__anext__())
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
    except grpc.aio.AioRpcError as exc:
        raise error_from_rpc(exc, "executor") from None
    kind = first.WhichOneof("payload")
    if kind == "error":
        REQUESTS.labels(route=label, status=first.error.http_status).inc()
        return Response(content=first.error.body, status_code=first.error.http_status, media_type="application/json")
    REQUESTS.labels(route=label, status=200).inc()
    if kind == "response":
        TURN_SECONDS.labels(mode="json").observe(time.perf_counter() - started)
        return json_response(first.response)
    TURN_SECONDS.labels(mode="stream").observe(time.perf_counter() - started)
    headers = {**_SSE_HEADERS, "x-request-id": execute_request.request_id}
    return StreamingResponse(_relay(call, messages, first, stream_error), media_type="text/event-stream", headers=headers)


async def _disconnected(request: Request) -> None:
    """Returns when the client hangs up (the body is already read, so only the disconnect arrives)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _relay(
    call, messages: AsyncIterator[executor_pb2.ExecuteEvent], first: executor_pb2.ExecuteEvent, stream_error: StreamErrorFrame
) -> AsyncIterator[bytes]:
    """One write per event, as it arrives."""
    try:
        yield frame(first.event.event_type, first.event.data)
        async for message in messages:
            if message.WhichOneof("payload") == "event":
                yield frame(message.event.event_type, message.event.data)
    except grpc.aio.AioRpcError as exc:
        yield stream_error(error_from_rpc(exc, "executor"))
    finally:
        call.cancel()
