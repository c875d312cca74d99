"""Who is calling: API keys (inline or a re-read file), OIDC bearer tokens, admin keys, or nobody (`none`).

Closed by default: `none` serves only a loopback address unless AGENTIC_GATEWAY_ALLOW_UNAUTHENTICATED=true."""

from __future__ import annotations

import logging

from agentic.v1 import common_pb2
from agentic_core.errors import AgenticError, AuthenticationFailed
from agentic_runtime.logs import bind_principal
from pydantic import SecretStr

from agentic_gateway.auth.keys import DEFAULT_TENANT, KeyFile, KeySource, configured_key_problems, digest, parse_keys
from agentic_gateway.auth.oidc import OidcConfig, OidcVerifier, is_loopback_host
from agentic_gateway.metrics import AUTH_FAILURES
from agentic_gateway.settings import GatewaySettings

log = logging.getLogger(__name__)

MODES = frozenset({"keys", "oidc", "none"})
HOW_TO_CONFIGURE = (
    "configure authentication: AGENTIC_GATEWAY_API_KEYS or AGENTIC_GATEWAY_API_KEYS_FILE (API keys), "
    "AGENTIC_GATEWAY_OIDC_ISSUER and AGENTIC_GATEWAY_OIDC_AUDIENCE (OIDC), or, to serve everyone as tenant "
    "`default`, AGENTIC_GATEWAY_ALLOW_UNAUTHENTICATED=true (see docs/security.md)"
)


class PermissionDenied(AgenticError):
    http_status = 403
    error_type = "invalid_request_error"
    default_code = "permission_denied"


def _secret(value: SecretStr | None) -> str:
    return value.get_secret_value() if value is not None else ""


def modes_of(settings: GatewaySettings) -> frozenset[str]:
    """AGENTIC_GATEWAY_AUTH, or what is configured: keys and/or OIDC, else `none`."""
    if settings.auth is not None and settings.auth.strip():
        modes = frozenset(mode.strip().lower() for mode in settings.auth.split(",") if mode.strip())
        if unknown := modes - MODES:
            raise ValueError(f"AGENTIC_GATEWAY_AUTH: unknown mode(s) {sorted(unknown)}; use keys, oidc, none")
        return modes
    configured = set()
    if _secret(settings.api_keys).strip() or settings.api_keys_file or _secret(settings.admin_keys).strip() \
            or settings.admin_keys_file:
        configured.add("keys")
    if settings.oidc_issuer:
        configured.add("oidc")
    return frozenset(configured or {"none"})


def startup_refusal(settings: GatewaySettings) -> str | None:
    """Why the gateway must not start, or None: an open API only on loopback or when explicitly allowed; keys
    that are short or ambiguous only on loopback (a warning there)."""
    loopback = is_loopback_host(settings.host)
    if (problems := _key_problems(settings)):
        if not loopback:
            return (f"weak or ambiguous API keys for a gateway serving {settings.host}: {'; '.join(problems)}. "
                    "On a loopback address they are only warned about.")
        log.warning("weak or ambiguous API keys (accepted on loopback only): %s", "; ".join(problems))
    if "none" not in modes_of(settings) or settings.allow_unauthenticated or loopback:
        return None
    return (f"the gateway would serve {settings.host} without authentication; {HOW_TO_CONFIGURE}. "
            "It serves without authentication on its own only on a loopback address (AGENTIC_GATEWAY_HOST=127.0.0.1).")


def _key_problems(settings: GatewaySettings) -> list[str]:
    try:
        return configured_key_problems({
            "AGENTIC_GATEWAY_API_KEYS": (_secret(settings.api_keys), settings.api_keys_file),
            "AGENTIC_GATEWAY_ADMIN_KEYS": (_secret(settings.admin_keys), settings.admin_keys_file),
        })
    except (OSError, ValueError):
        return []  # unreadable or malformed: the authenticator's own start-up check names it


def _key_source(inline: str, path: str | None, *, admin: bool, name: str, strict: bool = False) -> KeySource:
    """`strict` (off loopback): a rewritten keys file with weak or ambiguous keys is not taken."""
    try:
        return KeySource(parse_keys(inline, admin=admin), KeyFile(path, admin=admin, strict=strict) if path else None)
    except (OSError, ValueError) as error:
        raise ValueError(f"{name}: {error}") from None


