"""Settings of the gateway (env vars `AGENTIC_GATEWAY_*`, plus the fixed `AGENTIC_PORT`)."""

from __future__ import annotations

from agentic_runtime.settings import UpstreamSettings, fixed_env
from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict


class GatewaySettings(UpstreamSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_GATEWAY_", extra="ignore", frozen=True)

    host: str = Field(default="0.0.0.0", description="Address the HTTP server binds.")
    port: int = Field(default=8080, validation_alias=fixed_env("AGENTIC_PORT"), description="Gateway HTTP port.")
    executor_address: str = Field(default="127.0.0.1:50051", description="gRPC address of the executor.")
    state_address: str = Field(default="127.0.0.1:50052", description="gRPC address of the state service.")
    max_body_bytes: int = Field(default=16 * 1024 * 1024, gt=0, description="Largest request body accepted (413 beyond).")
    api_keys: SecretStr | None = Field(
        default=None,
        description="Comma-separated `key=tenant` pairs (a bare key maps to tenant `default`). Unset: no auth.",
    )
    max_upstream_body_bytes: int = Field(
        default=16 * 1024 * 1024, gt=0, description="Largest non-streaming body relayed from a model server."
    )
    turn_timeout_seconds: float = Field(default=900.0, gt=0, description="Longest a single turn may run.")
    state_timeout_seconds: float = Field(default=10.0, gt=0, description="Deadline of each call to the state service.")
    ready_timeout_seconds: float = Field(default=2.0, gt=0, description="Deadline of each dependency check behind /ready.")
    native_messages_recheck_seconds: float = Field(
        default=300.0, gt=0,
        description="How long a model server found without `/v1/messages` (404/405) gets Messages requests translated "
                    "through the round loop before it is asked again.",
    )
