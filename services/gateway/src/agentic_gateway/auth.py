"""API-key authentication: bearer token → tenant, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac

from agentic.v1 import common_pb2
from agentic_core.errors import AuthenticationFailed

DEFAULT_TENANT = "default"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class Authenticator:
    """Without configured keys every caller is the `default` tenant (local development)."""

    def __init__(self, api_keys: str | None) -> None:
        self._keys: list[tuple[bytes, str]] = []
        for entry in (api_keys or "").split(","):
            entry = entry.strip()
            if not entry:
                continue
            key, _, tenant = entry.partition("=")
            self._keys.append((_digest(key.strip()), tenant.strip() or DEFAULT_TENANT))
        self._anonymous = common_pb2.Principal(tenant=DEFAULT_TENANT, subject="anonymous")

    def authenticate(self, authorization: str | None, api_key_header: str | None = None) -> common_pb2.Principal:
        if not self._keys:
            return self._anonymous
        token = api_key_header
        if authorization:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() == "bearer":
                token = value.strip()
        if not token:
            raise AuthenticationFailed("Missing API key: send `Authorization: Bearer <key>`.")
        presented = _digest(token)
        tenant: str | None = None
        # Compare against every key, so the time taken does not depend on which one matched.
        for digest, key_tenant in self._keys:
            if hmac.compare_digest(presented, digest):
                tenant = key_tenant
        if tenant is None:
            raise AuthenticationFailed("Incorrect API key provided.")
        return common_pb2.Principal(tenant=tenant, subject=hashlib.sha256(token.encode()).hexdigest()[:16])
