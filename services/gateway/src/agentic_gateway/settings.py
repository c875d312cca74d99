"""Settings of the gateway (env vars `AGENTIC_GATEWAY_*`, plus the fixed `AGENTIC_PORT` and `AGENTIC_NATS_URL`)."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from agentic_runtime.settings import ServiceSettings, fixed_env


class GatewaySettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_GATEWAY_", extra="ignore", frozen=True)

    host: str = "0.0.0.0"
    port: int = Field(default=8080, validation_alias=fixed_env("AGENTIC_PORT"))
    executor_address: str = "127.0.0.1:50051"
    state_address: str = "127.0.0.1:50052"
    nats_url: str = Field(default="nats://127.0.0.1:4222", validation_alias=fixed_env("AGENTIC_NATS_URL"))
    max_body_bytes: int = Field(default=16 * 1024 * 1024, gt=0, description="Largest request body accepted (413 beyond).")
    api_keys: SecretStr | None = Field(
        default=None,
        description="Comma-separated `key=tenant` pairs (a bare key maps to tenant `default`). Unset: no auth.",
    )
    turn_timeout_seconds: float = Field(default=900.0, gt=0, description="Longest a single turn may run.")
    ready_timeout_seconds: float = Field(default=2.0, gt=0)
