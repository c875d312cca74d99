"""Input items: normalisation to their stored public form, and the model-facing view.

Stored items are what `input_items` lists (ids assigned, content as parts);
the model view is what a stateless model server accepts as history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from agentic_core.errors import InvalidRequest
from agentic_core.ids import checked_id, new_item_id
from agentic_core.tools.client_tools import CLIENT_CALL_TYPES, CLIENT_OUTPUT_TYPES, call_id_of, model_call, model_output

MESSAGE_ROLES = frozenset({"user", "assistant", "system", "developer"})
# Items a client may send as input that carry a call id linking a call to its output.
CALL_OUTPUT_TYPES = CLIENT_OUTPUT_TYPES
CALL_TYPES = CLIENT_CALL_TYPES
# Fields the stored public form adds that a model server does not need.
_PUBLIC_ONLY_FIELDS = ("id", "status")


def normalize_input(raw_input: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Turn the `input` field into stored items, each with an `id`."""
    if isinstance(raw_input, str):
        return [_message("user", [{"type": "input_text", "text": raw_input}])]
    return [normalize_input_item(item, index) for index, item in enumerate(raw_input)]


def normalize_input_item(item: dict[str, Any], index: int) -> dict[str, Any]:
    if "id" in item:  # a client's id is stored and looked up by: the edge checks it (agentic_core.ids)
        checked_id(item["id"], f"input[{index}].id")
    item_type = item.get("type")
    if item_type is None and "role" in item:
        item_type = "message"
    if not isinstance(item_type, str):
        raise InvalidRequest(
            "Each input item needs a `type` (or a `role` for a message).", param=f"input[{index}]", code="invalid_value"
        )
    if item_type == "message":
        return _normalize_message(item, index)
    if item_type in CALL_TYPES or item_type in CALL_OUTPUT_TYPES:
        _require_call_id(item, index)
    if item_type == "compaction" and not isinstance(item.get("encrypted_content"), str):
        raise InvalidRequest(
            f"Input item {index} of type 'compaction' needs its `encrypted_content` (a string).",
            param=f"input[{index}].encrypted_content", code="invalid_value",
        )
    if item_type == "item_reference":
        raise InvalidRequest(
            "Input items of type 'item_reference' are not supported.", param=f"input[{index}]", code="unsupported_value"
        )
    normalized = dict(item)
    normalized.setdefault("id", new_item_id(item_type))
    if item_type in CALL_OUTPUT_TYPES or item_type in CALL_TYPES:
        normalized.setdefault("status", "completed")
    return normalized


def _normalize_message(item: dict[str, Any], index: int) -> dict[str, Any]:
    role = item.get("role")
    if role not in MESSAGE_ROLES:
        raise InvalidRequest(
            f"Invalid value for 'input[{index}].role': expected one of user, assistant, system, developer.",
            param=f"input[{index}].role",
            code="invalid_value",
        )
    content = item.get("content")
    if isinstance(content, str):
        part_type = "output_text" if role == "assistant" else "input_text"
        parts: list[dict[str, Any]] = [{"type": part_type, "text": content}]
        if part_type == "output_text":
            parts[0].update(annotations=[], logprobs=[])
    elif isinstance(content, list) and all(isinstance(part, dict) for part in content):
        parts = content
    else:
        raise InvalidRequest(
            f"Invalid value for 'input[{index}].content': expected a string or an array of content parts.",
            param=f"input[{index}].content",
            code="invalid_value",
        )
    normalized = {key: value for key, value in item.items() if key not in ("content",)}
    normalized["type"] = "message"
    normalized["content"] = parts
    normalized.setdefault("id", new_item_id("message"))
    normalized.setdefault("status", "completed")
    return normalized


def _message(role: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "message", "id": new_item_id("message"), "role": role, "content": parts, "status": "completed"}


def _require_call_id(item: dict[str, Any], index: int) -> None:
    call_id = call_id_of(item)
    if not isinstance(call_id, str) or not call_id:
        raise InvalidRequest(
            f"Input item {index} of type '{item.get('type')}' needs a non-empty `call_id`.",
            param=f"input[{index}].call_id",
            code="invalid_value",
        )


# Public projections and bookkeeping a model server never sees: gateway calls are replayed as the
# function call and output pair the model produced and read, stored beside them; a compaction is
# read as its summary (agentic_core.responses.compaction.visible_context), never as its sealed blob.
NOT_FOR_THE_MODEL = frozenset({
    "web_search_call", "file_search_call", "code_interpreter_call", "mcp_call", "mcp_list_tools", "mcp_approval_request",
    "mcp_approval_response", "compaction",
})


def parse_stored_items(items: Sequence[bytes]) -> list[dict[str, Any]]:
    """Stored items (each a JSON object, as we wrote it) parsed as one array: one parser call, not one per item."""
    return orjson.loads(b"[" + b",".join(items) + b"]") if items else []


def model_input(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [model_view(item) for item in items if item.get("type") not in NOT_FOR_THE_MODEL]


def model_view(item: dict[str, Any]) -> dict[str, Any]:
    """The form of a stored item a stateless model server receives as history.

    Client-side messages lose our `id`/`status` (OpenAI's input message schema
    has neither); model output items keep theirs, as the model server emitted them.
    Client tool calls and outputs of other types than function become the
    function call and output the model saw (agentic_core.tools.client_tools).
    """
    item_type = item.get("type")
    if item_type == "message" and item.get("role") != "assistant":
        return {key: value for key, value in item.items() if key not in _PUBLIC_ONLY_FIELDS}
    if item_type == "function_call_output":
        return {key: value for key, value in item.items() if key not in _PUBLIC_ONLY_FIELDS}
    if item_type in CALL_OUTPUT_TYPES:
        return model_output(item)
    if item_type in CALL_TYPES:
        # A client tool's call as the model made it (a namespaced or non-function call); others as they are.
        return model_call(item) or item
    return item
