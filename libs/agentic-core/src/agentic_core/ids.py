"""Identifiers we hand out: `<prefix>_<48 hex>`, unguessable and never reused."""

from __future__ import annotations

import secrets

# Item type → id prefix, following OpenAI's conventions.
ITEM_ID_PREFIXES: dict[str, str] = {
    "message": "msg",
    "function_call": "fc",
    "function_call_output": "fco",
    "reasoning": "rs",
    "custom_tool_call": "ctc",
    "custom_tool_call_output": "ctco",
    "web_search_call": "ws",
    "file_search_call": "fs",
    "code_interpreter_call": "ci",
    "mcp_call": "mcp",
    "mcp_list_tools": "mcpl",
    "mcp_approval_request": "mcpr",
    "mcp_approval_response": "mcpa",
    "compaction": "cmp",
}


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(24)}"


def new_response_id() -> str:
    return new_id("resp")


def new_item_id(item_type: str) -> str:
    return new_id(ITEM_ID_PREFIXES.get(item_type, "item"))
