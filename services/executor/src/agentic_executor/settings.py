"""Settings of the executor (env vars `AGENTIC_EXECUTOR_*`, plus the fixed upstream and NATS names)."""

from __future__ import annotations

from typing import Literal

from agentic_runtime.settings import CredentialKeySettings, UpstreamSettings, check_secret_strength, fixed_env
from agentic_runtime.state.audit import AuditSettings
from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict


class ExecutorSettings(UpstreamSettings, CredentialKeySettings, AuditSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTIC_EXECUTOR_", extra="ignore", frozen=True)

    host: str = Field(default="0.0.0.0", description="Address the gRPC server binds.")
    port: int = Field(default=50051, description="Executor gRPC port.")
    metrics_port: int = Field(default=9101, description="Prometheus /metrics port (0 disables).")
    state_address: str = Field(default="127.0.0.1:50052", description="gRPC address of the state service.")
    nats_url: str = Field(
        default="nats://127.0.0.1:4222", validation_alias=fixed_env("AGENTIC_NATS_URL"), description="NATS server (JetStream enabled)."
    )
    upstream_max_event_bytes: int = Field(default=16 * 1024 * 1024, gt=0, description="Largest upstream SSE event.")
    upstream_max_body_bytes: int = Field(default=16 * 1024 * 1024, gt=0, description="Largest upstream JSON body.")
    conversation_lease_seconds: float = Field(
        default=10.0, gt=0,
        description="A turn's lease on its conversation, renewed every third of it while the turn runs: an executor "
                    "that dies holds the conversation this long at most.",
    )
    persist_retry_seconds: float = Field(
        default=30.0, ge=0,
        description="How long a turn's store is retried while its outcome is unknown (state or PostgreSQL stalled), "
                    "so that the client is told what is stored; past it the turn ends failed.",
    )
    conversation_wait_seconds: float = Field(
        default=10.0, ge=0, description="How long a turn waits for another turn on the same conversation (409 after)."
    )
    tool_timeout_seconds: float = Field(default=60.0, gt=0, description="Deadline of one gateway tool call.")
    max_tool_rounds: int = Field(default=10, ge=1, description="Inference rounds per turn; the last one ends incomplete.")
    max_concurrent_gateway_calls: int = Field(
        default=5, ge=1, validation_alias=fixed_env("AGENTIC_MAX_CONCURRENT_GATEWAY_CALLS"),
        description="Gateway tool calls running at once within one round.",
    )
    shell_enabled: bool = Field(default=False, description="Offer the sandboxed `shell` tool (tool runners must enable it too).")
    mcp_bridge_address: str = Field(default="127.0.0.1:50053", description="gRPC address of the mcp-bridge.")
    mcp_list_tools_timeout_seconds: float = Field(default=30.0, gt=0, description="Deadline of MCP tool discovery.")
    max_mcp_servers: int = Field(default=64, ge=1, description="MCP servers one request may declare (400 beyond).")
    max_mcp_tools: int = Field(default=128, ge=1, description="Tools discovered over a request's MCP servers (400 beyond).")
    state_timeout_seconds: float = Field(default=10.0, gt=0, description="Deadline of each call to the state service.")
    retrieval_address: str = Field(
        default="127.0.0.1:50055",
        description="gRPC address of the retrieval service: the stores a `file_search` tool names are checked there as "
                    "a turn starts, and `input_file` parts given by `file_id` read from there.",
    )
    retrieval_timeout_seconds: float = Field(
        default=10.0, gt=0, description="Deadline of each call to the retrieval service (a file's download: all of it).")
    background_concurrency: int = Field(default=16, ge=1, description="Background responses one executor runs at once; "
                                        "the rest wait in the queue (JetStream `BACKGROUND`).")
    background_lease_seconds: float = Field(
        default=30.0, ge=3,
        description="Lease of a running background response, renewed every third of it: a response whose executor "
                    "died is marked failed (`executor_lost`) within about this long.",
    )
    background_cancel_wait_seconds: float = Field(
        default=10.0, ge=0, description="How long a cancel waits for the running response to stop before answering.")
    background_signing_key: SecretStr | None = Field(
        default=None,
        description="Secret (>= 32 bytes, the same on every executor) signing each queued background turn (HMAC-SHA256 "
                    "over its principal and request): an executor runs only turns signed with it, so a message "
                    "published straight to NATS runs nothing. Unset: background responses are refused "
                    "(`background_unavailable`) and this executor takes no queued turn.",
    )
    response_events_retention_seconds: float = Field(
        default=86400.0, gt=0,
        description="How long a background response's events are kept for resuming its stream (JetStream `RESPONSES`).",
    )
    compaction_key: SecretStr | None = Field(
        default=None,
        description="Secret (>= 32 bytes, the same on every executor) from which compaction items' `encrypted_content` "
                    "is encrypted (AES-256-GCM, bound to the tenant); unset: compaction is refused unless "
                    "`AGENTIC_EXECUTOR_COMPACTION_CONTENT=plain`. Reasoning items' `encrypted_content` "
                    "(`include: [reasoning.encrypted_content]`) is sealed with a key derived from it; unset: none is "
                    "returned.",
    )
    compaction_content: Literal["encrypted", "plain"] = Field(
        default="encrypted",
        description="`encrypted`: a compaction's summary is opaque to clients; `plain`: stored and returned readable "
                    "(JSON in `encrypted_content`; clients may then edit it). Encrypted items still open with the key.",
    )
    compaction_summary_max_tokens: int = Field(
        default=2048, ge=1, description="Longest summary the model may write for one compaction (its `max_output_tokens`).")
    context_window_tokens: int = Field(
        default=0, ge=0,
        description="Context window of every model, in tokens, for the `context_length_exceeded` check; 0: each model "
                    "server's own `max_model_len` (vLLM's /v1/models, read once per server), no check where it has none.",
    )
    # Routing hints for prefix caches (docs/llm-d.md, "Routing hints").
    derive_prompt_cache_key: bool = Field(
        default=True,
        description="When a request gives no `prompt_cache_key`, send one derived from its chain or conversation "
                    "(HMAC of the tenant and the chain's root under a key derived from "
                    "`AGENTIC_EXECUTOR_COMPACTION_KEY`; none without it) on every round of every turn.",
    )
    session_header: str = Field(
        default="x-session-id", pattern=r"^[A-Za-z0-9-]*$",
        description="Header that carries the request's prompt cache key to the model server on every round, for a "
                    "scheduler to hash on (llm-d, Envoy's consistent hashing); empty: not sent.",
    )
    anthropic_default_max_tokens: int = Field(
        default=4096, ge=1,
        description="`max_tokens` sent to an `anthropic` route when the request sets no `max_output_tokens` "
                    "(the Messages API requires one).",
    )
    # Images and files in the input (docs/agent-clients.md, "Images and files in the input").
    input_url_fetch: bool = Field(
        default=True,
        description="Fetch the http(s) `image_url` / `file_url` of input parts (under the host policy below) and hand "
                    "the model their bytes; false: such parts are refused (400). Model servers are never given a URL.",
    )
    input_url_allowed_hosts: str = Field(
        default="*",
        description="Hosts (and `host:port`) input URLs may name, comma-separated, as in `AGENTIC_MCP_ALLOWED_HOSTS`: "
                    "`*` any host, `*.example.com` its subdomains. Loopback, private, link-local and metadata addresses "
                    "are refused unless an entry names that address or `AGENTIC_EXECUTOR_INPUT_URL_PRIVATE_NETWORKS` covers it.",
    )
    input_url_private_networks: str = Field(
        default="", description="CIDRs (comma-separated) of non-public addresses input URLs may reach (in-cluster file servers).")
    input_url_allow_http: bool = Field(default=False, description="Allow plain http:// input URLs (https:// only otherwise).")
    input_url_timeout_seconds: float = Field(
        default=10.0, gt=0, description="Longest one input URL's fetch may take, redirects included (400 past it).")
    input_max_urls: int = Field(default=16, ge=1, description="Input URLs (images and files) one request may name (400 beyond).")
    input_image_max_bytes: int = Field(default=10 * 1024 * 1024, gt=0, description="Largest image fetched from an input URL.")
    input_file_max_bytes: int = Field(
        default=16 * 1024 * 1024, gt=0, description="Largest input file, decoded from `file_data` or fetched from `file_url`.")
    input_file_max_pages: int = Field(default=100, ge=1, description="Most pages of an input PDF read for the model (400 beyond).")
    input_media_max_total_bytes: int = Field(
        default=32 * 1024 * 1024, gt=0,
        description="Bytes of images fetched and files read for one request, together (400 beyond).",
    )

    @model_validator(mode="after")
    def _strong_compaction_key(self) -> ExecutorSettings:
        if self.compaction_key is not None:
            check_secret_strength(self.compaction_key, "AGENTIC_EXECUTOR_COMPACTION_KEY")
        if self.background_signing_key is not None:
            check_secret_strength(self.background_signing_key, "AGENTIC_EXECUTOR_BACKGROUND_SIGNING_KEY")
        return self
