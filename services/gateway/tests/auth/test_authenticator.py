"""Who is calling: modes, API keys (Bearer or x-api-key, plain or `sha256:`), admin keys, closed by default."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from agentic_core.errors import AuthenticationFailed
from agentic_gateway.auth.authenticator import Authenticator, modes_of, startup_refusal
from agentic_gateway.settings import GatewaySettings
from agentic_runtime.logs import PRINCIPAL


def settings(**values: object) -> GatewaySettings:
    return GatewaySettings.model_validate(values)


async def test_without_keys_everyone_is_the_default_tenant() -> None:
    auth = Authenticator.from_settings(settings())
    assert auth.modes == {"none"}
    assert (await auth.authenticate(None)).tenant == "default"
    assert (await auth.authenticate("Bearer anything-an-sdk-sends")).tenant == "default"


async def test_each_key_maps_to_its_tenant() -> None:
    auth = Authenticator.of_keys("sk-a=alpha, sk-b=beta, sk-c")
    assert (await auth.authenticate("Bearer sk-a")).tenant == "alpha"
    assert (await auth.authenticate("bearer sk-b")).tenant == "beta"
    assert (await auth.authenticate(None, api_key_header="sk-c")).tenant == "default"


@pytest.mark.parametrize("header", [None, "", "Bearer ", "Bearer sk-x", "Basic sk-a", "sk-a"])
async def test_wrong_or_missing_keys_are_refused(header: str | None) -> None:
    with pytest.raises(AuthenticationFailed) as raised:
        await Authenticator.of_keys("sk-a=alpha").authenticate(header)
    assert raised.value.http_status == 401
    assert raised.value.to_dict()["error"]["type"] == "authentication_error"


async def test_the_principal_names_the_key_without_revealing_it() -> None:
    principal = await Authenticator.of_keys("sk-secret-value=alpha").authenticate("Bearer sk-secret-value")
    key_hash = hashlib.sha256(b"sk-secret-value").hexdigest()
    assert principal.key_id == key_hash[:8] and principal.subject == key_hash[:16]
    assert "sk-secret-value" not in str(principal) and not principal.admin
    assert PRINCIPAL.get() is principal  # bound for the request's log lines


async def test_a_sha256_entry_accepts_the_key_it_hashes() -> None:
    hexdigest = hashlib.sha256(b"sk-only-hashed").hexdigest()
    auth = Authenticator.from_settings(settings(api_keys=f"sha256:{hexdigest}=gamma"))
    assert (await auth.authenticate(None, "sk-only-hashed")).tenant == "gamma"
    with pytest.raises(AuthenticationFailed):
        await auth.authenticate(f"Bearer sha256:{hexdigest}")


@pytest.mark.parametrize("entry", ["sha256:abc=t", "sha256:" + "g" * 64 + "=t", " =t"])
def test_malformed_entries_stop_the_start_without_quoting_keys(entry: str) -> None:
    with pytest.raises(ValueError, match="AGENTIC_GATEWAY_API_KEYS") as raised:
        Authenticator.from_settings(settings(api_keys=entry))
    assert "abc" not in str(raised.value)


async def test_admin_keys_make_admin_principals_and_tenant_keys_never_do(tmp_path: Path) -> None:
    admin_file = tmp_path / "admin-keys"
    admin_file.write_text("# operators\nsk-admin-file=ops\n")
    auth = Authenticator.from_settings(settings(api_keys="sk-tenant=alpha", admin_keys="sk-admin=ops",
                                                admin_keys_file=str(admin_file)))
    admin = await auth.authenticate("Bearer sk-admin")
    assert admin.admin and admin.tenant == "ops"
    assert (await auth.authenticate(None, "sk-admin-file")).admin
    tenant = await auth.authenticate("Bearer sk-tenant")
    assert not tenant.admin and tenant.tenant == "alpha"


async def test_only_admin_keys_mean_keys_mode() -> None:
    auth = Authenticator.from_settings(settings(admin_keys="sk-admin"))
    assert auth.modes == {"keys"}
    with pytest.raises(AuthenticationFailed):
        await auth.authenticate("Bearer sk-other")


async def test_keys_and_none_admit_callers_without_credentials_but_check_those_with() -> None:
    auth = Authenticator.from_settings(settings(auth="keys,none", api_keys="sk-a=alpha"))
    assert (await auth.authenticate(None)).tenant == "default"
    assert (await auth.authenticate("Bearer sk-a")).tenant == "alpha"
    with pytest.raises(AuthenticationFailed):
        await auth.authenticate("Bearer sk-wrong")


@pytest.mark.parametrize(("values", "modes"), [
    ({}, {"none"}),
    ({"api_keys": "sk-a"}, {"keys"}),
    ({"api_keys": "  "}, {"none"}),
    ({"api_keys_file": "/keys"}, {"keys"}),
    ({"oidc_issuer": "https://id.example.com"}, {"oidc"}),
    ({"api_keys": "sk-a", "oidc_issuer": "https://id.example.com"}, {"keys", "oidc"}),
    ({"auth": "OIDC, keys", "api_keys": "sk-a"}, {"keys", "oidc"}),
    ({"auth": "none", "api_keys": "sk-a"}, {"none"}),
])
def test_modes_are_named_or_follow_what_is_configured(values: dict[str, str], modes: set[str]) -> None:
    assert modes_of(settings(**values)) == modes


@pytest.mark.parametrize(("values", "message"), [
    ({"auth": "keys,ldap"}, "unknown mode"),
    ({"auth": "keys"}, "no keys are configured"),
    ({"auth": "oidc", "oidc_issuer": "https://id.example.com"}, "AGENTIC_GATEWAY_OIDC_AUDIENCE"),
    ({"oidc_issuer": "http://id.example.com", "oidc_audience": "a"}, "https://"),
    ({"api_keys_file": "/no/such/file"}, "AGENTIC_GATEWAY_API_KEYS"),
])
def test_configurations_that_cannot_authenticate_stop_the_start(values: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Authenticator.from_settings(settings(**values))


@pytest.mark.parametrize(("values", "refused"), [
    ({"host": "0.0.0.0"}, True),
    ({"host": "10.1.2.3"}, True),
    ({"host": "0.0.0.0", "auth": "keys,none", "api_keys": "sk-" + "a" * 24}, True),
    ({"host": "127.0.0.1"}, False),
    ({"host": "::1"}, False),
    ({"host": "localhost"}, False),
    ({"host": "0.0.0.0", "allow_unauthenticated": True}, False),
    ({"host": "0.0.0.0", "api_keys": "sk-" + "a" * 24}, False),
])
def test_an_open_api_starts_only_on_loopback_or_when_allowed(values: dict[str, object], refused: bool) -> None:
    problem = startup_refusal(settings(**values))
    assert (problem is not None) == refused
    if problem:
        assert "AGENTIC_GATEWAY_ALLOW_UNAUTHENTICATED=true" in problem and "AGENTIC_GATEWAY_API_KEYS" in problem
