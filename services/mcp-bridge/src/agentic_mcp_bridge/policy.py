"""Which MCP server URLs a request may use: the shared host policy (agentic_runtime.host_policy) over httpx2's URLs.

Rules, each named in the refusal: `url` (malformed, or credentials in the URL),
`scheme` (https always, http only when allowed), `allowlist` (the host, or
host:port, is not in `AGENTIC_MCP_ALLOWED_HOSTS`), `private_address` (the host
resolves to a loopback, private, link-local or otherwise non-public address
that neither the allowlist names nor `private_networks` covers), `redirect`
(a redirect points somewhere these rules refuse).
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx2
from agentic_runtime import host_policy
from agentic_runtime.host_policy import (
    AllowedHost,
    HostRefused,
    HostUnresolved,
    IPAddress,
    Resolver,
    SettingNames,
    system_resolver,
)

from agentic_mcp_bridge.errors import McpUnavailable, ServerRefused

__all__ = ["AllowedHost", "Destination", "HostPolicy", "Resolver", "redacted", "system_resolver"]

MCP_SETTINGS = SettingNames(
    allowed_hosts="AGENTIC_MCP_ALLOWED_HOSTS",
    allow_http="AGENTIC_MCP_BRIDGE_ALLOW_HTTP",
    private_networks="AGENTIC_MCP_BRIDGE_PRIVATE_NETWORKS",
)


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
        self.rules = host_policy.HostPolicy(allowed_hosts, names=MCP_SETTINGS, allow_http=allow_http,
                                            private_networks=private_networks, resolver=resolver)

    def check_url(self, url: str | httpx2.URL) -> tuple[httpx2.URL, int, AllowedHost]:
        """The rules that need no lookup: shape, scheme, allowlist."""
        try:
            parsed = httpx2.URL(url)
        except (httpx2.InvalidURL, TypeError, ValueError):
            raise ServerRefused("url", "the server URL is not a valid URL.") from None
        if parsed.scheme not in host_policy.DEFAULT_PORTS or not parsed.host:
            raise ServerRefused("url", "the server URL needs an http(s) scheme and a host.")
        if parsed.userinfo:
            raise ServerRefused("url", "credentials belong in `headers` or `authorization`, not in the URL.")
        port = parsed.port or host_policy.DEFAULT_PORTS[parsed.scheme]
        try:
            entry = self.rules.check_target(parsed.scheme, _host_of(parsed), port)
        except HostRefused as refusal:
            raise ServerRefused(refusal.rule, refusal.detail) from None
        return parsed, port, entry

    async def vet(self, url: str | httpx2.URL) -> Destination:
        """Every rule, the lookup included; raises `ServerRefused` naming the rule that failed."""
        parsed, port, entry = self.check_url(url)
        try:
            addresses = await self.rules.addresses(_host_of(parsed), port, entry)
        except HostRefused as refusal:
            raise ServerRefused(refusal.rule, refusal.detail) from None
        except HostUnresolved as unresolved:
            raise McpUnavailable(str(unresolved)) from None
        return Destination(parsed, port, addresses[0])


def _host_of(url: httpx2.URL) -> str:
    return url.host.lower().rstrip(".")


def redacted(url: str | httpx2.URL | None) -> str:
    """A URL fit for logs and messages: no credentials, query or fragment (tokens hide there)."""
    if url is None:
        return ""
    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError, ValueError):
        return "<invalid url>"
    return str(parsed.copy_with(userinfo=b"", query=None, fragment=None))
