"""The executor as the gateway calls it: one method per RPC, over one `Peer` (its channel, spread over the
executor's replicas; its default deadline; a failed call raised as the domain error it stands for). The calls that
run a turn or a model generation take the turn's deadline, `AGENTIC_GATEWAY_TURN_TIMEOUT_SECONDS`."""

from __future__ import annotations

from agentic.v1 import common_pb2, executor_pb2, executor_pb2_grpc
from agentic_runtime.grpc.client import Peer, ReplyStream

TurnStream = ReplyStream[executor_pb2.ExecuteEvent]


class ExecutorClient:
    def __init__(self, peer: Peer, turn_timeout_seconds: float) -> None:
        self.peer = peer
        self.stub = executor_pb2_grpc.ExecutorStub(peer.channel)
        self.turn_timeout_seconds = turn_timeout_seconds

    async def serving(self, timeout: float) -> bool:
        return await self.peer.serving(timeout)

    async def close(self) -> None:
        await self.peer.close()

    def execute(self, request: executor_pb2.ExecuteRequest) -> TurnStream:
        """A turn's messages as the executor sends them: its events, or, for a JSON turn, one `response`."""
        stream: TurnStream = self.peer.stream(self.stub.Execute, request, timeout=self.turn_timeout_seconds)
        return stream

    async def respond(self, request: executor_pb2.ExecuteRequest) -> bytes:
        """A JSON turn (`stream` false) in one unary call: the response object."""
        reply: executor_pb2.ResponseJson = await self.peer.call(self.stub.Respond, request,
                                                                timeout=self.turn_timeout_seconds)
        return reply.response

    def stream_response(self, ref: executor_pb2.ResponseRef) -> TurnStream:
        """A background response's events after `ref.starting_after` (-1: all), then the live ones to its end."""
        stream: TurnStream = self.peer.stream(self.stub.StreamResponse, ref, timeout=self.turn_timeout_seconds)
        return stream

    async def count_input_tokens(self, principal: common_pb2.Principal, body: bytes,
                                 api: str = "") -> executor_pb2.TokenCount:
        """The input tokens of a create body (`api`: "" for Responses, "messages" for Anthropic's), history
        included, and how they were counted (`tokenizer` or `estimate`)."""
        count: executor_pb2.TokenCount = await self.peer.call(
            self.stub.CountInputTokens, executor_pb2.ExecuteRequest(request_json=body, principal=principal, api=api))
        return count

    async def compact(self, principal: common_pb2.Principal, body: bytes) -> bytes:
        """`POST /v1/responses/compact`: the `response.compaction` object. The model writes the summary, so the
        call has a turn's deadline."""
        reply: executor_pb2.ResponseJson = await self.peer.call(
            self.stub.Compact, executor_pb2.ExecuteRequest(request_json=body, principal=principal),
            timeout=self.turn_timeout_seconds)
        return reply.response

    async def cancel_response(self, principal: common_pb2.Principal, response_id: str) -> bytes:
        """Cancels a background response (idempotent, from any replica): the response in its final state."""
        reply: executor_pb2.ResponseJson = await self.peer.call(
            self.stub.CancelResponse, executor_pb2.ResponseRef(principal=principal, response_id=response_id))
        return reply.response
