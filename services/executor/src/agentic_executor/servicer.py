"""gRPC Executor servicer: a thin adapter over `TurnRunner` (Responses) and `MessagesTurns` (Anthropic Messages).

A failure is raised, never sent as a message: the ErrorInterceptor ends the
call with its status and the exact HTTP body in the trailing metadata.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, TypeAlias

import grpc
import orjson
from agentic.v1 import executor_pb2, executor_pb2_grpc
from agentic_core.errors import AgenticError, InvalidRequest
from agentic_runtime.tracing import context_from, tracer
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from agentic_executor.background import BackgroundTurns
from agentic_executor.chat_completions import ChatCompletionTurns
from agentic_executor.coalesce import coalesced
from agentic_executor.compact_endpoint import CompactEndpoint
from agentic_executor.messages import MessagesTurns
from agentic_executor.turn import TurnRunner

_tracer = tracer("agentic.executor")
_Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


def stream_event(event_type: str, sequence: int, data: bytes) -> executor_pb2.ExecuteEvent:
    return executor_pb2.ExecuteEvent(
        event=executor_pb2.StreamEvent(event_type=event_type, sequence_number=sequence, data=data)
    )


class ExecutorServicer(executor_pb2_grpc.ExecutorServicer):
    def __init__(
        self, runner: TurnRunner, background: BackgroundTurns | None = None, compact: CompactEndpoint | None = None
    ) -> None:
        self.runner = runner
        self.messages = MessagesTurns(runner)
        self.chat_completions = ChatCompletionTurns(runner)
        self.background = background
        self.compact = compact

    async def Execute(self, request: executor_pb2.ExecuteRequest, context: _Context) -> AsyncIterator[executor_pb2.ExecuteEvent]:
        # Each call runs in its own task: the span stays current for the whole turn, without a detach.
        span = _tracer.start_span("turn", context=context_from(context.invocation_metadata()), kind=SpanKind.SERVER)
        otel_context.attach(trace.set_span_in_context(span))
        try:
            async for message in coalesced(self._turn(request)):
                yield message
        finally:
            span.end()

    async def Respond(self, request: executor_pb2.ExecuteRequest, context: _Context) -> executor_pb2.ResponseJson:
        with _tracer.start_as_current_span("turn", context=context_from(context.invocation_metadata()),
                                           kind=SpanKind.SERVER):
            request.stream = False
            turn = self._turn(request)
            try:
                async for message in turn:  # a JSON turn yields exactly one message, its response
                    return executor_pb2.ResponseJson(response=message.response)
            finally:
                await turn.aclose()
        raise AgenticError("The turn ended without a result.")

    def _turn(self, request: executor_pb2.ExecuteRequest) -> AsyncGenerator[executor_pb2.ExecuteEvent, None]:
        if request.api == "messages":
            return self.messages.run(request)
        if request.api == "chat_completions":
            return self.chat_completions.run(request)
        return self._responses(request)

    async def CountInputTokens(self, request: executor_pb2.ExecuteRequest, context: _Context) -> executor_pb2.TokenCount:
        if request.api == "messages":
            return await self.messages.count_tokens(request)
        return await self.runner.count_input_tokens(request)

    async def StreamResponse(self, request: executor_pb2.ResponseRef, context: _Context) -> AsyncIterator[executor_pb2.ExecuteEvent]:
        async for message in coalesced(self._stored_events(request)):
            yield message

    async def _stored_events(self, request: executor_pb2.ResponseRef) -> AsyncIterator[executor_pb2.ExecuteEvent]:
        async for event in self._background().stream(request.principal, request.response_id, request.starting_after):
            yield stream_event(*event)

    async def CancelResponse(self, request: executor_pb2.ResponseRef, context: _Context) -> executor_pb2.ResponseJson:
        return executor_pb2.ResponseJson(response=await self._background().cancel(request.principal, request.response_id))

    async def Compact(self, request: executor_pb2.ExecuteRequest, context: _Context) -> executor_pb2.ResponseJson:
        if self.compact is None:
            raise InvalidRequest("Compaction is not available on this executor.", code="compaction_unavailable")
        with _tracer.start_as_current_span("compact", context=context_from(context.invocation_metadata()),
                                           kind=SpanKind.SERVER):
            return executor_pb2.ResponseJson(response=orjson.dumps(await self.compact.compact(request)))

    def _background(self) -> BackgroundTurns:
        if self.background is None:
            raise InvalidRequest("Background responses are not available on this executor.", param="background",
                                 code="unsupported_parameter")
        return self.background

    async def _responses(self, request: executor_pb2.ExecuteRequest) -> AsyncGenerator[executor_pb2.ExecuteEvent, None]:
        """A Responses turn: one `response` (JSON), or its public events (SSE); a background one is queued, and
        streamed from its events."""
        payload = _read_if_background(request.request_json)  # the turn reads the body once: this parse, or its own
        if not request.response_id and payload is not None and payload.get("background") is True:
            response_id, queued = await self._background().submit(request, payload)
            if not request.stream:
                yield executor_pb2.ExecuteEvent(response=orjson.dumps(queued))
                return
            async for event in self._background().stream(request.principal, response_id, -1):
                yield stream_event(*event)
            return
        if not request.stream:
            yield executor_pb2.ExecuteEvent(response=orjson.dumps(await self.runner.respond(request, payload)))
            return
        async for event in self.runner.stream(request, payload):
            yield stream_event(*event)


def _read_if_background(body: bytes) -> dict[str, Any] | None:
    """The body parsed, only when it mentions `background` (a cheap look first: most turns never ask for it);
    None too when it is no JSON object (the turn refuses it with its own error)."""
    if b'"background"' not in body:
        return None
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return payload if isinstance(payload, dict) else None
