"""The llm-d backend's HTTP app: `/v1alpha/responses/hydrate` and `/persist` behind the workload token, and probes."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from agentic_core.errors import AgenticError
from agentic_runtime import nats
from agentic_runtime.grpc_server import insecure_channel, is_serving
from agentic_runtime.http_service import NO_FRAMEWORK_TELEMETRY, add_probe_routes
from agentic_runtime.operator_tools import OperatorToolCatalog
from agentic_runtime.tool_dispatch import ToolDispatcher
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentic_llm_d.auth import WORKLOAD_TOKEN_HEADER, WorkloadAuth
from agentic_llm_d.body import read_body
from agentic_llm_d.errors import agentic_error_handler, http_error_handler, unexpected_error_handler
from agentic_llm_d.execute import ExecuteStep, wants_execute
from agentic_llm_d.metrics import REQUEST_SECONDS, REQUESTS
from agentic_llm_d.sealing import ContextSealer
from agentic_llm_d.settings import LlmDSettings
from agentic_llm_d.split import SplitService
from agentic_llm_d.state_client import StateClient

JSON = "application/json"


def create_app(settings: LlmDSettings) -> FastAPI:
    auth = WorkloadAuth(settings.api_token.get_secret_value().strip(), settings.tenant_header, settings.max_tenant_bytes)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.state_channel = insecure_channel(settings.state_address)
        app.state.nats = await nats.connect(settings.nats_url, name="agentic-llm-d")
        sealer = ContextSealer(settings.signing_key.get_secret_value().strip(), settings.context_ttl_seconds)
        catalog = OperatorToolCatalog(app.state.nats)
        dispatcher = ToolDispatcher(app.state.nats)
        await dispatcher.start()
        app.state.split = SplitService(
            settings, StateClient(app.state.state_channel, settings.state_timeout_seconds), sealer, catalog
        )
        app.state.execute = ExecuteStep(settings, sealer, dispatcher, catalog)
        try:
            yield
        finally:
            await dispatcher.close()
            await app.state.state_channel.close()
            await app.state.nats.drain()

    app = FastAPI(title="agentic-llm-d", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None,
                  telemetry=NO_FRAMEWORK_TELEMETRY)
    app.add_exception_handler(AgenticError, agentic_error_handler)
    app.add_exception_handler(StarletteHTTPException, http_error_handler)
    app.add_exception_handler(Exception, unexpected_error_handler)

    def caller_tenant(request: Request) -> str:
        # The token is checked before the body is read, so an unauthenticated caller cannot make us buffer 16 MiB.
        auth.check_token(request.headers.get(WORKLOAD_TOKEN_HEADER))
        return auth.tenant(request.headers.get(auth.tenant_header))

    async def answer(route: str, request: Request, limit: int, step: Callable[[bytes, str], Awaitable[bytes]]) -> Response:
        started, status = time.perf_counter(), 500
        try:
            tenant = caller_tenant(request)
            body = await read_body(request, limit)
            response = Response(content=await step(body, tenant), media_type=JSON)
            status = 200
            return response
        except AgenticError as error:
            status = error.http_status
            raise
        finally:
            REQUESTS.labels(route=route, status=str(status)).inc()
            REQUEST_SECONDS.labels(route=route).observe(time.perf_counter() - started)

    @app.post("/v1alpha/responses/hydrate")
    async def hydrate(request: Request) -> Response:
        execute = wants_execute(request.headers.get(settings.execute_header))

        async def step(body: bytes, tenant: str) -> bytes:
            return await app.state.split.hydrate(body, tenant, execute=execute)

        return await answer("hydrate", request, settings.hydrate_max_body_bytes, step)

    @app.post("/v1alpha/responses/execute")
    async def execute(request: Request) -> Response:
        return await answer("execute", request, settings.execute_max_body_bytes, app.state.execute.execute)

    @app.post("/v1alpha/responses/persist")
    async def persist(request: Request) -> Response:
        return await answer("persist", request, settings.persist_max_body_bytes, app.state.split.persist)

    async def readiness() -> dict[str, bool]:
        return {"state": await is_serving(app.state.state_channel, settings.ready_timeout_seconds)}

    add_probe_routes(app, readiness)
    return app
