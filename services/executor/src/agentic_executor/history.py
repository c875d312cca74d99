"""Where every history is read: the chain a request continues (`previous_response_id`) or its conversation's items.

A turn that will write to a conversation takes its lease with the read (one call: nobody else's turn lands in
between); a token count, a compaction or a background submission only reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentic.v1 import common_pb2
from agentic_core.responses.history import StoredHistory
from agentic_runtime.state.client import StateClient


@dataclass(frozen=True, slots=True)
class ConversationLease:
    token: str
    seconds: float       # how long it holds without a heartbeat
    wait_seconds: float  # how long to wait for another turn's lease to end


class History:
    def __init__(self, state: StateClient) -> None:
        self.state = state

    async def read(self, principal: common_pb2.Principal, *, previous_response_id: str | None = None,
                   conversation_id: str | None = None, lease: ConversationLease | None = None) -> StoredHistory:
        """The items the model reads before the request's input, oldest first (as stored: parsed only by a step
        that reads them); none for a fresh turn. Another tenant's response or conversation is the state service's
        404."""
        stored = StoredHistory()
        if previous_response_id:
            stored = await self.state.rehydrate(principal, previous_response_id)
        elif conversation_id and lease is not None:
            stored = await self.state.begin_conversation_turn(principal, conversation_id, lease.token, lease.seconds,
                                                              lease.wait_seconds)
        elif conversation_id:
            stored = await self.state.conversation_history(principal, conversation_id)
        return stored
