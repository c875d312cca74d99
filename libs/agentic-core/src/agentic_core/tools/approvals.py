"""MCP approvals across turns: each `mcp_approval_response` answers one stored request, once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentic_core.errors import InvalidRequest
from agentic_core.tools.mcp import model_tool_name


@dataclass(frozen=True, slots=True)
class Approval:
    request: dict[str, Any]  # the mcp_approval_request (stored, or sent back by a store:false client)
    call: dict[str, Any]     # the model's pending function call it stands for
    approved: bool
    reason: str | None
    restored: bool = False   # the call was rebuilt from the request: the history did not hold it


def answers_approval(new_input: Sequence[dict[str, Any]]) -> bool:
    return any(item.get("type") == "mcp_approval_response" for item in new_input)


def resolve_approvals(history: list[dict[str, Any]], new_input: list[dict[str, Any]]) -> list[Approval]:
    """With `previous_response_id` or `conversation` the requests and calls are in the history; a client
    keeping its own state (`store: false`) sends the requests back in its input instead."""
    if not answers_approval(new_input):
        return []  # most turns answer no approval: the history is not walked for them
    requests = {item.get("id"): item for item in [*history, *new_input] if item.get("type") == "mcp_approval_request"}
    used = {item.get("approval_request_id") for item in history if item.get("type") == "mcp_approval_response"}
    calls = {item.get("call_id"): item for item in history if item.get("type") == "function_call"}
    approvals: list[Approval] = []
    for index, item in enumerate(new_input):
        if item.get("type") != "mcp_approval_response":
            continue
        param = f"input[{index}]"
        request_id = item.get("approval_request_id")
        approve = item.get("approve")
        if not isinstance(approve, bool):
            raise InvalidRequest("`approve` must be true or false.", param=f"{param}.approve", code="invalid_value")
        if request_id in used:
            raise InvalidRequest(f"The approval request {request_id!r} was already answered; an approval is used once.",
                                 param=f"{param}.approval_request_id", code="approval_already_used")
        request = requests.get(request_id)
        if request is None:
            raise InvalidRequest(f"No pending approval request {request_id!r} in this conversation or chain.",
                                 param=f"{param}.approval_request_id", code="unknown_approval_request")
        used.add(request_id)
        call = calls.get(request.get("call_id"))
        if call is not None:
            approvals.append(Approval(request, call, approve, item.get("reason")))
        else:
            approvals.append(Approval(request, _call_from(request, param), approve, item.get("reason"), restored=True))
    return approvals


def _call_from(request: dict[str, Any], param: str) -> dict[str, Any]:
    call_id, label, name = request.get("call_id"), request.get("server_label"), request.get("name")
    if not (isinstance(call_id, str) and call_id and isinstance(label, str) and label and isinstance(name, str) and name):
        raise InvalidRequest("The approval request sent back is incomplete; send it as the response returned it.",
                             param=param, code="invalid_value")
    return {"id": f"fc_{call_id}", "type": "function_call", "call_id": call_id, "name": model_tool_name(label, name),
            "arguments": request.get("arguments") or "{}", "status": "completed"}
