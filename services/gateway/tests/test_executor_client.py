"""The gateway's executor client against a real gRPC server: each RPC takes and returns what it says, a turn's
calls have the turn's deadline and the others the peer's (to a second of gRPC's clock), and the executor's errors
arrive as themselves."""

from __future__ import annotations

from typing import Any

import pytest
from agentic.v1 import common_pb2, executor_pb2, executor_pb2_grpc
from agentic_core.errors import AgenticError, NotFound
from agentic_gateway.executor_client import ExecutorClient

TURN_TIMEOUT_SECONDS = 600.0
PRINCIPAL = common_pb2.Principal(tenant="team", subject="me")


class Executor(executor_pb2_grpc.ExecutorServicer):
    """Answers each RPC with what it was sent, and keeps the deadline each call came with."""

    def __init__(self) -> None:
        self.deadlines: dict[str, float] = {}
        self.requests: dict[str, Any] = {}

    def _seen(self, name: str, request: Any, context: Any) -> None:
        self.deadlines[name] = context.time_remaining()
        self.requests[name] = request

    async def Execute(self, request: executor_pb2.ExecuteRequest, context: Any) -> Any:
        self._seen("Execute", request, context)
        for number in range(3):
            yield executor_pb2.ExecuteEvent(event=executor_pb2.StreamEvent(
                event_type="response.output_text.delta", sequence_number=number, data=b"{}"))

    async def Respond(self, request: executor_pb2.ExecuteRequest, context: Any) -> executor_pb2.ResponseJson:
        self._seen("Respond", request, context)
        return executor_pb2.ResponseJson(response=b'{"object":"response"}')

    async def CountInputTokens(self, request: executor_pb2.ExecuteRequest, context: Any) -> executor_pb2.TokenCount:
        self._seen("CountInputTokens", request, context)
        return executor_pb2.TokenCount(input_tokens=len(request.request_json), method="estimate")

    async def StreamResponse(self, request: executor_pb2.ResponseRef, context: Any) -> Any:
        self._seen("StreamResponse", request, context)
        yield executor_pb2.ExecuteEvent(event=executor_pb2.StreamEvent(
            event_type="response.completed", sequence_number=request.starting_after + 1, data=b"{}"))

    async def CancelResponse(self, request: executor_pb2.ResponseRef, context: Any) -> executor_pb2.ResponseJson:
        self._seen("CancelResponse", request, context)
        if request.response_id != "resp_known":
            raise NotFound(f"No response found with id '{request.response_id}'.", param="response_id")
        return executor_pb2.ResponseJson(response=b'{"status":"cancelled"}')

    async def Compact(self, request: executor_pb2.ExecuteRequest, context: Any) -> executor_pb2.ResponseJson:
        self._seen("Compact", request, context)
        return executor_pb2.ResponseJson(response=b'{"object":"response.compaction"}')


@pytest.fixture()
async def executor(serve: Any) -> tuple[ExecutorClient, Executor]:
    servicer = Executor()
    peer = await serve("executor", lambda server: executor_pb2_grpc.add_ExecutorServicer_to_server(servicer, server))
    return ExecutorClient(peer, TURN_TIMEOUT_SECONDS), servicer


async def test_each_rpc_answers_what_the_route_relays(executor: tuple[ExecutorClient, Executor]) -> None:
    client, servicer = executor
    assert await client.serving(2.0)
    turn = executor_pb2.ExecuteRequest(request_json=b'{"model":"m"}', principal=PRINCIPAL, stream=True)
    events = [message.event.sequence_number async for message in client.execute(turn)]
    assert events == [0, 1, 2]
    assert await client.respond(turn) == b'{"object":"response"}'
    count = await client.count_input_tokens(PRINCIPAL, b'{"messages":[]}', api="messages")
    assert (count.input_tokens, count.method) == (15, "estimate")
    sent = servicer.requests["CountInputTokens"]
    assert (sent.api, sent.principal.tenant, sent.request_json) == ("messages", "team", b'{"messages":[]}')
    assert await client.compact(PRINCIPAL, b"{}") == b'{"object":"response.compaction"}'
    assert await client.cancel_response(PRINCIPAL, "resp_known") == b'{"status":"cancelled"}'
    ref = executor_pb2.ResponseRef(principal=PRINCIPAL, response_id="resp_known", starting_after=4)
    assert [message.event.sequence_number async for message in client.stream_response(ref)] == [5]


async def test_a_turn_has_the_turn_deadline_and_a_lookup_the_peer_one(executor: tuple[ExecutorClient, Executor]) -> None:
    client, servicer = executor
    turn = executor_pb2.ExecuteRequest(request_json=b"{}", principal=PRINCIPAL)
    [_ async for _ in client.execute(turn)]
    await client.respond(turn)
    await client.compact(PRINCIPAL, b"{}")
    [_ async for _ in client.stream_response(executor_pb2.ResponseRef(principal=PRINCIPAL, response_id="resp_known"))]
    await client.count_input_tokens(PRINCIPAL, b"{}")
    await client.cancel_response(PRINCIPAL, "resp_known")
    for generating in ("Execute", "Respond", "Compact", "StreamResponse"):
        assert client.peer.timeout < servicer.deadlines[generating] <= TURN_TIMEOUT_SECONDS + 1, generating
    for lookup in ("CountInputTokens", "CancelResponse"):
        assert servicer.deadlines[lookup] <= client.peer.timeout + 1, lookup


async def test_the_executors_error_arrives_with_its_status_and_body(executor: tuple[ExecutorClient, Executor]) -> None:
    client, _ = executor
    with pytest.raises(AgenticError) as raised:
        await client.cancel_response(PRINCIPAL, "resp_unknown")
    assert raised.value.http_status == 404 and raised.value.param == "response_id"
    assert "resp_unknown" in raised.value.message
