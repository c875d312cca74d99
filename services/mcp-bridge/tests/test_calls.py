"""MCP tool calls over real NATS JetStream: the executor's dispatcher in, the bridge's consumer, a real MCP server.

Each test consumes its own kind (and durable) so that no other bridge on the
same NATS (a running stack) takes its calls; the process test covers `mcp`.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

import pytest
from agentic_core.tools.protocol import ToolCall, ToolResult
from agentic_mcp_bridge.calls import McpCallHandler
from agentic_mcp_bridge.consumer import McpConsumer
from agentic_runtime.nats import broker
from agentic_runtime.tls import transport_security
from agentic_runtime.tools.dispatch import ToolDispatcher
from agentic_runtime.tools.protocol import TOOL_RESULTS_BUCKET, TOOL_RESULTS_TTL_SECONDS, TOOLS_STREAM, durable_name, result_key

from tests.support.fake_mcp_server import DEFAULT_TOKEN


@pytest.fixture()
async def client(infra):
    connection = await broker.connect(infra["nats_url"], "test-mcp-bridge", transport_security({}))
    await broker.ensure_streams(connection)
    yield connection
    await connection.drain()


@pytest.fixture()
async def calls(client, fake_mcp, make_bridge, bridge_settings):
    """`await calls(tool, arguments, **params)`: one call through JetStream to a bridge serving the fake server."""
    kind = f"mcp{secrets.token_hex(4)}"
    bridge = make_bridge(bridge_settings(fake_mcp))
    consumer = McpConsumer(client, McpCallHandler(bridge, kind=kind), durable=durable_name(kind), concurrency=4,
                           ack_wait=30, max_deliveries=5, backoff=[], lag_poll_seconds=1)
    await consumer.start()
    dispatcher = ToolDispatcher(client)
    await dispatcher.start()

    async def call(tool: str, arguments: dict[str, Any], *, seconds: float = 10.0, timeout: float = 10.0,
                   call_id: str | None = None, tenant: str = "tenant-a", **params: Any) -> ToolResult:
        params = {"server_label": "fake", "server_url": fake_mcp.url, "connector_id": None, "headers": {}, **params}
        tool_call = ToolCall(call_id=call_id or f"resp_t/{secrets.token_hex(6)}", kind=kind, tool=tool,
                             arguments=arguments, params=params, deadline=time.time() + seconds, tenant=tenant)
        return await dispatcher.call(tool_call, timeout=timeout)

    call.kind = kind  # type: ignore[attr-defined]
    yield call
    await dispatcher.close()
    await consumer.stop(1)
    await client.jetstream().delete_consumer(TOOLS_STREAM.name, durable_name(kind))


async def test_a_call_returns_the_text_the_model_reads(calls) -> None:
    result = await calls("echo", {"text": "hello"})
    assert result.status == "ok" and result.content == "hello"
    assert result.details == {"output": "hello", "server_label": "fake", "name": "echo"}


async def test_structured_content_without_text_comes_back_as_json(calls) -> None:
    result = await calls("structured", {"label": "x"})
    assert result.status == "ok" and result.content == '{"label":"x","ok":true}'


async def test_a_tool_answering_is_error_is_an_error_result(calls) -> None:
    result = await calls("fail", {"reason": "no disk"})
    assert result.status == "error" and "failing on purpose: no disk" in result.content
    assert result.details == {"server_label": "fake", "name": "fail"}


async def test_an_unknown_tool_is_an_error_result(calls) -> None:
    result = await calls("no_such_tool", {})
    assert result.status == "error" and "Unknown tool" in result.content


async def test_the_requests_authorization_reaches_the_server(calls) -> None:
    allowed = await calls("whoami", {}, headers={"Authorization": f"Bearer {DEFAULT_TOKEN}"})
    assert allowed.status == "ok" and allowed.content.startswith("authorized")
    refused = await calls("whoami", {})
    assert refused.status == "error" and "unauthorized" in refused.content


async def test_a_server_outside_the_allowlist_is_refused_naming_the_rule(calls, fake_mcp) -> None:
    result = await calls("echo", {"text": "x"}, server_url="https://mcp.example.com/mcp")
    assert result.status == "error" and "rule: allowlist" in result.content
    assert result.details == {"server_label": "fake", "name": "echo"}


async def test_an_unreachable_server_is_an_error_result(calls, fake_mcp) -> None:
    result = await calls("echo", {"text": "x"}, server_url=f"http://127.0.0.1:{fake_mcp.port}/nothing-here")
    assert result.status == "error" and result.content.startswith("The MCP server 'fake' failed:")


async def test_a_call_running_past_its_deadline_fails_in_time(calls) -> None:
    started = time.monotonic()
    result = await calls("slow", {"seconds": 5}, seconds=1.0, timeout=4.0)
    assert result.status == "error" and "did not answer within" in result.content
    assert time.monotonic() - started < 3


async def test_a_call_past_its_deadline_is_not_run(calls, fake_mcp) -> None:
    result = await calls("echo", {"text": "late"}, seconds=-1, timeout=1.5)
    assert result.status == "error"
    await asyncio.sleep(0.3)
    assert fake_mcp.stats()["calls"] == {}


async def test_a_redelivered_finished_call_is_answered_from_the_stored_result(calls, client, fake_mcp) -> None:
    call_id = f"resp_t/{secrets.token_hex(6)}"
    results = await broker.ensure_key_value(client, TOOL_RESULTS_BUCKET, TOOL_RESULTS_TTL_SECONDS)
    await results.put(result_key(call_id), ToolResult.ok(call_id, "from before", output="from before").to_json())
    result = await calls("echo", {"text": "again"}, call_id=call_id)
    assert result.content == "from before"
    assert fake_mcp.stats()["calls"] == {}


async def test_a_call_is_run_once_and_its_result_stored(calls, client, fake_mcp) -> None:
    call_id = f"resp_t/{secrets.token_hex(6)}"
    assert (await calls("echo", {"text": "once"}, call_id=call_id)).content == "once"
    results = await broker.ensure_key_value(client, TOOL_RESULTS_BUCKET, TOOL_RESULTS_TTL_SECONDS)
    assert ToolResult.from_json((await results.get(result_key(call_id))).value).content == "once"
    assert fake_mcp.stats()["calls"] == {"echo": 1}
