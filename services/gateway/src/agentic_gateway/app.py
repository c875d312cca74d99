"""The gateway's FastAPI application: routes, error handlers, probes, metrics."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from agentic_core.errors import AgenticError
from agentic_core.routing import ModelRouter
from agentic_runtime.http_service import NO_FRAMEWORK_TELEMETRY, add_probe_routes
from agentic_runtime.upstream_http import UpstreamHttp, build_router
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentic_gateway import conversations, messages, passthrough, responses
from agentic_gateway.auth import Authenticator
from agentic_gateway.clients import Peers
from agentic_gateway.errors import agentic_error_handler, http_error_handler, validation_error_handler
from agentic_gateway.settings import GatewaySettings


@dataclass
class Gateway:
    settings: GatewaySettings
    auth: Authenticator
    peers: Peers
    router: ModelRouter
    upstream: UpstreamHttp
    draining: bool = False


def create_app(settings: GatewaySettings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        peers = await Peers.connect(settings)
        app.state.gateway = Gateway(
            settings=settings,
            auth=Authenticator(settings.api_keys.get_secret_value() if settings.api_keys else None),
            peers=peers,
            router=build_router(settings),
            upstream=UpstreamHttp(settings),
        )
        try:
            yield
        finally:
            app.state.gateway.draining = True
            await app.state.gateway.upstream.close()
            await peers.close()

    app = FastAPI(title="agentic", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None,
                  telemetry=NO_FRAMEWORK_TELEMETRY)
    app.add_exception_handler(AgenticError, agentic_error_handler)
    app.add_exception_handler(StarletteHTTPException, http_error_handler)
    app.add_exception_handler(RequestValidationError, validation_error_handler)
    app.include_router(responses.router)
    app.include_router(conversations.router)
    app.include_router(passthrough.router)
    app.include_router(messages.router)

    async def readiness() -> dict[str, bool]:
        gateway: Gateway = app.state.gateway
        checks = await gateway.peers.readiness(settings.ready_timeout_seconds)
        checks["accepting"] = not gateway.draining
        return checks

    add_probe_routes(app, readiness)
    return app
