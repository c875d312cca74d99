"""The one place gRPC errors are mapped: domain errors keep their public body; anything else is a bare INTERNAL."""

from __future__ import annotations

import logging

import grpc
import orjson
import pytest
from agentic.v1 import common_pb2, executor_pb2, executor_pb2_grpc
from agentic_core.errors import NotFound
from agentic_runtime.grpc.errors import error_from_rpc
from agentic_runtime.grpc.server import GrpcService, insecure_channel
from agentic_runtime.logs import JsonFormatter
from agentic_runtime.tls import transport_security


class Failing(executor_pb2_grpc.ExecutorServicer):
    async def Execute(self, request, context):
        if request.request_id == "domain":
            raise NotFound("No response found with id 'resp_x'.", param="previous_response_id")
        yield executor_pb2.ExecuteEvent(response=b"{}")
        raise RuntimeError("secret detail that must not leak")

    async def CountInputTokens(self, request, context):
        if request.request_id == "log":
            logging.getLogger("servicer").warning("a line of this call")
            return executor_pb2.TokenCount(input_tokens=1)
        if request.request_id == "long":  # a client's 10 KB id, quoted: more than gRPC's metadata limit
            raise NotFound(f"No response found with id '{'x' * 10_000}'.", param="y" * 10_000)
        raise NotFound("gone", param="model")


@pytest.fixture()
async def stub():
    service = GrpcService([], transport_security({}))
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


async def test_an_error_that_quotes_a_huge_id_still_arrives_as_itself(stub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.CountInputTokens(executor_pb2.ExecuteRequest(request_id="long"))
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    error = error_from_rpc(raised.value, "executor")
    assert error.http_status == 404 and error.message.startswith("No response found with id 'xxx")
    assert len(error.body()) < 8192


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(JsonFormatter("test"))
        self.lines: list[dict[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:  # formatted where the line is logged, as in the services
        self.lines.append(orjson.loads(self.format(record)))


async def test_a_calls_log_lines_name_its_principal(stub) -> None:
    principal = common_pb2.Principal(tenant="tenant-a", subject="alice", key_id="key_1234")
    lines, logger = _Lines(), logging.getLogger("servicer")
    logger.addHandler(lines)
    try:
        await stub.CountInputTokens(executor_pb2.ExecuteRequest(request_id="log", principal=principal))
    finally:
        logger.removeHandler(lines)
    [line] = lines.lines
    assert (line["tenant"], line["subject"], line["key_id"]) == ("tenant-a", "alice", "key_1234")
