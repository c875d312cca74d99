"""Running a turn on the executor and answering the client: one JSON body, or the events relayed as SSE."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

import grpc
import orjson
from agentic.v1 import executor_pb2
from agentic_core.errors import AgenticError, RelayedError
from agentic_core.sse import frame
from agentic_runtime.grpc_errors import error_from_rpc
from fastapi import Request
from fastapi.responses import Response, StreamingResponse

from agentic_gateway.http import json_response
from agentic_gateway.metrics import REQUESTS, TURN_SECONDS

_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
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
    call = gateway.peers.executor.Execute(execute_request, timeout=gateway.settings.turn_timeout_seconds)
    messages = call.__aiter__()
    try:
        first = await messages.__anext__()
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
