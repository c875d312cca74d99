"""The bridge's domain errors: a refused server (400 naming the rule) and a failing server (424)."""

from __future__ import annotations

from agentic_core.errors import AgenticError, InvalidRequest


class ServerRefused(InvalidRequest):
    """A request's MCP server broke the host policy; `rule` names which part."""

    default_code = "mcp_server_refused"

    def __init__(self, rule: str, detail: str, *, param: str = "server_url") -> None:
        super().__init__(f"MCP server refused by the host policy (rule: {rule}): {detail}", param=param)
        self.rule = rule


class McpServerFailed(AgenticError):
    """The MCP server could not be reached, timed out or broke the protocol (OpenAI answers 424 here)."""

    http_status = 424
    error_type = "external_connector_error"
    default_code = "mcp_list_tools_failed"

    def __init__(self, server_label: str, reason: str) -> None:
        super().__init__(f"Error retrieving tool list from MCP server {server_label!r}: {reason}", param="tools")
        self.reason = reason


class McpUnavailable(Exception):
    """Inside the bridge: the server could not serve a request; `reason` is safe to show (no secrets)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
