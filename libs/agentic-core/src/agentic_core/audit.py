"""What the audit trail keeps of a turn: ids, model, status, the tools it ran (names, never arguments or
outputs) and the approvals its input granted or denied."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from agentic_core.json_types import Item

# Items whose name is the tool's own (operator tools, the gateway shell, client tools).
_NAMED_CALLS = frozenset({"function_call", "custom_tool_call"})


def tool_name(item: Item) -> str | None:
    """The tool a call item ran: `web_search`, `mcp:<server>/<tool>`, a function's name; None for other items."""
    kind = item.get("type")
    if not isinstance(kind, str) or not kind.endswith("_call"):
        return None
    if kind == "mcp_call":
        return f"mcp:{item.get('server_label', '')}/{item.get('name', '')}"
    if kind in _NAMED_CALLS:
        return str(item.get("name", ""))
    return kind.removesuffix("_call")


def approvals(input_items: Iterable[Item]) -> dict[str, list[str]]:
    """The approval request ids the input answered, by answer."""
    granted: list[str] = []
    denied: list[str] = []
    for item in input_items:
        if isinstance(item, dict) and item.get("type") == "mcp_approval_response":
            (granted if item.get("approve") is True else denied).append(str(item.get("approval_request_id", "")))
    return {"granted": granted, "denied": denied}


def turn_details(response: Item, input_items: Iterable[Item], *, conversation_id: str | None,
                 previous_response_id: str | None, not_run: Collection[str] = ()) -> Item:
    """The `response.turn` record's details. `not_run`: the ids of output items of calls that did not run (a
    call the input denied is shown, answered by its denial)."""
    output = response.get("output")
    items = [item for item in output if isinstance(item, dict)] if isinstance(output, list) else []
    tools = [name for name in (tool_name(item) for item in items if item.get("id") not in not_run) if name is not None]
    requested = [f"mcp:{item.get('server_label', '')}/{item.get('name', '')}" for item in items
                 if item.get("type") == "mcp_approval_request"]
    return {
        "response_id": response.get("id"), "conversation_id": conversation_id,
        "previous_response_id": previous_response_id, "model": response.get("model"),
        "status": response.get("status"), "tools": tools,
        "approvals": {**approvals(input_items), "requested": requested},
    }
