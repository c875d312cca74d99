"""Settings of the llm-d backend (fixed `AGENTIC_LLM_D_*` names from the design)."""

from __future__ import annotations

from agentic_runtime.settings import CredentialKeySettings, HttpServiceSettings, check_secret_strength, fixed_env
from agentic_runtime.state.audit import AuditSettings
from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

MIB = 1024 * 1024


class LlmDSettings(HttpServiceSettings, CredentialKeySettings, AuditSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_LLM_D_", extra="ignore", frozen=True)

    host: str = Field(default="0.0.0.0", description="Address the HTTP server binds.")
    port: int = Field(default=8081, validation_alias=fixed_env("AGENTIC_LLM_D_PORT"), description="llm-d backend HTTP port.")
    state_address: str = Field(default="127.0.0.1:50052", description="gRPC address of the state service.")
    nats_url: str = Field(
        default="nats://127.0.0.1:4222", validation_alias=fixed_env("AGENTIC_NATS_URL"), description="NATS server (JetStream enabled)."
    )
    signing_key: SecretStr = Field(
        validation_alias=fixed_env("AGENTIC_LLM_D_SIGNING_KEY"), description="HS256 key for hydrate contexts (>= 32 bytes)."
    )
    api_token: SecretStr = Field(
        validation_alias=fixed_env("AGENTIC_LLM_D_API_TOKEN"), description="Workload token callers send (>= 32 bytes)."
    )
    ready_timeout_seconds: float = Field(default=2.0, gt=0, description="Deadline of the state check behind /ready.")
    state_timeout_seconds: float = Field(default=10.0, gt=0, description="Deadline of each call to the state service.")
    hydrate_max_body_bytes: int = Field(default=2 * MIB, ge=1, description="Largest hydrate body (413 beyond).")
    persist_max_body_bytes: int = Field(default=16 * MIB, ge=1, description="Largest persist body (413 beyond).")
    max_context_bytes: int = Field(
        default=6 * MIB, ge=1, description="Largest signed context, issued by hydrate or accepted by persist (413 beyond)."
    )
    max_upstream_bytes: int = Field(
        default=4 * MIB, ge=1, description="Largest relayed model response (`response` JSON or `sse` text) in a persist (413 beyond)."
    )
    context_ttl_seconds: int = Field(default=600, ge=1, description="How long a hydrate context stays valid for its persist.")
    tenant_header: str = Field(
        default="x-agentic-tenant", min_length=1,
        description="Header naming the tenant of a hydrate/persist call; without it the tenant is `default`.",
    )
    max_tenant_bytes: int = Field(default=256, ge=1, description="Longest tenant name accepted in the tenant header.")
    execute_header: str = Field(
        default="x-agentic-split-execute",
        description="Header a caller sets to `true` at hydrate to run gateway tools through the execute step.",
    )
    execute_max_body_bytes: int = Field(default=16 * 1024 * 1024, gt=0, description="Largest execute body (413 beyond).")
    tool_timeout_seconds: float = Field(default=60.0, gt=0, description="Deadline of one gateway tool call of the execute step.")
    max_tool_rounds: int = Field(default=10, ge=1, description="Execute steps one hydrated turn may take.")
    max_concurrent_gateway_calls: int = Field(
        default=5, ge=1, validation_alias=fixed_env("AGENTIC_MAX_CONCURRENT_GATEWAY_CALLS"),
        description="Gateway tool calls running at once within one execute step.",
    )

    @model_validator(mode="after")
    def _secrets_are_usable(self) -> LlmDSettings:
        check_secret_strength(self.signing_key, "AGENTIC_LLM_D_SIGNING_KEY")
        check_secret_strength(self.api_token, "AGENTIC_LLM_D_API_TOKEN")
        if self.signing_key.get_secret_value().strip() == self.api_token.get_secret_value().strip():
            raise ValueError("AGENTIC_LLM_D_SIGNING_KEY and AGENTIC_LLM_D_API_TOKEN must differ")
        return self
