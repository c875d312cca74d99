"""McpBridge.ListTools over real gRPC against a real MCP server: pages, filter, cache, invalidation, failures."""

from __future__ import annotations

import asyncio
import contextlib

import grpc
import orjson
import pytest
from agentic.v1 import common_pb2, mcp_bridge_pb2
from agentic_local.processes import free_port
from agentic_runtime.grpc.errors import error_from_rpc

from tests.support.fake_mcp_server import DEFAULT_TOKEN as TOKEN
from tests.support.fake_mcp_server import FakeMcpProcess

ALL_TOOLS = ["echo", "add", "structured", "fail", "slow", "grow", "whoami"]


def list_request(
    url: str | None = None,
    *,
    tenant: str = "tenant-a",
    headers: dict[str, str] | None = None,
    allowed: list[str] | None = None,
    connector_id: str = "",
    label: str = "fake",
) -> mcp_bridge_pb2.ListToolsRequest:
    return mcp_bridge_pb2.ListToolsRequest(
        principal=common_pb2.Principal(tenant=tenant, subject="test"),
        server=mcp_bridge_pb2.McpServer(server_label=label, server_url=url or "", connector_id=connector_id,
                                        headers=headers or {}),
        allowed_tools=allowed or [],
    )


async def rpc_error(call) -> tuple[int, dict]:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    error = error_from_rpc(raised.value, "mcp-bridge")
    return error.http_status, orjson.loads(error.body())["error"]


def names(reply: mcp_bridge_pb2.ListToolsReply) -> list[str]:
    return [tool.name for tool in reply.tools]


async def test_every_page_of_the_tool_list_comes_back(fake_mcp: FakeMcpProcess, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(fake_mcp)))
    reply = await served.stub.ListTools(list_request(fake_mcp.url), timeout=15)
    assert names(reply) == ALL_TOOLS  # 7 tools over pages of 2
    assert sum(fake_mcp.stats()["list_requests"].values()) == 4
    echo = reply.tools[0]
    assert echo.description == "Echo the text back."
    assert orjson.loads(echo.input_schema)["properties"]["text"]["type"] == "string"


async def test_allowed_tools_keeps_only_the_named_tools_in_the_servers_order(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(fake_mcp)))
    reply = await served.stub.ListTools(list_request(fake_mcp.url, allowed=["whoami", "echo", "missing"]), timeout=15)
    assert names(reply) == ["echo", "whoami"]


async def test_a_second_listing_comes_from_the_cache(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(fake_mcp)))
    first = await served.stub.ListTools(list_request(fake_mcp.url), timeout=15)
    second = await served.stub.ListTools(list_request(fake_mcp.url, tenant="tenant-b", allowed=["add"]), timeout=15)
    assert names(first) == ALL_TOOLS and names(second) == ["add"]
    assert sum(fake_mcp.stats()["list_requests"].values()) == 4  # one listing, four pages


async def test_concurrent_misses_share_one_listing(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(fake_mcp)))
    replies = await asyncio.gather(*(served.stub.ListTools(list_request(fake_mcp.url), timeout=15) for _ in range(5)))
    assert all(names(reply) == ALL_TOOLS for reply in replies)
    assert sum(fake_mcp.stats()["list_requests"].values()) == 4


async def test_the_cache_expires_after_its_ttl(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(fake_mcp, discovery_cache_seconds=0.2)))
    await served.stub.ListTools(list_request(fake_mcp.url), timeout=15)
    await asyncio.sleep(0.3)
    await served.stub.ListTools(list_request(fake_mcp.url), timeout=15)
    assert sum(fake_mcp.stats()["list_requests"].values()) == 8


async def test_tools_list_changed_invalidates_the_cached_list(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    bridge = make_bridge(bridge_settings(fake_mcp))
    served = await serve_grpc(bridge)
    assert names(await served.stub.ListTools(list_request(fake_mcp.url), timeout=15)) == ALL_TOOLS
    target = await bridge.target(server_label="fake", server_url=fake_mcp.url, connector_id=None, headers={})
    result = await bridge.call_tool("tenant-a", target, "grow", {}, timeout=10)  # sends notifications/tools/list_changed
    assert not result.is_error
    for _ in range(100):
        if bridge.catalog.cached(target.cache_key) is None:
            break
        await asyncio.sleep(0.02)
    assert bridge.catalog.cached(target.cache_key) is None
    assert names(await served.stub.ListTools(list_request(fake_mcp.url), timeout=15)) == [*ALL_TOOLS, "extra_1"]
    assert sum(fake_mcp.stats()["list_requests"].values()) == 8


async def test_each_set_of_credentials_has_its_own_cached_list(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(fake_mcp)))
    for token in ("first-token", "second-token", "first-token"):
        request = list_request(fake_mcp.url, headers={"Authorization": f"Bearer {token}"})
        assert names(await served.stub.ListTools(request, timeout=15)) == ALL_TOOLS
    assert fake_mcp.stats()["list_requests"] == {"Bearer first-token": 4, "Bearer second-token": 4}


