"""MCP credentials (`authorization`, `headers`) sealed wherever they would otherwise rest on a broker's disk.

A tool call crosses NATS JetStream (file-backed `TOOLS`) to the mcp-bridge, and
a background turn waits in `BACKGROUND` for an executor: both keep the message
on disk for a while. With `AGENTIC_CREDENTIALS_KEY` set (the same on executors,
llm-d and the mcp-bridge) the credentials in them are AES-256-GCM sealed for the
tenant and opened only in memory, where the MCP call needs them.
Echoed and stored copies never hold them (`agentic_core.responses.response.echoed_tool`).
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from agentic_runtime.sealed_box import SealedBox, SealedBoxError

log = logging.getLogger(__name__)

PURPOSE = "agentic credentials v1"
SEALED_HEADERS = "sealed_headers"  # in a tool call's params, in place of `headers`
SEALED_CREDENTIALS = "sealed_credentials"  # in a queued request's mcp tool, in place of `authorization`/`headers`
_CREDENTIAL_FIELDS = ("authorization", "headers")


class CredentialsUnavailable(ValueError):
    """Sealed credentials this process cannot open (no key, another key, another tenant, tampered)."""


class CredentialSeal:
    def __init__(self, secret: str | None) -> None:
        self._box = SealedBox(secret, PURPOSE) if secret else None

    @property
    def enabled(self) -> bool:
        return self._box is not None

    def seal_params(self, params: dict[str, Any], tenant: str) -> dict[str, Any]:
        """A tool call's params with its headers sealed (as they are without a key, or without headers)."""
        headers = params.get("headers")
        if self._box is None or not headers:
            return params
        sealed = {key: value for key, value in params.items() if key != "headers"}
        sealed[SEALED_HEADERS] = self._box.seal(orjson.dumps(headers), tenant.encode())
        return sealed

    def open_params(self, params: dict[str, Any], tenant: str) -> dict[str, Any]:
        token = params.get(SEALED_HEADERS)
        if token is None:
            return params
        opened = {key: value for key, value in params.items() if key != SEALED_HEADERS}
        opened["headers"] = orjson.loads(self._open(token, tenant))
        return opened

    def seal_request(self, payload: dict[str, Any], tenant: str) -> dict[str, Any] | None:
        """The request with every mcp tool's credentials sealed, or None when it carries none. Raises
        `CredentialsUnavailable` when it carries some and there is no key: they would rest in the clear."""
        tools = payload.get("tools")
        if not isinstance(tools, list) or not any(_has_credentials(tool) for tool in tools):
            return None
        if self._box is None:
            raise CredentialsUnavailable("no credentials key")
        sealed_tools = []
        for tool in tools:
            if not _has_credentials(tool):
                sealed_tools.append(tool)
                continue
            credentials = {field: tool[field] for field in _CREDENTIAL_FIELDS if tool.get(field) is not None}
            kept = {key: value for key, value in tool.items() if key not in _CREDENTIAL_FIELDS}
            kept[SEALED_CREDENTIALS] = self._box.seal(orjson.dumps(credentials), tenant.encode())
            sealed_tools.append(kept)
        return {**payload, "tools": sealed_tools}

    def open_request(self, payload: dict[str, Any], tenant: str) -> dict[str, Any]:
        tools = payload.get("tools")
        if not isinstance(tools, list):
            return payload
        opened = []
        for tool in tools:
            token = tool.get(SEALED_CREDENTIALS) if isinstance(tool, dict) else None
            if token is None:
                opened.append(tool)
                continue
            credentials = orjson.loads(self._open(token, tenant))
            opened.append({**{key: value for key, value in tool.items() if key != SEALED_CREDENTIALS}, **credentials})
        return {**payload, "tools": opened}

    def _open(self, token: Any, tenant: str) -> bytes:
        if self._box is None or not isinstance(token, str):
            raise CredentialsUnavailable("sealed credentials and no key to open them (AGENTIC_CREDENTIALS_KEY)")
        try:
            return self._box.open(token, tenant.encode())
        except SealedBoxError as exc:
            raise CredentialsUnavailable(str(exc)) from None


def _has_credentials(tool: Any) -> bool:
    return isinstance(tool, dict) and tool.get("type") == "mcp" and any(tool.get(field) for field in _CREDENTIAL_FIELDS)
