"""Settings of the MCP bridge (env vars `AGENTIC_MCP_BRIDGE_*`, plus the fixed NATS and allowlist names)."""

from __future__ import annotations

from agentic_runtime.settings import ServiceSettings, fixed_env
from pydantic import Field
from pydantic_settings import SettingsConfigDict


class McpBridgeSettings(ServiceSettings):
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
