"""llm-d refuses to start with weak, missing or equal secrets, without echoing them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from agentic_llm_d.settings import LlmDSettings
from pydantic import ValidationError

STRONG_KEY = "k" * 40
STRONG_TOKEN = "t" * 40


def _settings(key: str, token: str) -> LlmDSettings:
    return LlmDSettings(AGENTIC_LLM_D_SIGNING_KEY=key, AGENTIC_LLM_D_API_TOKEN=token)


def test_strong_different_secrets_are_accepted() -> None:
    assert _settings(STRONG_KEY, STRONG_TOKEN).api_token.get_secret_value() == STRONG_TOKEN


@pytest.mark.parametrize(("key", "token"), [("short", STRONG_TOKEN), (STRONG_KEY, STRONG_KEY), (STRONG_KEY, "t" * 20 + " " + "t" * 20)])
def test_weak_or_equal_secrets_are_refused(key: str, token: str) -> None:
    with pytest.raises(ValidationError):
        _settings(key, token)


def test_the_process_exits_before_binding_and_never_prints_the_secret() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTIC_")}
    env.update(AGENTIC_LLM_D_SIGNING_KEY="too-short-secret-value", AGENTIC_LLM_D_API_TOKEN=STRONG_TOKEN)
    result = subprocess.run([sys.executable, "-m", "agentic_llm_d"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "AGENTIC_LLM_D_SIGNING_KEY" in result.stderr
    assert "too-short-secret-value" not in result.stderr + result.stdout
