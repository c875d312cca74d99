"""The bridge as its own process: McpBridge and health on one gRPC port, `tools.exec.mcp` consumed, SIGTERM drains."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time

import pytest
from agentic.v1 import common_pb2, mcp_bridge_pb2, mcp_bridge_pb2_grpc
from agentic_core.tools.protocol import ToolCall
from agentic_local.processes import free_port
from agentic_mcp_bridge.consumer import DURABLE
from agentic_runtime.grpc.server import insecure_channel, is_serving
from agentic_runtime.nats import broker
from agentic_runtime.tls import transport_security
from agentic_runtime.tools.dispatch import ToolDispatcher
from agentic_runtime.tools.protocol import TOOLS_STREAM
from nats.js.errors import NotFoundError

from tests.support.fake_mcp_server import ROOT


@pytest.fixture()
async def bridge_process(infra, fake_mcp):
    port = free_port()
    env = {
        **os.environ,
        "AGENTIC_NATS_URL": infra["nats_url"],
        "AGENTIC_MCP_BRIDGE_HOST": "127.0.0.1",
        "AGENTIC_MCP_BRIDGE_PORT": str(port),
        "AGENTIC_MCP_BRIDGE_METRICS_PORT": "0",
        "AGENTIC_MCP_ALLOWED_HOSTS": fake_mcp.host,
        "AGENTIC_MCP_BRIDGE_ALLOW_HTTP": "true",
        "AGENTIC_MCP_BRIDGE_DRAIN_SECONDS": "5",
    }
    process = subprocess.Popen([sys.executable, "-m", "agentic_mcp_bridge"], env=env, cwd=ROOT)
    channel = insecure_channel(f"127.0.0.1:{port}")
    deadline = time.monotonic() + 30
    while not await is_serving(channel, timeout=0.5):
        assert process.poll() is None and time.monotonic() < deadline, "the bridge did not become ready"
        await asyncio.sleep(0.1)
    yield process, channel
    await channel.close()
    if process.poll() is None:
        process.kill()
        process.wait()
    client = await broker.connect(infra["nats_url"], "test-cleanup", transport_security({}))
    try:
        await client.jetstream().delete_consumer(TOOLS_STREAM.name, DURABLE)
    except NotFoundError:
        pass
    await client.drain()


async def test_the_bridge_process_lists_calls_and_drains_on_sigterm(bridge_process, fake_mcp, infra) -> None:
    process, channel = bridge_process
    stub = mcp_bridge_pb2_grpc.McpBridgeStub(channel)
    request = mcp_bridge_pb2.ListToolsRequest(
        principal=common_pb2.Principal(tenant="tenant-a"),
        server=mcp_bridge_pb2.McpServer(server_label="fake", server_url=fake_mcp.url), allowed_tools=["slow"],
    )
    assert [tool.name for tool in (await stub.ListTools(request, timeout=15)).tools] == ["slow"]

    client = await broker.connect(infra["nats_url"], "test-executor", transport_security({}))
    dispatcher = ToolDispatcher(client)
    await dispatcher.start()
    try:
        # A fresh id: a result stored by an earlier run (kept an hour) would answer the call unrun.
        call = ToolCall(call_id=f"resp_process/{secrets.token_hex(6)}", kind="mcp", tool="slow", arguments={"seconds": 1.0},
                        params={"server_label": "fake", "server_url": fake_mcp.url, "headers": {}},
                        deadline=time.time() + 20, tenant="tenant-a")
        pending = asyncio.create_task(dispatcher.call(call, timeout=20))
        while not fake_mcp.stats()["calls"]:
            await asyncio.sleep(0.05)
        process.send_signal(signal.SIGTERM)  # mid-call: readiness goes false, the call is finished first
        await asyncio.sleep(0.3)
        assert not await is_serving(channel, timeout=1)
        result = await pending
        assert result.status == "ok" and result.content == "slept 1.0"
        assert await asyncio.to_thread(process.wait, 15) == 0
    finally:
        await dispatcher.close()
        await client.drain()
