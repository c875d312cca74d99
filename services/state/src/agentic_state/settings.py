"""Settings of the state service (env vars `AGENTIC_STATE_*`, plus the fixed `AGENTIC_DATABASE_URL`)."""

from __future__ import annotations

from agentic_runtime.settings import ServiceSettings, fixed_env
from pydantic import Field
from pydantic_settings import SettingsConfigDict


class StateSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_STATE_", extra="ignore", frozen=True)

    database_url: str = Field(validation_alias=fixed_env("AGENTIC_DATABASE_URL"), description="PostgreSQL URL.")
    host: str = Field(default="0.0.0.0", description="Address the gRPC server binds.")
    port: int = Field(default=50052, description="State gRPC port.")
    metrics_port: int = Field(default=9102, description="Prometheus /metrics port (0 disables).")
    pool_min_size: int = Field(default=2, ge=1, description="Connections kept open to PostgreSQL.")
    pool_max_size: int = Field(default=16, ge=1, description="Most connections to PostgreSQL.")
    statement_timeout_ms: int = Field(default=10_000, gt=0, description="PostgreSQL statement_timeout.")
    max_chain_depth: int = Field(
        default=10_000, gt=0, description="Longest previous_response_id chain continued (400 `chain_too_long` beyond)."
    )
