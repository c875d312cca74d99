"""The Responses routes: create (JSON or SSE relay), retrieve, delete, input items."""

from __future__ import annotations

import time
from typing import Any

import orjson
from agentic.v1 import executor_pb2, state_pb2
from agentic_core.errors import InvalidRequest
from agentic_core.ids import optional_id
from agentic_core.responses.conformance import RelayedShape
from agentic_core.responses.pending_calls import check_relayed_call_outputs
from agentic_core.responses.request import parse_json_object
from agentic_runtime.http.service import read_body
from fastapi import APIRouter, Request
from fastapi.responses import Response

from agentic_gateway.accounting.quota_check import hand_over_to_background
from agentic_gateway.context import API_DEPENDENCIES, Principal, gateway_of
from agentic_gateway.http import (
    ObjectId,
    ascending_order,
    deleted,
    item_list,
    json_response,
    page_limit,
    request_id_of,
)
from agentic_gateway.relay.passthrough import is_stateless_responses_request, relay, upstream_body
from agentic_gateway.relay.turn import run_on_executor

router = APIRouter(dependencies=API_DEPENDENCIES)


def _stream_flag(payload: dict[str, Any]) -> bool:
    stream = payload.get("stream", False)
    if stream is None:
        return False
    if not isinstance(stream, bool):
        raise InvalidRequest("Invalid value for 'stream': expected a boolean.", param="stream", code="invalid_type")
    return stream


@router.post("/v1/responses")
async def create_response(request: Request, principal: Principal) -> Response:
    gateway = gateway_of(request)
    body = await read_body(request, gateway.settings.max_body_bytes)
    # Only the routing fields are read here; the executor (or the model server) validates the rest.
    payload = parse_json_object(body)
    stream = _stream_flag(payload)
    if isinstance(payload.get("model"), str) and payload["model"]:
        route = gateway.router.route(payload["model"])
        if is_stateless_responses_request(payload, route):
            check_relayed_call_outputs(payload)
            return await relay(request, route, "/responses", upstream_body(body, payload, route), stream, "responses_passthrough",
                               payload["model"], RelayedShape(payload, int(time.time())))
    request_id = request_id_of(request)
    execute = executor_pb2.ExecuteRequest(request_json=body, principal=principal, stream=stream, request_id=request_id)
    response = await run_on_executor(request, execute, "create_response")
    if payload.get("background") is True:  # queued: the turn holds the tenant's concurrency slot until it ends
        hand_over_to_background(request)
    return response


@router.post("/v1/responses/input_tokens")
async def count_input_tokens(request: Request, principal: Principal) -> Response:
    gateway = gateway_of(request)
    body = await read_body(request, gateway.settings.max_body_bytes)
    parse_json_object(body)
    count = await gateway.peers.executor.count_input_tokens(principal, body)
    content = orjson.dumps({"object": "response.input_tokens", "input_tokens": count.input_tokens})
    return Response(content=content, media_type="application/json", headers={"x-agentic-token-count": count.method})


@router.post("/v1/responses/compact")
async def compact_response(request: Request, principal: Principal) -> Response:
    """A `response.compaction`: the context's user messages and one compaction item the model summarised the rest in."""
    gateway = gateway_of(request)
    body = await read_body(request, gateway.settings.max_body_bytes)
    parse_json_object(body)
    return json_response(await gateway.peers.executor.compact(principal, body))


@router.get("/v1/responses/{response_id}")
async def retrieve_response(request: Request, response_id: ObjectId, principal: Principal) -> Response:
    """The response; with `stream=true`, a background response's events (after `starting_after`), then live ones."""
    peers = gateway_of(request).peers
    if _query_flag(request.query_params.get("stream"), "stream"):
        ref = executor_pb2.ResponseRef(principal=principal, response_id=response_id,
                                       starting_after=_starting_after(request.query_params.get("starting_after")))
        return await run_on_executor(request, ref, "stream_response")
    stored = await peers.state_peer.call(
        peers.state.GetResponse, state_pb2.GetResponseRequest(principal=principal, response_id=response_id))
    return json_response(stored.response)


@router.post("/v1/responses/{response_id}/cancel")
async def cancel_response(request: Request, response_id: ObjectId, principal: Principal) -> Response:
    """Cancels a background response from any replica; idempotent; the response in its final state."""
    return json_response(await gateway_of(request).peers.executor.cancel_response(principal, response_id))


def _query_flag(value: str | None, param: str) -> bool:
    if value is None or value.lower() in ("false", "0", ""):
        return False
    if value.lower() in ("true", "1"):
        return True
    raise InvalidRequest(f"Invalid value for '{param}': expected true or false.", param=param, code="invalid_value")


_MAX_SEQUENCE_NUMBER = 2**63 - 1  # what the gRPC field (int64) holds


def _starting_after(value: str | None) -> int:
    if value is None:
        return -1
    try:
        number = int(value)
    except ValueError:
        number = -2
    if not 0 <= number <= _MAX_SEQUENCE_NUMBER:
        raise InvalidRequest("Invalid value for 'starting_after': expected a sequence number (0 or more).",
                             param="starting_after", code="invalid_value")
    return number


@router.delete("/v1/responses/{response_id}")
async def delete_response(request: Request, response_id: ObjectId, principal: Principal) -> Response:
    peers = gateway_of(request).peers
    await peers.state_peer.call(
        peers.state.DeleteResponse, state_pb2.DeleteResponseRequest(principal=principal, response_id=response_id))
    return deleted(response_id, "response")


@router.get("/v1/responses/{response_id}/input_items")
async def list_input_items(request: Request, response_id: ObjectId, principal: Principal) -> Response:
    peers = gateway_of(request).peers
    query = request.query_params
    page = await peers.state_peer.call(peers.state.ListInputItems, state_pb2.ListInputItemsRequest(
        principal=principal, response_id=response_id, limit=page_limit(query.get("limit")),
        after=optional_id(query.get("after"), "after"), before=optional_id(query.get("before"), "before"), ascending=ascending_order(query.get("order")),
    ))
    return json_response(item_list(page.items, page.has_more))
