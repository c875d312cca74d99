"""Session pool: one session per tenant, server and credentials; idle sessions closed; a bounded pool."""

from __future__ import annotations

import asyncio

import pytest
from agentic_core.errors import ServiceUnavailable
from agentic_mcp_bridge.bridge import McpBridge

from tests.support.fake_mcp_server import DEFAULT_TOKEN, FakeMcpProcess

AUTHORIZED = {"Authorization": f"Bearer {DEFAULT_TOKEN}"}


async def whoami(bridge: McpBridge, fake: FakeMcpProcess, tenant: str, headers: dict[str, str]) -> str:
    target = await bridge.target(server_label="fake", server_url=fake.url, connector_id=None, headers=headers)
    result = await bridge.call_tool(tenant, target, "whoami", {}, timeout=10)
    assert not result.is_error, result
    return result.content[0].text.removeprefix("authorized session=")


async def echo(bridge: McpBridge, fake: FakeMcpProcess, tenant: str, *, timeout: float = 10, headers=None) -> str:
    target = await bridge.target(server_label="fake", server_url=fake.url, connector_id=None, headers=headers or {})
    result = await bridge.call_tool(tenant, target, "echo", {"text": tenant}, timeout=timeout)
    return result.content[0].text


async def test_two_tenants_with_the_same_credentials_never_share_a_session(fake_mcp, make_bridge, bridge_settings) -> None:
    bridge = make_bridge(bridge_settings(fake_mcp))
    first = await whoami(bridge, fake_mcp, "tenant-a", AUTHORIZED)
    second = await whoami(bridge, fake_mcp, "tenant-b", AUTHORIZED)
    assert first != second
    assert len(bridge.pool) == 2


async def test_one_tenant_reuses_its_session(fake_mcp, make_bridge, bridge_settings) -> None:
    bridge = make_bridge(bridge_settings(fake_mcp))
    sessions = {await whoami(bridge, fake_mcp, "tenant-a", AUTHORIZED) for _ in range(3)}
    assert len(sessions) == 1 and len(bridge.pool) == 1


async def test_other_credentials_of_one_tenant_get_another_session(fake_mcp, make_bridge, bridge_settings) -> None:
    bridge = make_bridge(bridge_settings(fake_mcp))
    await whoami(bridge, fake_mcp, "tenant-a", AUTHORIZED)
    target = await bridge.target(server_label="fake", server_url=fake_mcp.url, connector_id=None,
                                 headers={"Authorization": "Bearer someone-else"})
    refused = await bridge.call_tool("tenant-a", target, "whoami", {}, timeout=10)
    assert refused.is_error and "unauthorized" in refused.content[0].text
    assert len(bridge.pool) == 2
    assert len({key.credentials for key in bridge.pool._sessions}) == 2


async def test_concurrent_calls_of_one_tenant_share_one_session(fake_mcp, make_bridge, bridge_settings) -> None:
    bridge = make_bridge(bridge_settings(fake_mcp))
    sessions = await asyncio.gather(*(whoami(bridge, fake_mcp, "tenant-a", AUTHORIZED) for _ in range(5)))
    assert len(set(sessions)) == 1 and len(bridge.pool) == 1


async def test_idle_sessions_are_closed_after_their_ttl(fake_mcp, make_bridge, bridge_settings) -> None:
    bridge = make_bridge(bridge_settings(fake_mcp, session_idle_seconds=0.2))
    first = await whoami(bridge, fake_mcp, "tenant-a", AUTHORIZED)
    for _ in range(100):
        if len(bridge.pool) == 0:
            break
        await asyncio.sleep(0.05)
    assert len(bridge.pool) == 0
    assert await whoami(bridge, fake_mcp, "tenant-a", AUTHORIZED) != first


async def test_a_full_pool_closes_its_least_recently_used_idle_session(fake_mcp, make_bridge, bridge_settings) -> None:
    bridge = make_bridge(bridge_settings(fake_mcp, max_sessions=2))
    for tenant in ("tenant-a", "tenant-b", "tenant-a", "tenant-c"):
        assert await echo(bridge, fake_mcp, tenant) == tenant
    assert sorted(key.tenant for key in bridge.pool._sessions) == ["tenant-a", "tenant-c"]


async def test_a_full_pool_of_busy_sessions_makes_a_new_tenant_wait(fake_mcp, make_bridge, bridge_settings) -> None:
    bridge = make_bridge(bridge_settings(fake_mcp, max_sessions=1))
    target = await bridge.target(server_label="fake", server_url=fake_mcp.url, connector_id=None, headers={})
    slow = asyncio.create_task(bridge.call_tool("tenant-a", target, "slow", {"seconds": 0.5}, timeout=10))
    await asyncio.sleep(0.2)
    with pytest.raises(ServiceUnavailable) as raised:
        await echo(bridge, fake_mcp, "tenant-b", timeout=0.1)
    assert raised.value.code == "mcp_sessions_exhausted"
    assert await echo(bridge, fake_mcp, "tenant-b", timeout=10) == "tenant-b"  # waits for tenant-a's call to end
    assert not (await slow).is_error


async def test_a_session_the_server_forgot_is_replaced(make_bridge, bridge_settings) -> None:
    fake = FakeMcpProcess().start()
    try:
        bridge = make_bridge(bridge_settings(fake))
        assert await echo(bridge, fake, "tenant-a") == "tenant-a"
        fake.stop()
        fake.start()  # same port, no memory of our session: it answers 404 to it
        assert await echo(bridge, fake, "tenant-a") == "tenant-a"
    finally:
        fake.stop()
