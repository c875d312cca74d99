"""Requests that need no state and no gateway tool go straight to the model server, bytes in, bytes out.

No executor hop: the body is forwarded as the client sent it (only a routing
alias rewrites `model`), and the reply — JSON or SSE — is relayed as it arrives.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import orjson
from agentic_core.errors import InvalidRequest
from agentic_core.media import input_fetches_media
from agentic_core.messages import anthropic_error
from agentic_core.responses.compaction import COMPACTION
from agentic_core.responses.conformance import ConformingSseRelay, RelayedShape
from agentic_core.responses.reasoning import carries_encrypted_reasoning
from agentic_core.routing import ModelRoute
from agentic_core.sse import frame
from agentic_core.tools.client_tools import CLIENT_CALL_TYPES, CLIENT_OUTPUT_TYPES
from agentic_runtime.http.upstream import read_bounded, transport_error
from fastapi import Request
from fastapi.responses import Response

from agentic_gateway.context import gateway_of
from agentic_gateway.metrics import REQUESTS
from agentic_gateway.relay.keepalive import COMMENT_FRAME, KeepaliveStreamingResponse
from agentic_gateway.relay.turn import SHUTDOWN_CUT, openai_stream_error

log = logging.getLogger(__name__)

# Tool types a model server takes as they are: a request with only these needs no gateway loop. Other
# client tool types (custom, namespace, local_shell, ...) are mapped to functions by the executor.
PLAIN_TOOL_TYPES = frozenset({"function"})
# Input items the executor maps to the function calls and outputs the model saw, and compaction items,
# whose sealed summary only the executor reads.
_MAPPED_ITEM_TYPES = (CLIENT_CALL_TYPES | CLIENT_OUTPUT_TYPES | {COMPACTION}) - {"function_call", "function_call_output"}
_RELAYED_HEADERS = ("content-type", "x-request-id", "retry-after")
# The terminal error event of a relayed stream the drain bound cuts, in each API's own shape.
_CUT_FRAMES = {
    "/responses": openai_stream_error(SHUTDOWN_CUT),
    "/messages": frame("error", anthropic_error(SHUTDOWN_CUT.http_status, SHUTDOWN_CUT.body())),
}


def is_stateless_responses_request(payload: dict[str, Any], route: ModelRoute) -> bool:
    """`store: false`, no chain, no conversation, no background, no prewarm or compaction, no sealed reasoning,
    no file or image URL in the input, only client tools, a Responses server."""
    if route.api != "responses" or payload.get("store") is not False:
        return False
    if payload.get("previous_response_id") or payload.get("conversation") or payload.get("background"):
        return False
    if payload.get("generate") is False or payload.get("context_management"):
        return False  # a prewarm and compaction are ours, not the model server's
    if carries_encrypted_reasoning(payload):
        return False  # only the executor seals reasoning items and opens them (Codex always asks: it pays a hop)
    if input_fetches_media(payload.get("input")):
        return False  # a file, or an image URL: only the executor fetches (under its host policy) and reads them
    tools = payload.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(tool, dict) and tool.get("type") in PLAIN_TOOL_TYPES for tool in tools):
        return False
    items = payload.get("input")
    return not isinstance(items, list) or not any(_is_mapped(item) for item in items)


def _is_mapped(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    item_type = item.get("type")
    return item_type in _MAPPED_ITEM_TYPES or (item_type == "function_call" and bool(item.get("namespace")))


def model_of(payload: dict[str, Any]) -> str:
    model = payload.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequest("Missing required parameter: 'model'.", param="model", code="missing_required_parameter")
    return model


def upstream_body(body: bytes, payload: dict[str, Any], route: ModelRoute) -> bytes:
    """The client's bytes, unless the route renames the model."""
    if route.upstream_model is None:
        return body
    return orjson.dumps({**payload, "model": route.upstream_model})


RefusalCheck = Callable[[int, bytes], bool]


async def relay(request: Request, route: ModelRoute, path: str, body: bytes, stream: bool, label: str,
                model: str = "", shape: RelayedShape | None = None) -> Response:
    """POST to the model server and hand its answer back unchanged (but for `shape`'s fill-ins on Responses
    objects); stream it when it streams. `model`: the requested model, whose usage the reply's is recorded as."""
    response = await relay_if_served(request, route, path, body, stream, label, model=model, shape=shape)
    assert response is not None  # nothing counts as "not served" here
    return response


async def relay_if_served(
    request: Request, route: ModelRoute, path: str, body: bytes, stream: bool, label: str,
    not_served: RefusalCheck | None = None, keepalive: bytes = COMMENT_FRAME, model: str = "",
    shape: RelayedShape | None = None,
) -> Response | None:
    """`relay`, or None (nothing relayed) when `not_served(status, body)` says the server lacks `path`. A relayed
    stream gets `keepalive` between the server's frames when it is quiet. `shape`: a Responses reply's objects
    are filled in to the Open Responses schemas (its deltas are relayed untouched)."""
    gateway = gateway_of(request)
    if model:
        request.state.audit_model = model  # the request's audit record names the model (AUDIT_MODEL)
    upstream = gateway.upstream
    context = upstream.request("POST", route.base_url + path, route, body)
    reply = await context.__aenter__()
    headers = {name: reply.headers[name] for name in _RELAYED_HEADERS if name in reply.headers}
    if not stream or reply.status >= 400 or not reply.headers.get("content-type", "").startswith("text/event-stream"):
        try:
            content = await read_bounded(reply, gateway.settings.max_upstream_body_bytes)
        finally:
            await context.__aexit__(None, None, None)
        if not_served is not None and not_served(reply.status, content):
            return None
        REQUESTS.labels(route=label, status=reply.status).inc()
        if reply.status < 400 and (tap := gateway.accounting.usage_tap(model)) is not None:
            tap.body(content)
        if shape is not None and reply.status < 400:
            content = shape.body(content)
        return Response(content=content, status_code=reply.status, headers=headers)
    REQUESTS.labels(route=label, status=reply.status).inc()
    tap = gateway.accounting.usage_tap(model)
    frames = ConformingSseRelay(shape) if shape is not None else None

    async def chunks() -> AsyncIterator[bytes]:
        try:
            async for chunk in reply.content.iter_any():
                if tap is not None:
                    tap.chunk(chunk)
                if frames is None:
                    yield chunk
                elif whole := frames.feed(chunk):
                    yield whole
            if frames is not None and (rest := frames.close()):
                yield rest
        except (TimeoutError, aiohttp.ClientError) as exc:
            log.warning("pass-through stream from %s broke: %s", route.base_url, transport_error(exc).message)
        finally:
            if tap is not None:
                tap.end()
            await context.__aexit__(None, None, None)

    headers["cache-control"] = "no-cache"
    return KeepaliveStreamingResponse(chunks(), status_code=reply.status, headers=headers, media_type=None,
                                      interval=gateway.settings.sse_keepalive_seconds, keepalive=keepalive,
                                      whole_frames=frames is not None, cut_frame=_CUT_FRAMES.get(path))
