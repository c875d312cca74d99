"""The base of every service's settings class: read from the environment once, at start-up."""

from __future__ import annotations

import os
from typing import Any

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MIN_SECRET_BYTES = 32
SECRETS_DIR_ENV = "AGENTIC_SECRETS_DIR"
# Development values this repository once published (docker-compose's env file): known to everyone, so refused.
PUBLISHED_SECRETS = frozenset({
    "dev-only-signing-key-0123456789abcdef0123456789",
    "dev-only-workload-token-0123456789abcdef01234567",
    "dev-only-compaction-key-0123456789abcdef0123456",
    "dev-only-background-signing-key-0123456789abcdef01",
})


def check_secret_strength(secret: SecretStr, name: str) -> None:
    """A shared key or token: at least 32 bytes, no whitespace inside (a pasted line break is a mistake), and not
    a value this repository ever published."""
    value = secret.get_secret_value().encode()
    if len(value.strip()) < MIN_SECRET_BYTES or any(byte in b" \t\r\n" for byte in value.strip()):
        raise ValueError(f"{name} must be at least {MIN_SECRET_BYTES} bytes with no whitespace")
    if value.strip().decode(errors="replace") in PUBLISHED_SECRETS:
        raise ValueError(f"{name} is a published development value: generate one (`openssl rand -hex 32`)")


def fixed_env(name: str) -> AliasChoices:
    """A setting whose env var name is fixed by the design (no service prefix)."""
    return AliasChoices(name)


class TransportSecuritySettings(BaseSettings):
    """TLS between services (gRPC, NATS) and NATS credentials: fixed names, the same in every service
    (docs/security.md). Read once with the service's settings (ServiceSettings is one) and passed to what makes its
    channels, servers and NATS connection (`agentic_runtime.tls`)."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    grpc_tls_cert_file: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_GRPC_TLS_CERT_FILE"),
        description="PEM certificate (chain) of this service: its gRPC server serves TLS with it (with "
                    "`AGENTIC_GRPC_TLS_KEY_FILE`), and its gRPC clients present it when the server asks (mTLS).",
    )
    grpc_tls_key_file: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_GRPC_TLS_KEY_FILE"),
        description="PEM private key of `AGENTIC_GRPC_TLS_CERT_FILE`.",
    )
    grpc_tls_ca_file: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_GRPC_TLS_CA_FILE"),
        description="PEM CA bundle: set, gRPC clients connect with TLS and verify the server's certificate and name "
                    "against it; servers with `AGENTIC_GRPC_TLS_CLIENT_AUTH` verify clients' certificates against it.",
    )
    grpc_tls_client_auth: bool = Field(
        default=False, validation_alias=fixed_env("AGENTIC_GRPC_TLS_CLIENT_AUTH"),
        description="gRPC servers require a client certificate signed by `AGENTIC_GRPC_TLS_CA_FILE` (mTLS).",
    )
    grpc_tls_server_name: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_GRPC_TLS_SERVER_NAME"),
        description="gRPC clients check the server's certificate for this name instead of the address's host "
                    "(tests, or addresses that are IPs).",
    )
    nats_tls_ca_file: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_NATS_TLS_CA_FILE"),
        description="PEM CA bundle: set, NATS clients connect with TLS and verify the server against it "
                    "(a `tls://` URL without it uses the system's CAs).",
    )
    nats_tls_cert_file: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_NATS_TLS_CERT_FILE"),
        description="PEM client certificate for NATS servers that verify clients (with `AGENTIC_NATS_TLS_KEY_FILE`).",
    )
    nats_tls_key_file: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_NATS_TLS_KEY_FILE"),
        description="PEM private key of `AGENTIC_NATS_TLS_CERT_FILE`.",
    )
    nats_user: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_NATS_USER"), description="NATS user name (with the password).",
    )
    nats_password: SecretStr | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_NATS_PASSWORD"), description="NATS password.",
    )
    nats_token: SecretStr | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_NATS_TOKEN"), description="NATS authentication token.",
    )
    nats_creds_file: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_NATS_CREDS_FILE"),
        description="NATS credentials file (a user JWT and NKey seed, as `nsc` writes it).",
    )
    nats_nkey_seed_file: str | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_NATS_NKEY_SEED_FILE"),
        description="File holding a NATS NKey seed (NKey authentication without a JWT).",
    )


class CredentialKeySettings(BaseSettings):
    """The key that seals MCP credentials where they cross or wait in NATS (executor, llm-d, mcp-bridge)."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    credentials_key: SecretStr | None = Field(
        default=None, validation_alias=fixed_env("AGENTIC_CREDENTIALS_KEY"),
        description="Secret (>= 32 bytes, the same on every executor, llm-d and mcp-bridge) that seals MCP "
                    "`authorization` and `headers` (AES-256-GCM, bound to the tenant) in tool calls on NATS and in "
                    "queued background turns; `make run` generates one. Unset: tool calls carry them in the clear "
                    "and a background turn with MCP credentials is refused (400).",
    )

    @model_validator(mode="after")
    def _strong_credentials_key(self) -> CredentialKeySettings:
        if self.credentials_key is not None:
            check_secret_strength(self.credentials_key, "AGENTIC_CREDENTIALS_KEY")
        return self

    def credentials_secret(self) -> str | None:
        return self.credentials_key.get_secret_value().strip() if self.credentials_key else None


