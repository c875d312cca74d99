"""The bridge's behaviour, once: resolve and vet a server, list its tools (cached), call a tool on a pooled session.

The gRPC servicer (discovery) and the JetStream handler (calls) are thin adapters over this.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import mcp_types as types
import orjson
from agentic_core.errors import AgenticError
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from agentic_mcp_bridge.catalog import DiscoveredTool, ToolCatalog
from agentic_mcp_bridge.connect import Connection, Timeouts
from agentic_mcp_bridge.errors import McpServerFailed, McpUnavailable, ServerRefused
from agentic_mcp_bridge.failures import describe_failure, is_session_gone
from agentic_mcp_bridge.metrics import DISCOVERY, REFUSALS
from agentic_mcp_bridge.policy import HostPolicy, Resolver, system_resolver
from agentic_mcp_bridge.sessions import SessionKey, SessionLost, SessionPool
from agentic_mcp_bridge.settings import McpBridgeSettings
from agentic_mcp_bridge.targets import ServerTarget, Targets, load_operator_servers

log = logging.getLogger(__name__)
T = TypeVar("T")


class McpBridge:
    def __init__(self, settings: McpBridgeSettings, *, resolver: Resolver = system_resolver) -> None:
        self.settings = settings
        self.policy = HostPolicy(
            settings.allowed_hosts, allow_http=settings.allow_http, private_networks=settings.private_networks,
            resolver=resolver,
        )
        self.targets = Targets(load_operator_servers(settings.servers))
        self.pool = SessionPool(max_sessions=settings.max_sessions, idle_seconds=settings.session_idle_seconds)
        self.catalog = ToolCatalog(ttl_seconds=settings.discovery_cache_seconds, max_entries=settings.discovery_cache_entries)
        longest = max(settings.call_timeout_seconds, settings.list_tools_timeout_seconds)
        self.timeouts = Timeouts(connect=settings.connect_timeout_seconds, read=longest + settings.connect_timeout_seconds)

    def start(self) -> None:
        self.pool.start()

    async def close(self) -> None:
        await self.pool.close()

    async def target(
        self, *, server_label: str, server_url: str | None, connector_id: str | None, headers: Mapping[str, str] | None
    ) -> ServerTarget:
        """The server a request names, vetted by the host policy unless the operator configured it."""
        target = self.targets.resolve(
            server_label=server_label, server_url=server_url, connector_id=connector_id, headers=headers
        )
        if not target.from_operator:
            assert target.url is not None
            try:
                await self.policy.vet(target.url)
            except ServerRefused as refusal:
                REFUSALS.labels(rule=refusal.rule).inc()
                raise
        return target

    # --- discovery --------------------------------------------------------------------------------

    async def list_tools(
        self, tenant: str, target: ServerTarget, allowed_tools: list[str], timeout: float | None = None
    ) -> list[DiscoveredTool]:
        """The server's tools (all pages), filtered by `allowed_tools` when given."""
        limit = self.settings.list_tools_timeout_seconds if timeout is None else min(timeout, self.settings.list_tools_timeout_seconds)
        outcome = "hit" if self.catalog.cached(target.cache_key) is not None else "miss"
        try:
            tools = await asyncio.wait_for(
                self.catalog.tools(target.cache_key, lambda: self._fetch_tools(tenant, target)), limit
            )
        except TimeoutError:
            DISCOVERY.labels(outcome="failed").inc()
            raise McpServerFailed(target.label, f"it did not answer within {limit:g} s.") from None
        except McpUnavailable as failure:
            DISCOVERY.labels(outcome="failed").inc()
            raise McpServerFailed(target.label, failure.reason) from None
        except ServerRefused:
            DISCOVERY.labels(outcome="refused").inc()
            raise
        DISCOVERY.labels(outcome=outcome).inc()
        if allowed_tools:
            wanted = set(allowed_tools)
            tools = [tool for tool in tools if tool.name in wanted]
        return tools

    async def _fetch_tools(self, tenant: str, target: ServerTarget) -> list[DiscoveredTool]:
        max_tools, max_pages = self.settings.max_tools, self.settings.max_list_pages

        async def list_every_page(session: ClientSession) -> list[types.Tool]:
            listed: list[types.Tool] = []
            cursor: str | None = None
            for _ in range(max_pages):
                page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
                listed.extend(page.tools)
                if len(listed) > max_tools:
                    raise McpUnavailable(f"it lists more than {max_tools} tools.")
                if not page.next_cursor:
                    return listed
                cursor = page.next_cursor
            raise McpUnavailable(f"its tool list did not end within {max_pages} pages.")

        listed = await self._on_session(
            tenant, target, list_every_page, timeout=self.settings.list_tools_timeout_seconds, idempotent=True
        )
        return [_discovered(tool) for tool in listed]

    # --- calls ------------------------------------------------------------------------------------

    async def call_tool(
        self, tenant: str, target: ServerTarget, name: str, arguments: dict[str, Any], timeout: float
    ) -> types.CallToolResult:
        """One `tools/call`; `isError` results come back as results, failures to get one raise `McpUnavailable`.

        Sent as a plain request: `ClientSession.call_tool` would validate structured content against
        the tool's output schema (listing the tools again on sessions that did not list them), and the
        bridge relays what the server answered rather than judging it.
        """
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))

        async def call(session: ClientSession) -> types.CallToolResult:
            return await session.send_request(request, types.CallToolResult)

        return await self._on_session(tenant, target, call, timeout=timeout, idempotent=False)

    # --- sessions ---------------------------------------------------------------------------------

    async def _on_session(
        self,
        tenant: str,
        target: ServerTarget,
        operation: Callable[[ClientSession], Awaitable[T]],
        *,
        timeout: float,
        idempotent: bool,
    ) -> T:
        """Run `operation` on the pooled session of (tenant, server, credentials).

        A reused session the server has forgotten (it restarted, or expired the
        session) is replaced once: always for listing, and for a call only when
        the server says the session is gone, i.e. it did not run the call.
        """
        key = SessionKey(tenant, target.identity, target.fingerprint)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        connection = Connection(
            target, policy=self.policy, timeouts=self.timeouts,
            on_tools_changed=lambda: self.catalog.invalidate(target.cache_key),
        )
        for attempt in (1, 2):
            try:
                session = await self.pool.acquire(key, connection, deadline - loop.time())
            except SessionLost as lost:
                raise _failure(None, lost.cause) from None
            reused = session.uses > 0
            try:
                return await session.run(operation, deadline - loop.time())
            except TimeoutError:
                raise McpUnavailable(f"it did not answer within {timeout:g} s.") from None
            except (SessionLost, MCPError) as exc:
                cause = exc.cause if isinstance(exc, SessionLost) else exc
                gone = session.connector.session_gone or is_session_gone(cause)
                retry = reused and attempt == 1 and (idempotent or gone)
                if isinstance(exc, SessionLost) or gone:
                    self.pool.discard(session)
                if retry:
                    log.info("MCP session to %s was lost; opening a new one", target.display)
                    continue
                raise _failure(session.connector.refusal, cause) from None
            except McpUnavailable:
                raise
            except Exception as exc:  # a malformed answer, a transport bug: the server failed this request
                raise _failure(session.connector.refusal, exc) from None
            finally:
                self.pool.release(session)
        raise AssertionError("unreachable")



def _failure(refusal: Exception | None, cause: BaseException | None) -> Exception:
    """The error a failed session or request stands for: the policy refusal behind it, or a reason."""
    if refusal is None and isinstance(cause, AgenticError):
        refusal = cause
    if refusal is not None:
        if isinstance(refusal, ServerRefused):
            REFUSALS.labels(rule=refusal.rule).inc()
        return refusal
    return McpUnavailable(describe_failure(cause))


def _discovered(tool: types.Tool) -> DiscoveredTool:
    annotations = tool.annotations.model_dump(by_alias=True, mode="json", exclude_none=True) if tool.annotations else None
    return DiscoveredTool(
        name=tool.name,
        description=tool.description or "",
        input_schema=orjson.dumps(tool.input_schema or {"type": "object"}),
        annotations=orjson.dumps(annotations) if annotations else b"",
    )
