"""Continuation rules for client-owned tool calls.

Over the whole continuation (stored history, then the new input): every call
and output has a non-empty `call_id`; no two calls and no two outputs share
one; each output resolves exactly one earlier, still pending call of the same
kind; and no call is left without its output.
"""

from __future__ import annotations

from typing import Any

from agentic_core.errors import InvalidRequest
from agentic_core.tools.client_tools import CALL_OUTPUT_OF, call_id_of

# Output item type → the call item type it resolves.
_RESOLVES = {output: call for call, output in CALL_OUTPUT_OF.items()}
_CALL_TYPES = frozenset(CALL_OUTPUT_OF)


def validate_continuation(history: list[dict[str, Any]], new_input: list[dict[str, Any]]) -> None:
    pending: dict[str, str] = {}  # call_id → call type, in emission order
    seen_calls: set[str] = set()
    resolved: set[str] = set()
    history_length = len(history)
    for position, item in enumerate([*history, *new_input]):
        item_type = item.get("type")
        if not isinstance(item_type, str) or (item_type not in _CALL_TYPES and item_type not in _RESOLVES):
            continue  # not a call or an output (a type that is not a string is as unknown as any other)
        param = f"input[{position - history_length}]" if position >= history_length else None
        call_id = call_id_of(item)
        if not isinstance(call_id, str) or not call_id:
            raise InvalidRequest(f"Every {item_type} needs a non-empty call_id.", param=param, code="invalid_call_id")
        if item_type in _CALL_TYPES:
            if call_id in seen_calls:
                raise InvalidRequest(f"Duplicate call_id '{call_id}': call ids must be unique.", param=param, code="duplicate_call_id")
            seen_calls.add(call_id)
            pending[call_id] = item_type
            continue
        expected = _RESOLVES[item_type]
        if call_id in resolved:
            raise InvalidRequest(f"The call '{call_id}' already has an output.", param=param, code="duplicate_call_output")
        if call_id not in pending:
            raise InvalidRequest(f"No tool call found for {item_type} with call_id '{call_id}'.", param=param, code="unknown_call_id")
        if pending[call_id] != expected:
            raise InvalidRequest(
                f"The {item_type} for '{call_id}' answers a {pending[call_id]}; expected a {expected}.",
                param=param, code="call_kind_mismatch",
            )
        del pending[call_id]
        resolved.add(call_id)
    if pending:
        call_id, item_type = next(iter(pending.items()))
        raise InvalidRequest(
            f"No tool output found for {item_type.replace('_', ' ')} {call_id}.", param="input", code="missing_tool_output"
        )


def check_relayed_call_outputs(payload: dict[str, Any]) -> None:
    """A request relayed to the model server as it is: its tool outputs each answer one call of its input, as the
    executor checks its own turns (a model server may take an unmatched output silently). Only an input holding
    an output is walked item by item."""
    items = payload.get("input")
    if isinstance(items, list) and any(isinstance(item, dict) and item.get("type") == "function_call_output"
                                       for item in items):
        validate_continuation([], [item for item in items if isinstance(item, dict)])
