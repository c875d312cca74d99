"""llm-d's routes: `/v1alpha/responses/hydrate`, `/execute` and `/persist`, behind the workload token."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, cast

from agentic_core.errors import AgenticError
from agentic_runtime.state.client import StateClient
from agentic_runtime.tools.dispatch import ToolDispatcher
from agentic_runtime.tools.operator_tools import OperatorToolCatalog
from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from nats.aio.client import Client as NatsClient

from agentic_llm_d.auth import WORKLOAD_TOKEN_HEADER, WorkloadAuth
from agentic_llm_d.body import read_body
from agentic_llm_d.execute import ExecuteStep, wants_execute
from agentic_llm_d.metrics import REQUEST_SECONDS, REQUESTS
from agentic_llm_d.settings import LlmDSettings
from agentic_llm_d.split import SplitService

JSON = "application/json"


@dataclass
class LlmD:
    """The process-wide objects every route uses."""

    settings: LlmDSettings
    auth: WorkloadAuth
    state: StateClient
    nats: NatsClient
    dispatcher: ToolDispatcher
    catalog: OperatorToolCatalog
    split: SplitService
    execute: ExecuteStep


def llm_d_of(request: Request) -> LlmD:
    return cast(LlmD, request.app.state.llm_d)


async def caller_tenant(request: Request) -> str:
    """The token is checked before the body is read, so an unauthenticated caller cannot make us buffer 16 MiB."""
    auth = llm_d_of(request).auth
    auth.check_token(request.headers.get(WORKLOAD_TOKEN_HEADER))
    return auth.tenant(request.headers.get(auth.tenant_header))


Tenant = Annotated[str, Depends(caller_tenant)]
router = APIRouter(prefix="/v1alpha/responses")


async def _answer(route: str, request: Request, tenant: str, limit: int,
                  step: Callable[[bytes, str], Awaitable[bytes]]) -> Response:
    started, status = time.perf_counter(), 500
    try:
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


@router.post("/hydrate")
async def hydrate(request: Request, tenant: Tenant) -> Response:
    llm_d = llm_d_of(request)
    execute = wants_execute(request.headers.get(llm_d.settings.execute_header))

    async def step(body: bytes, tenant: str) -> bytes:
        return await llm_d.split.hydrate(body, tenant, execute=execute)

    return await _answer("hydrate", request, tenant, llm_d.settings.hydrate_max_body_bytes, step)


@router.post("/execute")
async def execute(request: Request, tenant: Tenant) -> Response:
    llm_d = llm_d_of(request)
    return await _answer("execute", request, tenant, llm_d.settings.execute_max_body_bytes, llm_d.execute.execute)


@router.post("/persist")
async def persist(request: Request, tenant: Tenant) -> Response:
    llm_d = llm_d_of(request)
    return await _answer("persist", request, tenant, llm_d.settings.persist_max_body_bytes, llm_d.split.persist)
