"""`GET /v1/models`: every model the gateway serves, with the context window its server reports, in OpenAI's
list shape for the SDKs, or as Codex CLI's model catalog when Codex asks (it sends `client_version`)."""

from __future__ import annotations

import asyncio

import orjson
from agentic_core.errors import NotFound
from agentic_core.model_catalog import CodexCatalogOptions, Entry, codex_catalog, listed_models
from fastapi import APIRouter, Request
from fastapi.responses import Response

from agentic_gateway.context import API_DEPENDENCIES, gateway_of
from agentic_gateway.http import json_response

router = APIRouter(dependencies=API_DEPENDENCIES)


async def all_models(request: Request) -> list[Entry]:
    """Every model of every configured model server that answers, plus the routing table's exact names."""
    gateway = gateway_of(request)
    servers = gateway.router.servers()
    listed = await asyncio.gather(*(gateway.model_lists.entries(route) for route in servers))
    listings = {route.base_url: entries for route, entries in zip(servers, listed, strict=True) if entries is not None}
    return listed_models(listings, gateway.router)


@router.get("/v1/models")
async def list_models(request: Request, client_version: str | None = None) -> Response:
    models = await all_models(request)
    if client_version is not None:
        settings = gateway_of(request).settings
        options = CodexCatalogOptions(
            base_instructions=settings.codex_base_instructions,
            auto_compact_percent=settings.codex_auto_compact_percent,
            image_models=tuple(pattern.strip() for pattern in settings.image_input_models.split(",") if pattern.strip()),
        )
        return json_response(orjson.dumps(codex_catalog(models, options)))
    return json_response(orjson.dumps({"object": "list", "data": models}))


@router.get("/v1/models/{model:path}")
async def retrieve_model(request: Request, model: str) -> Response:
    for entry in await all_models(request):
        if entry["id"] == model:
            return json_response(orjson.dumps(entry))
    raise NotFound(f"The model `{model}` does not exist.", param="model", code="model_not_found")
