"""llm-d's view of the state service: load a chain's history, store a split turn."""

from __future__ import annotations

import grpc
from agentic.v1 import common_pb2, state_pb2, state_pb2_grpc
from agentic_runtime.grpc_errors import error_from_rpc


class StateClient:
    def __init__(self, channel: grpc.aio.Channel, timeout_seconds: float) -> None:
        self.stub = state_pb2_grpc.StateStub(channel)
        self.timeout = timeout_seconds

    async def rehydrate(self, principal: common_pb2.Principal, previous_response_id: str) -> list[bytes]:
        try:
            history = await self.stub.Rehydrate(
                state_pb2.RehydrateRequest(principal=principal, previous_response_id=previous_response_id), timeout=self.timeout
            )
        except grpc.aio.AioRpcError as exc:
            raise error_from_rpc(exc, "state") from None
        return list(history.items)

    async def persist_split_turn(self, turn: state_pb2.PersistTurnRequest, digest: str) -> bytes | None:
        """None when stored now; the stored response when an identical persist stored it before."""
        try:
            reply = await self.stub.PersistSplitTurn(state_pb2.PersistSplitTurnRequest(turn=turn, digest=digest), timeout=self.timeout)
        except grpc.aio.AioRpcError as exc:
            raise error_from_rpc(exc, "state") from None
        return reply.response if reply.replayed else None
