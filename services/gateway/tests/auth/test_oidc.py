"""OIDC tokens against a real issuer on loopback: what is accepted, what is refused (401), and key rotation."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator, Iterator

import jwt
import pytest
from agentic_core.errors import AuthenticationFailed, ServiceUnavailable
from agentic_gateway.auth.oidc import OidcConfig, OidcVerifier
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from tests.support.oidc_issuer import OidcIssuer, SigningKey


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def issuer() -> Iterator[OidcIssuer]:
    server = OidcIssuer().start()
    yield server
    server.stop()


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
async def verifier(issuer: OidcIssuer, clock: Clock) -> AsyncIterator[OidcVerifier]:
    checker = OidcVerifier(OidcConfig(issuer=issuer.url, audience="agentic", leeway_seconds=5), clock=clock)
    yield checker
    await checker.close()


async def refused(verifier: OidcVerifier, token: str) -> str:
    with pytest.raises(AuthenticationFailed) as raised:
        await verifier.verify(token)
    assert raised.value.http_status == 401
    return raised.value.message


@pytest.mark.parametrize("alg", ["RS256", "ES256", "EdDSA"])
async def test_a_signed_token_names_tenant_subject_and_jti(issuer: OidcIssuer, verifier: OidcVerifier, alg: str) -> None:
    issuer.keys = [SigningKey.generate(alg)]
    principal = await verifier.verify(issuer.token(jti="token-1"))
    assert (principal.tenant, principal.subject, principal.key_id, principal.admin) == ("tenant-oidc", "alice",
                                                                                        "token-1", False)


async def test_claim_names_are_settings(issuer: OidcIssuer, clock: Clock) -> None:
    checker = OidcVerifier(OidcConfig(issuer=issuer.url, audience="agentic", tenant_claim="org", subject_claim="email"),
                           clock=clock)
    try:
        principal = await checker.verify(issuer.token(org="acme", email="a@acme.test", tenant=None))
        assert (principal.tenant, principal.subject) == ("acme", "a@acme.test")
    finally:
        await checker.close()


@pytest.mark.parametrize("claims", [
    {"exp": -60},  # seconds from now, when the test runs
    {"nbf": 60},
    {"aud": "someone-else"},
    {"iss": "https://evil.example.com"},
    {"exp": None},
])
async def test_expired_early_foreign_or_incomplete_tokens_are_refused(
        issuer: OidcIssuer, verifier: OidcVerifier, claims: dict[str, object]) -> None:
    now = int(time.time())
    await refused(verifier, issuer.token(**{name: now + value if name in ("exp", "nbf") and isinstance(value, int)
                                            else value for name, value in claims.items()}))


async def test_clock_skew_within_the_leeway_is_tolerated(issuer: OidcIssuer, verifier: OidcVerifier) -> None:
    assert (await verifier.verify(issuer.token(exp=int(time.time()) - 2))).tenant == "tenant-oidc"


async def test_a_token_without_the_tenant_claim_is_refused(issuer: OidcIssuer, verifier: OidcVerifier) -> None:
    assert "tenant" in await refused(verifier, issuer.token(tenant=None))


def _unsigned(claims: dict[str, object], kid: str) -> str:
    def part(value: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    return f"{part({'alg': 'none', 'typ': 'JWT', 'kid': kid})}.{part(claims)}."


async def test_alg_none_is_refused(issuer: OidcIssuer, verifier: OidcVerifier) -> None:
    await refused(verifier, _unsigned(issuer.claims(), issuer.keys[0].kid))


async def test_hmac_signed_with_the_public_key_is_refused(issuer: OidcIssuer, verifier: OidcVerifier) -> None:
    key = issuer.keys[0]
    public_pem = key.private.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    # PyJWT refuses to sign HMAC with a PEM key, so the forgery is built by hand, as an attacker would.
    header = base64.urlsafe_b64encode(json.dumps({"alg": "HS256", "typ": "JWT", "kid": key.kid}).encode()).rstrip(b"=")
    body = base64.urlsafe_b64encode(json.dumps(issuer.claims()).encode()).rstrip(b"=")
    signature = base64.urlsafe_b64encode(hmac.new(public_pem, header + b"." + body, hashlib.sha256).digest()).rstrip(b"=")
    await refused(verifier, (header + b"." + body + b"." + signature).decode())


async def test_a_token_signed_by_another_key_with_a_known_kid_is_refused(
        issuer: OidcIssuer, verifier: OidcVerifier) -> None:
    impostor = SigningKey.generate("RS256")
    impostor.kid = issuer.keys[0].kid
    await refused(verifier, issuer.token(key=impostor))


async def test_garbage_is_refused(verifier: OidcVerifier) -> None:
    await refused(verifier, "not.a.jwt")


async def test_rotated_keys_are_fetched_on_an_unknown_kid_at_most_once_per_interval(
        issuer: OidcIssuer, verifier: OidcVerifier, clock: Clock) -> None:
    assert (await verifier.verify(issuer.token())).tenant == "tenant-oidc"
    assert issuer.jwks_fetches == 1
    old, new = issuer.keys[0], SigningKey.generate("ES256")
    issuer.keys = [new]
    # Within the refetch interval, an unknown kid is refused without asking the issuer again.
    clock.now += 1
    await refused(verifier, issuer.token(key=new))
    await refused(verifier, issuer.token(key=new))
    assert issuer.jwks_fetches == 1
    clock.now += 30
    assert (await verifier.verify(issuer.token(key=new))).tenant == "tenant-oidc"
    assert issuer.jwks_fetches == 2
    # The old key is no longer served: its tokens are refused (the keys held are the new set).
    await refused(verifier, issuer.token(key=old))
    # Cached keys are used without fetching; they are fetched again once older than the maximum age.
    await verifier.verify(issuer.token(key=new))
    assert issuer.jwks_fetches == 2
    clock.now += 3600
    await verifier.verify(issuer.token(key=new))
    assert issuer.jwks_fetches == 3


async def test_an_unreachable_issuer_is_503_not_401(clock: Clock) -> None:
    checker = OidcVerifier(OidcConfig(issuer="http://127.0.0.1:9", audience="a", fetch_timeout_seconds=2), clock=clock)
    try:
        token = jwt.encode({"tenant": "t"}, SigningKey.generate("EdDSA").private, algorithm="EdDSA")
        with pytest.raises(ServiceUnavailable):
            await checker.verify(token)
    finally:
        await checker.close()


@pytest.mark.parametrize("url", ["http://id.example.com", "ftp://127.0.0.1", "https://"])
def test_an_http_issuer_is_accepted_only_on_loopback(url: str) -> None:
    with pytest.raises(ValueError, match="https://"):
        OidcVerifier(OidcConfig(issuer=url, audience="a"))
