"""The gateway's FastAPI application: routes, error handlers, probes, metrics."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agentic_runtime.http_errors import ErrorShapes, install_error_handlers
from agentic_runtime.http_service import NO_FRAMEWORK_TELEMETRY, add_probe_routes
from agentic_runtime.upstream_http import UpstreamHttp, build_router
from fastapi import FastAPI, Request

from agentic_gateway import conversations, messages, passthrough, responses
from agentic_gateway.auth import Authenticator
from agentic_gateway.clients import Peers
from agentic_gateway.context import Gateway
from agentic_gateway.metrics import REQUESTS
from agentic_gateway.native_messages import NativeMessagesVerdicts
from agentic_gateway.settings import GatewaySettings

# Errors on these paths are in Anthropic's shape; every other error is in OpenAI's.
ERROR_SHAPES = ErrorShapes(anthropic_prefixes=("/v1/messages",))


def _count_error(request: Request, status: int) -> None:
    route = request.scope.get("route")
    REQUESTS.labels(route=getattr(route, "name", "unknown"), status=status).inc()


def create_app(settings: GatewaySettings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        peers = Peers.connect(settings)
        app.state.gateway = Gateway(
            settings=settings,
            auth=Authenticator(settings.api_keys.get_secret_value() if settings.api_keys else None),
            peers=peers,
            router=build_router(settings),
            upstream=UpstreamHttp(settings),
            native_messages=NativeMessagesVerdicts(settings.native_messages_recheck_seconds),
        )
        try:
            yield
        finally:
            await app.state.gateway.upstream.close()
            await peers.close()

    app = FastAPI(title="agentic", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None,
                  telemetry=NO_FRAMEWORK_TELEMETRY)
    install_error_handlers(app, ERROR_SHAPES, observe=_count_error)
    app.include_router(responses.router)
    app.include_router(conversations.router)
    app.include_router(passthrough.router)
    app.include_router(messages.router)

    async def readiness() -> dict[str, bool]:
        gateway: Gateway = app.state.gateway
        return await gateway.peers.readiness(settings.ready_timeout_seconds)

    add_probe_routes(app, readiness)
    return app

