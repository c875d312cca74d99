"""The llm-d backend's HTTP app. Probes now; hydrate/persist arrive with the llm-d issue."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agentic_runtime import nats
from agentic_runtime.grpc_server import insecure_channel, is_serving
from agentic_runtime.http_service import add_probe_routes
from fastapi import FastAPI

from agentic_llm_d.settings import LlmDSettings


def create_app(settings: LlmDSettings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.state_channel = insecure_channel(settings.state_address)
        app.state.nats = await nats.connect(settings.nats_url, name="agentic-llm-d")
        try:
            yield
        finally:
            await app.state.state_channel.close()
            await app.state.nats.drain()

    app = FastAPI(title="agentic-llm-d", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)

    async def readiness() -> dict[str, bool]:
        return {"state": await is_serving(app.state.state_channel, settings.ready_timeout_seconds)}

    add_probe_routes(app, readiness)
    return app
