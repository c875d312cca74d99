"""The executor's view of the state service."""

from __future__ import annotations

import asyncio
import time

import grpc
from agentic.v1 import common_pb2, state_pb2, state_pb2_grpc
from agentic_core.errors import AgenticError
from agentic_runtime.grpc_errors import error_from_rpc
from agentic_runtime.tracing import carrier

_LOCK_RETRY_SECONDS = 0.05


class StateClient:
    def __init__(self, channel: grpc.aio.Channel, timeout_seconds: float) -> None:
        self.stub = state_pb2_grpc.StateStub(channel)
        self.timeout = timeout_seconds

    async def _call(self, method, request):
        try:
            return await method(request, timeout=self.timeout, metadata=tuple(carrier().items()))
        except grpc.aio.AioRpcError as exc:
            raise error_from_rpc(exc, "state") from None

    async def rehydrate(self, principal: common_pb2.Principal, previous_response_id: str) -> list[bytes]:
        history = await self._call(
            self.stub.Rehydrate, state_pb2.RehydrateRequest(principal=principal, previous_response_id=previous_response_id)
        )
        return list(history.items)

    async def conversation_history(self, principal: common_pb2.Principal, conversation_id: str) -> list[bytes]:
        history = await self._call(
            self.stub.GetConversationHistory, state_pb2.ConversationRef(principal=principal, conversation_id=conversation_id)
        )
        return list(history.items)

    async def begin_conversation_turn(
        self, principal: common_pb2.Principal, conversation_id: str, lease_token: str, lease_seconds: float, wait_seconds: float
    ) -> list[bytes]:
        """Take the conversation's lease, waiting up to `wait_seconds` for a running turn to finish."""
        deadline = time.monotonic() + wait_seconds
        request = state_pb2.BeginConversationTurnRequest(
            principal=principal, conversation_id=conversation_id, lease_token=lease_token, lease_seconds=lease_seconds
        )
        while True:
            try:
                turn = await self._call(self.stub.BeginConversationTurn, request)
                return list(turn.items)
            except AgenticError as error:
                if error.code != "conversation_locked" or time.monotonic() >= deadline:
                    raise
            await asyncio.sleep(_LOCK_RETRY_SECONDS)

    async def end_conversation_turn(self, principal: common_pb2.Principal, conversation_id: str, lease_token: str) -> None:
        await self._call(
            self.stub.EndConversationTurn,
            state_pb2.EndConversationTurnRequest(principal=principal, conversation_id=conversation_id, lease_token=lease_token),
        )

    async def persist_turn(self, request: state_pb2.PersistTurnRequest) -> None:
        await self._call(self.stub.PersistTurn, request)
