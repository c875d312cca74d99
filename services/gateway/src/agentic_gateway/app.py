"""The gateway's FastAPI application: routes, error handlers, probes (its /metrics has a port of its own)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agentic_runtime.http.errors import ErrorShapes, install_error_handlers
from agentic_runtime.http.openapi import serve_document
from agentic_runtime.http.service import NO_FRAMEWORK_TELEMETRY, LongLivedConnections, add_probe_routes
from agentic_runtime.http.upstream import UpstreamHttp, build_router
from fastapi import FastAPI, Request

from agentic_gateway.accounting import audit
from agentic_gateway.accounting.accounting import Accounting, install_accounting
from agentic_gateway.auth.authenticator import Authenticator
from agentic_gateway.context import Gateway
from agentic_gateway.metrics import REQUESTS
from agentic_gateway.openapi import gateway_document
from agentic_gateway.peers import Peers
from agentic_gateway.relay.model_lists import ModelLists
from agentic_gateway.relay.native_messages import NativeMessagesVerdicts
from agentic_gateway.routes import (
    completions,
    conversations,
    files,
    messages,
    models,
    responses,
    vector_stores,
    websocket,
)
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
        upstream = UpstreamHttp(settings)
        app.state.gateway = Gateway(
            settings=settings,
            auth=Authenticator.from_settings(settings),
            peers=peers,
            router=build_router(settings),
            upstream=upstream,
            model_lists=ModelLists(upstream, settings.models_cache_seconds),
            native_messages=NativeMessagesVerdicts(settings.native_messages_recheck_seconds),
        )
        app.state.accounting = await Accounting.start(settings, peers.state_peer, app.state.gateway.router.exact)
        try:
            yield
        finally:
            await app.state.accounting.close()
            await app.state.gateway.upstream.close()
            await app.state.gateway.auth.close()
            await peers.close()

    app = FastAPI(title="agentic", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None,
                  telemetry=NO_FRAMEWORK_TELEMETRY)
    app.state.long_lived = LongLivedConnections()  # the WebSockets, which SIGTERM drains
    install_error_handlers(app, ERROR_SHAPES, observe=_count_error)
    quota = install_accounting(app, settings)  # organization routes; quota checks and headers when quotas are set
    app.include_router(responses.router, dependencies=quota)
    app.include_router(conversations.router, dependencies=quota)
    app.include_router(files.router, dependencies=quota)
    app.include_router(vector_stores.router, dependencies=quota)
    app.include_router(completions.router, dependencies=quota)
    app.include_router(models.router, dependencies=quota)
    app.include_router(messages.router, dependencies=quota)
    app.include_router(websocket.router)
    app.include_router(audit.router)
    app.add_middleware(audit.AuditTrail)  # one audit record per API request

    async def readiness() -> dict[str, bool]:
        gateway: Gateway = app.state.gateway
        return await gateway.peers.readiness(settings.ready_timeout_seconds)

    add_probe_routes(app, readiness, metrics=False)  # /metrics is on AGENTIC_GATEWAY_METRICS_PORT (__main__)
    serve_document(app, gateway_document(app))
    return app

