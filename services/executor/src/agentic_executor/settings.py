"""Settings of the executor (env vars `AGENTIC_EXECUTOR_*`, plus the fixed upstream and NATS names)."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from agentic_runtime.settings import ServiceSettings, fixed_env


class ExecutorSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_EXECUTOR_", extra="ignore", frozen=True)

    host: str = "0.0.0.0"
    port: int = 50051
    metrics_port: int = 9101
    state_address: str = "127.0.0.1:50052"
    nats_url: str = Field(default="nats://127.0.0.1:4222", validation_alias=fixed_env("AGENTIC_NATS_URL"))
    upstream_url: str = Field(default="http://127.0.0.1:8000/v1", validation_alias=fixed_env("AGENTIC_UPSTREAM_URL"))
    upstream_api_key: SecretStr | None = Field(default=None, validation_alias=fixed_env("AGENTIC_UPSTREAM_API_KEY"))
    upstream_connect_timeout_seconds: float = Field(default=5.0, gt=0)
    upstream_read_timeout_seconds: float = Field(default=300.0, gt=0, description="Longest silence from the model server.")
    upstream_max_connections: int = Field(default=512, ge=1)
    upstream_max_event_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    upstream_max_body_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    state_timeout_seconds: float = Field(default=10.0, gt=0)
