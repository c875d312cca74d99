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
    response_ttl_days: float | None = Field(
        default=None, gt=0,
        description="Delete stored responses this many days old (as DELETE does: later turns of a chain keep their "
                    "history; a deleted response's row and items go once no response continues from it); unset: keep.",
    )
    conversation_ttl_days: float | None = Field(
        default=None, gt=0,
        description="Delete conversations idle (no item added) for this many days, with their items; unset: keep.",
    )
    audit_ttl_days: float | None = Field(default=None, gt=0, description="Delete audit records this many days old; unset: keep.")
    audit_max_batch_bytes: int = Field(
        default=8 * 1024 * 1024, ge=1024,
        description="Largest batch of audit records taken at once; a larger one is refused as too large (413), and "
                    "the recorders split it.",
    )
    usage_ttl_days: float | None = Field(
        default=None, gt=0, description="Delete usage rows (per-minute sums) this many days old; unset: keep."
    )
    purge_interval_seconds: float = Field(
        default=3600.0, gt=0,
        description="How often retention runs (one replica at a time, by a PostgreSQL advisory lock).",
    )
    purge_batch_size: int = Field(
        default=500, ge=1, description="Rows deleted per statement by retention (each its own short transaction).",
    )
