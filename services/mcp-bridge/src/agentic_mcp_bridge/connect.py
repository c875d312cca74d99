"""Opening one MCP client session to a target: Streamable HTTP, HTTP+SSE or a stdio process, then `initialize`."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

import httpx2
import mcp_types as types
from mcp import ClientSession
from mcp.client.session import IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from agentic_mcp_bridge.errors import ServerRefused
from agentic_mcp_bridge.policy import HostPolicy
from agentic_mcp_bridge.targets import ServerTarget
from agentic_mcp_bridge.transport import GuardedTransport, WatchedTransport

log = logging.getLogger(__name__)
CLIENT_INFO = types.Implementation(name="agentic-mcp-bridge", version="0.1.0")


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect: float
    read: float  # longest silence on an HTTP response (operations have their own, shorter deadlines)


class Connection:
    """How one session reaches its server; remembers a host-policy refusal met on the way."""

    def __init__(
        self,
        target: ServerTarget,
        *,
        policy: HostPolicy,
        timeouts: Timeouts,
        on_tools_changed: Callable[[], None],
    ) -> None:
        self.target = target
        self.policy = policy
        self.timeouts = timeouts
        self.on_tools_changed = on_tools_changed
        self._transports: list[WatchedTransport] = []

    @property
    def refusal(self) -> ServerRefused | None:
        """The host-policy refusal that broke this session, if one did."""
        return next((transport.refusal for transport in self._transports if transport.refusal is not None), None)

    @property
    def session_gone(self) -> bool:
        """The server said it does not know this session any more (so it ran nothing of the failed request)."""
        return any(transport.session_gone for transport in self._transports)

    def _http_client(self, headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                     auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
        transport = WatchedTransport() if self.target.from_operator else GuardedTransport(self.policy)
        self._transports.append(transport)
        return httpx2.AsyncClient(
            headers={**self.target.headers, **(headers or {})},
            timeout=httpx2.Timeout(self.timeouts.read, connect=self.timeouts.connect),
            transport=transport,
            auth=auth,
            trust_env=False,
        )

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            log.info("MCP server %s changed its tool list", self.target.display)
            self.on_tools_changed()
        elif isinstance(message, Exception):
            log.debug("MCP transport of %s reported %s", self.target.display, type(message).__name__)

    @asynccontextmanager
    async def open(self) -> AsyncIterator[ClientSession]:
        """An initialized session, closed (and its process or HTTP session ended) on exit."""
        target = self.target
        async with AsyncExitStack() as stack:
            if target.transport == "stdio":
                assert target.stdio is not None
                parameters = StdioServerParameters(
                    command=target.stdio.command, args=target.stdio.args, env=target.stdio.env or None, cwd=target.stdio.cwd
                )
                read, write = await stack.enter_async_context(stdio_client(parameters))
            elif target.transport == "sse":
                assert target.url is not None
                read, write = await stack.enter_async_context(
                    sse_client(target.url, timeout=self.timeouts.connect, sse_read_timeout=self.timeouts.read,
                               httpx_client_factory=self._http_client)
                )
            else:
                assert target.url is not None
                client = await stack.enter_async_context(self._http_client())
                read, write = await stack.enter_async_context(streamable_http_client(target.url, http_client=client))
            session = await stack.enter_async_context(
                ClientSession(read, write, message_handler=self._on_message, client_info=CLIENT_INFO)
            )
            await session.initialize()
            yield session