class ServiceSettings(TransportSecuritySettings):
    """Settings every service has. Subclasses set `env_prefix` to `AGENTIC_<SERVICE>_`."""

    model_config = SettingsConfigDict(env_prefix="AGENTIC_", extra="ignore", frozen=True)

    def __init__(self, **values: Any) -> None:
        # Secrets may come as files named by their env var (a mounted Secret, compose's generated ones).
        secrets_dir = os.environ.get(SECRETS_DIR_ENV)
        if secrets_dir and "_secrets_dir" not in values:
            if not os.path.isdir(secrets_dir):
                raise ValueError(f"{SECRETS_DIR_ENV}={secrets_dir} is not a directory")
            values["_secrets_dir"] = secrets_dir
        super().__init__(**values)

    secrets_dir: str | None = Field(
        default=None, validation_alias=fixed_env(SECRETS_DIR_ENV),
        description="A directory of files, each named by a setting's env var and holding its value (a mounted "
                    "Kubernetes Secret, the keys docker-compose generates on first start); an env var set as well "
                    "wins over its file.",
    )

    log_level: str = Field(
        default="INFO", validation_alias=fixed_env("AGENTIC_LOG_LEVEL"), description="Log level of every service (JSON logs on stderr)."
    )
    drain_seconds: float = Field(
        default=10.0, gt=0,
        description="After SIGTERM (and `UNREADY_SECONDS`), how long in-flight work may still run; what runs past "
                    "it is cut (a cut stream ends with an error event and stores nothing). HTTP services exit within "
                    "unready + drain + 1 s.",
    )
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


class HttpServiceSettings(ServiceSettings):
    """Settings of the services that serve HTTP to clients (gateway, llm-d): how long a slow client is waited for."""

    header_timeout_seconds: float = Field(
        default=10.0, gt=0,
        description="Longest a client may take to send a request's headers (from connecting, or from the request's "
                    "first byte): a 408, then the connection closes.",
    )
    body_timeout_seconds: float = Field(
        default=30.0, gt=0,
        description="Longest silence while a client sends a request body: a 408, then the connection closes.",
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
        pattern="^(responses|chat|anthropic|gemini)$",
        validation_alias=fixed_env("AGENTIC_UPSTREAM_API"),
        description="API the default model server speaks: `responses` (vLLM's stateless Responses API), `chat`, "
                    "`anthropic` (the Messages API) or `gemini` (docs/providers.md).",
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
