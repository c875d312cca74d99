"""Discovering the tools of a request's MCP servers through the mcp-bridge (cached there)."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from agentic.v1 import common_pb2, mcp_bridge_pb2, mcp_bridge_pb2_grpc
from agentic_core.errors import InvalidRequest
from agentic_core.tools.mcp import McpDeclaration, McpServerTools, parse_declaration
from agentic_runtime.grpc.client import Peer
from agentic_runtime.settings import TransportSecuritySettings


class McpDiscovery:
    def __init__(self, address: str, security: TransportSecuritySettings, *, timeout: float, max_servers: int,
                 max_tools: int) -> None:
        self.peer = Peer("mcp-bridge", address, timeout, security)
        self.stub = mcp_bridge_pb2_grpc.McpBridgeStub(self.peer.channel)
        self.max_servers = max_servers
        self.max_tools = max_tools

    async def discover(self, principal: common_pb2.Principal, tools: list[dict[str, Any]] | None) -> list[McpServerTools]:
        declarations = [parse_declaration(tool, index) for index, tool in enumerate(tools or [])
                        if isinstance(tool, dict) and tool.get("type") == "mcp"]
        if not declarations:
            return []
        if len(declarations) > self.max_servers:
            raise InvalidRequest(f"At most {self.max_servers} MCP servers may be declared in one request.", param="tools",
                                 code="too_many_mcp_servers")
        labels = [declaration.server_label for declaration in declarations]
        if len(set(labels)) != len(labels):
            raise InvalidRequest("Each mcp tool needs its own `server_label`.", param="tools", code="duplicate_server_label")
        servers = await asyncio.gather(*(self._list(principal, declaration) for declaration in declarations))
        if sum(len(server.tools) for server in servers) > self.max_tools:
            raise InvalidRequest(f"The MCP servers offer more than {self.max_tools} tools; narrow them with `allowed_tools`.",
                                 param="tools", code="too_many_mcp_tools")
        return list(servers)

    async def _list(self, principal: common_pb2.Principal, declaration: McpDeclaration) -> McpServerTools:
        request = mcp_bridge_pb2.ListToolsRequest(
            principal=principal,
            server=mcp_bridge_pb2.McpServer(
                server_label=declaration.server_label, server_url=declaration.server_url or "",
                connector_id=declaration.connector_id or "", headers=declaration.headers,
            ),
            allowed_tools=declaration.allowed_tools or [],
        )
        reply = await self.peer.call(self.stub.ListTools, request)
        tools = [
            {"name": tool.name, "description": tool.description,
             "input_schema": orjson.loads(tool.input_schema) if tool.input_schema else {"type": "object"},
             "annotations": orjson.loads(tool.annotations) if tool.annotations else None}
            for tool in reply.tools
        ]
        return McpServerTools(declaration, tools)

    async def close(self) -> None:
        await self.peer.close()
