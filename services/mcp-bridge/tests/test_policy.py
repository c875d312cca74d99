"""Host policy: allowlist, schemes, addresses after DNS resolution (on every request), redirects."""

from __future__ import annotations

import ipaddress

import pytest
from agentic_mcp_bridge.errors import McpUnavailable, ServerRefused
from agentic_mcp_bridge.policy import AllowedHost, HostPolicy

PUBLIC = "93.184.216.34"


def resolver_from(table: dict[str, list[str]]):
    async def resolve(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        if host not in table:
            raise OSError("no such host")
        return [ipaddress.ip_address(address) for address in table[host]]

    return resolve


async def refused_rule(policy: HostPolicy, url: str) -> str:
    with pytest.raises(ServerRefused) as raised:
        await policy.vet(url)
    assert raised.value.http_status == 400 and raised.value.param == "server_url"
    assert f"(rule: {raised.value.rule})" in raised.value.message
    return raised.value.rule


@pytest.mark.parametrize(
    ("entry", "host", "port", "matches"),
    [
        ("mcp.example.com", "mcp.example.com", 443, True),
        ("mcp.example.com", "mcp.example.com", 8443, True),
        ("MCP.Example.com.", "mcp.example.com", 443, True),
        ("mcp.example.com:8443", "mcp.example.com", 8443, True),
        ("mcp.example.com:8443", "mcp.example.com", 443, False),
        ("mcp.example.com", "evil-mcp.example.com", 443, False),
        ("*.example.com", "mcp.example.com", 443, True),
        ("*.example.com", "example.com", 443, False),
        ("*.example.com", "mcp.example.com.evil.net", 443, False),
        ("10.0.0.7", "10.0.0.7", 443, True),
        ("[::1]:8443", "::1", 8443, True),
        ("::1", "::1", 9000, True),
    ],
)
def test_allowlist_entries_match_hosts_and_ports(entry: str, host: str, port: int, matches: bool) -> None:
    assert AllowedHost.parse(entry).matches(host, port) is matches


async def test_an_allowlisted_public_host_over_https_is_allowed() -> None:
    policy = HostPolicy("mcp.example.com", resolver=resolver_from({"mcp.example.com": [PUBLIC]}))
    destination = await policy.vet("https://mcp.example.com/mcp")
    assert str(destination.address) == PUBLIC and destination.port == 443


async def test_a_host_not_in_the_allowlist_is_refused() -> None:
    policy = HostPolicy("mcp.example.com", resolver=resolver_from({"other.example.com": [PUBLIC]}))
    assert await refused_rule(policy, "https://other.example.com/mcp") == "allowlist"
    assert await refused_rule(policy, "https://mcp.example.com.other.example.com/mcp") == "allowlist"


async def test_an_empty_allowlist_refuses_every_request_server() -> None:
    assert await refused_rule(HostPolicy(""), "https://mcp.example.com/mcp") == "allowlist"


async def test_a_port_outside_the_allowlisted_host_port_is_refused() -> None:
    policy = HostPolicy("mcp.example.com:8443", resolver=resolver_from({"mcp.example.com": [PUBLIC]}))
    await policy.vet("https://mcp.example.com:8443/mcp")
    assert await refused_rule(policy, "https://mcp.example.com/mcp") == "allowlist"


async def test_plain_http_is_refused_unless_allowed() -> None:
    table = resolver_from({"mcp.example.com": [PUBLIC]})
    assert await refused_rule(HostPolicy("mcp.example.com", resolver=table), "http://mcp.example.com/mcp") == "scheme"
    await HostPolicy("mcp.example.com", allow_http=True, resolver=table).vet("http://mcp.example.com/mcp")


async def test_other_schemes_and_credentials_in_the_url_are_refused() -> None:
    policy = HostPolicy("mcp.example.com", allow_http=True, resolver=resolver_from({"mcp.example.com": [PUBLIC]}))
    assert await refused_rule(policy, "ftp://mcp.example.com/mcp") == "url"
    assert await refused_rule(policy, "file:///etc/passwd") == "url"
    assert await refused_rule(policy, "https://user:secret@mcp.example.com/mcp") == "url"
    assert await refused_rule(policy, "not a url") == "url"


async def test_localhost_is_refused_after_resolution_even_when_allowlisted() -> None:
    policy = HostPolicy("localhost:8765", allow_http=True)  # the real resolver
    assert await refused_rule(policy, "http://localhost:8765/mcp") == "private_address"


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.1.1", "private"),
        ("172.16.0.9", "private"),
        ("100.64.0.1", "private"),
        ("169.254.169.254", "link-local"),
        ("0.0.0.0", "reserved"),
        ("::1", "loopback"),
        ("fe80::1", "link-local"),
        ("fd00::1", "private"),
        ("::ffff:127.0.0.1", "loopback"),
        ("2002:7f00:1::", "loopback"),  # 6to4: judged by the IPv4 address it embeds
        ("2002:a9fe:a9fe::1", "link-local"),
    ],
)
async def test_hosts_resolving_to_non_public_addresses_are_refused(address: str, kind: str) -> None:
    policy = HostPolicy("sneaky.example.com", resolver=resolver_from({"sneaky.example.com": [address]}))
    with pytest.raises(ServerRefused) as raised:
        await policy.vet("https://sneaky.example.com/mcp")
    assert raised.value.rule == "private_address" and f"the {kind} address" in raised.value.message


