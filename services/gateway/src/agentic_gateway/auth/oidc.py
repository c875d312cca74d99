"""OIDC bearer tokens: signature by the issuer's JWKS (asymmetric algorithms only), `iss`, `aud`, `exp`, `nbf`,
and a tenant claim. Discovery and JWKS are fetched without blocking the event loop, bounded in time and size,
cached, and fetched again on an unknown `kid` (at most once per `refetch_seconds`)."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import jwt
import orjson
from agentic.v1 import common_pb2
from agentic_core.errors import AuthenticationFailed, ServiceUnavailable

# Never `none`, never HMAC: a verifier that took an HMAC secret from the JWKS or the token could be fooled with
# the public key as the secret.
ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"})
MAX_DOCUMENT_BYTES = 512 * 1024

log = logging.getLogger(__name__)


def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_url(url: str, what: str) -> None:
    """https, or http on a loopback address (a test's issuer)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and is_loopback_host(parts.hostname):
        return
    raise ValueError(f"{what} must be an https:// URL (http:// only on a loopback address): {url!r}")


@dataclass(frozen=True)
class OidcConfig:
    issuer: str
    audience: str
    tenant_claim: str = "tenant"
    subject_claim: str = "sub"
    leeway_seconds: float = 30.0
    refetch_seconds: float = 30.0
    max_age_seconds: float = 3600.0
    fetch_timeout_seconds: float = 5.0


class OidcVerifier:
    def __init__(self, config: OidcConfig, clock: Callable[[], float] = time.monotonic) -> None:
        check_url(config.issuer, "AGENTIC_GATEWAY_OIDC_ISSUER")
        self.config, self.clock = config, clock
        self._keys: dict[str | None, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._jwks_uri: str | None = None
        self._lock = asyncio.Lock()
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def verify(self, token: str) -> common_pb2.Principal:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise AuthenticationFailed("Malformed bearer token.") from None
        if header.get("alg") not in ALGORITHMS:
            raise AuthenticationFailed("Token signature algorithm not accepted.")
        kid = header.get("kid")
        key = await self._key(kid if isinstance(kid, str) else None)
        try:
            claims: dict[str, Any] = jwt.decode(
                token, key=key, algorithms=[key.algorithm_name], audience=self.config.audience,
                issuer=self.config.issuer, leeway=self.config.leeway_seconds,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as error:
            raise AuthenticationFailed(f"Invalid token: {error}.") from None
        tenant = claims.get(self.config.tenant_claim)
        if not isinstance(tenant, str) or not tenant:
            raise AuthenticationFailed(f"The token has no `{self.config.tenant_claim}` claim.")
        subject, jti = claims.get(self.config.subject_claim), claims.get("jti")
        return common_pb2.Principal(tenant=tenant, subject=subject if isinstance(subject, str) else "",
                                    key_id=jti if isinstance(jti, str) else "")

    async def _key(self, kid: str | None) -> jwt.PyJWK:
        key = self._cached(kid)
        if key is None or self._stale():
            async with self._lock:  # concurrent requests share one fetch
                key = self._cached(kid)
                if (key is None and self._may_refetch()) or self._stale():
                    await self._refresh()
                    key = self._cached(kid)
        if key is None and not self._keys:
            raise ServiceUnavailable("The identity provider's signing keys could not be fetched; try again later.")
        if key is None:
            raise AuthenticationFailed("Token signed with an unknown key.")
        return key

    def _cached(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None and len(self._keys) == 1:  # a token without `kid` names the only key there is
            return next(iter(self._keys.values()))
        return self._keys.get(kid)

    def _stale(self) -> bool:
        return self._fetched_at is not None and self.clock() - self._fetched_at >= self.config.max_age_seconds

    def _may_refetch(self) -> bool:
        return self._fetched_at is None or self.clock() - self._fetched_at >= self.config.refetch_seconds

    async def _refresh(self) -> None:
        """Fetches the JWKS (and, the first time, the discovery document); a failure keeps the keys held."""
        self._fetched_at = self.clock()
        try:
            if self._jwks_uri is None:
                self._jwks_uri = await self._discover()
            self._keys = _usable_keys(await self._get_json(self._jwks_uri))
        except (TimeoutError, aiohttp.ClientError, ValueError) as error:
            log.warning("OIDC keys of %s not fetched, keeping %d: %s", self.config.issuer, len(self._keys), error)

    async def _discover(self) -> str:
        document = await self._get_json(self.config.issuer.rstrip("/") + "/.well-known/openid-configuration")
        if document.get("issuer") != self.config.issuer:
            raise ValueError(f"discovery names issuer {document.get('issuer')!r}, not {self.config.issuer!r}")
        jwks_uri = document.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            raise ValueError("discovery document has no jwks_uri")
        check_url(jwks_uri, "jwks_uri")
        return jwks_uri

    async def _get_json(self, url: str) -> Mapping[str, Any]:
        if self._session is None:
            timeout = aiohttp.ClientTimeout(total=self.config.fetch_timeout_seconds)
            self._session = aiohttp.ClientSession(timeout=timeout)
        async with self._session.get(url, allow_redirects=False) as reply:
            if reply.status != 200:
                raise ValueError(f"{url} answered {reply.status}")
            body = bytearray()
            async for chunk in reply.content.iter_chunked(64 * 1024):
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise ValueError(f"{url} sent more than {MAX_DOCUMENT_BYTES} bytes")
        document = orjson.loads(body)
        if not isinstance(document, dict):
            raise ValueError(f"{url} did not send a JSON object")
        return document


def _usable_keys(jwks: Mapping[str, Any]) -> dict[str | None, jwt.PyJWK]:
    """Signing keys of an accepted algorithm; symmetric (`oct`) and encryption keys are dropped."""
    keys: dict[str | None, jwt.PyJWK] = {}
    entries = jwks.get("keys")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("kty") == "oct" or entry.get("use", "sig") != "sig":
            continue
        try:
            key = jwt.PyJWK(entry)
        except jwt.PyJWTError:
            continue
        if key.algorithm_name in ALGORITHMS:
            kid = entry.get("kid")
            keys[kid if isinstance(kid, str) else None] = key
    if not keys:
        raise ValueError("the JWKS has no usable signing key")
    return keys
