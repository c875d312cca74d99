"""gRPC Usage servicer: batches of usage in, bucketed sums out (organization endpoints, quotas)."""

from __future__ import annotations

from typing import Any, TypeAlias

import grpc
from agentic.v1 import usage_pb2, usage_pb2_grpc

from agentic_state.usage_store import UsageStore

_Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


class UsageServicer(usage_pb2_grpc.UsageServicer):
    def __init__(self, store: UsageStore) -> None:
        self.store = store

    async def Record(self, request: usage_pb2.UsageBatch, context: _Context) -> usage_pb2.UsageRecorded:
        await self.store.record(request.entries)
        return usage_pb2.UsageRecorded()

    async def Query(self, request: usage_pb2.UsageQuery, context: _Context) -> usage_pb2.UsageRows:
        return usage_pb2.UsageRows(rows=await self.store.query(request))
