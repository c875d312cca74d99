"""Wiring of the MCP bridge: McpBridge over gRPC (with health and reflection), the `tools.exec.mcp` consumer, drain."""

from __future__ import annotations

import asyncio
import logging

from agentic_runtime import lifecycle
from agentic_runtime.credential_seal import CredentialSeal
from agentic_runtime.grpc.server import GrpcService
from agentic_runtime.metrics import serve_metrics
from agentic_runtime.nats import broker
from nats.aio.client import Client

from agentic_mcp_bridge.bridge import McpBridge
from agentic_mcp_bridge.calls import McpCallHandler
from agentic_mcp_bridge.consumer import McpConsumer
from agentic_mcp_bridge.servicer import SERVICE_NAME, McpBridgeServicer
from agentic_mcp_bridge.settings import McpBridgeSettings

log = logging.getLogger(__name__)
# Their INFO lines carry request URLs, whose queries may hold a server's token.
QUIET_LOGGERS = ("httpx2", "httpcore2", "mcp")


def build_consumer(client: Client, bridge: McpBridge, settings: McpBridgeSettings) -> McpConsumer:
    return McpConsumer(
        client, McpCallHandler(bridge, credentials=CredentialSeal(settings.credentials_secret())), concurrency=settings.concurrency, ack_wait=settings.ack_wait_seconds,
        max_deliveries=settings.max_deliveries, backoff=[], lag_poll_seconds=5.0, heartbeat_seconds=settings.heartbeat_seconds,
    )


async def serve(settings: McpBridgeSettings) -> None:
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().level))
    stop = lifecycle.shutdown_event()
    bridge = McpBridge(settings)
    bridge.start()
    nats_client = await broker.connect(settings.nats_url, "agentic-mcp-bridge", settings)
    await broker.ensure_tools_stream(nats_client)
    consumer = build_consumer(nats_client, bridge, settings)
    service = GrpcService([SERVICE_NAME], settings, max_connection_age_seconds=settings.grpc_max_connection_age_seconds,
                          max_connection_age_grace_seconds=settings.grpc_max_connection_age_grace_seconds)
    service.add(McpBridgeServicer(bridge).register)
    port = await service.start(settings.host, settings.port)
    await consumer.start()
    serve_metrics(settings.metrics_port)
    await service.set_serving(True)
    log.info("mcp-bridge listening on %s:%d, consuming tools.exec.mcp", settings.host, port)
    await stop.wait()
    # Readiness goes false first; then running calls and discoveries get the drain time; then sessions close.
    await service.set_serving(False)
    await asyncio.gather(consumer.stop(settings.drain_seconds), service.drain(settings.drain_seconds, settings.unready_seconds))
    await bridge.close()
    await nats_client.drain()
    log.info("mcp-bridge stopped")
