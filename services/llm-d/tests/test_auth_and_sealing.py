"""The workload token, the tenant header, and sealing contexts (no network)."""

from __future__ import annotations

import time

import jwt
import pytest
from agentic_core.errors import AuthenticationFailed, InvalidRequest
from agentic_core.split.context import SplitContext
from agentic_llm_d.auth import WorkloadAuth
from agentic_llm_d.sealing import ContextSealer
from agentic_runtime.logs import PRINCIPAL

KEY = "signing-key-" + "k" * 64  # long enough for HS512 too, so only the algorithm differs
TOKEN = "workload-token-" + "t" * 32
CONTEXT = SplitContext(response_id="resp_" + "1" * 48, tenant="tenant-a", original_request={"model": "m", "input": "hi"},
                       created_at=1_700_000_000)


@pytest.mark.parametrize("presented", [None, "", TOKEN[:-1], TOKEN + "x", KEY])
def test_anything_but_the_token_is_401_invalid_workload_token(presented: str | None) -> None:
    with pytest.raises(AuthenticationFailed) as raised:
        WorkloadAuth(TOKEN, "x-agentic-tenant", 256).check_token(presented)
    assert raised.value.code == "invalid_workload_token" and raised.value.error_type == "authentication_error"


def test_the_token_passes() -> None:
    WorkloadAuth(TOKEN, "x-agentic-tenant", 256).check_token(TOKEN)


def test_the_tenant_is_default_without_the_header_and_bounded_with_it() -> None:
    auth = WorkloadAuth(TOKEN, "X-Agentic-Tenant", 8)
    assert auth.tenant(None) == "default"
    assert auth.tenant(" team-a ") == "team-a"
    principal = PRINCIPAL.get()  # bound for the request's log lines
    assert principal is not None and (principal.tenant, principal.subject) == ("team-a", "llm-d")
    for bad in ("", "  ", "much-too-long", "tab\there"):
        with pytest.raises(InvalidRequest):
            auth.tenant(bad)


def test_a_sealed_context_opens_with_the_same_key() -> None:
    sealer = ContextSealer(KEY, 600)
    token = sealer.seal(CONTEXT, int(time.time()))
    assert sealer.unseal(token) == CONTEXT
    claims = jwt.decode(token, KEY, algorithms=["HS256"], audience="agentic-llm-d")
    assert claims["exp"] - claims["iat"] == 600


@pytest.mark.parametrize("token_of", [
    lambda: ContextSealer("another-signing-key-" + "x" * 32, 600).seal(CONTEXT, int(time.time())),
    lambda: ContextSealer(KEY, 600).seal(CONTEXT, int(time.time()) - 601),
    lambda: jwt.encode({**CONTEXT.claims(now=int(time.time())), "aud": "other"}, KEY, algorithm="HS256"),
    lambda: jwt.encode(CONTEXT.claims(now=int(time.time())), KEY, algorithm="HS512"),
    lambda: jwt.encode(CONTEXT.claims(now=int(time.time())), None, algorithm="none"),
    lambda: ContextSealer(KEY, 600).seal(CONTEXT, int(time.time()))[:-2],
])
def test_contexts_this_key_did_not_seal_or_that_expired_are_rejected(token_of) -> None:
    with pytest.raises(InvalidRequest) as raised:
        ContextSealer(KEY, 600).unseal(token_of())
    assert raised.value.message.startswith("context rejected: ") and raised.value.http_status == 400
