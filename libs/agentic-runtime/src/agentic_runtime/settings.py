"""The base of every service's settings class: read from the environment once, at start-up."""

from __future__ import annotations

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


def fixed_env(name: str) -> AliasChoices:
    """A setting whose env var name is fixed by the design (no service prefix)."""
    return AliasChoices(name)


class ServiceSettings(BaseSettings):
    """Settings every service has. Subclasses set `env_prefix` to `AGENTIC_<SERVICE>_`."""

    model_config = SettingsConfigDict(env_prefix="AGENTIC_", extra="ignore", frozen=True)

    log_level: str = Field(
        default="INFO", validation_alias=fixed_env("AGENTIC_LOG_LEVEL"), description="Log level of every service (JSON logs on stderr)."
    )
    drain_seconds: float = Field(default=10.0, gt=0, description="How long SIGTERM waits for in-flight work.")
    unready_seconds: float = Field(
        default=0.0, ge=0,
        description="After SIGTERM, how long readiness fails while work is still accepted, so that load balancers "
                    "stop sending before the listener closes (Kubernetes: a few seconds).",
    )
    grpc_max_connection_age_seconds: float = Field(
        default=300.0, ge=0, validation_alias=fixed_env("AGENTIC_GRPC_MAX_CONNECTION_AGE_SECONDS"),
        description="gRPC servers (executor, state, mcp-bridge): close each client connection after about this age, so that "
                    "clients re-resolve the service name and spread their calls over pods added since; 0: never.",
    )
    grpc_max_connection_age_grace_seconds: float = Field(
        default=0.0, ge=0, validation_alias=fixed_env("AGENTIC_GRPC_MAX_CONNECTION_AGE_GRACE_SECONDS"),
        description="gRPC servers: how long calls on an aged connection may still run before it is cut; 0: as long as they take.",
    )


class UpstreamSettings(ServiceSettings):
    """Where models are served (the routing table) and how we talk to model servers."""

    upstream_url: str = Field(
        default="http://127.0.0.1:8000/v1",
        validation_alias=fixed_env("AGENTIC_UPSTREAM_URL"),
        description="Default model server: an OpenAI-compatible base URL ending in /v1.",
    )
    upstream_api_key: SecretStr | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_UPSTREAM_API_KEY"), description="Bearer key for the default model server."
    )
    upstream_api: str = Field(
        default="responses",
        pattern="^(responses|chat)$",
        validation_alias=fixed_env("AGENTIC_UPSTREAM_API"),
        description="API the default model server speaks: `responses` (vLLM's stateless Responses API) or `chat`.",
    )
    models_file: str | None = Field(
        default=None,
        validation_alias=fixed_env("AGENTIC_MODELS_FILE"),
        description="Model routing table (JSON or YAML): `[{match, base_url, api, api_key_env}]`; unmatched models use the default.",
    )
    models: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_MODELS"), description="The model routing table inline, as JSON."
    )
    upstream_connect_timeout_seconds: float = Field(default=5.0, gt=0, description="Connect timeout to model servers.")
    upstream_read_timeout_seconds: float = Field(default=300.0, gt=0, description="Longest silence from a model server.")
    upstream_max_connections: int = Field(default=512, ge=1, description="Pooled connections to model servers.")
    upstream_retries: int = Field(
        default=2, ge=0, description="Retries of a connection failure before any byte was received (with backoff)."
    )
    upstream_retry_backoff_seconds: float = Field(default=0.1, ge=0, description="First retry delay; doubles each retry.")
