"""Servers the operator configures (`AGENTIC_MCP_BRIDGE_SERVERS`): stdio processes and URLs, named by `connector_id`."""

from __future__ import annotations

import sys

import orjson
import pytest
from agentic_mcp_bridge.bridge import McpBridge
from agentic_mcp_bridge.settings import McpBridgeSettings

from tests.support.fake_mcp_server import DEFAULT_TOKEN, ROOT

STDIO_SERVER = {"command": sys.executable, "args": ["-m", "tests.support.fake_mcp_server", "--stdio", "--page-size", "2"],
                "cwd": str(ROOT)}


def operator_settings(servers: dict) -> McpBridgeSettings:
    # No allowlist and https only: operator servers do not go through the host policy.
    return McpBridgeSettings(servers=orjson.dumps(servers).decode(), list_tools_timeout_seconds=20.0)


async def test_a_stdio_server_lists_its_tools_and_runs_calls(make_bridge) -> None:
    bridge = make_bridge(operator_settings({"local-files": STDIO_SERVER}))
    target = await bridge.target(server_label="files", server_url=None, connector_id="local-files", headers={})
    tools = await bridge.list_tools("tenant-a", target, [])
    assert [tool.name for tool in tools] == ["echo", "add", "structured", "fail", "slow", "grow", "whoami"]
    result = await bridge.call_tool("tenant-a", target, "add", {"a": 2, "b": 3}, timeout=10)
    assert not result.is_error and result.content[0].text == "5"


async def test_each_tenant_gets_its_own_stdio_process(make_bridge) -> None:
    bridge = make_bridge(operator_settings({"local-files": STDIO_SERVER}))
    target = await bridge.target(server_label="files", server_url=None, connector_id="local-files", headers={})
    for tenant in ("tenant-a", "tenant-b"):
        assert not (await bridge.call_tool(tenant, target, "echo", {"text": tenant}, timeout=20)).is_error
    assert sorted(key.tenant for key in bridge.pool._sessions) == ["tenant-a", "tenant-b"]


async def test_a_stdio_server_that_cannot_start_fails_the_listing(make_bridge) -> None:
    from agentic_mcp_bridge.errors import McpServerFailed

    bridge = make_bridge(operator_settings({"broken": {"command": "/nonexistent/mcp-server"}}))
    target = await bridge.target(server_label="broken", server_url=None, connector_id="broken", headers={})
    with pytest.raises(McpServerFailed) as raised:
        await bridge.list_tools("tenant-a", target, [])
    assert raised.value.http_status == 424 and "could not be started" in raised.value.message


async def test_an_operator_url_bypasses_the_host_policy_and_sends_its_headers(fake_mcp, make_bridge) -> None:
    configured = {"url": fake_mcp.url, "headers": {"Authorization": f"Bearer {DEFAULT_TOKEN}"}}
    bridge = make_bridge(operator_settings({"internal": configured}))
    target = await bridge.target(server_label="internal", server_url=None, connector_id="internal", headers={})
    result = await bridge.call_tool("tenant-a", target, "whoami", {}, timeout=10)
    assert not result.is_error


async def test_request_headers_override_the_operators_for_that_request(fake_mcp, make_bridge) -> None:
    configured = {"url": fake_mcp.url, "headers": {"Authorization": f"Bearer {DEFAULT_TOKEN}"}}
    bridge = make_bridge(operator_settings({"internal": configured}))
    target = await bridge.target(server_label="internal", server_url=None, connector_id="internal",
                                 headers={"authorization": "Bearer not-the-token"})
    result = await bridge.call_tool("tenant-a", target, "whoami", {}, timeout=10)
    assert result.is_error and "unauthorized" in result.content[0].text


async def test_an_operator_url_may_name_the_older_sse_transport(fake_mcp, make_bridge) -> None:
    bridge = make_bridge(operator_settings({"legacy": {"url": fake_mcp.sse_url, "transport": "sse"}}))
    target = await bridge.target(server_label="legacy", server_url=None, connector_id="legacy", headers={})
    assert len(await bridge.list_tools("tenant-a", target, [])) == 7


@pytest.mark.parametrize(
    "servers",
    ["not json", '{"x": {"url": 3}}', '{"x": {"command": "a", "shell": true}}', '{"x": {}}', "[1]"],
)
def test_a_bad_server_configuration_stops_the_bridge_at_start(servers: str) -> None:
    with pytest.raises(ValueError, match="AGENTIC_MCP_BRIDGE_SERVERS"):
        McpBridge(McpBridgeSettings(servers=servers))
