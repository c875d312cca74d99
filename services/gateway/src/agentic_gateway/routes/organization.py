"""Operator endpoints over recorded usage, in the shapes of OpenAI's Usage and Costs APIs (admin keys only):
`GET /v1/organization/usage/completions` and `GET /v1/organization/costs`."""

from __future__ import annotations

import time

import orjson
from agentic.v1 import usage_pb2
from agentic_core.errors import InvalidRequest
from agentic_core.usage.pages import (
    COSTS_GROUPS,
    COSTS_LIMITS,
    USAGE_GROUPS,
    USAGE_LIMITS,
    PageWindow,
    UsageRow,
    costs_page,
    group_by,
    page_window,
    usage_page,
)
from agentic_core.usage.turn_usage import TurnUsage
from fastapi import APIRouter, Request
from fastapi.responses import Response

from agentic_gateway.context import AdminPrincipal, gateway_of
from agentic_gateway.http import json_response, query_list

router = APIRouter()


async def _rows(request: Request, window: PageWindow, *, by_tenant: bool, by_model: bool, by_key_id: bool) -> list[UsageRow]:
    reply = await gateway_of(request).accounting.query_usage(usage_pb2.UsageQuery(
        start_time=window.first, end_time=window.page_end, bucket_seconds=window.bucket_seconds,
        by_tenant=by_tenant, by_model=by_model, by_key_id=by_key_id,
        tenants=query_list(request, "project_ids"), models=query_list(request, "models"), key_ids=query_list(request, "api_key_ids"),
    ))
    return [UsageRow(
        start_time=row.start_time,
        usage=TurnUsage(row.input_tokens, row.cached_tokens, row.output_tokens, row.reasoning_tokens, row.requests,
                        dict(row.tool_calls), row.tool_seconds),
        project_id=row.tenant if by_tenant else None, model=row.model if by_model else None,
        api_key_id=row.key_id if by_key_id else None,
    ) for row in reply.rows]


@router.get("/v1/organization/usage/completions")
async def usage_completions(request: Request, principal: AdminPrincipal) -> Response:
    """Token usage per bucket; `group_by` any of `project_id` (the tenant), `model`, `api_key_id`."""
    window = page_window(request.query_params, int(time.time()), USAGE_LIMITS)
    groups = group_by(query_list(request, "group_by"), USAGE_GROUPS)
    rows = await _rows(request, window, by_tenant="project_id" in groups, by_model="model" in groups,
                       by_key_id="api_key_id" in groups)
    return json_response(orjson.dumps(usage_page(window, rows)))


@router.get("/v1/organization/costs")
async def costs(request: Request, principal: AdminPrincipal) -> Response:
    """What the usage cost at `AGENTIC_MODEL_PRICES_FILE`'s prices, per day; `group_by` `project_id`, `line_item`."""
    prices = gateway_of(request).accounting.prices
    if not prices:
        raise InvalidRequest("Costs need model prices: set AGENTIC_MODEL_PRICES_FILE on the gateway.",
                             code="costs_not_configured")
    window = page_window(request.query_params, int(time.time()), COSTS_LIMITS)
    groups = group_by(query_list(request, "group_by"), COSTS_GROUPS)
    rows = await _rows(request, window, by_tenant="project_id" in groups, by_model=True, by_key_id=False)
    return json_response(orjson.dumps(costs_page(window, rows, prices, groups)))
