"""A turn's request, read once: parsed, validated, routed, its input normalised."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from agentic.v1 import common_pb2, executor_pb2
from agentic_core.errors import InvalidRequest
from agentic_core.ids import new_response_id
from agentic_core.json_types import Item
from agentic_core.responses.compaction import read_context_management
from agentic_core.responses.items import normalize_input
from agentic_core.responses.request import (
    CreateResponseRequest,
    conversation_id_of,
    parse_json_object,
    validate_create_request,
)
from agentic_core.routing import ModelRoute, ModelRouter


@dataclass(slots=True)
class TurnContext:
    request: CreateResponseRequest
    payload: dict[str, Any]
    principal: common_pb2.Principal
    response_id: str
    created_at: int
    input_items: list[Item]
    route: ModelRoute
    conversation_id: str | None = None
    compact_threshold: int | None = None  # `context_management`: compact before a round over this many tokens
    lease_token: str | None = None  # held while the turn runs on a conversation
    persisted: bool = False


def read_turn_request(
    request: executor_pb2.ExecuteRequest, payload: dict[str, Any] | None, router: ModelRouter
) -> TurnContext:
    """`payload`: the body already parsed (a translated Messages body), else `request_json` is parsed here."""
    if not request.principal.tenant:
        raise InvalidRequest("The request has no tenant.", code="missing_tenant")
    if payload is None:
        payload = parse_json_object(request.request_json)
    parsed = validate_create_request(payload)
    return TurnContext(
        request=parsed,
        payload=payload,
        principal=request.principal,
        # A background turn taken from the queue keeps the id its queued response was given.
        response_id=request.response_id or new_response_id(),
        created_at=int(time.time()),
        input_items=normalize_input(parsed.input),
        route=router.route(parsed.model),
        conversation_id=conversation_id_of(parsed),
        compact_threshold=read_context_management(payload.get("context_management")),
    )
