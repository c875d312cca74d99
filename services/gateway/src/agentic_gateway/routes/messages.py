"""The Anthropic Messages API: `POST /v1/messages` and `/v1/messages/count_tokens` (errors in Anthropic's
shape, by the app's error handlers).

Without gateway tools, a model server that speaks Messages itself (vLLM does)
gets the body byte for byte, streaming included; a request it refuses on that
route (404/405, whatever the body) takes the other way — the executor runs the
turn in its round loop and answers in Anthropic's shapes — and a server found
without the route is remembered (`native_messages`).
"""

from __future__ import annotations

from typing import Any

import orjson
from agentic.v1 import executor_pb2
from agentic_core.errors import AgenticError, InvalidRequest
from agentic_core.messages import anthropic_error, count_tokens_reply, fetches_media
from agentic_core.responses.request import parse_json_object
from agentic_core.routing import ModelRoute
from agentic_core.sse import frame
from agentic_runtime.http.service import read_body
from fastapi import APIRouter, Request
from fastapi.responses import Response

from agentic_gateway.context import API_DEPENDENCIES, Principal, gateway_of
from agentic_gateway.http import json_response, request_id_of
from agentic_gateway.relay.keepalive import PING_FRAME
from agentic_gateway.relay.native_messages import lacks_messages_route, route_refused
from agentic_gateway.relay.passthrough import model_of, relay_if_served, upstream_body
from agentic_gateway.relay.turn import run_on_executor

router = APIRouter(dependencies=API_DEPENDENCIES)
# Tool types the client executes in Anthropic's API: anything else is a server tool the gateway runs.
CLIENT_TOOL_TYPES = frozenset({None, "custom"})


def _stream_error(error: AgenticError) -> bytes:
    return frame("error", anthropic_error(error.http_status, error.body()))


def needs_gateway(payload: dict[str, Any]) -> bool:
    tools = payload.get("tools") or []
    if not isinstance(tools, list):
        return True  # let the translation name the problem
    if fetches_media(payload):
        return True  # an image or document URL: only the executor fetches it, never the model server
    return bool(payload.get("mcp_servers")) or any(
        not isinstance(tool, dict) or tool.get("type") not in CLIENT_TOOL_TYPES for tool in tools
    )


async def _serves_model(request: Request, route: ModelRoute, model: str) -> bool:
    """The route's server lists the model (under the name the route sends): its 404 was not about the model."""
    name = route.upstream_model or model
    return any(entry["id"] == name for entry in await gateway_of(request).model_lists.entries(route) or [])


async def _body(request: Request) -> tuple[bytes, dict[str, Any]]:
    body = await read_body(request, gateway_of(request).settings.max_body_bytes)
    return body, parse_json_object(body)


@router.post("/v1/messages")
async def create_message(request: Request, principal: Principal) -> Response:
    gateway = gateway_of(request)
    body, payload = await _body(request)
    stream = payload.get("stream") is True
    route = gateway.router.route(model_of(payload))
    verdicts = gateway.native_messages
    if route.speaks_messages and not needs_gateway(payload) and not verdicts.unsupported(route.base_url):
        refusals: list[tuple[int, bytes]] = []

        def refused(status: int, content: bytes) -> bool:
            if route_refused(status):
                refusals.append((status, content))
            return bool(refusals)

        relayed = await relay_if_served(request, route, "/messages", upstream_body(body, payload, route), stream,
                                        "messages_passthrough", not_served=refused, keepalive=PING_FRAME,
                                        model=payload["model"])
        if relayed is not None:
            return relayed
        status, content = refusals[0]
        if lacks_messages_route(status, content) or await _serves_model(request, route, payload["model"]):
            verdicts.mark_unsupported(route.base_url)
    execute = executor_pb2.ExecuteRequest(
        request_json=body, principal=principal, stream=stream, api="messages",
        request_id=request_id_of(request),
    )
    return await run_on_executor(request, execute, "create_message", _stream_error, PING_FRAME)


@router.post("/v1/messages/count_tokens")
async def count_tokens(request: Request, principal: Principal) -> Response:
    body, payload = await _body(request)
    if not isinstance(payload.get("messages"), list):
        raise InvalidRequest("messages: Field required", param="messages")
    count = await gateway_of(request).peers.executor.count_input_tokens(principal, body, api="messages")
    return json_response(orjson.dumps(count_tokens_reply(count.input_tokens)))
