"""gRPC Executor servicer: a thin adapter over `TurnRunner`."""

from __future__ import annotations

import grpc
from agentic.v1 import executor_pb2, executor_pb2_grpc

from agentic_executor.turn import TurnRunner


class ExecutorServicer(executor_pb2_grpc.ExecutorServicer):
    def __init__(self, runner: TurnRunner) -> None:
        self.runner = runner

    async def Execute(self, request: executor_pb2.ExecuteRequest, context: grpc.aio.ServicerContext):
        async for message in self.runner.run(request):
            yield message

    async def CountInputTokens(self, request: executor_pb2.ExecuteRequest, context: grpc.aio.ServicerContext):
        return await self.runner.count_input_tokens(request)