async def test_one_private_address_among_public_ones_is_enough_to_refuse() -> None:
    policy = HostPolicy("mixed.example.com", resolver=resolver_from({"mixed.example.com": [PUBLIC, "10.0.0.1"]}))
    assert await refused_rule(policy, "https://mixed.example.com/mcp") == "private_address"


async def test_private_networks_allow_addresses_they_cover() -> None:
    table = resolver_from({"intranet.example.com": ["10.1.2.3"], "other.example.com": ["192.168.0.4"]})
    policy = HostPolicy("intranet.example.com,other.example.com", private_networks="10.0.0.0/8", resolver=table)
    await policy.vet("https://intranet.example.com/mcp")
    assert await refused_rule(policy, "https://other.example.com/mcp") == "private_address"


async def test_an_allowlisted_address_is_allowed_though_private() -> None:
    policy = HostPolicy("127.0.0.1:8765,10.0.0.7", allow_http=True)
    await policy.vet("http://127.0.0.1:8765/mcp")
    await policy.vet("https://10.0.0.7/mcp")
    assert await refused_rule(policy, "http://127.0.0.1:8766/mcp") == "allowlist"


async def test_an_unresolvable_host_is_a_server_failure_not_a_refusal() -> None:
    policy = HostPolicy("gone.example.com", resolver=resolver_from({}))
    with pytest.raises(McpUnavailable, match="could not be resolved"):
        await policy.vet("https://gone.example.com/mcp")


async def test_a_redirect_to_a_private_address_is_refused(fake_mcp, make_bridge, bridge_settings) -> None:
    # The first hop is allowlisted by its address; the redirect goes to a host that resolves privately.
    settings = bridge_settings(AGENTIC_MCP_ALLOWED_HOSTS=f"{fake_mcp.host},internal.example.com")
    bridge = make_bridge(settings, resolver=resolver_from({"internal.example.com": ["10.0.0.5"]}))
    target = await bridge.target(
        server_label="fake", server_url=f"{fake_mcp.base_url}/redirect?to=http://internal.example.com/mcp",
        connector_id=None, headers={},
    )
    with pytest.raises(ServerRefused) as raised:
        await bridge.list_tools("tenant-a", target, [])
    assert raised.value.rule == "redirect"
    assert "internal.example.com" in raised.value.message and "rule private_address" in raised.value.message


async def test_a_redirect_off_the_allowlist_is_refused(fake_mcp, make_bridge, bridge_settings) -> None:
    bridge = make_bridge(bridge_settings(fake_mcp))
    target = await bridge.target(
        server_label="fake", server_url=f"{fake_mcp.base_url}/redirect?to=https://elsewhere.example.net/mcp",
        connector_id=None, headers={},
    )
    with pytest.raises(ServerRefused) as raised:
        await bridge.list_tools("tenant-a", target, [])
    assert raised.value.rule == "redirect" and "rule allowlist" in raised.value.message


async def test_a_redirect_within_the_server_is_followed(fake_mcp, make_bridge, bridge_settings) -> None:
    bridge = make_bridge(bridge_settings(fake_mcp))
    target = await bridge.target(server_label="fake", server_url=f"{fake_mcp.base_url}/redirect?to=/mcp",
                                 connector_id=None, headers={})
    assert len(await bridge.list_tools("tenant-a", target, [])) == 7


async def test_every_request_of_a_session_is_checked_after_its_own_lookup(fake_mcp, make_bridge, bridge_settings) -> None:
    # A host that first resolves to an allowed address, then (DNS rebinding) to a refused one.
    answers = {"rebinding.example.com": ["127.0.0.1"]}
    settings = bridge_settings(AGENTIC_MCP_ALLOWED_HOSTS=f"rebinding.example.com:{fake_mcp.port}",
                               private_networks="127.0.0.1/32")
    bridge = make_bridge(settings, resolver=resolver_from(answers))
    target = await bridge.target(server_label="fake", server_url=f"http://rebinding.example.com:{fake_mcp.port}/mcp",
                                 connector_id=None, headers={})
    assert not (await bridge.call_tool("tenant-a", target, "echo", {"text": "hi"}, timeout=10)).is_error
    answers["rebinding.example.com"] = ["10.9.9.9"]
    with pytest.raises(ServerRefused) as raised:  # on the same pooled session, without a new vet() by the caller
        await bridge.call_tool("tenant-a", target, "echo", {"text": "again"}, timeout=10)
    assert raised.value.rule == "private_address"
    assert fake_mcp.stats()["calls"] == {"echo": 1}


async def test_refused_plain_http_names_the_setting_that_allows_it() -> None:
    policy = HostPolicy("mcp.example.com", resolver=resolver_from({"mcp.example.com": [PUBLIC]}))
    with pytest.raises(ServerRefused) as refused:
        await policy.vet("http://mcp.example.com/mcp")
    assert "AGENTIC_MCP_BRIDGE_ALLOW_HTTP=true" in str(refused.value)


async def test_a_6to4_literal_of_a_private_address_is_refused() -> None:
    policy = HostPolicy("*", allow_http=True)
    assert await refused_rule(policy, "http://[2002:7f00:1::]:8765/mcp") == "private_address"
