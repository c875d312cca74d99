"""The gateway's FastAPI application: routes, error handlers, probes (its /metrics has a port of its own)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agentic_runtime.http.errors import ErrorShapes, install_error_handlers
from agentic_runtime.http.openapi import serve_document
from agentic_runtime.http.service import NO_FRAMEWORK_TELEMETRY, LongLivedConnections, add_probe_routes
from agentic_runtime.http.upstream import UpstreamHttp, build_router
from agentic_runtime.state.audit import AuditBounds, AuditRecorder
from fastapi import Depends, FastAPI, Request

from agentic_gateway.accounting.accounting import Accounting, tenant_quotas
from agentic_gateway.accounting.audit import AuditTrail
from agentic_gateway.accounting.quota_check import QuotaHeaders, quota_check
from agentic_gateway.auth.authenticator import Authenticator
from agentic_gateway.context import Gateway, app_gateway
from agentic_gateway.metrics import REQUESTS
from agentic_gateway.openapi import gateway_document
from agentic_gateway.peers import Peers
from agentic_gateway.relay.model_lists import ModelLists
from agentic_gateway.relay.native_messages import NativeMessagesVerdicts
from agentic_gateway.routes import (
    audit_logs,
    completions,
    conversations,
    files,
    messages,
    models,
    organization,
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
    # The WebSockets, which SIGTERM drains: run_uvicorn finds them on the app's state, the routes on the Gateway.
    connections = LongLivedConnections()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        peers = Peers.connect(settings)
        upstream = UpstreamHttp(settings)
        router = build_router(settings)
        gateway = app.state.gateway = Gateway(
            settings=settings,
            auth=Authenticator.from_settings(settings),
            peers=peers,
            router=router,
            upstream=upstream,
            model_lists=ModelLists(upstream, settings.models_cache_seconds),
            accounting=await Accounting.start(settings, peers.state_peer, router.exact),
            audit=AuditRecorder(peers.state_peer, AuditBounds.of(settings)),
            connections=connections,
            native_messages=NativeMessagesVerdicts(settings.native_messages_recheck_seconds),
        )
        try:
            yield
        finally:
            await gateway.audit.close()  # its last records, before the state channel closes
            await gateway.accounting.close()
            await gateway.upstream.close()
            await gateway.auth.close()
            await peers.close()

    app = FastAPI(title="agentic", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None,
                  telemetry=NO_FRAMEWORK_TELEMETRY)
    app.state.long_lived = connections
    install_error_handlers(app, ERROR_SHAPES, observe=_count_error)
    app.include_router(organization.router)
    # Quota checks and their headers only when a quota is set.
    quota = [Depends(quota_check)] if tenant_quotas(settings) else []
    if quota:
        app.add_middleware(QuotaHeaders)
    app.include_router(responses.router, dependencies=quota)
    app.include_router(conversations.router, dependencies=quota)
    app.include_router(files.router, dependencies=quota)
    app.include_router(vector_stores.router, dependencies=quota)
    app.include_router(completions.router, dependencies=quota)
    app.include_router(models.router, dependencies=quota)
    app.include_router(messages.router, dependencies=quota)
    app.include_router(websocket.router)
    app.include_router(audit_logs.router)
    app.add_middleware(AuditTrail)  # one audit record per API request

    async def readiness() -> dict[str, bool]:
        return await app_gateway(app).peers.readiness(settings.ready_timeout_seconds)

    add_probe_routes(app, readiness, metrics=False)  # /metrics is on AGENTIC_GATEWAY_METRICS_PORT (__main__)
    serve_document(app, gateway_document(app))
    return app
