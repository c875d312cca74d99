"""The tool runner's process: one JetStream consumer per tool kind, and its probes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, cast

import orjson
from agentic_runtime.http.service import NO_FRAMEWORK_TELEMETRY, add_probe_routes
from agentic_runtime.nats import broker
from agentic_runtime.tools.consumer import KindConsumer
from fastapi import FastAPI
from nats.aio.client import Client

from agentic_tool_runner.handlers import build_handlers, concurrency_for
from agentic_tool_runner.search.cache import WEB_SEARCH_CACHE_BUCKET, SearchCache
from agentic_tool_runner.settings import ToolRunnerSettings
from agentic_tool_runner.tools.base import ToolHandler
from agentic_tool_runner.tools.web_search import WebSearchTool

if TYPE_CHECKING:
    from agentic_tool_runner.tools.operator import OperatorTools

log = logging.getLogger(__name__)


def _backoff(settings: ToolRunnerSettings) -> list[float]:
    return [float(value) for value in settings.redelivery_backoff_seconds.split(",") if value.strip()]


async def attach_search_cache(client: Client, handlers: list[ToolHandler], settings: ToolRunnerSettings) -> None:
    for handler in handlers:
        if isinstance(handler, WebSearchTool) and settings.web_search_cache_seconds > 0:
            bucket = await broker.ensure_key_value(client, WEB_SEARCH_CACHE_BUCKET, settings.web_search_cache_seconds)
            handler.cache = SearchCache(bucket)


async def publish_operator_tools(client: Client, handlers: list[ToolHandler]) -> None:
    """Executors learn the operator tools' schemas from here (the runner is where they are installed)."""
    for handler in handlers:
        if handler.kind == "operator":
            bucket = await broker.ensure_key_value(client, broker.TOOL_DEFINITIONS_BUCKET)
            for definition in cast("OperatorTools", handler).definitions():  # the kind's handler (handlers.HANDLERS)
                await bucket.put(definition["name"], orjson.dumps(definition))


def create_app(settings: ToolRunnerSettings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        client = await broker.connect(settings.nats_url, "agentic-tool-runner", settings)
        await broker.ensure_tools_stream(client)
        handlers = build_handlers(settings)
        await publish_operator_tools(client, handlers)
        await attach_search_cache(client, handlers, settings)
        consumers = [
            KindConsumer(
                client, handler, concurrency=concurrency_for(settings, handler.kind), ack_wait=settings.ack_wait_seconds,
                max_deliveries=settings.max_deliveries, backoff=_backoff(settings), lag_poll_seconds=settings.lag_poll_seconds,
                heartbeat_seconds=settings.heartbeat_seconds,
            )
            for handler in handlers
        ]
        for consumer in consumers:
            await consumer.start()
        log.info("tool runner consuming: %s", ", ".join(consumer.kind for consumer in consumers) or "nothing")
        app.state.nats = client
        try:
            yield
        finally:
            # All kinds drain at once: SIGTERM waits drain_seconds, not that times the number of kinds.
            await asyncio.gather(*(consumer.stop(settings.drain_seconds) for consumer in consumers))
            await client.drain()

    app = FastAPI(title="agentic-tool-runner", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None,
                  telemetry=NO_FRAMEWORK_TELEMETRY)

    async def readiness() -> dict[str, bool]:
        return {"nats": app.state.nats.is_connected}

    add_probe_routes(app, readiness)
    return app
