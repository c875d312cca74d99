"""The llm-d backend's HTTP app: its routes, the shared error handlers, probes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agentic_runtime.credential_seal import CredentialSeal
from agentic_runtime.http.errors import ErrorShapes, install_error_handlers
from agentic_runtime.http.openapi import serve_document
from agentic_runtime.http.service import NO_FRAMEWORK_TELEMETRY, add_probe_routes
from agentic_runtime.nats import broker
from agentic_runtime.state.audit import AuditBounds, AuditRecorder
from agentic_runtime.state.client import StateClient
from agentic_runtime.state.usage import UsageRecorder
from agentic_runtime.tools.dispatch import ToolDispatcher
from agentic_runtime.tools.operator_tools import OperatorToolCatalog
from fastapi import FastAPI

from agentic_llm_d.auth import WorkloadAuth
from agentic_llm_d.execute import ExecuteStep
from agentic_llm_d.metrics import TOOL_DISPATCH
from agentic_llm_d.openapi import llm_d_document
from agentic_llm_d.routes import LlmD, router
from agentic_llm_d.sealing import ContextSealer
from agentic_llm_d.settings import LlmDSettings
from agentic_llm_d.split import SplitService


def create_app(settings: LlmDSettings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state = StateClient(settings.state_address, settings.state_timeout_seconds, settings)
        connection = await broker.connect(settings.nats_url, "agentic-llm-d", settings)  # TLS and credentials included
        sealer = ContextSealer(settings.signing_key.get_secret_value().strip(), settings.context_ttl_seconds)
        catalog = OperatorToolCatalog(connection)
        dispatcher = ToolDispatcher(connection, TOOL_DISPATCH, CredentialSeal(settings.credentials_secret()))
        await dispatcher.start()
        # Split turns' usage and audit records, sent to the state service in batches.
        usage, audit = UsageRecorder(state.peer), AuditRecorder(state.peer, AuditBounds.of(settings))
        app.state.llm_d = LlmD(
            settings=settings,
            auth=WorkloadAuth(settings.api_token.get_secret_value().strip(), settings.tenant_header,
                              settings.max_tenant_bytes),
            state=state, nats=connection, dispatcher=dispatcher, catalog=catalog,
            split=SplitService(settings, state, sealer, catalog, usage, audit),
            execute=ExecuteStep(settings, sealer, dispatcher, catalog, usage),
        )
        try:
            yield
        finally:
            await dispatcher.close()
            await usage.close()  # the last second's records, before the state channel closes
            await audit.close()
            await state.close()
            await connection.drain()

    app = FastAPI(title="agentic-llm-d", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None, telemetry=NO_FRAMEWORK_TELEMETRY)
    install_error_handlers(app, ErrorShapes())
    app.include_router(router)

    async def readiness() -> dict[str, bool]:
        llm_d: LlmD = app.state.llm_d
        return {"state": await llm_d.state.serving(settings.ready_timeout_seconds)}

    add_probe_routes(app, readiness)
    serve_document(app, llm_d_document(app, settings))
    return app
