"""The Conversations API routes: conversation CRUD and its items, all tenant-scoped through state."""

from __future__ import annotations

from typing import Any

import orjson
from agentic.v1 import state_pb2
from agentic_core.conversations import AppendItemsRequest, CreateConversationRequest, UpdateConversationRequest, validate_body
from agentic_core.ids import new_id, optional_id
from agentic_core.responses.items import normalize_input
from agentic_core.responses.request import parse_json_object
from agentic_runtime.grpc.client import Peer
from agentic_runtime.http.service import read_body
from fastapi import APIRouter, Request
from fastapi.responses import Response

from agentic_gateway.context import API_DEPENDENCIES, Principal, gateway_of
from agentic_gateway.http import (
    ObjectId,
    ascending_order,
    deleted,
    item_list,
    items_to_proto,
    json_response,
    page_limit,
)

router = APIRouter(dependencies=API_DEPENDENCIES)


async def _json_body(request: Request) -> dict[str, Any]:
    return parse_json_object(await read_body(request, gateway_of(request).settings.max_body_bytes))


def _state(request: Request) -> tuple[Peer, Any]:
    """The state peer (errors, deadline, trace) and its stub."""
    peers = gateway_of(request).peers
    return peers.state_peer, peers.state


@router.post("/v1/conversations")
async def create_conversation(request: Request, principal: Principal) -> Response:
    body = validate_body(CreateConversationRequest, await _json_body(request))
    items = normalize_input(body.items or [])
    peer, stub = _state(request)
    reply = await peer.call(stub.CreateConversation, state_pb2.CreateConversationRequest(
        principal=principal, conversation_id=new_id("conv"),
        metadata=orjson.dumps(body.metadata or {}), items=items_to_proto(items),
    ))
    return json_response(reply.conversation)


@router.get("/v1/conversations/{conversation_id}")
async def retrieve_conversation(request: Request, conversation_id: ObjectId, principal: Principal) -> Response:
    peer, stub = _state(request)
    reply = await peer.call(stub.GetConversation,
                            state_pb2.ConversationRef(principal=principal, conversation_id=conversation_id))
    return json_response(reply.conversation)


@router.post("/v1/conversations/{conversation_id}")
async def update_conversation(request: Request, conversation_id: ObjectId, principal: Principal) -> Response:
    body = validate_body(UpdateConversationRequest, await _json_body(request))
    peer, stub = _state(request)
    reply = await peer.call(stub.UpdateConversation, state_pb2.UpdateConversationRequest(
        principal=principal, conversation_id=conversation_id, metadata=orjson.dumps(body.metadata)))
    return json_response(reply.conversation)


@router.delete("/v1/conversations/{conversation_id}")
async def delete_conversation(request: Request, conversation_id: ObjectId, principal: Principal) -> Response:
    peer, stub = _state(request)
    await peer.call(stub.DeleteConversation, state_pb2.ConversationRef(principal=principal, conversation_id=conversation_id))
    return deleted(conversation_id, "conversation")


@router.post("/v1/conversations/{conversation_id}/items")
async def append_items(request: Request, conversation_id: ObjectId, principal: Principal) -> Response:
    body = validate_body(AppendItemsRequest, await _json_body(request))
    peer, stub = _state(request)
    page = await peer.call(stub.AppendConversationItems, state_pb2.AppendConversationItemsRequest(
        principal=principal, conversation_id=conversation_id, items=items_to_proto(normalize_input(body.items))))
    return json_response(item_list(page.items, page.has_more))


@router.get("/v1/conversations/{conversation_id}/items")
async def list_items(request: Request, conversation_id: ObjectId, principal: Principal) -> Response:
    query = request.query_params
    peer, stub = _state(request)
    page = await peer.call(stub.ListConversationItems, state_pb2.ListConversationItemsRequest(
        principal=principal, conversation_id=conversation_id, limit=page_limit(query.get("limit")),
        after=optional_id(query.get("after"), "after"), ascending=ascending_order(query.get("order")),
    ))
    return json_response(item_list(page.items, page.has_more))


@router.get("/v1/conversations/{conversation_id}/items/{item_id}")
async def retrieve_item(request: Request, conversation_id: ObjectId, item_id: ObjectId, principal: Principal) -> Response:
    peer, stub = _state(request)
    item = await peer.call(stub.GetConversationItem, state_pb2.ConversationItemRef(
        principal=principal, conversation_id=conversation_id, item_id=item_id))
    return json_response(item.data)


@router.delete("/v1/conversations/{conversation_id}/items/{item_id}")
async def delete_item(request: Request, conversation_id: ObjectId, item_id: ObjectId, principal: Principal) -> Response:
    peer, stub = _state(request)
    reply = await peer.call(stub.DeleteConversationItem, state_pb2.ConversationItemRef(
        principal=principal, conversation_id=conversation_id, item_id=item_id))
    return json_response(reply.conversation)