async def test_request_headers_reach_the_server(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(fake_mcp)))
    await served.stub.ListTools(list_request(fake_mcp.url, headers={"Authorization": f"Bearer {TOKEN}"}), timeout=15)
    assert fake_mcp.stats()["list_requests"] == {f"Bearer {TOKEN}": 4}


async def test_the_older_http_sse_transport_is_spoken_for_sse_endpoints(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(fake_mcp)))
    assert names(await served.stub.ListTools(list_request(fake_mcp.sse_url), timeout=15)) == ALL_TOOLS


async def test_a_server_outside_the_allowlist_is_a_400_naming_the_rule(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(AGENTIC_MCP_ALLOWED_HOSTS="mcp.example.com")))
    status, error = await rpc_error(served.stub.ListTools(list_request(fake_mcp.url), timeout=15))
    assert status == 400
    assert error["code"] == "mcp_server_refused" and error["param"] == "server_url"
    assert "rule: allowlist" in error["message"] and f"127.0.0.1:{fake_mcp.port}" in error["message"]
    assert fake_mcp.stats()["list_requests"] == {}


async def test_an_unreachable_server_is_a_424(make_bridge, serve_grpc, bridge_settings) -> None:
    port = free_port()
    settings = bridge_settings(AGENTIC_MCP_ALLOWED_HOSTS=f"127.0.0.1:{port}")
    served = await serve_grpc(make_bridge(settings))
    status, error = await rpc_error(served.stub.ListTools(list_request(f"http://127.0.0.1:{port}/mcp"), timeout=15))
    assert status == 424
    assert error["code"] == "mcp_list_tools_failed" and error["type"] == "external_connector_error"
    assert "'fake'" in error["message"] and "could not be reached" in error["message"]


async def test_a_server_that_never_answers_is_a_424_after_the_discovery_timeout(make_bridge, serve_grpc, bridge_settings) -> None:
    writers: list[asyncio.StreamWriter] = []

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        await reader.read(1 << 16)  # and never answer

    silent = await asyncio.start_server(swallow, "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    settings = bridge_settings(AGENTIC_MCP_ALLOWED_HOSTS=f"127.0.0.1:{port}", list_tools_timeout_seconds=0.5)
    served = await serve_grpc(make_bridge(settings))
    try:
        status, error = await rpc_error(served.stub.ListTools(list_request(f"http://127.0.0.1:{port}/mcp"), timeout=15))
    finally:
        silent.close()
        for writer in writers:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
        await silent.wait_closed()
    assert status == 424 and "did not answer within 0.5 s" in error["message"]


async def test_a_tool_list_longer_than_the_page_limit_is_a_424(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(fake_mcp, max_list_pages=2)))
    status, error = await rpc_error(served.stub.ListTools(list_request(fake_mcp.url), timeout=15))
    assert status == 424 and "did not end within 2 pages" in error["message"]


async def test_a_tool_list_longer_than_the_tool_limit_is_a_424(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(fake_mcp, max_tools=5)))
    status, error = await rpc_error(served.stub.ListTools(list_request(fake_mcp.url), timeout=15))
    assert status == 424 and "more than 5 tools" in error["message"]


async def test_an_unknown_connector_is_a_400(make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings()))
    status, error = await rpc_error(served.stub.ListTools(list_request(connector_id="nowhere"), timeout=15))
    assert status == 400 and error["code"] == "unknown_connector" and error["param"] == "connector_id"


async def test_a_server_needs_exactly_one_of_url_and_connector(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(fake_mcp)))
    status, _ = await rpc_error(served.stub.ListTools(list_request(), timeout=15))
    assert status == 400
    status, _ = await rpc_error(served.stub.ListTools(list_request(fake_mcp.url, connector_id="x"), timeout=15))
    assert status == 400


async def test_headers_the_transport_owns_are_refused(fake_mcp, make_bridge, serve_grpc, bridge_settings) -> None:
    served = await serve_grpc(make_bridge(bridge_settings(fake_mcp)))
    request = list_request(fake_mcp.url, headers={"Mcp-Session-Id": "someone-elses"})
    status, error = await rpc_error(served.stub.ListTools(request, timeout=15))
    assert status == 400 and error["param"] == "headers"
