"""API keys end to end: a keys file (plain and `sha256:` entries) rotated while the gateway runs, `x-api-key`,
admin keys, `none` on loopback, and the WebSocket upgrade, through the official SDK against real processes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
from agentic_local.processes import wait_until
from openai import OpenAI
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.support.fake_upstream import Text

MODEL = "smollm2"
HASHED_KEY = "sk-e2e-only-its-hash-is-stored"


@pytest.fixture(scope="module")
def keys_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("auth") / "api-keys"
    path.write_text("# e2e keys\n\n"
                    "sk-e2e-file-a=file-a\n"
                    f"sha256:{hashlib.sha256(HASHED_KEY.encode()).hexdigest()}=file-h\n")
    return path


@pytest.fixture(scope="module")
def keys_gateway(stack, keys_file: Path) -> str:
    """A gateway whose keys are the file's only (the stack's inline keys are switched off), plus an admin key."""
    return stack.add_gateway(AGENTIC_GATEWAY_API_KEYS="", AGENTIC_GATEWAY_API_KEYS_FILE=str(keys_file),
                             AGENTIC_GATEWAY_ADMIN_KEYS="sk-e2e-admin=ops")


def sdk(base: str, key: str) -> OpenAI:
    return OpenAI(base_url=base + "/v1", api_key=key, max_retries=0, timeout=30)


def accepted(base: str, key: str) -> bool:
    """The key authenticates: an unknown id is 404, not 401."""
    reply = httpx.get(f"{base}/v1/responses/resp_unknown", headers={"authorization": f"Bearer {key}"}, timeout=10)
    assert reply.status_code in (401, 404), reply.text
    return reply.status_code == 404


def test_file_keys_map_to_their_tenants(keys_gateway: str, upstream) -> None:
    upstream.script(Text("from the file"))
    with sdk(keys_gateway, "sk-e2e-file-a") as tenant_a, sdk(keys_gateway, HASHED_KEY) as tenant_h:
        response = tenant_a.responses.create(model=MODEL, input="hi")
        assert tenant_a.responses.retrieve(response.id).output_text == "from the file"
        with pytest.raises(openai.NotFoundError):
            tenant_h.responses.retrieve(response.id)  # another tenant's


def test_a_sha256_entry_accepts_its_key_not_its_hash(keys_gateway: str) -> None:
    assert accepted(keys_gateway, HASHED_KEY)
    assert not accepted(keys_gateway, f"sha256:{hashlib.sha256(HASHED_KEY.encode()).hexdigest()}")


def test_x_api_key_is_accepted_as_well_as_bearer(keys_gateway: str, upstream) -> None:
    upstream.script(Text("by header"))
    reply = httpx.post(f"{keys_gateway}/v1/responses", headers={"x-api-key": "sk-e2e-file-a"},
                       json={"model": MODEL, "input": "hi"}, timeout=30)
    assert reply.status_code == 200, reply.text
    with sdk(keys_gateway, "sk-e2e-file-a") as tenant_a:
        assert tenant_a.responses.retrieve(reply.json()["id"]).output_text == "by header"


@pytest.mark.parametrize("headers", [{}, {"authorization": "Bearer sk-wrong"}, {"x-api-key": "sk-wrong"},
                                     {"authorization": "Bearer sk-test-tenant-a"}])  # the stack's key is not here
def test_missing_or_wrong_keys_are_401_in_openais_shape(keys_gateway: str, headers: dict[str, str]) -> None:
    reply = httpx.get(f"{keys_gateway}/v1/responses/resp_unknown", headers=headers, timeout=10)
    assert reply.status_code == 401
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["type"] == "authentication_error"
    assert "sk-wrong" not in error["message"]


def test_the_sdk_sees_an_authentication_error(keys_gateway: str) -> None:
    with sdk(keys_gateway, "sk-wrong") as stranger, pytest.raises(openai.AuthenticationError) as raised:
        stranger.responses.create(model=MODEL, input="hi")
    assert raised.value.status_code == 401


def test_an_admin_key_is_a_key_of_its_tenant(keys_gateway: str) -> None:
    assert accepted(keys_gateway, "sk-e2e-admin")


def test_the_websocket_upgrade_uses_the_same_keys(keys_gateway: str) -> None:
    url = keys_gateway.replace("http://", "ws://") + "/v1/responses"
    with connect(url, additional_headers={"x-api-key": "sk-e2e-file-a"}, open_timeout=10):
        pass
    with pytest.raises(InvalidStatus) as refused:
        connect(url, additional_headers={"authorization": "Bearer sk-wrong"}, open_timeout=10)
    assert refused.value.response.status_code == 401
    assert json.loads(refused.value.response.body)["error"]["type"] == "authentication_error"


def test_a_rewritten_keys_file_takes_effect_without_a_restart(keys_gateway: str, keys_file: Path) -> None:
    original = keys_file.read_text()
    try:
        keys_file.write_text(original.replace("sk-e2e-file-a=file-a", "sk-e2e-file-a2=file-a"))
        wait_until(lambda: accepted(keys_gateway, "sk-e2e-file-a2"), 10, "the new key")
        assert not accepted(keys_gateway, "sk-e2e-file-a")
        assert accepted(keys_gateway, HASHED_KEY)  # untouched entries stay
    finally:
        keys_file.write_text(original)
        wait_until(lambda: accepted(keys_gateway, "sk-e2e-file-a"), 10, "the original key back")


@pytest.fixture(scope="module")
def open_gateway(stack) -> Iterator[str]:
    """No keys, on loopback: `none` starts, and every caller is tenant `default`."""
    yield stack.add_gateway(AGENTIC_GATEWAY_API_KEYS="", AGENTIC_GATEWAY_ADMIN_KEYS="")


def test_none_on_loopback_serves_everyone_as_default(open_gateway: str, upstream) -> None:
    upstream.script(Text("open"))
    with sdk(open_gateway, "anything") as one, sdk(open_gateway, "something-else") as other:
        response = one.responses.create(model=MODEL, input="hi")
        assert other.responses.retrieve(response.id).output_text == "open"  # both are tenant `default`
    assert httpx.get(f"{open_gateway}/v1/responses/{response.id}", timeout=10).status_code == 200
