"""The Conversations API routes: conversation CRUD and its items, all tenant-scoped through state."""

from __future__ import annotations

import orjson
from agentic.v1 import state_pb2
from agentic_core.conversations import AppendItemsRequest, CreateConversationRequest, UpdateConversationRequest, validate_body
from agentic_core.ids import new_id
from agentic_core.responses.items import normalize_input
from agentic_core.responses.request import parse_json_object
from agentic_runtime.http_service import read_body
from fastapi import APIRouter, Request
from fastapi.responses import Response

from agentic_gateway.http import (
    ascending_order,
    deleted,
    item_list,
    items_to_proto,
    json_response,
    page_limit,
    principal_of,
    state_call,
    state_timeout,
)

router = APIRouter()


async def _json_body(request: Request) -> dict:
    return parse_json_object(await read_body(request, request.app.state.gateway.settings.max_body_bytes))


def _state(request: Request):
    return request.app.state.gateway.peers.state


@router.post("/v1/conversations")
async def create_conversation(request: Request) -> Response:
    principal = principal_of(request)
    body = validate_body(CreateConversationRequest, await _json_body(request))
    items = normalize_input(body.items or [])
    reply = await state_call(_state(request).CreateConversation(
        state_pb2.CreateConversationRequest(
            principal=principal, conversation_id=new_id("conv"),
            metadata=orjson.dumps(body.metadata or {}), items=items_to_proto(items),
        ),
        timeout=state_timeout(request),
    ))
    return json_response(reply.conversation)


@router.get("/v1/conversations/{conversation_id}")
async def retrieve_conversation(request: Request, conversation_id: str) -> Response:
    reply = await state_call(_state(request).GetConversation(
        state_pb2.ConversationRef(principal=principal_of(request), conversation_id=conversation_id),
        timeout=state_timeout(request),
    ))
    return json_response(reply.conversation)


@router.post("/v1/conversations/{conversation_id}")
async def update_conversation(request: Request, conversation_id: str) -> Response:
    principal = principal_of(request)
    body = validate_body(UpdateConversationRequest, await _json_body(request))
    reply = await state_call(_state(request).UpdateConversation(
        state_pb2.UpdateConversationRequest(
            principal=principal, conversation_id=conversation_id, metadata=orjson.dumps(body.metadata)
        ),
        timeout=state_timeout(request),
    ))
    return json_response(reply.conversation)


@router.delete("/v1/conversations/{conversation_id}")
async def delete_conversation(request: Request, conversation_id: str) -> Response:
    await state_call(_state(request).DeleteConversation(
        state_pb2.ConversationRef(principal=principal_of(request), conversation_id=conversation_id),
        timeout=state_timeout(request),
    ))
    return deleted(conversation_id, "conversation")


@router.post("/v1/conversations/{conversation_id}/items")
async def append_items(request: Request, conversation_id: str) -> Response:
    principal = principal_of(request)
    body = validate_body(AppendItemsRequest, await _json_body(request))
    page = await state_call(_state(request).AppendConversationItems(
        state_pb2.AppendConversationItemsRequest(
            principal=principal, conversation_id=conversation_id, items=items_to_proto(normalize_input(body.items))
        ),
        timeout=state_timeout(request),
    ))
    return json_response(item_list(page.items, page.has_more))


@router.get("/v1/conversations/{conversation_id}/items")
async def list_items(request: Request, conversation_id: str) -> Response:
    query = request.query_params
    page = await state_call(_state(request).ListConversationItems(
        state_pb2.ListConversationItemsRequest(
            principal=principal_of(request), conversation_id=conversation_id, limit=page_limit(query.get("limit")),
            after=query.get("after", ""), ascending=ascending_order(query.get("order")),
        ),
        timeout=state_timeout(request),
    ))
    return json_response(item_list(page.items, page.has_more))


@router.get("/v1/conversations/{conversation_id}/items/{item_id}")
async def retrieve_item(request: Request, conversation_id: str, item_id: str) -> Response:
    item = await state_call(_state(request).GetConversationItem(
        state_pb2.ConversationItemRef(principal=principal_of(request), conversation_id=conversation_id, item_id=item_id),
        timeout=state_timeout(request),
    ))
    return json_response(item.data)


@router.delete("/v1/conversations/{conversation_id}/items/{item_id}")
async def delete_item(request: Request, conversation_id: str, item_id: str) -> Response:
    reply = await state_call(_state(request).DeleteConversationItem(
        state_pb2.ConversationItemRef(principal=principal_of(request), conversation_id=conversation_id, item_id=item_id),
        timeout=state_timeout(request),
    ))
    return json_response(reply.conversation)
