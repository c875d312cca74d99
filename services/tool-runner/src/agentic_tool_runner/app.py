"""The tool runner's process: a NATS connection and its probes. Tool consumers arrive with the tools issue."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agentic_runtime import nats
from agentic_runtime.http_service import add_probe_routes
from fastapi import FastAPI

from agentic_tool_runner.settings import ToolRunnerSettings


def create_app(settings: ToolRunnerSettings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.nats = await nats.connect(settings.nats_url, name="agentic-tool-runner")
        await nats.ensure_streams(app.state.nats)
        try:
            yield
        finally:
            await app.state.nats.drain()

    app = FastAPI(title="agentic-tool-runner", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)

    async def readiness() -> dict[str, bool]:
        return {"nats": app.state.nats.is_connected}

    add_probe_routes(app, readiness)
    return app
