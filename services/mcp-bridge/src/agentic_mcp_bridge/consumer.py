"""The `tools.exec.mcp` consumer: the tool runner's `KindConsumer` under the durable name the design fixes.

Everything else (heartbeats, deadline drops, stored-result replay, answering on
the `Agentic-Reply` subject) is the shared consumer's behaviour.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from agentic_core.tools.protocol import subject_for
from agentic_runtime.nats import TOOL_RESULTS_BUCKET, TOOL_RESULTS_TTL_SECONDS, TOOLS_STREAM, ensure_key_value
from agentic_tool_runner.consumer import KindConsumer
from agentic_tool_runner.metrics import QUEUE_ACK_PENDING, QUEUE_PENDING
from agentic_tool_runner.tools.base import ToolHandler
from nats.aio.client import Client
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

log = logging.getLogger(__name__)
DURABLE = "mcp-bridge"


class McpConsumer(KindConsumer):
    """`KindConsumer` with a durable of our choosing (`mcp-bridge`; tests use their own kind and durable)."""

    def __init__(self, client: Client, handler: ToolHandler, *, durable: str = DURABLE, **options: Any) -> None:
        super().__init__(client, handler, **options)
        self.durable = durable

    async def start(self) -> None:
        # As KindConsumer.start, but for the durable name (keep the two in step until the consumer takes a name).
        self.results = await ensure_key_value(self.client, TOOL_RESULTS_BUCKET, TOOL_RESULTS_TTL_SECONDS, in_memory=True)
        config = ConsumerConfig(
            durable_name=self.durable,
            filter_subject=subject_for(self.kind),
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=self.ack_wait,
            max_deliver=self.max_deliveries,
            backoff=self.backoff or None,
        )
        self.subscription = await self.jetstream.pull_subscribe(
            subject_for(self.kind), durable=self.durable, stream=TOOLS_STREAM.name, config=config
        )
        self._tasks = [asyncio.create_task(self._fetch_loop()), asyncio.create_task(self._export_lag())]

    async def _export_lag(self) -> None:
        while True:
            try:
                info = await self.jetstream.consumer_info(TOOLS_STREAM.name, self.durable)
                QUEUE_PENDING.labels(kind=self.kind).set(info.num_pending)
                QUEUE_ACK_PENDING.labels(kind=self.kind).set(info.num_ack_pending)
            except Exception as exc:
                log.debug("consumer info for %s failed: %s", self.kind, exc)
            await asyncio.sleep(self.lag_poll_seconds)
