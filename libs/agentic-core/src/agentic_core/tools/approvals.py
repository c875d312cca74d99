"""MCP approvals across turns: each `mcp_approval_response` answers one stored request, once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentic_core.errors import InvalidRequest


@dataclass(frozen=True, slots=True)
class Approval:
    request: dict[str, Any]  # the stored mcp_approval_request
    call: dict[str, Any]     # the model's pending function call it stands for
    approved: bool
    reason: str | None


def resolve_approvals(history: list[dict[str, Any]], new_input: list[dict[str, Any]]) -> list[Approval]:
    requests = {item["id"]: item for item in history if item.get("type") == "mcp_approval_request"}
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
        approvals.append(Approval(request, calls[request["call_id"]], approve, item.get("reason")))
    return approvals
