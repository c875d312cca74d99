"""Which MCP server a request or call means: a URL from the request, or a server the operator configured.

A target carries the request's credentials (headers) and their fingerprint, a
keyed hash that separates sessions and cached tool lists per credentials
without keeping the secrets themselves in any key.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import orjson
from agentic_core.errors import InvalidRequest
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from agentic_mcp_bridge.policy import redacted

TransportKind = Literal["streamable_http", "sse", "stdio"]
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
# Set by the transport itself; a request may not choose them.
_RESERVED_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "mcp-session-id", "mcp-protocol-version"}
)
# Keys fingerprints with a secret of this process, so a fingerprint says nothing about the credentials.
_FINGERPRINT_KEY = secrets.token_bytes(32)


class HttpServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    headers: dict[str, str] = {}
    transport: Literal["streamable_http", "sse"] | None = None


class StdioServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None


_SERVERS = TypeAdapter(dict[str, HttpServerConfig | StdioServerConfig])


def load_operator_servers(text: str) -> dict[str, HttpServerConfig | StdioServerConfig]:
    """Parse `AGENTIC_MCP_BRIDGE_SERVERS`; a bad value stops the bridge at start-up."""
    if not text.strip():
        return {}
    try:
        return _SERVERS.validate_python(orjson.loads(text))
    except (orjson.JSONDecodeError, ValidationError) as exc:
        raise ValueError(f"AGENTIC_MCP_BRIDGE_SERVERS is not valid: {exc}") from None


def fingerprint(headers: Mapping[str, str]) -> str:
    canonical = orjson.dumps(sorted((name.lower(), value) for name, value in headers.items()))
    return hmac.new(_FINGERPRINT_KEY, canonical, hashlib.sha256).hexdigest()[:32]


def transport_for_url(url: str) -> TransportKind:
    """The older HTTP+SSE transport for endpoints named `.../sse`, Streamable HTTP otherwise."""
    path = url.split("?", 1)[0].rstrip("/")
    return "sse" if path.endswith("/sse") else "streamable_http"


@dataclass(frozen=True, slots=True)
class ServerTarget:
    label: str
    identity: str                 # the server part of session and cache keys: the URL, or `connector:<id>`
    transport: TransportKind
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    fingerprint: str = ""
    stdio: StdioServerConfig | None = None
    from_operator: bool = False

    @property
    def cache_key(self) -> tuple[str, str]:
        return (self.identity, self.fingerprint)

    @property
    def display(self) -> str:
        """How logs and messages name the server (never with credentials)."""
        return self.identity if self.url is None else redacted(self.url)


def _checked_headers(headers: Mapping[str, str]) -> dict[str, str]:
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str) or not _HEADER_NAME.match(name):
            raise InvalidRequest("MCP `headers` must map header names to string values.", param="headers")
        if any(character in value for character in "\r\n\0"):
            raise InvalidRequest(f"The MCP header {name!r} has a line break in its value.", param="headers")
        if name.lower() in _RESERVED_HEADERS:
            raise InvalidRequest(f"The MCP header {name!r} is set by the bridge and may not be given.", param="headers")
        checked[name] = value
    return checked


class Targets:
    """Builds targets from what a request names, against the operator's configured servers."""

    def __init__(self, operator_servers: Mapping[str, HttpServerConfig | StdioServerConfig]) -> None:
        self.operator_servers = dict(operator_servers)

    def resolve(
        self,
        *,
        server_label: str,
        server_url: str | None,
        connector_id: str | None,
        headers: Mapping[str, str] | None,
    ) -> ServerTarget:
        request_headers = _checked_headers(headers or {})
        if bool(server_url) == bool(connector_id):
            raise InvalidRequest("An MCP server needs exactly one of `server_url` and `connector_id`.", param="server_url")
        if server_url:
            return ServerTarget(
                label=server_label, identity=server_url, transport=transport_for_url(server_url), url=server_url,
                headers=request_headers, fingerprint=fingerprint(request_headers),
            )
        assert connector_id is not None
        config = self.operator_servers.get(connector_id)
        if config is None:
            raise InvalidRequest(f"Unknown MCP connector_id {connector_id!r}.", param="connector_id",
                                 code="unknown_connector")
        identity = f"connector:{connector_id}"
        if isinstance(config, StdioServerConfig):
            return ServerTarget(label=server_label, identity=identity, transport="stdio", stdio=config,
                                fingerprint=fingerprint(request_headers), from_operator=True)
        overridden = {name.lower() for name in request_headers}
        merged = {name: value for name, value in config.headers.items() if name.lower() not in overridden} | request_headers
        return ServerTarget(
            label=server_label, identity=identity, transport=config.transport or transport_for_url(config.url),
            url=config.url, headers=merged, fingerprint=fingerprint(merged), from_operator=True,
        )
