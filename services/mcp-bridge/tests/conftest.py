"""Fixtures of the bridge's tests: the fake MCP server as a process, bridges allowlisting it, McpBridge over gRPC."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from agentic.v1 import mcp_bridge_pb2_grpc
from agentic_mcp_bridge.bridge import McpBridge
from agentic_mcp_bridge.servicer import SERVICE_NAME, McpBridgeServicer
from agentic_mcp_bridge.settings import McpBridgeSettings
from agentic_runtime.grpc.server import GrpcService, insecure_channel
from agentic_runtime.tls import transport_security

from tests.support.fake_mcp_server import FakeMcpProcess

PAGE_SIZE = 2  # seven tools: four pages


@pytest.fixture(scope="session")
def fake_mcp_server() -> Iterator[FakeMcpProcess]:
    fake = FakeMcpProcess(page_size=PAGE_SIZE).start()
    yield fake
    fake.stop()


@pytest.fixture()
def fake_mcp(fake_mcp_server: FakeMcpProcess) -> FakeMcpProcess:
    """The fake MCP server with its counters and grown tools reset for this test."""
    fake_mcp_server.reset()
    return fake_mcp_server


@pytest.fixture()
def bridge_settings() -> Callable[..., McpBridgeSettings]:
    """`bridge_settings(fake, **overrides)`: settings allowlisting `fake` (when given), http allowed, short timeouts."""

    def build(fake: FakeMcpProcess | None = None, **overrides: Any) -> McpBridgeSettings:
        values: dict[str, Any] = {"allow_http": True, "list_tools_timeout_seconds": 10.0, "call_timeout_seconds": 10.0}
        if fake is not None:
            values["AGENTIC_MCP_ALLOWED_HOSTS"] = fake.host
        values.update(overrides)
        return McpBridgeSettings(**values)

    return build


@pytest.fixture()
async def make_bridge() -> AsyncIterator[Callable[..., McpBridge]]:
    """`make_bridge(settings, resolver=...)`: started bridges, closed after the test."""
    bridges: list[McpBridge] = []

    def make(settings: McpBridgeSettings, **options: Any) -> McpBridge:
        bridge = McpBridge(settings, **options)
        bridge.start()
        bridges.append(bridge)
        return bridge

    yield make
    for bridge in bridges:
        await bridge.close()


@dataclass
class GrpcBridge:
    bridge: McpBridge
    stub: mcp_bridge_pb2_grpc.McpBridgeStub


@pytest.fixture()
async def serve_grpc() -> AsyncIterator[Callable[[McpBridge], Any]]:
    """`await serve_grpc(bridge)`: McpBridge over a real gRPC server on a free port, and a stub to it."""
    running: list[tuple[GrpcService, grpc.aio.Channel]] = []

    async def serve(bridge: McpBridge) -> GrpcBridge:
        service = GrpcService([SERVICE_NAME], transport_security({}))
        service.add(McpBridgeServicer(bridge).register)
        port = await service.start("127.0.0.1", 0)
        await service.set_serving(True)
        channel = insecure_channel(f"127.0.0.1:{port}")
        running.append((service, channel))
        return GrpcBridge(bridge, mcp_bridge_pb2_grpc.McpBridgeStub(channel))

    yield serve
    for service, channel in running:
        await channel.close()
        await service.drain(0)
