"""Wiring of the MCP bridge: gRPC health and reflection, NATS, drain. The McpBridge API arrives with the MCP issue."""

from __future__ import annotations

import logging

from agentic_runtime import lifecycle, nats
from agentic_runtime.grpc_server import GrpcService
from agentic_runtime.metrics import serve_metrics

from agentic_mcp_bridge.settings import McpBridgeSettings

log = logging.getLogger(__name__)


async def serve(settings: McpBridgeSettings) -> None:
    stop = lifecycle.shutdown_event()
    nats_client = await nats.connect(settings.nats_url, name="agentic-mcp-bridge")
    await nats.ensure_streams(nats_client)
    service = GrpcService([])
    port = await service.start(settings.host, settings.port)
    serve_metrics(settings.metrics_port)
    await service.set_serving(True)
    log.info("mcp-bridge listening on %s:%d", settings.host, port)
    await stop.wait()
    await service.drain(settings.drain_seconds)
    await nats_client.drain()
