"""gRPC Executor servicer: a thin adapter over `TurnRunner`."""

from __future__ import annotations

import grpc
from agentic.v1 import executor_pb2, executor_pb2_grpc
from agentic_runtime.tracing import context_from, tracer
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from agentic_executor.messages import MessagesTurns
from agentic_executor.turn import TurnRunner

_tracer = tracer("agentic.executor")


class ExecutorServicer(executor_pb2_grpc.ExecutorServicer):
    def __init__(self, runner: TurnRunner) -> None:
        self.runner = runner
        self.messages = MessagesTurns(runner)

    async def Execute(self, request: executor_pb2.ExecuteRequest, context: grpc.aio.ServicerContext):
        # Each call runs in its own task: the span stays current for the whole turn, without a detach.
        span = _tracer.start_span("turn", context=context_from(context.invocation_metadata()), kind=SpanKind.SERVER)
        otel_context.attach(trace.set_span_in_context(span))
        try:
            turns = self.messages.run(request) if request.api == "messages" else self.runner.run(request)
            async for message in turns:
                yield message
        finally:
            span.end()

    async def CountInputTokens(self, request: executor_pb2.ExecuteRequest, context: grpc.aio.ServicerContext):
        if request.api == "messages":
            return await self.messages.count_tokens(request)
        return await self.runner.count_input_tokens(request)
