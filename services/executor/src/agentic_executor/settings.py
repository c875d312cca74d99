"""Settings of the executor (env vars `AGENTIC_EXECUTOR_*`, plus the fixed upstream and NATS names)."""

from __future__ import annotations

from agentic_runtime.settings import ServiceSettings, fixed_env
from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict


class ExecutorSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_EXECUTOR_", extra="ignore", frozen=True)

    host: str = Field(default="0.0.0.0", description="Address the gRPC server binds.")
    port: int = Field(default=50051, description="Executor gRPC port.")
    metrics_port: int = Field(default=9101, description="Prometheus /metrics port (0 disables).")
    state_address: str = Field(default="127.0.0.1:50052", description="gRPC address of the state service.")
    nats_url: str = Field(
        default="nats://127.0.0.1:4222", validation_alias=fixed_env("AGENTIC_NATS_URL"), description="NATS server (JetStream enabled)."
    )
    upstream_url: str = Field(
        default="http://127.0.0.1:8000/v1",
        validation_alias=fixed_env("AGENTIC_UPSTREAM_URL"),
        description="Default model server: an OpenAI-compatible base URL ending in /v1.",
    )
    upstream_api_key: SecretStr | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_UPSTREAM_API_KEY"), description="Bearer key for the model server."
    )
    upstream_connect_timeout_seconds: float = Field(default=5.0, gt=0, description="Connect timeout to the model server.")
    upstream_read_timeout_seconds: float = Field(default=300.0, gt=0, description="Longest silence from the model server.")
    upstream_max_connections: int = Field(default=512, ge=1, description="Pooled connections to the model server.")
    upstream_max_event_bytes: int = Field(default=16 * 1024 * 1024, gt=0, description="Largest upstream SSE event.")
    upstream_max_body_bytes: int = Field(default=16 * 1024 * 1024, gt=0, description="Largest upstream JSON body.")
    conversation_lease_seconds: float = Field(
        default=900.0, gt=0, description="Longest a turn holds its conversation; the lease expires by itself after this."
    )
    conversation_wait_seconds: float = Field(
        default=10.0, ge=0, description="How long a turn waits for another turn on the same conversation (409 after)."
    )
    state_timeout_seconds: float = Field(default=10.0, gt=0, description="Deadline of each call to the state service.")
