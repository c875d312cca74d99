"""What split execution cannot do, checked on the request and again on the history it continues.

Each refused feature needs state the in-process executor keeps between steps
(a conversation lease, a gateway tool loop, a compaction window), which a
coordinator running inference itself cannot hand back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentic_core.errors import InvalidRequest

# Tools the client executes: the model emits the call and the caller answers it next turn.
CLIENT_TOOL_TYPES = frozenset({"function", "custom"})
COMPACTION_ITEM_TYPES = frozenset({"compaction", "compaction_trigger"})
# Items only a gateway-executed tool produces; a chain holding them needs that tool's loop.
GATEWAY_TOOL_ITEM_TYPES = frozenset({
    "web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call",
    "mcp_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
    "computer_call", "computer_call_output", "shell_call", "shell_call_output",
    "local_shell_call", "local_shell_call_output", "tool_search_call", "tool_search_output",
})


def unsupported(feature: str) -> InvalidRequest:
    return InvalidRequest(f"{feature} is not supported for split execution", code="invalid_request_error")


def ensure_splittable_request(payload: dict[str, Any]) -> None:
    """The request itself: conversation, gateway tools, compaction input, context_management."""
    if payload.get("conversation") is not None:
        raise unsupported("conversation")
    tools = payload.get("tools") or []
    if any(not isinstance(tool, dict) or tool.get("type") not in CLIENT_TOOL_TYPES for tool in tools):
        raise unsupported("gateway-owned tools")
    raw_input = payload.get("input")
    if isinstance(raw_input, list):
        ensure_splittable_items(item for item in raw_input if isinstance(item, dict))
    if payload.get("context_management"):
        raise unsupported("context_management")


def ensure_splittable_items(items: Iterable[dict[str, Any]]) -> None:
    """Input or stored history: refuses compaction items and the traces of gateway-executed tools."""
    for item in items:
        item_type = item.get("type")
        if item_type in COMPACTION_ITEM_TYPES:
            raise unsupported("compaction input")
        if item_type in GATEWAY_TOOL_ITEM_TYPES:
            raise unsupported("gateway-owned tools")
