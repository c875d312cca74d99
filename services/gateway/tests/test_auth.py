"""API keys map to tenants; a wrong or missing key is refused."""

from __future__ import annotations

import pytest
from agentic_core.errors import AuthenticationFailed
from agentic_gateway.auth import Authenticator


def test_without_keys_everyone_is_the_default_tenant() -> None:
    auth = Authenticator(None)
    assert auth.authenticate(None).tenant == "default"


def test_each_key_maps_to_its_tenant() -> None:
    auth = Authenticator("sk-a=alpha, sk-b=beta, sk-c")
    assert auth.authenticate("Bearer sk-a").tenant == "alpha"
    assert auth.authenticate("bearer sk-b").tenant == "beta"
    assert auth.authenticate(None, api_key_header="sk-c").tenant == "default"


@pytest.mark.parametrize("header", [None, "", "Bearer ", "Bearer sk-x", "Basic sk-a", "sk-a"])
def test_wrong_or_missing_keys_are_refused(header) -> None:
    with pytest.raises(AuthenticationFailed) as raised:
        Authenticator("sk-a=alpha").authenticate(header)
    assert raised.value.http_status == 401


def test_the_subject_does_not_reveal_the_key() -> None:
    principal = Authenticator("sk-secret-value=alpha").authenticate("Bearer sk-secret-value")
    assert "sk-secret-value" not in principal.subject
