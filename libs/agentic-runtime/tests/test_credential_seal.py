"""MCP credentials sealed for NATS: opened only with the same key, for the same tenant."""

from __future__ import annotations

import pytest
from agentic_runtime.credential_seal import SEALED_CREDENTIALS, CredentialSeal, CredentialsUnavailable

TOKEN = "mcp-token-1234567890"
SEAL = CredentialSeal("k" * 40)


def test_a_calls_headers_open_only_with_the_key_for_the_tenant() -> None:
    params = SEAL.seal_params({"server_label": "docs", "headers": {"Authorization": f"Bearer {TOKEN}"}}, "tenant-a")
    assert TOKEN not in str(params) and "headers" not in params and params["server_label"] == "docs"
    assert SEAL.open_params(params, "tenant-a")["headers"] == {"Authorization": f"Bearer {TOKEN}"}
    for opener, tenant in ((SEAL, "tenant-b"), (CredentialSeal("o" * 40), "tenant-a"), (CredentialSeal(None), "tenant-a")):
        with pytest.raises(CredentialsUnavailable):
            opener.open_params(params, tenant)


def test_without_a_key_or_headers_params_stay_as_they_are() -> None:
    plain = {"server_label": "docs", "headers": {"X": "y"}}
    assert CredentialSeal(None).seal_params(plain, "t") is plain
    assert SEAL.seal_params({"server_label": "docs", "headers": {}}, "t") == {"server_label": "docs", "headers": {}}
    assert SEAL.open_params(plain, "t") is plain


def test_a_queued_requests_mcp_credentials_are_sealed_and_restored() -> None:
    payload = {"model": "m", "tools": [
        {"type": "mcp", "server_label": "docs", "authorization": TOKEN, "headers": {"X-Secret": "s3cret"}},
        {"type": "function", "name": "f"}, {"type": "mcp", "server_label": "open"}]}
    sealed = SEAL.seal_request(payload, "tenant-a")
    assert sealed is not None and TOKEN not in str(sealed) and "s3cret" not in str(sealed)
    assert SEALED_CREDENTIALS in sealed["tools"][0] and sealed["tools"][1:] == payload["tools"][1:]
    assert SEAL.open_request(sealed, "tenant-a") == payload
    assert SEAL.seal_request({"model": "m", "tools": payload["tools"][1:]}, "tenant-a") is None
    with pytest.raises(CredentialsUnavailable):
        CredentialSeal(None).seal_request(payload, "tenant-a")
    with pytest.raises(CredentialsUnavailable):
        SEAL.open_request(sealed, "tenant-b")
