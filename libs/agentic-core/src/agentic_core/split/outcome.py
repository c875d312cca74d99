"""Strict checks of a model response a coordinator relays as JSON, and of its call ids.

The in-process executor trusts its own upstream parser; a relayed body gets
no defaults: its status must be present and terminal, every item of a known
type with a unique id, every call with a non-empty call id that no earlier
call of the continuation (history, this turn's input, this output) used.
Messages name positions, never the caller's ids, so nothing untrusted is echoed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentic_core.errors import InvalidRequest
from agentic_core.ids import new_item_id
from agentic_core.responses.items import CALL_TYPES
from agentic_core.responses.response import normalize_output_item, normalize_usage
from agentic_core.responses.stream import RoundOutcome

KNOWN_OUTPUT_TYPES = frozenset({"message", "reasoning", "function_call", "custom_tool_call"})
TERMINAL_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled"})
# Returned to the caller, never stored: nothing could continue from them.
UNSTORED_STATUSES = frozenset({"failed", "cancelled"})


def invalid(message: str, param: str | None = "response") -> InvalidRequest:
    return InvalidRequest(message, param=param, code="invalid_request_error")


def item_problem(item: Any, where: str) -> str | None:
    """Why an output item cannot be stored, or None. `where` names its position, e.g. `output[0]`."""
    if not isinstance(item, dict):
        return f"{where} is not an object"
    item_type = item.get("type")
    if item_type not in KNOWN_OUTPUT_TYPES:
        return f"{where} has an unsupported item type"
    item_id = item.get("id")
    if not isinstance(item_id, str) or not item_id:
        return f"{where} has no id"
    if item_type == "message":
        if item.get("role") != "assistant":
            return f"{where} is a message whose role is not assistant"
        content = item.get("content")
        if not isinstance(content, list) or not all(isinstance(part, dict) and isinstance(part.get("type"), str) for part in content):
            return f"{where} is a message without a content array"
    elif item_type in CALL_TYPES:
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            return f"{where} has no call_id"
        if not isinstance(item.get("name"), str) or not item["name"]:
            return f"{where} has no name"
        argument_field = "arguments" if item_type == "function_call" else "input"
        if not isinstance(item.get(argument_field), str):
            return f"{where} has no {argument_field} string"
    elif item_type == "reasoning":
        for key in ("summary", "content"):
            if item.get(key) is not None and not isinstance(item[key], list):
                return f"{where} is a reasoning item whose {key} is not an array"
    return None


def check_output_items(output: list[Any]) -> None:
    """Every item storable, ids unique within the output."""
    seen_ids: dict[str, int] = {}
    for index, item in enumerate(output):
        problem = item_problem(item, f"output[{index}]")
        if problem is not None:
            raise invalid(problem)
        earlier = seen_ids.setdefault(item["id"], index)
        if earlier != index:
            raise invalid(f"output[{index}] repeats the id of output[{earlier}]")


def check_call_ids(history_call_ids: Iterable[str], input_items: list[dict[str, Any]], output: list[dict[str, Any]]) -> None:
    """A call id the output introduces must be new to the whole continuation."""
    owner: dict[str, str] = {call_id: "the history" for call_id in history_call_ids}
    for index, item in enumerate(input_items):
        call_id = item.get("call_id")
        if item.get("type") in CALL_TYPES and isinstance(call_id, str):
            owner.setdefault(call_id, f"request input[{index}]")
    for index, item in enumerate(output):
        if item.get("type") not in CALL_TYPES:
            continue
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            raise invalid(f"output[{index}] has no call_id")
        if call_id in owner:
            raise invalid(f"output[{index}] reuses the call_id of {owner[call_id]}; call_id values must be unique")
        owner[call_id] = f"output[{index}]"


def check_item_ids_against_input(input_items: list[dict[str, Any]], output: list[dict[str, Any]]) -> None:
    input_ids = {item.get("id") for item in input_items}
    for index, item in enumerate(output):
        if item.get("id") in input_ids:
            raise invalid(f"output[{index}] repeats the id of an input item")


def normalized_output(output: list[Any]) -> list[dict[str, Any]]:
    """Our public item form. Checked output passes whole; unstored (failed) output keeps its objects, with our ids where missing."""
    items: list[dict[str, Any]] = []
    for item in output:
        if not isinstance(item, dict):
            continue
        item_id = item.get("id")
        if not isinstance(item_id, str) or not item_id:
            item_id = new_item_id(str(item.get("type") or "item"))
        items.append(normalize_output_item(item, item_id))
    return items


def outcome_parts(response: dict[str, Any]) -> dict[str, Any]:
    """usage, incomplete_details and error of a terminal response object, checked for shape."""
    usage = response.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise invalid("the response's usage is not an object")
    try:
        normalized_usage = normalize_usage(usage)
    except (TypeError, ValueError):
        raise invalid("the response's usage holds a value that is not a number") from None
    details = response.get("incomplete_details")
    error = response.get("error")
    return {
        "usage": normalized_usage,
        "incomplete_details": details if isinstance(details, dict) else None,
        "error": error if isinstance(error, dict) else None,
    }


def terminal_status(response: dict[str, Any]) -> str:
    status = response.get("status")
    if not isinstance(status, str) or not status:
        raise invalid("the response has no status")
    if status not in TERMINAL_STATUSES:
        raise invalid("the response status is not terminal: expected completed, incomplete, failed or cancelled")
    return status


def outcome_from_response(response: Any) -> RoundOutcome:
    """A relayed non-streaming response body → the outcome to store, or 400."""
    if not isinstance(response, dict):
        raise invalid("`response` must be a JSON object")
    status = terminal_status(response)
    output = response.get("output")
    if not isinstance(output, list):
        raise invalid("the response has no output array")
    lenient = status in UNSTORED_STATUSES
    if not lenient:
        check_output_items(output)
    return RoundOutcome(status=status, output=normalized_output(output), **outcome_parts(response))
