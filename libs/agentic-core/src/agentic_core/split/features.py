"""What split execution cannot do, checked on the request and again on the history it continues.

Each refused feature needs state the in-process executor keeps between steps
(a conversation lease, a gateway tool loop, a compaction window), which a
coordinator running inference itself cannot hand back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentic_core.errors import InvalidRequest
from agentic_core.media.parts import input_fetches_media

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


# With the execute step, these run through the gateway's tool runners between the caller's rounds.
EXECUTABLE_TOOL_TYPES = frozenset({"web_search", "web_search_preview", "code_interpreter", "operator"})


def ensure_splittable_request(payload: dict[str, Any], *, execute: bool = False) -> None:
    """The request itself: conversation, gateway tools (unless the caller executes them through us),
    compaction input, context_management, images by URL and files."""
    if payload.get("conversation") is not None:
        raise unsupported("conversation")
    tools = payload.get("tools") or []
    allowed = CLIENT_TOOL_TYPES | EXECUTABLE_TOOL_TYPES if execute else CLIENT_TOOL_TYPES
    if any(not isinstance(tool, dict) or tool.get("type") not in allowed for tool in tools):
        raise unsupported("gateway-owned tools" if not execute else "this gateway-owned tool")
    raw_input = payload.get("input")
    if isinstance(raw_input, list):
        ensure_splittable_items(item for item in raw_input if isinstance(item, dict))
    if input_fetches_media(raw_input):
        # The coordinator's model server would fetch the URL itself, from inside the cluster: only data URLs.
        raise unsupported("an image URL or input file (send images as data URLs)")
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
