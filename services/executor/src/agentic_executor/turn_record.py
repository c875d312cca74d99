"""What a finished turn stores: whether it is kept, its response object, and the rows of its persist request."""

from __future__ import annotations

import time
from typing import Any

import orjson
from agentic.v1 import state_pb2
from agentic_core.json_types import Item
from agentic_core.responses.conversation_view import conversation_rows
from agentic_core.responses.history import stored_model_view
from agentic_core.responses.response import build_response
from agentic_core.responses.round_outcome import TurnEnding
from agentic_core.responses.turn_so_far import TurnSoFar

from agentic_executor.turn_context import TurnContext


def should_persist(context: TurnContext, ending: TurnEnding) -> bool:
    """Stored responses, and every finished turn of a conversation (its items belong to it)."""
    return ending.status != "failed" and (context.request.store or context.conversation_id is not None)


def response_object(context: TurnContext, so_far: TurnSoFar, ending: TurnEnding) -> dict[str, Any]:
    return build_response(
        context.request,
        response_id=context.response_id,
        created_at=context.created_at,
        status=ending.status,
        output=list(so_far.public_output),
        usage=so_far.usage,
        error=ending.error,
        incomplete_details=ending.incomplete_details,
        completed_at=int(time.time()) if ending.status == "completed" else None,
        conversation_id=context.conversation_id,
    )


def persist_request(
    context: TurnContext, response: dict[str, Any], so_far: TurnSoFar, ending: TurnEnding
) -> state_pb2.PersistTurnRequest:
    # The output rows are the model-facing continuation (gateway calls as their call/output pair),
    # so that rehydration replays what the model saw and never a public projection twice.
    return state_pb2.PersistTurnRequest(
        principal=context.principal,
        response_id=context.response_id,
        previous_response_id=context.request.previous_response_id or "",
        response=orjson.dumps(response),
        input_items=[_row(item) for item in context.input_items],
        output_items=[_row(item) for item in so_far.continuation],
        model=context.request.model,
        status=ending.status,
        store_response=context.request.store,
        conversation_id=context.conversation_id or "",
        lease_token=context.lease_token or "",
        conversation_items=_conversation_items(context, so_far),
    )


def _row(item: Item) -> state_pb2.Item:
    return state_pb2.Item(id=item["id"], data=orjson.dumps(item), model_view=stored_model_view(item))


def _conversation_items(context: TurnContext, so_far: TurnSoFar) -> list[state_pb2.Item]:
    if context.conversation_id is None:
        return []
    rows = conversation_rows(context.input_items, list(so_far.public_output), list(so_far.continuation),
                             dict(so_far.public_of_call))
    return [state_pb2.Item(id=item["id"], data=orjson.dumps(item), visibility=visibility, linked_item_id=linked,
                           model_view=stored_model_view(item))
            for item, visibility, linked in rows]
