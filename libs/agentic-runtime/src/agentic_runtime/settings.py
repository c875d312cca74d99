"""The base of every service's settings class: read from the environment once, at start-up."""

from __future__ import annotations

from pydantic import AliasChoices, Field
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
