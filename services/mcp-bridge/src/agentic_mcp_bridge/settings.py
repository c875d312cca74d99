"""Settings of the MCP bridge (env vars `AGENTIC_MCP_BRIDGE_*`, plus the fixed NATS and allowlist names)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from agentic_runtime.settings import ServiceSettings, fixed_env


class McpBridgeSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_MCP_BRIDGE_", extra="ignore", frozen=True)

    host: str = "0.0.0.0"
    port: int = 50053
    metrics_port: int = 9103
    nats_url: str = Field(default="nats://127.0.0.1:4222", validation_alias=fixed_env("AGENTIC_NATS_URL"))
    allowed_hosts: str = Field(default="", validation_alias=fixed_env("AGENTIC_MCP_ALLOWED_HOSTS"))
