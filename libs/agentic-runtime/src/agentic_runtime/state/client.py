"""The state service as its clients (executor, llm-d) use it: tenant-scoped calls through one `Peer`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from agentic.v1 import common_pb2, state_pb2, state_pb2_grpc
from agentic_core.errors import AgenticError
from agentic_core.responses.history import StoredHistory

from agentic_runtime.grpc.client import Peer
from agentic_runtime.settings import TransportSecuritySettings

_LOCK_RETRY_SECONDS = 0.05


class StateClient:
    def __init__(self, address: str, timeout_seconds: float, security: TransportSecuritySettings) -> None:
        self.peer = Peer("state", address, timeout_seconds, security)
        self.stub = state_pb2_grpc.StateStub(self.peer.channel)

    async def serving(self, timeout: float) -> bool:
        return await self.peer.serving(timeout)

    async def close(self) -> None:
        await self.peer.close()

    async def rehydrate(self, principal: common_pb2.Principal, previous_response_id: str) -> StoredHistory:
        history = await self.peer.call(
            self.stub.Rehydrate, state_pb2.RehydrateRequest(principal=principal, previous_response_id=previous_response_id)
        )
        return StoredHistory(history.items, history.model_views)

    async def conversation_history(self, principal: common_pb2.Principal, conversation_id: str) -> StoredHistory:
        history = await self.peer.call(
            self.stub.GetConversationHistory, state_pb2.ConversationRef(principal=principal, conversation_id=conversation_id)
        )
        return StoredHistory(history.items, history.model_views)

    async def begin_conversation_turn(
        self, principal: common_pb2.Principal, conversation_id: str, lease_token: str, lease_seconds: float, wait_seconds: float
    ) -> StoredHistory:
        """Take the conversation's lease, waiting up to `wait_seconds` for a running turn to finish."""
        deadline = time.monotonic() + wait_seconds
        request = state_pb2.BeginConversationTurnRequest(
            principal=principal, conversation_id=conversation_id, lease_token=lease_token, lease_seconds=lease_seconds
        )
        while True:
            try:
                turn = await self.peer.call(self.stub.BeginConversationTurn, request)
                return StoredHistory(turn.items, turn.model_views)
            except AgenticError as error:
                if error.code != "conversation_locked" or time.monotonic() >= deadline:
                    raise
            await asyncio.sleep(_LOCK_RETRY_SECONDS)

    async def renew_conversation_turn(
        self, principal: common_pb2.Principal, conversation_id: str, lease_token: str, lease_seconds: float
    ) -> None:
        await self.peer.call(self.stub.RenewConversationTurn, state_pb2.BeginConversationTurnRequest(
            principal=principal, conversation_id=conversation_id, lease_token=lease_token, lease_seconds=lease_seconds))

    async def end_conversation_turn(self, principal: common_pb2.Principal, conversation_id: str, lease_token: str) -> None:
        await self.peer.call(
            self.stub.EndConversationTurn,
            state_pb2.EndConversationTurnRequest(principal=principal, conversation_id=conversation_id, lease_token=lease_token),
        )

    async def persist_turn(self, request: state_pb2.PersistTurnRequest) -> None:
        await self.peer.call(self.stub.PersistTurn, request)

    async def persist_split_turn(self, turn: state_pb2.PersistTurnRequest, digest: str) -> bytes | None:
        """None when stored now; the stored response when an identical persist stored it before."""
        reply = await self.peer.call(self.stub.PersistSplitTurn, state_pb2.PersistSplitTurnRequest(turn=turn, digest=digest))
        return reply.response if reply.replayed else None

    async def get_response(self, principal: common_pb2.Principal, response_id: str) -> bytes:
        stored: state_pb2.StoredResponse = await self.peer.call(
            self.stub.GetResponse, state_pb2.GetResponseRequest(principal=principal, response_id=response_id))
        return stored.response

    # Background responses: the row a queued or running turn is seen through until it is stored.

    async def create_background(self, principal: common_pb2.Principal, response_id: str,
                                response: bytes) -> state_pb2.BackgroundState:
        """The queued response's row."""
        return await self._update(self.stub.CreateBackground, principal, response_id, response=response)

    async def claim_background(self, principal: common_pb2.Principal, response_id: str) -> state_pb2.BackgroundState:
        """queued → in_progress (the caller runs it); in_progress → failed (its executor was lost)."""
        return await self._update(self.stub.ClaimBackground, principal, response_id)

    async def finish_background(self, principal: common_pb2.Principal, response_id: str, status: str,
                                response: bytes) -> state_pb2.BackgroundState:
        """The final status and response object, unless the row already ended."""
        return await self._update(self.stub.FinishBackground, principal, response_id, status=status, response=response)

    async def cancel_background(self, principal: common_pb2.Principal, response_id: str) -> state_pb2.BackgroundState:
        """queued → cancelled; in_progress → cancel requested; an ended response stays as it is."""
        return await self._ref(self.stub.CancelBackground, principal, response_id)

    async def get_background(self, principal: common_pb2.Principal, response_id: str) -> state_pb2.BackgroundState:
        return await self._ref(self.stub.GetBackground, principal, response_id)

    async def _update(self, method: Callable[..., Awaitable[state_pb2.BackgroundState]], principal: common_pb2.Principal,
                      response_id: str, status: str = "", response: bytes = b"") -> state_pb2.BackgroundState:
        return await self.peer.call(method, state_pb2.BackgroundUpdate(
            principal=principal, response_id=response_id, status=status, response=response))

    async def _ref(self, method: Callable[..., Awaitable[state_pb2.BackgroundState]], principal: common_pb2.Principal,
                   response_id: str) -> state_pb2.BackgroundState:
        return await self.peer.call(method, state_pb2.BackgroundRef(principal=principal, response_id=response_id))
