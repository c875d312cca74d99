"""The gateway's usage, cost and quota settings (a mixin of `GatewaySettings`, env vars `AGENTIC_GATEWAY_*`)."""

from __future__ import annotations

from agentic_runtime.settings import fixed_env
from pydantic import Field
from pydantic_settings import BaseSettings


class UsageSettings(BaseSettings):
    tenant_requests_per_minute: int = Field(
        default=0, ge=0,
        description="Requests that start a turn or a model call (`POST /v1/responses`, `/v1/messages`, "
                    "`/v1/chat/completions`, ..., WebSocket `response.create`) each tenant may make per UTC minute, "
                    "over every gateway replica; 429 beyond. 0: unlimited (docs/usage-and-quotas.md).",
    )
    tenant_concurrent_turns: int = Field(
        default=0, ge=0,
        description="Such requests each tenant may have running at once over every replica (a background response "
                    "from its queueing until it has ended); 429 beyond. 0: unlimited.",
    )
    tenant_tokens_per_day: int = Field(
        default=0, ge=0,
        description="Tokens (input + output, from recorded usage) each tenant may use per UTC day; 429 beyond. "
                    "0: unlimited.",
    )
    tenant_websockets: int = Field(
        default=16, ge=0,
        description="WebSocket connections (`GET /v1/responses` upgraded) each tenant may hold open at once; the "
                    "next upgrade is refused with 429 before it is accepted. Over every replica while a request "
                    "quota is set, else per replica. 0: unlimited.",
    )
    tenant_quotas_file: str | None = Field(
        default=None,
        description="Per-tenant quotas (JSON or YAML): `{tenants: {<tenant>: {requests_per_minute, "
                    "concurrent_turns, tokens_per_day, websockets}}}`; a limit left out is the default above.",
    )
    quota_sync_seconds: float = Field(
        default=5.0, gt=0,
        description="How often each gateway reads the tenants' tokens of the day from recorded usage (the tokens "
                    "per day quota may be passed by what is used meanwhile).",
    )
    nats_url: str = Field(
        default="nats://127.0.0.1:4222", validation_alias=fixed_env("AGENTIC_NATS_URL"),
        description="NATS server (JetStream enabled).",
    )
    model_prices_file: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_MODEL_PRICES_FILE"),
        description="Prices per million tokens by model (JSON or YAML): `{currency, models: {<model or pattern>: "
                    "{input, cached_input, output}}}`; enables `GET /v1/organization/costs`.",
    )
