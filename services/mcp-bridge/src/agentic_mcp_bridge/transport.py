"""httpx2 transports under every MCP HTTP session.

`WatchedTransport` notes when the server says it forgot our MCP session (a 404
to a request that carried one: nothing ran, a new session may be opened).
`GuardedTransport` also applies the host policy to every request it sends,
redirects included: each request is vetted after its own DNS lookup and sent
to the address that was vetted (the TLS name stays the URL's host), so a second
lookup cannot move it somewhere private. A redirect whose target the policy
refuses is recorded, so the failure it causes is reported as that refusal.
"""

from __future__ import annotations

import httpx2

from agentic_mcp_bridge.errors import McpUnavailable, ServerRefused
from agentic_mcp_bridge.policy import HostPolicy, redacted

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


class WatchedTransport(httpx2.AsyncBaseTransport):
    def __init__(self) -> None:
        self.session_gone = False
        self.refusal: ServerRefused | None = None
        self._inner = httpx2.AsyncHTTPTransport(trust_env=False)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._send(request)
        if response.status_code == 404 and "mcp-session-id" in request.headers:
            self.session_gone = True
        return response

    async def _send(self, request: httpx2.Request) -> httpx2.Response:
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class GuardedTransport(WatchedTransport):
    def __init__(self, policy: HostPolicy) -> None:
        super().__init__()
        self.policy = policy

    async def _send(self, request: httpx2.Request) -> httpx2.Response:
        try:
            destination = await self.policy.vet(request.url)
        except ServerRefused as refusal:
            self.refusal = refusal
            raise
        except McpUnavailable as failure:
            raise httpx2.ConnectError(failure.reason, request=request) from None
        extensions = dict(request.extensions)
        if request.url.scheme == "https":
            extensions["sni_hostname"] = request.url.host
        pinned = httpx2.Request(
            request.method,
            request.url.copy_with(host=str(destination.address)),
            headers=request.headers,
            stream=request.stream,
            extensions=extensions,
        )
        response = await self._inner.handle_async_request(pinned)
        location = response.headers.get("location")
        if response.status_code in REDIRECT_STATUSES and location:
            await self._check_redirect(request.url, location)
        return response

    async def _check_redirect(self, origin: httpx2.URL, location: str) -> None:
        try:
            target = origin.join(location)
        except (httpx2.InvalidURL, ValueError):
            self.refusal = ServerRefused("redirect", "the server redirected to an unusable location.")
            return
        try:
            await self.policy.vet(target)
        except ServerRefused as refusal:
            self.refusal = ServerRefused(
                "redirect", f"the server redirected to {redacted(target)}, refused by rule {refusal.rule}."
            )
        except McpUnavailable:
            self.refusal = ServerRefused("redirect", f"the server redirected to {redacted(target)}, which does not resolve.")
