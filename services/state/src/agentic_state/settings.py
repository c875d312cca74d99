"""Settings of the state service (env vars `AGENTIC_STATE_*`, plus the fixed `AGENTIC_DATABASE_URL`)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from agentic_runtime.settings import ServiceSettings, fixed_env


class StateSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_STATE_", extra="ignore", frozen=True)

    database_url: str = Field(validation_alias=fixed_env("AGENTIC_DATABASE_URL"))
    host: str = "0.0.0.0"
    port: int = 50052
    metrics_port: int = 9102
    pool_min_size: int = Field(default=2, ge=1)
    pool_max_size: int = Field(default=16, ge=1)
    statement_timeout_ms: int = Field(default=10_000, gt=0)
    max_chain_depth: int = Field(default=10_000, gt=0, description="Longest previous_response_id chain rehydrated.")
