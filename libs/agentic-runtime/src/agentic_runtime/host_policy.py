"""Which hosts a URL that a request chose may reach: scheme, the operator's allowlist, and where the host resolves.

Shared by mcp-bridge (MCP servers named in requests) and the executor (image and
file URLs in the input). Rules, each named in a refusal: `url` (not http(s)),
`scheme` (https always, http only when allowed), `allowlist` (the host, or
host:port, matches no entry), `private_address` (the host resolves to a
loopback, private, link-local or otherwise non-public address that neither an
allowlist entry naming that address nor a private network covers).

URL parsing stays with the caller: the host checked here must be exactly the
host its HTTP client connects to, and two URL parsers that disagree are an
SSRF hole of their own.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]
DEFAULT_PORTS = {"https": 443, "http": 80}
ANY_HOST = "*"
# RFC 6052's well-known NAT64 prefix: a NAT64 gateway forwards these to the IPv4 address in the last 32 bits.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    """Every address the host resolves to (the resolver the operating system uses)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).partition("%")[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def ip_or_none(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address reaches: IPv4-mapped (`::ffff:a.b.c.d`), 6to4 (`2002:AABB:CCDD::/48`) and
    NAT64 (`64:ff9b::a.b.c.d`) addresses are carried to it, so they are judged by it."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def non_public_kind(address: IPAddress) -> str | None:
    """Why an address is not a public one (None when it is)."""
    inner = embedded_ipv4(address)
    if inner is not None:
        return non_public_kind(inner)
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
class AllowedHost:
    """One allowlist entry: `host`, `host:port`, `*.domain` (subdomains), `*` (any host), an IP, `[v6]:port`."""

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
            raise ValueError(f"empty host in the allowlist entry {entry!r}")
        return cls(host, port)

    @property
    def names_an_address(self) -> bool:
        return ip_or_none(self.host) is not None

    def matches(self, host: str, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.host == ANY_HOST:
            return True
        if self.host.startswith("*."):
            return host.endswith(self.host[1:])
        if self.names_an_address:
            address = ip_or_none(host)
            return address is not None and address == ipaddress.ip_address(self.host)
        return host == self.host


class HostRefused(Exception):
    """The URL breaks a rule; `rule` names which, `detail` says why (safe to show: no secrets)."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(f"{rule}: {detail}")
        self.rule = rule
        self.detail = detail


class HostUnresolved(Exception):
    """The host has no address: the server cannot be reached (not a policy refusal)."""

    def __init__(self, host: str) -> None:
        super().__init__(f"the host {host} could not be resolved")
        self.host = host


@dataclass(frozen=True, slots=True)
class SettingNames:
    """The env vars a refusal points the operator to: each user of the policy has its own."""

    allowed_hosts: str
    allow_http: str
    private_networks: str


class HostPolicy:
    def __init__(
        self,
        allowed_hosts: str,
        *,
        names: SettingNames,
        allow_http: bool = False,
        private_networks: str = "",
        resolver: Resolver = system_resolver,
    ) -> None:
        self.allowed = [AllowedHost.parse(entry) for entry in allowed_hosts.split(",") if entry.strip()]
        self.names = names
        self.schemes = ("https", "http") if allow_http else ("https",)
        self.private_networks: list[IPNetwork] = [
            ipaddress.ip_network(cidr.strip(), strict=False) for cidr in private_networks.split(",") if cidr.strip()
        ]
        self.resolver = resolver

    def check_target(self, scheme: str, host: str, port: int) -> AllowedHost:
        """The rules that need no lookup (scheme, allowlist); returns the entry that admits the host.

        An entry naming the host's address wins over a name or `*` that also matches: only it may admit a
        non-public address."""
        if scheme not in DEFAULT_PORTS or not host:
            raise HostRefused("url", "the URL needs an http(s) scheme and a host.")
        if scheme not in self.schemes:
            raise HostRefused("scheme", f"{scheme}:// is not allowed; use https://, or set {self.names.allow_http}=true "
                                        f"to allow http:// for the hosts in {self.names.allowed_hosts}.")
        matching = [entry for entry in self.allowed if entry.matches(host, port)]
        if not matching:
            raise HostRefused("allowlist", f"host {host_port(host, port)} is not in {self.names.allowed_hosts}.")
        return next((entry for entry in matching if entry.names_an_address), matching[0])

    async def addresses(self, host: str, port: int, entry: AllowedHost | None = None) -> list[IPAddress]:
        """Where the host resolves (itself, for an IP literal), every address vetted; `entry`: the allowlist
        entry that admitted the host (one naming its address admits it even when it is not public)."""
        literal = ip_or_none(host)
        if literal is not None:
            found = [literal]
        else:
            try:
                found = await self.resolver(host, port)
            except OSError:
                raise HostUnresolved(host) from None
            if not found:
                raise HostUnresolved(host)
        if entry is None or not entry.names_an_address:
            for address in found:
                self.check_address(host, address)
        return found

    def check_address(self, host: str, address: IPAddress) -> None:
        """The `private_address` rule for one address `host` resolved to."""
        kind = non_public_kind(address)
        if kind is None or self._covered(address):
            return
        inner = embedded_ipv4(address)
        shown = f"{address} (which reaches {inner})" if inner is not None else str(address)
        raise HostRefused(
            "private_address",
            f"host {host} resolves to the {kind} address {shown}, which is only allowed when the allowlist names it "
            f"or {self.names.private_networks} covers it.",
        )

    async def vet(self, scheme: str, host: str, port: int) -> list[IPAddress]:
        """Every rule, the lookup included; the addresses to connect to (only these: a second lookup could move)."""
        entry = self.check_target(scheme, host, port)
        return await self.addresses(host, port, entry)

    def _covered(self, address: IPAddress) -> bool:
        inner = embedded_ipv4(address)
        return any(address in network or (inner is not None and inner in network) for network in self.private_networks)


def host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