class Authenticator:
    """Bearer token (or `x-api-key`) → principal. Admin keys are accepted in every mode they are configured in."""

    def __init__(self, modes: frozenset[str], keys: KeySource | None = None, admin: KeySource | None = None,
                 oidc: OidcVerifier | None = None) -> None:
        self.modes = modes
        self._keys = keys if "keys" in modes else None
        self._admin = admin if admin else None
        self._oidc = oidc if "oidc" in modes else None
        self._open = modes == {"none"}  # every caller is anonymous, whatever it sends (SDKs always send a key)
        self._anonymous_allowed = "none" in modes
        self._anonymous = common_pb2.Principal(tenant=DEFAULT_TENANT, subject="anonymous")

    @classmethod
    def from_settings(cls, settings: GatewaySettings) -> Authenticator:
        """Raises ValueError, saying what to set, on a configuration that cannot authenticate anyone."""
        modes = modes_of(settings)
        keys = _key_source(_secret(settings.api_keys), settings.api_keys_file, admin=False,
                           strict=not is_loopback_host(settings.host),
                           name="AGENTIC_GATEWAY_API_KEYS(_FILE)")
        admin = _key_source(_secret(settings.admin_keys), settings.admin_keys_file, admin=True,
                            strict=not is_loopback_host(settings.host),
                            name="AGENTIC_GATEWAY_ADMIN_KEYS(_FILE)")
        if "keys" in modes and not keys and not admin:
            raise ValueError(f"AGENTIC_GATEWAY_AUTH names `keys` but no keys are configured; {HOW_TO_CONFIGURE}")
        oidc = None
        if "oidc" in modes:
            if not settings.oidc_issuer or not settings.oidc_audience:
                raise ValueError("OIDC needs AGENTIC_GATEWAY_OIDC_ISSUER and AGENTIC_GATEWAY_OIDC_AUDIENCE")
            oidc = OidcVerifier(OidcConfig(
                issuer=settings.oidc_issuer, audience=settings.oidc_audience,
                tenant_claim=settings.oidc_tenant_claim, subject_claim=settings.oidc_subject_claim,
                leeway_seconds=settings.oidc_leeway_seconds, refetch_seconds=settings.oidc_jwks_refetch_seconds,
                max_age_seconds=settings.oidc_jwks_max_age_seconds))
        return cls(modes, keys, admin, oidc)

    @classmethod
    def of_keys(cls, api_keys: str) -> Authenticator:
        """Inline tenant keys only (tests, tools)."""
        return cls(frozenset({"keys"}), KeySource(parse_keys(api_keys), None))

    async def close(self) -> None:
        if self._oidc is not None:
            await self._oidc.close()

    async def authenticate(self, authorization: str | None, api_key_header: str | None = None) -> common_pb2.Principal:
        """The caller's principal, also bound to the log lines of the request (tenant, subject, key id)."""
        principal = await self._principal(authorization, api_key_header)
        bind_principal(principal)
        return principal

    async def _principal(self, authorization: str | None, api_key_header: str | None) -> common_pb2.Principal:
        if self._open:
            return self._anonymous
        token = api_key_header
        if authorization:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() == "bearer":
                token = value.strip()
        if not token:
            if self._anonymous_allowed:
                return self._anonymous
            AUTH_FAILURES.labels(reason="missing_credentials").inc()
            raise AuthenticationFailed("Missing API key: send `Authorization: Bearer <key>` or `x-api-key: <key>`.")
        if self._oidc is not None and token.count(".") == 2:  # a JWT: API keys never have this shape
            try:
                return await self._oidc.verify(token)
            except AuthenticationFailed:
                AUTH_FAILURES.labels(reason="invalid_token").inc()
                raise
        presented = digest(token)
        if self._admin is not None and (principal := self._admin.match(presented)) is not None:
            return principal
        if self._keys is not None and (principal := self._keys.match(presented)) is not None:
            return principal
        AUTH_FAILURES.labels(reason="invalid_api_key").inc()
        raise AuthenticationFailed("Incorrect API key provided.")

