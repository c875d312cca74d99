"""`McpBridge.ListTools` over gRPC: proto in, the bridge's discovery, proto out."""

from __future__ import annotations

import grpc
from agentic.v1 import mcp_bridge_pb2, mcp_bridge_pb2_grpc

from agentic_mcp_bridge.bridge import McpBridge

SERVICE_NAME = mcp_bridge_pb2.DESCRIPTOR.services_by_name["McpBridge"].full_name


class McpBridgeServicer(mcp_bridge_pb2_grpc.McpBridgeServicer):
    def __init__(self, bridge: McpBridge) -> None:
        self.bridge = bridge

    async def ListTools(
        self,
        request: mcp_bridge_pb2.ListToolsRequest,
        context: grpc.aio.ServicerContext[mcp_bridge_pb2.ListToolsRequest, mcp_bridge_pb2.ListToolsReply],
    ) -> mcp_bridge_pb2.ListToolsReply:
        server = request.server
        target = await self.bridge.target(
            server_label=server.server_label,
            server_url=server.server_url or None,
            connector_id=server.connector_id or None,
            headers=dict(server.headers),
        )
        tools = await self.bridge.list_tools(
            request.principal.tenant, target, list(request.allowed_tools), timeout=context.time_remaining()
        )
        return mcp_bridge_pb2.ListToolsReply(
            tools=[
                mcp_bridge_pb2.McpTool(
                    name=tool.name, description=tool.description, input_schema=tool.input_schema,
                    annotations=tool.annotations,
                )
                for tool in tools
            ]
        )

    def register(self, server: grpc.aio.Server) -> None:
        mcp_bridge_pb2_grpc.add_McpBridgeServicer_to_server(self, server)
