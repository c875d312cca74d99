"""MCP tool calls from JetStream (`tools.exec.mcp`): a `ToolCall` in, a `ToolResult` with the MCP content out."""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
import orjson
from agentic_core.errors import AgenticError
from agentic_core.tools.protocol import ToolCall, ToolResult
from agentic_runtime.credential_seal import CredentialSeal, CredentialsUnavailable

from agentic_mcp_bridge.bridge import McpBridge
from agentic_mcp_bridge.errors import McpUnavailable

log = logging.getLogger(__name__)
# Leaves the consumer's own deadline timer a moment, so a slow server gets our clearer error.
DEADLINE_MARGIN_SECONDS = 0.25


class McpCallHandler:
    """A tool handler for the shared JetStream consumer (`kind`, `run`, `close`)."""

    def __init__(self, bridge: McpBridge, *, kind: str = "mcp", credentials: CredentialSeal | None = None) -> None:
        self.kind = kind
        self.bridge = bridge
        self.credentials = credentials or CredentialSeal(None)  # opens the headers the executor sealed

    async def run(self, call: ToolCall) -> ToolResult:
        try:
            params = self.credentials.open_params(call.params or {}, call.tenant)
        except CredentialsUnavailable as exc:
            log.warning("an MCP call's credentials did not open: %s", exc)
            return ToolResult.error(call.call_id, "The MCP server's credentials could not be read by the bridge "
                                                  "(AGENTIC_CREDENTIALS_KEY differs from the executor's).")
        label = str(params.get("server_label") or "")
        details: dict[str, Any] = {"server_label": label, "name": call.tool}
        timeout = min(self.bridge.settings.call_timeout_seconds, call.seconds_left() - DEADLINE_MARGIN_SECONDS)
        try:
            target = await self.bridge.target(
                server_label=label,
                server_url=params.get("server_url") or None,
                connector_id=params.get("connector_id") or None,
                headers=_headers(params),
            )
            result = await self.bridge.call_tool(call.tenant, target, call.tool, call.arguments or {}, timeout)
        except AgenticError as error:
            return ToolResult.error(call.call_id, error.message, **details)
        except McpUnavailable as failure:
            return ToolResult.error(call.call_id, f"The MCP server {label!r} failed: {failure.reason}", **details)
        text = output_text(result, self.bridge.settings.max_output_bytes)
        if result.is_error:
            return ToolResult.error(call.call_id, text or f"The MCP tool {call.tool!r} reported an error.", **details)
        return ToolResult.ok(call.call_id, text, output=text, **details)

    async def close(self) -> None:
        """Sessions belong to the bridge, which closes them after the consumer drained."""


def _headers(params: dict[str, Any]) -> dict[str, str]:
    headers = dict(params.get("headers") or {})
    authorization = params.get("authorization")
    if authorization and not any(name.lower() == "authorization" for name in headers):
        headers["Authorization"] = f"Bearer {authorization}"
    return headers


def output_text(result: types.CallToolResult, max_bytes: int) -> str:
    """What the model reads: the text contents joined; the structured content as JSON when there is no text."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.TextResourceContents):
            parts.append(block.resource.text)
        elif isinstance(block, types.ResourceLink):
            parts.append(str(block.uri))
    if parts:
        text = "\n".join(parts)
    elif result.structured_content is not None:
        text = orjson.dumps(result.structured_content).decode()
    else:
        text = ""
    return _cut(text, max_bytes)


def _cut(text: str, max_bytes: int) -> str:
    encoded = text.encode()
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode(errors="ignore") + f"\n[output cut: {len(encoded)} bytes, {max_bytes} shown]"
