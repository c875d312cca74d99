"""OIDC end to end: a real issuer on loopback (discovery + JWKS, keys made here), tokens signed by PyJWT, the
official SDK against gateways in `oidc` and `keys,oidc` modes; bad tokens are 401; rotated keys are refetched."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator

import openai
import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from openai import OpenAI
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from conftest import TENANT_KEYS
from tests.support.fake_upstream import Text
from tests.support.oidc_issuer import OidcIssuer, SigningKey

MODEL = "smollm2"


@pytest.fixture(scope="module")
def issuer() -> Iterator[OidcIssuer]:
    server = OidcIssuer(audience="agentic-e2e").start()
    yield server
    server.stop()


def oidc_env(issuer: OidcIssuer, auth: str) -> dict[str, str]:
    # Refetch on every unknown kid, so that a rotation is seen at once (the rate limit has its unit test).
    return {"AGENTIC_GATEWAY_AUTH": auth, "AGENTIC_GATEWAY_OIDC_ISSUER": issuer.url,
            "AGENTIC_GATEWAY_OIDC_AUDIENCE": "agentic-e2e", "AGENTIC_GATEWAY_OIDC_JWKS_REFETCH_SECONDS": "0"}


@pytest.fixture(scope="module")
def oidc_gateway(stack, issuer: OidcIssuer) -> str:
    return stack.add_gateway(**oidc_env(issuer, "oidc"))


@pytest.fixture(scope="module")
def mixed_gateway(stack, issuer: OidcIssuer) -> str:
    return stack.add_gateway(**oidc_env(issuer, "keys,oidc"))


def sdk(base: str, token: str) -> OpenAI:
    return OpenAI(base_url=base + "/v1", api_key=token, max_retries=0, timeout=30)


def test_a_token_is_its_tenant_claims_principal(oidc_gateway: str, issuer: OidcIssuer, upstream) -> None:
    upstream.script(Text("signed in"))
    with sdk(oidc_gateway, issuer.token(tenant="acme")) as acme, sdk(oidc_gateway, issuer.token(tenant="globex")) as globex:
        response = acme.responses.create(model=MODEL, input="hi")
        assert acme.responses.retrieve(response.id).output_text == "signed in"
        with pytest.raises(openai.NotFoundError):
            globex.responses.retrieve(response.id)


def test_oidc_alone_refuses_api_keys(oidc_gateway: str) -> None:
    with sdk(oidc_gateway, TENANT_KEYS["tenant-a"]) as keyed, pytest.raises(openai.AuthenticationError):
        keyed.responses.retrieve("resp_unknown")


def test_keys_and_oidc_accept_both(mixed_gateway: str, issuer: OidcIssuer) -> None:
    for credential in (TENANT_KEYS["tenant-a"], issuer.token()):
        with sdk(mixed_gateway, credential) as caller, pytest.raises(openai.NotFoundError):
            caller.responses.retrieve("resp_unknown")  # authenticated: the id is unknown, not the caller


def _b64(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def _forged(issuer: OidcIssuer, alg: str) -> str:
    """`alg: none`, or HS256 keyed with the issuer's public key (PEM): forged by hand, as an attacker would."""
    key = issuer.keys[0]
    header = _b64(json.dumps({"alg": alg, "typ": "JWT", "kid": key.kid}).encode())
    body = _b64(json.dumps(issuer.claims(tenant="tenant-a")).encode())
    if alg == "none":
        return (header + b"." + body + b".").decode()
    public_pem = key.private.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    return (header + b"." + body + b"." + _b64(hmac.new(public_pem, header + b"." + body, hashlib.sha256).digest())).decode()


BAD_TOKENS = {
    "expired": lambda issuer: issuer.token(exp=int(time.time()) - 120),
    "not-yet-valid": lambda issuer: issuer.token(nbf=int(time.time()) + 120),
    "wrong-audience": lambda issuer: issuer.token(aud="someone-else"),
    "wrong-issuer": lambda issuer: issuer.token(iss="https://evil.example.com"),
    "no-tenant-claim": lambda issuer: issuer.token(tenant=None),
    "alg-none": lambda issuer: _forged(issuer, "none"),
    "hmac-with-the-public-key": lambda issuer: _forged(issuer, "HS256"),
    "unknown-signer": lambda issuer: issuer.token(key=SigningKey.generate("ES256")),
}


@pytest.mark.parametrize("kind", BAD_TOKENS)
def test_bad_tokens_are_401(oidc_gateway: str, issuer: OidcIssuer, kind: str) -> None:
    with sdk(oidc_gateway, BAD_TOKENS[kind](issuer)) as caller, pytest.raises(openai.AuthenticationError) as raised:
        caller.responses.create(model=MODEL, input="hi")
    assert raised.value.status_code == 401
    assert raised.value.body["type"] == "authentication_error"  # type: ignore[index]


def test_the_websocket_upgrade_takes_tokens(oidc_gateway: str, issuer: OidcIssuer) -> None:
    url = oidc_gateway.replace("http://", "ws://") + "/v1/responses"
    with connect(url, additional_headers={"authorization": f"Bearer {issuer.token()}"}, open_timeout=10):
        pass
    with pytest.raises(InvalidStatus) as refused:
        connect(url, additional_headers={"authorization": f"Bearer {BAD_TOKENS['expired'](issuer)}"}, open_timeout=10)
    assert refused.value.response.status_code == 401


def test_rotated_issuer_keys_are_fetched_on_an_unknown_kid(oidc_gateway: str, issuer: OidcIssuer) -> None:
    with sdk(oidc_gateway, issuer.token()) as caller, pytest.raises(openai.NotFoundError):
        caller.responses.retrieve("resp_unknown")
    old = issuer.keys[0]
    fetches = issuer.jwks_fetches
    issuer.keys = [SigningKey.generate("EdDSA")]
    try:
        with sdk(oidc_gateway, issuer.token()) as caller, pytest.raises(openai.NotFoundError):
            caller.responses.retrieve("resp_unknown")
        assert issuer.jwks_fetches == fetches + 1
        with sdk(oidc_gateway, issuer.token(key=old)) as stale, pytest.raises(openai.AuthenticationError):
            stale.responses.retrieve("resp_unknown")  # no longer served: refused
    finally:
        issuer.keys = [old]
