"""The `tools.exec.mcp` consumer: the shared JetStream tool consumer under the durable name the design fixes.

Heartbeats, deadline drops, stored-result replay and answering on the
`REPLY_HEADER` subject are the shared consumer's behaviour.
"""

from __future__ import annotations

from typing import Any

from agentic_runtime.tools.consumer import KindConsumer, ToolHandler
from agentic_runtime.tools.protocol import durable_name
from nats.aio.client import Client

DURABLE = durable_name("mcp")


class McpConsumer(KindConsumer):
    """`KindConsumer` with the bridge's durable (`mcp-bridge`; tests use their own kind and durable)."""

    def __init__(self, client: Client, handler: ToolHandler, *, durable: str = DURABLE, **options: Any) -> None:
        super().__init__(client, handler, durable=durable, **options)
