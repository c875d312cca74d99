"""The web search cache is per tenant: a cached-only search (`external_web_access: false`) finds what its own
tenant searched live, never another tenant's searches (a real JetStream KV bucket, a fake provider)."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest
from agentic_core.tools.protocol import ToolCall, ToolResult
from agentic_runtime.nats.broker import ensure_key_value
from agentic_tool_runner.search.base import SearchRequest
from agentic_tool_runner.search.cache import SearchCache, cache_key
from agentic_tool_runner.settings import ToolRunnerSettings
from agentic_tool_runner.tools.web_search import WebSearchTool

from tests.support.fake_search import API_KEY, FakeSearch

CACHED_ONLY = {"external_web_access": False}
# What JetStream accepts in a KV key.
KV_KEY = re.compile(r"^[-/_=.a-zA-Z0-9]+$")


@pytest.fixture(scope="module")
async def fake() -> AsyncIterator[FakeSearch]:
    server = FakeSearch()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture()
async def tool(infra: dict[str, str], fake: FakeSearch) -> AsyncIterator[WebSearchTool]:
    client = await nats.connect(infra["nats_url"])
    settings = ToolRunnerSettings(AGENTIC_WEB_SEARCH_PROVIDER="brave", AGENTIC_WEB_SEARCH_BASE_URL=fake.url,
                                  AGENTIC_WEB_SEARCH_API_KEY=API_KEY)
    web_search = WebSearchTool(settings)
    bucket = await ensure_key_value(client, f"WEB_SEARCH_CACHE_TEST_{secrets.token_hex(4)}", 60)
    web_search.cache = SearchCache(bucket)
    try:
        yield web_search
    finally:
        await web_search.close()
        await client.close()


def call(tenant: str, query: str, params: dict[str, Any] | None = None) -> ToolCall:
    return ToolCall(call_id=f"call_{secrets.token_hex(3)}", kind="web_search", tool="web_search",
                    arguments={"queries": [query]}, params=params or {}, deadline=time.time() + 30, tenant=tenant)


def found(result: ToolResult) -> list[str]:
    return [source["url"] for source in result.details.get("sources", [])]


async def test_a_cached_only_search_never_finds_another_tenants_search(tool: WebSearchTool, fake: FakeSearch) -> None:
    query = f"kv cache {secrets.token_hex(4)}"
    live = await tool.run(call("tenant-a", query))
    assert live.status == "ok" and found(live)
    searched = len(fake.requests)

    other = await tool.run(call("tenant-b", query, CACHED_ONLY))
    assert other.status == "error" and "no cached results" in render(other)
    assert found(other) == []

    own = await tool.run(call("tenant-a", query, CACHED_ONLY))
    assert own.status == "ok" and found(own) == found(live)
    assert len(fake.requests) == searched  # cached-only searches never reach the provider


async def test_a_tenant_searching_live_keeps_its_own_entry_beside_anothers(tool: WebSearchTool, fake: FakeSearch) -> None:
    query = f"shared words {secrets.token_hex(4)}"
    await tool.run(call("tenant-a", query))
    await tool.run(call("tenant-b", query))
    assert found(await tool.run(call("tenant-b", query, CACHED_ONLY))) == found(await tool.run(call("tenant-a", query, CACHED_ONLY)))


@pytest.mark.parametrize("tenant", ["tenant-a", "", "team a/ü.*>", "x" * 500])
def test_keys_are_in_the_kv_alphabet_and_differ_by_tenant(tenant: str) -> None:
    request = SearchRequest("Kv  Cache", 5, ("example.com",), "DE")
    key = cache_key(tenant, "brave", request)
    assert KV_KEY.fullmatch(key) and len(key) < 128
    assert key != cache_key(tenant + "-other", "brave", request)
    assert key == cache_key(tenant, "brave", SearchRequest("kv cache", 5, ("example.com",), "DE"))


def render(result: ToolResult) -> str:
    return str(result.content) + str(result.details)
