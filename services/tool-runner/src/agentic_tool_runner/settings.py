"""Settings of the tool runner (env vars `AGENTIC_TOOL_RUNNER_*`, plus the fixed `AGENTIC_NATS_URL`)."""

from __future__ import annotations

from agentic_runtime.settings import ServiceSettings, fixed_env
from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict


class ToolRunnerSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_TOOL_RUNNER_", extra="ignore", frozen=True)

    host: str = Field(default="0.0.0.0", description="Address the probe server binds.")
    port: int = Field(default=8090, description="Probes and /metrics.")
    nats_url: str = Field(
        default="nats://127.0.0.1:4222", validation_alias=fixed_env("AGENTIC_NATS_URL"), description="NATS server (JetStream enabled)."
    )
    kinds: str = Field(
        default="web_search,code_interpreter,shell,operator",
        description="Tool kinds this runner consumes (each one's durable consumer is `tool-runner-<kind>`).",
    )
    concurrency: int = Field(default=4, ge=1, description="Calls of one kind running at once in this runner.")
    concurrency_overrides: str = Field(default="", description="Per-kind concurrency, e.g. `code_interpreter=1,web_search=8`.")
    ack_wait_seconds: float = Field(
        default=30.0, gt=0, description="Silence after which a call is redelivered to another runner (runners heartbeat)."
    )
    max_deliveries: int = Field(default=5, ge=1, description="Deliveries of one call before it is given up.")
    redelivery_backoff_seconds: str = Field(
        default="", description="Comma-separated delays before redeliveries (JetStream backoff); empty: ack wait."
    )
    lag_poll_seconds: float = Field(default=5.0, gt=0, description="How often queue depth and consumer lag are exported.")

    # Web search (tools/web_search.py) and operator-written tools (tools/operator.py).
    web_search_provider: str | None = Field(
        default=None,
        pattern="^(brave|you|tavily|searxng)?$",
        validation_alias=fixed_env("AGENTIC_WEB_SEARCH_PROVIDER"),
        description="Web search backend: `brave`, `you`, `tavily` or `searxng`; unset, web search calls answer that it is not configured.",
    )
    web_search_base_url: str | None = Field(
        default=None,
        validation_alias=fixed_env("AGENTIC_WEB_SEARCH_BASE_URL"),
        description="Base URL of the web search backend (required for `searxng`; a proxy or mirror for the others).",
    )
    web_search_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=fixed_env("AGENTIC_WEB_SEARCH_API_KEY"),
        description="Key of the web search backend (required for `brave`, `you` and `tavily`).",
    )
    web_search_max_results: int = Field(
        default=10, ge=1, le=20,
        description="Results per query at `search_context_size: high`; `medium` (the default) gets half, `low` a quarter.",
    )
    web_search_timeout_seconds: float = Field(default=10.0, gt=0, description="Longest wait for the web search backend, per call.")
    operator_modules: str = Field(
        default="",
        description="Comma-separated `module` or `module:attribute` names of operator tools to load, besides the `agentic.tools` entry points.",
    )
