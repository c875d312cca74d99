"""Settings of the gateway (env vars `AGENTIC_GATEWAY_*`, plus the fixed `AGENTIC_PORT`)."""

from __future__ import annotations

from agentic_runtime.settings import HttpServiceSettings, UpstreamSettings, fixed_env
from agentic_runtime.state.audit import AuditSettings
from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from agentic_gateway.accounting.settings import UsageSettings


class GatewaySettings(AuditSettings, UsageSettings, UpstreamSettings, HttpServiceSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_GATEWAY_", extra="ignore", frozen=True)

    host: str = Field(default="0.0.0.0", description="Address the HTTP server binds.")
    port: int = Field(default=8080, validation_alias=fixed_env("AGENTIC_PORT"), description="Gateway HTTP port.")
    metrics_port: int = Field(
        default=9100, ge=0, le=65535,
        description="Prometheus /metrics port, on the gateway's host address and apart from the API port, since the "
                    "metrics name tenants and their usage (0 disables; /metrics on the API port answers 404).",
    )
    executor_address: str = Field(default="127.0.0.1:50051", description="gRPC address of the executor.")
    state_address: str = Field(default="127.0.0.1:50052", description="gRPC address of the state service.")
    retrieval_address: str = Field(
        default="127.0.0.1:50055", description="gRPC address of the retrieval service (Files, Vector Stores)."
    )
    retrieval_timeout_seconds: float = Field(
        default=30.0, gt=0, description="Deadline of each call to the retrieval service (an upload's: per part).",
    )
    max_file_bytes: int = Field(
        default=512 * 1024 * 1024, gt=0,
        description="Largest file `POST /v1/files` accepts (413 beyond); streamed to retrieval, never held whole.",
    )
    max_body_bytes: int = Field(default=16 * 1024 * 1024, gt=0, description="Largest request body accepted (413 beyond).")
    auth: str | None = Field(
        default=None,
        description="How callers authenticate: a comma-separated set of `keys`, `oidc`, `none`. Unset: `keys` and/or "
                    "`oidc` as configured, else `none`, which serves everyone as tenant `default` and starts only on a "
                    "loopback address or with `AGENTIC_GATEWAY_ALLOW_UNAUTHENTICATED=true` (docs/security.md).",
    )
    allow_unauthenticated: bool = Field(
        default=False,
        description="Let the gateway serve without authentication (`none`) on a non-loopback address.",
    )
    api_keys: SecretStr | None = Field(
        default=None,
        description="Comma-separated `key=tenant` (or `sha256:<hex>=tenant`) entries; a bare key maps to tenant "
                    "`default`. Sent as `Authorization: Bearer <key>` or `x-api-key: <key>`.",
    )
    api_keys_file: str | None = Field(
        default=None,
        description="File of API keys, one `key=tenant` or `sha256:<hex>=tenant` per line (`#` comments), re-read "
                    "within about a second of a change (a mounted Secret rotates without a restart).",
    )
    admin_keys: SecretStr | None = Field(
        default=None,
        description="Operator keys, in the API keys' format: their principal is an admin (a tenant key never is).",
    )
    admin_keys_file: str | None = Field(
        default=None, description="File of operator keys, in the API keys file's format, re-read on change.",
    )
    oidc_issuer: str | None = Field(
        default=None,
        description="OIDC issuer URL (https; http only on loopback); keys come from its discovery document's "
                    "`jwks_uri`.",
    )
    oidc_audience: str | None = Field(default=None, description="The `aud` an OIDC token must carry.")
    oidc_tenant_claim: str = Field(
        default="tenant", description="Claim naming the tenant; a token without it is refused (401).",
    )
    oidc_subject_claim: str = Field(default="sub", description="Claim naming the caller within its tenant.")
    oidc_leeway_seconds: float = Field(
        default=30.0, ge=0, description="Clock skew allowed when checking a token's `exp` and `nbf`.",
    )
    oidc_jwks_refetch_seconds: float = Field(
        default=30.0, ge=0,
        description="Least time between JWKS fetches caused by tokens signed with an unknown `kid`.",
    )
    oidc_jwks_max_age_seconds: float = Field(
        default=3600.0, gt=0, description="The issuer's keys are fetched again after this long (revoked keys go).",
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
    sse_keepalive_seconds: float = Field(
        default=15.0, gt=0,
        description="Seconds of silence on an SSE stream before the gateway sends a keepalive (`: keepalive` comment; "
                    "a `ping` event on Messages streams), so proxies and clients keep quiet streams open.",
    )
    ws_max_pending_requests: int = Field(
        default=64, gt=0,
        description="Requests one WebSocket connection may have running or queued; beyond, an `error` event with "
                    "status 429.",
    )
    ws_max_pending_bytes: int = Field(
        default=12 * 1024 * 1024, gt=0,
        description="Bytes of `response.create` messages one WebSocket connection may have running or queued "
                    "(429 beyond).",
    )
    ws_max_lanes: int = Field(
        default=64, gt=0, description="`stream_id` lanes one WebSocket connection may hold, busy or idle (429 beyond).",
    )
    ws_max_event_bytes: int = Field(
        default=16 * 1024 * 1024, gt=0,
        description="Largest event sent on a WebSocket; a larger one ends its response with an `error` event.",
    )
    ws_retained_items: int = Field(
        default=8192, gt=0,
        description="Items of unstored (`store: false`) context one WebSocket connection keeps for continuations.",
    )
    ws_retained_bytes: int = Field(
        default=32 * 1024 * 1024, gt=0,
        description="Bytes of unstored context one WebSocket connection keeps for continuations; the least "
                    "recently used lane's is dropped first.",
    )
    ws_ping_seconds: float = Field(
        default=15.0, gt=0, description="Interval of WebSocket protocol pings, which keep idle connections open.",
    )
    ws_ping_timeout_seconds: float = Field(
        default=20.0, gt=0, description="A WebSocket whose peer answers no ping within this is closed.",
    )
    models_cache_seconds: float = Field(
        default=30.0, ge=0,
        description="How long each model server's `GET /v1/models` answer is kept for the gateway's own "
                    "`/v1/models` (0: every listing asks every server).",
    )
    codex_base_instructions: str = Field(
        default="You are a coding agent working in the user's terminal and workspace. Use the tools you are given "
                "to inspect files and run commands, keep changes to what the task needs, and finish with a short "
                "account of what you did and what is left.",
        description="The `base_instructions` of every model in the Codex catalog (`/v1/models?client_version=`): "
                    "Codex sends them as its system prompt; its `model_instructions_file` overrides them.",
    )
    codex_auto_compact_percent: int = Field(
        default=90, gt=0, le=100,
        description="Share of a model's context window, in percent, at which the Codex catalog tells Codex to "
                    "compact its history (`auto_compact_token_limit`).",
    )
    image_input_models: str = Field(
        default="",
        description="Comma-separated model names or fnmatch patterns that accept image input; the Codex catalog "
                    "lists only text input for the others.",
    )

