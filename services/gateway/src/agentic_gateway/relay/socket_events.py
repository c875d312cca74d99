"""Where a WebSocket request's events come from: the executor's turn, or — for a request that needs no state and
no gateway tool — the model server directly, its SSE frames relayed as they arrive (as `POST /v1/responses`
passes such requests through)."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import aiohttp
import orjson
from agentic.v1 import common_pb2, executor_pb2
from agentic_core.errors import AgenticError, PayloadTooLarge
from agentic_core.responses.conformance import RelayedShape
from agentic_core.responses.pending_calls import check_relayed_call_outputs
from agentic_core.sse import DONE, SseParser
from agentic_core.upstream_errors import error_from_upstream
from agentic_runtime.http.upstream import read_bounded, transport_error

from agentic_gateway.accounting.usage_capture import TERMINAL_EVENTS, UsageTap
from agentic_gateway.context import Gateway
from agentic_gateway.relay.passthrough import is_stateless_responses_request, upstream_body

SocketEvent = tuple[str, bytes]  # the event's type and its JSON, as the SSE stream would carry them


async def socket_events(gateway: Gateway, payload: dict[str, Any], principal: common_pb2.Principal,
                        request_id: str, usage: UsageTap | None = None,
                        previous_response_id: str | None = None) -> AsyncGenerator[SocketEvent, None]:
    """The events of one streamed turn; a failure raises `AgenticError` (before or between events). `usage`
    records a turn relayed from the model server (the executor records its own). `previous_response_id`: the
    parent the client named, when the connection inlined its history into `payload`."""
    body = orjson.dumps(payload)
    model = payload.get("model")
    if isinstance(model, str) and model:
        route = gateway.router.route(model)
        if is_stateless_responses_request(payload, route):
            check_relayed_call_outputs(payload)
            shape = RelayedShape(payload, int(time.time()), previous_response_id)
            async for event_type, data in _model_server_events(gateway, route, upstream_body(body, payload, route)):
                if usage is not None and event_type in TERMINAL_EVENTS:
                    usage.model = model
                    usage.body(data)
                yield event_type, shape.event(event_type, data)
            return
    execute = executor_pb2.ExecuteRequest(request_json=body, principal=principal, stream=True, request_id=request_id)
    call = gateway.peers.executor.execute(execute)
    try:
        async for message in call:
            if message.WhichOneof("payload") == "events":
                for event in message.events.events:
                    yield event.event_type, event.data
            else:
                yield message.event.event_type, message.event.data
    finally:
        call.cancel()


def event_too_large(limit: int, size: int | None = None) -> PayloadTooLarge:
    """The same error whether the socket's limit is found on a whole event or on one still arriving."""
    return PayloadTooLarge(f"An event of this response is {f'{size} bytes' if size else 'larger'}; this gateway sends "
                           f"WebSocket events of up to {limit} bytes.", code="event_too_large")


async def _model_server_events(gateway: Gateway, route: Any, body: bytes) -> AsyncIterator[SocketEvent]:
    async with gateway.upstream.request("POST", route.base_url + "/responses", route, body) as reply:
        if reply.status >= 400 or not reply.headers.get("content-type", "").startswith("text/event-stream"):
            content = await read_bounded(reply, gateway.settings.max_upstream_body_bytes)
            raise error_from_upstream(reply.status if reply.status >= 400 else 502, content)
        limit = gateway.settings.ws_max_event_bytes
        parser = SseParser(limit)  # an event past the socket's limit is refused while it is still arriving
        try:
            async for chunk in reply.content.iter_any():
                for event in parser.feed(chunk):
                    if event.data != DONE:
                        yield event.event or "", event.data
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise transport_error(exc) from None
        except AgenticError as error:
            raise event_too_large(limit) if error.code == "upstream_event_too_large" else error from None
        for event in parser.close():
            if event.data != DONE:
                yield event.event or "", event.data
