"""Which MCP server URLs a request may use: scheme, the operator's host allowlist, and where the host resolves.

Rules, each named in the refusal: `url` (malformed, or credentials in the URL),
`scheme` (https always, http only when allowed), `allowlist` (the host, or
host:port, is not in `AGENTIC_MCP_ALLOWED_HOSTS`), `private_address` (the host
resolves to a loopback, private, link-local or otherwise non-public address
that neither the allowlist names nor `private_networks` covers), `redirect`
(a redirect points somewhere these rules refuse).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx2

from agentic_mcp_bridge.errors import McpUnavailable, ServerRefused

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]
DEFAULT_PORTS = {"https": 443, "http": 80}


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    """Every address the host resolves to (the resolver the operating system uses)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).partition("%")[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def _ip_or_none(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class AllowedHost:
    """One allowlist entry: `host`, `host:port`, `*.domain` (subdomains), an IP, `[v6]:port`."""

    host: str
    port: int | None

    @classmethod
    def parse(cls, entry: str) -> AllowedHost:
        text = entry.strip().lower()
        host, port = text, None
        if text.startswith("["):
            host, _, rest = text[1:].partition("]")
            port = int(rest[1:]) if rest.startswith(":") else None
        elif text.count(":") == 1:
            host, _, port_text = text.partition(":")
            port = int(port_text)
        host = host.rstrip(".")
        if not host:
            raise ValueError(f"empty host in the MCP allowlist entry {entry!r}")
        return cls(host, port)

    @property
    def names_an_address(self) -> bool:
        return _ip_or_none(self.host) is not None

    def matches(self, host: str, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.host.startswith("*."):
            return host.endswith(self.host[1:])
        if self.names_an_address:
            address = _ip_or_none(host)
            return address is not None and address == ipaddress.ip_address(self.host)
        return host == self.host


def _non_public_kind(address: IPAddress) -> str | None:
    """Why an address is not a public one (None when it is)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return _non_public_kind(address.ipv4_mapped)
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_unspecified or address.is_multicast or address.is_reserved:
        return "reserved"
    if address.is_private or not address.is_global:
        return "private"
    return None


@dataclass(frozen=True, slots=True)
class Destination:
    """A vetted URL and the address to connect to (pinned, so a second lookup cannot move it)."""

    url: httpx2.URL
    port: int
    address: IPAddress


class HostPolicy:
    def __init__(
        self,
        allowed_hosts: str,
        *,
        allow_http: bool = False,
        private_networks: str = "",
        resolver: Resolver = system_resolver,
    ) -> None:
        self.allowed = [AllowedHost.parse(entry) for entry in allowed_hosts.split(",") if entry.strip()]
        self.schemes = ("https", "http") if allow_http else ("https",)
        self.private_networks: list[IPNetwork] = [
            ipaddress.ip_network(cidr.strip(), strict=False) for cidr in private_networks.split(",") if cidr.strip()
        ]
        self.resolver = resolver

    def check_url(self, url: str | httpx2.URL) -> tuple[httpx2.URL, int, AllowedHost]:
        """The rules that need no lookup: shape, scheme, allowlist."""
        try:
            parsed = httpx2.URL(url)
        except (httpx2.InvalidURL, TypeError, ValueError):
            raise ServerRefused("url", "the server URL is not a valid URL.") from None
        if parsed.scheme not in DEFAULT_PORTS or not parsed.host:
            raise ServerRefused("url", "the server URL needs an http(s) scheme and a host.")
        if parsed.userinfo:
            raise ServerRefused("url", "credentials belong in `headers` or `authorization`, not in the URL.")
        if parsed.scheme not in self.schemes:
            raise ServerRefused("scheme", f"{parsed.scheme}:// is not allowed; use https://, or set "
                                          "AGENTIC_MCP_BRIDGE_ALLOW_HTTP=true to allow http:// for the hosts "
                                          "in AGENTIC_MCP_ALLOWED_HOSTS.")
        host = parsed.host.lower().rstrip(".")
        port = parsed.port or DEFAULT_PORTS[parsed.scheme]
        for entry in self.allowed:
            if entry.matches(host, port):
                return parsed, port, entry
        raise ServerRefused("allowlist", f"host {_host_port(host, port)} is not in AGENTIC_MCP_ALLOWED_HOSTS.")

    async def vet(self, url: str | httpx2.URL) -> Destination:
        """Every rule, the lookup included; raises `ServerRefused` naming the rule that failed."""
        parsed, port, entry = self.check_url(url)
        host = parsed.host.lower().rstrip(".")
        literal = _ip_or_none(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                addresses = await self.resolver(host, port)
            except OSError:
                raise McpUnavailable(f"the host {host} could not be resolved") from None
            if not addresses:
                raise McpUnavailable(f"the host {host} could not be resolved")
        if not entry.names_an_address:
            for address in addresses:
                kind = _non_public_kind(address)
                if kind is not None and not any(address in network for network in self.private_networks):
                    raise ServerRefused(
                        "private_address",
                        f"host {host} resolves to the {kind} address {address}, which is only allowed when "
                        "the allowlist names it or AGENTIC_MCP_BRIDGE_PRIVATE_NETWORKS covers it.",
                    )
        return Destination(parsed, port, addresses[0])


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def redacted(url: str | httpx2.URL | None) -> str:
    """A URL fit for logs and messages: no credentials, query or fragment (tokens hide there)."""
    if url is None:
        return ""
    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError, ValueError):
        return "<invalid url>"
    return str(parsed.copy_with(userinfo=b"", query=None, fragment=None))
