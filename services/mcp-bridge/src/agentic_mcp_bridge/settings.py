"""Settings of the MCP bridge (env vars `AGENTIC_MCP_BRIDGE_*`, plus the fixed NATS and allowlist names)."""

from __future__ import annotations

from agentic_runtime.settings import CredentialKeySettings, ServiceSettings, fixed_env
from pydantic import Field
from pydantic_settings import SettingsConfigDict


class McpBridgeSettings(ServiceSettings, CredentialKeySettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_MCP_BRIDGE_", extra="ignore", frozen=True)

    host: str = Field(default="0.0.0.0", description="Address the gRPC server binds.")
    port: int = Field(default=50053, description="MCP bridge gRPC port.")
    metrics_port: int = Field(default=9103, description="Prometheus /metrics port (0 disables).")
    nats_url: str = Field(
        default="nats://127.0.0.1:4222", validation_alias=fixed_env("AGENTIC_NATS_URL"), description="NATS server (JetStream enabled)."
    )
    allowed_hosts: str = Field(
        default="",
        validation_alias=fixed_env("AGENTIC_MCP_ALLOWED_HOSTS"),
        description="Comma-separated hosts (and host:port) MCP servers from requests may use.",
    )
    allow_http: bool = Field(
        default=False,
        description="Also allow plain `http://` URLs for allowlisted hosts (`https://` always is).",
    )
    private_networks: str = Field(
        default="",
        description=(
            "Comma-separated CIDRs that request-given MCP servers may resolve to; other private, loopback and "
            "link-local addresses are refused unless the allowlist names the address itself."
        ),
    )
    servers: str = Field(
        default="",
        description=(
            "Operator-configured MCP servers, JSON: `{\"<connector_id>\": {\"url\", \"headers\", \"transport\"} "
            "or {\"command\", \"args\", \"env\", \"cwd\"}}`; requests name them with `connector_id`."
        ),
    )
    connect_timeout_seconds: float = Field(default=10.0, gt=0, description="Connect timeout to MCP servers.")
    list_tools_timeout_seconds: float = Field(
        default=30.0, gt=0, description="Longest one discovery (session start and every `tools/list` page) may take."
    )
    call_timeout_seconds: float = Field(
        default=120.0, gt=0, description="Longest one MCP tool call may run (the call's own deadline may cut it shorter)."
    )
    discovery_cache_seconds: float = Field(
        default=300.0, ge=0, description="How long a server's tool list is reused (per server and credentials)."
    )
    discovery_cache_entries: int = Field(default=1024, ge=1, description="Tool lists kept in the discovery cache.")
    session_idle_seconds: float = Field(default=120.0, gt=0, description="Idle time after which a pooled MCP session is closed.")
    max_sessions: int = Field(default=256, ge=1, description="MCP sessions (and stdio server processes) open at once.")
    max_tools: int = Field(default=512, ge=1, description="Most tools one server may list (discovery fails beyond).")
    max_list_pages: int = Field(default=50, ge=1, description="Most `tools/list` pages followed for one server.")
    max_output_bytes: int = Field(
        default=1024 * 1024, ge=1024, description="Longest tool output passed to the model (cut beyond)."
    )
    concurrency: int = Field(default=16, ge=1, description="MCP tool calls running at once in this bridge.")
    ack_wait_seconds: float = Field(
        default=10.0, gt=0,
        description="Silence after which a call is redelivered to another bridge: how soon the calls of a dead bridge run elsewhere.",
    )
    heartbeat_seconds: float = Field(
        default=3.0, gt=0, description="How often a running call tells NATS it is alive (at most half the ack wait)."
    )
    max_deliveries: int = Field(default=5, ge=1, description="Deliveries of one call before it is given up.")
