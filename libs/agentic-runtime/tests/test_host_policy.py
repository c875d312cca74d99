"""The shared host policy: address classification (IPv6 forms that carry IPv4 included), allowlist entries, lookups."""

from __future__ import annotations

import ipaddress

import pytest
from agentic_runtime.host_policy import (
    AllowedHost,
    HostPolicy,
    HostRefused,
    HostUnresolved,
    SettingNames,
    embedded_ipv4,
    non_public_kind,
)

NAMES = SettingNames("ALLOWED", "ALLOW_HTTP", "PRIVATE_NETWORKS")
PUBLIC = "93.184.216.34"


def resolver_from(table: dict[str, list[str]]):
    async def resolve(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        if host not in table:
            raise OSError("no such host")
        return [ipaddress.ip_address(address) for address in table[host]]

    return resolve


def policy(allowed: str, **options) -> HostPolicy:
    return HostPolicy(allowed, names=NAMES, **options)


async def refused(rules: HostPolicy, scheme: str, host: str, port: int) -> HostRefused:
    with pytest.raises(HostRefused) as raised:
        await rules.vet(scheme, host, port)
    return raised.value


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("10.1.2.3", "private"),
        ("169.254.169.254", "link-local"),
        ("0.0.0.0", "reserved"),
        ("::1", "loopback"),
        ("fe80::1", "link-local"),
        ("fd00::1", "private"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("2002:a00:1::1", "private"),  # 6to4 of 10.0.0.1
        ("2002:a9fe:a9fe::", "link-local"),  # 6to4 of 169.254.169.254
        ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
        (PUBLIC, None),
        ("2606:4700::1111", None),
        ("2002:5db8:d822::1", None),  # 6to4 of the public 93.184.216.34
    ],
)
def test_addresses_are_judged_by_the_ipv4_address_they_reach(address: str, kind: str | None) -> None:
    assert non_public_kind(ipaddress.ip_address(address)) == kind


def test_embedded_ipv4_addresses_are_read_from_mapped_6to4_and_nat64_forms() -> None:
    assert str(embedded_ipv4(ipaddress.ip_address("2002:7f00:1::"))) == "127.0.0.1"
    assert str(embedded_ipv4(ipaddress.ip_address("::ffff:10.0.0.1"))) == "10.0.0.1"
    assert str(embedded_ipv4(ipaddress.ip_address("64:ff9b::7f00:1"))) == "127.0.0.1"
    assert embedded_ipv4(ipaddress.ip_address("2606:4700::1111")) is None
    assert embedded_ipv4(ipaddress.ip_address(PUBLIC)) is None


@pytest.mark.parametrize(
    ("entry", "host", "port", "matches"),
    [
        ("*", "anything.example.com", 443, True),
        ("*:8443", "anything.example.com", 443, False),
        ("*.example.com", "a.example.com", 443, True),
        ("10.0.0.7", "10.0.0.7", 80, True),
        ("images.example.com", "images.example.com", 443, True),
    ],
)
def test_allowlist_entries(entry: str, host: str, port: int, matches: bool) -> None:
    assert AllowedHost.parse(entry).matches(host, port) is matches


async def test_a_6to4_literal_of_loopback_is_refused_as_loopback() -> None:
    refusal = await refused(policy("*"), "https", "2002:7f00:1::", 443)
    assert refusal.rule == "private_address"
    assert "loopback address 2002:7f00:1:: (which reaches 127.0.0.1)" in refusal.detail
    assert "PRIVATE_NETWORKS" in refusal.detail


async def test_any_host_admits_public_names_but_never_private_addresses() -> None:
    rules = policy("*", resolver=resolver_from({"cdn.example.com": [PUBLIC], "inside.example.com": ["10.0.0.8"]}))
    assert [str(address) for address in await rules.vet("https", "cdn.example.com", 443)] == [PUBLIC]
    assert (await refused(rules, "https", "inside.example.com", 443)).rule == "private_address"
    assert (await refused(rules, "https", "169.254.169.254", 443)).rule == "private_address"
    assert (await refused(rules, "https", "127.0.0.2", 443)).rule == "private_address"


async def test_an_entry_naming_an_address_admits_it_beside_any_host() -> None:
    rules = policy("*,127.0.0.1:8080", allow_http=True)
    await rules.vet("http", "127.0.0.1", 8080)
    assert (await refused(rules, "http", "127.0.0.1", 8081)).rule == "private_address"


async def test_private_networks_cover_6to4_forms_of_their_addresses() -> None:
    rules = policy("*", private_networks="10.0.0.0/8")
    await rules.vet("https", "2002:a00:1::1", 443)
    assert (await refused(rules, "https", "2002:c0a8:1::1", 443)).rule == "private_address"  # 192.168.0.1


async def test_scheme_and_allowlist_refusals_name_the_settings() -> None:
    rules = policy("images.example.com")
    scheme = await refused(rules, "http", "images.example.com", 80)
    assert scheme.rule == "scheme" and "ALLOW_HTTP=true" in scheme.detail
    allowlist = await refused(rules, "https", "other.example.com", 443)
    assert allowlist.rule == "allowlist" and "not in ALLOWED" in allowlist.detail
    assert (await refused(rules, "ftp", "images.example.com", 21)).rule == "url"


async def test_a_host_that_does_not_resolve_is_unresolved_not_refused() -> None:
    with pytest.raises(HostUnresolved):
        await policy("*", resolver=resolver_from({})).vet("https", "gone.example.com", 443)
