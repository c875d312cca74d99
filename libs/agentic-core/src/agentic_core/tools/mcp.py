"""The `mcp` tool of the Responses API: declarations, model-visible names, approvals, public items."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from agentic_core.errors import InvalidRequest
from agentic_core.ids import new_item_id

_LABEL = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_MAX_FUNCTION_NAME = 64


@dataclass(frozen=True, slots=True)
class McpDeclaration:
    server_label: str
    server_url: str | None
    connector_id: str | None
    headers: dict[str, str]
    allowed_tools: list[str] | None
    require_approval: Any  # "always" | "never" | {"always": {"tool_names"}, "never": {"tool_names"}}
    index: int = 0

    def needs_approval(self, tool_name: str) -> bool:
        policy = self.require_approval
        if policy == "never":
            return False
        if isinstance(policy, dict):
            never = (policy.get("never") or {}).get("tool_names") or []
            always = (policy.get("always") or {}).get("tool_names") or []
            if tool_name in always:
                return True
            if tool_name in never:
                return False
            return not never  # {never: [...]} lists the exceptions; everything else still asks
        return True  # "always", and OpenAI's default

    def runner_params(self) -> dict[str, Any]:
        return {"server_label": self.server_label, "server_url": self.server_url, "connector_id": self.connector_id,
                "headers": self.headers}


def parse_declaration(tool: dict[str, Any], index: int) -> McpDeclaration:
    param = f"tools[{index}]"
    label = tool.get("server_label")
    if not isinstance(label, str) or not _LABEL.match(label):
        raise InvalidRequest("An mcp tool needs a `server_label` of letters, digits, '_' or '-'.",
                             param=f"{param}.server_label", code="invalid_value")
    url, connector = tool.get("server_url"), tool.get("connector_id")
    if (url is None) == (connector is None) or not isinstance(url or connector, str):
        raise InvalidRequest("An mcp tool needs exactly one of `server_url` or `connector_id`.", param=param,
                             code="invalid_value")
    headers = tool.get("headers") or {}
    if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise InvalidRequest("`headers` must map header names to strings.", param=f"{param}.headers", code="invalid_value")
    headers = dict(headers)
    authorization = tool.get("authorization")
    if authorization is not None:
        if not isinstance(authorization, str) or not authorization:
            raise InvalidRequest("`authorization` must be a non-empty string.", param=f"{param}.authorization",
                                 code="invalid_value")
        headers["Authorization"] = f"Bearer {authorization}"
    allowed = tool.get("allowed_tools")
    if isinstance(allowed, dict):
        allowed = allowed.get("tool_names")
    if allowed is not None and (not isinstance(allowed, list) or not all(isinstance(name, str) for name in allowed)):
        raise InvalidRequest("`allowed_tools` must be a list of tool names (or {\"tool_names\": [...]}).",
                             param=f"{param}.allowed_tools", code="invalid_value")
    approval = tool.get("require_approval", "always")
    if not (approval in ("always", "never") or (isinstance(approval, dict) and set(approval) <= {"always", "never"})):
        raise InvalidRequest("`require_approval` must be \"always\", \"never\" or {always|never: {tool_names}}.",
                             param=f"{param}.require_approval", code="invalid_value")
    return McpDeclaration(label, url, connector, headers, allowed, approval, index)


def model_tool_name(server_label: str, tool_name: str) -> str:
    """`<label>__<tool>`: unique across servers; long names keep a hash so they stay unique within 64 characters."""
    name = f"{server_label}__{tool_name}"
    if len(name) <= _MAX_FUNCTION_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: _MAX_FUNCTION_NAME - 9]}_{digest}"


@dataclass(slots=True)
class McpServerTools:
    declaration: McpDeclaration
    tools: list[dict[str, Any]] = field(default_factory=list)  # {name, description, input_schema, annotations}


def list_tools_item(server: McpServerTools) -> dict[str, Any]:
    return {"id": new_item_id("mcp_list_tools"), "type": "mcp_list_tools", "server_label": server.declaration.server_label,
            "tools": server.tools, "error": None}


def approval_request_item(server_label: str, tool_name: str, arguments: str, call_id: str) -> dict[str, Any]:
    """Public and stored: `call_id` (ours) links it to the model's pending call."""
    return {"id": new_item_id("mcp_approval_request"), "type": "mcp_approval_request", "server_label": server_label,
            "name": tool_name, "arguments": arguments, "call_id": call_id}


def listed_servers(history: list[dict[str, Any]]) -> set[str]:
    """Servers whose `mcp_list_tools` the chain or conversation already showed (not shown again)."""
    return {item.get("server_label", "") for item in history if item.get("type") == "mcp_list_tools"}
