"""Closed by default: `python -m agentic_gateway` with no authentication off loopback, or with an authentication
setup that cannot work, exits non-zero and says how to configure it (before binding anything)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def run_gateway(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("AGENTIC_")}
    return subprocess.run([sys.executable, "-m", "agentic_gateway"], env={**clean, "AGENTIC_PORT": "1", **env},
                          capture_output=True, text=True, timeout=60)


def test_no_auth_off_loopback_refuses_to_start_and_says_how_to_configure() -> None:
    result = run_gateway(AGENTIC_GATEWAY_HOST="0.0.0.0")
    assert result.returncode == 2
    assert "without authentication" in result.stderr
    for setting in ("AGENTIC_GATEWAY_API_KEYS", "AGENTIC_GATEWAY_OIDC_ISSUER", "AGENTIC_GATEWAY_ALLOW_UNAUTHENTICATED=true"):
        assert setting in result.stderr


@pytest.mark.parametrize(("env", "message"), [
    ({"AGENTIC_GATEWAY_AUTH": "keys"}, "no keys are configured"),
    ({"AGENTIC_GATEWAY_API_KEYS_FILE": "/nonexistent/keys"}, "AGENTIC_GATEWAY_API_KEYS(_FILE)"),
    ({"AGENTIC_GATEWAY_OIDC_ISSUER": "http://id.example.com", "AGENTIC_GATEWAY_OIDC_AUDIENCE": "a"}, "https://"),
])
def test_an_auth_setup_that_cannot_work_refuses_to_start(env: dict[str, str], message: str) -> None:
    result = run_gateway(AGENTIC_GATEWAY_HOST="127.0.0.1", **env)
    assert result.returncode == 2 and message in result.stderr


STRONG = "sk-" + "a1b2c3d4" * 4


@pytest.mark.parametrize(("keys", "problem"), [
    ("sk-short=team-a", "the key is 8 characters"),
    ("k=ey", "the key is 1 characters"),
    (f"{STRONG}=", "nothing on one side"),  # base64 padding read as a key + an empty tenant
    (f"{STRONG}==", "more than one `=`"),
    (f"{STRONG}=team=a", "more than one `=`"),
])
def test_weak_or_ambiguous_keys_refuse_a_public_bind_and_never_show_the_key(keys: str, problem: str) -> None:
    result = run_gateway(AGENTIC_GATEWAY_HOST="0.0.0.0", AGENTIC_GATEWAY_API_KEYS=f"{STRONG}=ok,{keys}")
    assert result.returncode == 2 and problem in result.stderr and "weak or ambiguous" in result.stderr
    assert "entry 2" in result.stderr
    key = keys.split("=")[0]
    assert len(key) < 4 or key not in result.stderr  # the message names the entry, never the key


def test_weak_keys_on_loopback_are_a_warning_not_a_refusal() -> None:
    from agentic_gateway.auth.authenticator import startup_refusal
    from agentic_gateway.settings import GatewaySettings

    loopback = GatewaySettings(host="127.0.0.1", api_keys="sk-short=team-a")
    assert startup_refusal(loopback) is None
    public = GatewaySettings(host="0.0.0.0", api_keys="sk-short=team-a")
    assert "entry 1 (tenant 'team-a')" in (startup_refusal(public) or "")
    assert startup_refusal(GatewaySettings(host="0.0.0.0", api_keys=f"{STRONG}=team-a")) is None
