"""Settings of the tool runner (env vars `AGENTIC_TOOL_RUNNER_*`, plus the fixed `AGENTIC_NATS_URL`)."""

from __future__ import annotations

from agentic_runtime.settings import ServiceSettings, fixed_env
from pydantic import Field
from pydantic_settings import SettingsConfigDict


class ToolRunnerSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_TOOL_RUNNER_", extra="ignore", frozen=True)

    host: str = Field(default="0.0.0.0", description="Address the probe server binds.")
    port: int = Field(default=8090, description="Probes and /metrics.")
    nats_url: str = Field(
        default="nats://127.0.0.1:4222", validation_alias=fixed_env("AGENTIC_NATS_URL"), description="NATS server (JetStream enabled)."
    )
