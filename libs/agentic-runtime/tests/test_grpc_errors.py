"""The one place gRPC errors are mapped: domain errors keep their public body; anything else is a bare INTERNAL."""

from __future__ import annotations

import grpc
import pytest
from agentic.v1 import executor_pb2, executor_pb2_grpc
from agentic_core.errors import NotFound
from agentic_runtime.grpc_errors import error_from_rpc
from agentic_runtime.grpc_server import GrpcService, insecure_channel


class Failing(executor_pb2_grpc.ExecutorServicer):
    async def Execute(self, request, context):
        if request.request_id == "domain":
            raise NotFound("No response found with id 'resp_x'.", param="previous_response_id")
        yield executor_pb2.ExecuteEvent(response=b"{}")
        raise RuntimeError("secret detail that must not leak")

    async def CountInputTokens(self, request, context):
        raise NotFound("gone", param="model")


@pytest.fixture()
async def stub():
    service = GrpcService([])
    service.add(lambda server: executor_pb2_grpc.add_ExecutorServicer_to_server(Failing(), server))
    port = await service.start("127.0.0.1", 0)
    channel = insecure_channel(f"127.0.0.1:{port}")
    yield executor_pb2_grpc.ExecutorStub(channel)
    await channel.close()
    await service.drain(0)


async def test_a_domain_error_keeps_its_status_and_body(stub) -> None:
    for call in (stub.CountInputTokens(executor_pb2.ExecuteRequest()),
                 _drain(stub.Execute(executor_pb2.ExecuteRequest(request_id="domain")))):
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await call
        assert raised.value.code() == grpc.StatusCode.NOT_FOUND
        error = error_from_rpc(raised.value, "executor")
        assert error.http_status == 404 and error.param in ("model", "previous_response_id")


async def test_an_unexpected_error_is_internal_without_its_details(stub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await _drain(stub.Execute(executor_pb2.ExecuteRequest(request_id="boom")))
    assert raised.value.code() == grpc.StatusCode.INTERNAL
    assert "secret" not in (raised.value.details() or "")
    assert error_from_rpc(raised.value, "executor").http_status == 500


async def _drain(call) -> None:
    async for _ in call:
        pass
