"""`GET /v1/models` through the whole stack: OpenAI's list for the SDKs, Codex's model catalog when Codex asks,
each model (routing-table aliases too) with the window its model server reports (the fake reports
`max_model_len: 4096`); and the real Codex CLI and Claude Code taking that window."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from agentic_local import agent_clients
from agentic_local.client_session import API_KEY_ENV, ClientSettings, codex_config, prepare_claude, prepare_codex
from openai import OpenAI

from conftest import CHAT_MODEL, DEAD_MODEL, ROOT, TENANT_KEYS
from tests.support.fake_upstream import FakeUpstream, Text, declares_tools

MODEL = "smollm2"
WINDOW = 4096  # the fake model server's max_model_len
CODEX_FIELDS = {"slug": str, "display_name": str, "supported_reasoning_levels": list, "shell_type": str,
                "visibility": str, "supported_in_api": bool, "priority": int, "base_instructions": str,
                "support_verbosity": bool, "truncation_policy": dict, "experimental_supported_tools": list}
CLIENT_TIMEOUT_SECONDS = 120


def _catalog(gateway_url: str, auth_headers: dict[str, str]) -> dict[str, dict[str, Any]]:
    reply = httpx.get(f"{gateway_url}/v1/models", params={"client_version": agent_clients.CODEX.version},
                      headers=auth_headers, timeout=30)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert list(body) == ["models"], body
    return {model["slug"]: model for model in body["models"]}


# -- OpenAI's list -------------------------------------------------------------------------------------------


def test_the_sdk_lists_the_servers_models_and_the_routing_tables_names(client: OpenAI) -> None:
    models = {model.id: model for model in client.models.list()}
    assert {MODEL, CHAT_MODEL, DEAD_MODEL} <= set(models)
    assert models[MODEL].owned_by == "vllm" and (models[MODEL].model_extra or {})["max_model_len"] == WINDOW


def test_an_alias_is_listed_with_the_window_of_the_model_it_is_routed_to(gateway_url: str, auth_headers: dict[str, str]) -> None:
    body = httpx.get(f"{gateway_url}/v1/models", headers=auth_headers, timeout=30).json()
    assert body["object"] == "list"
    (alias,) = [entry for entry in body["data"] if entry["id"] == CHAT_MODEL]
    assert alias == {"id": CHAT_MODEL, "object": "model", "created": 0, "owned_by": "agentic", "max_model_len": WINDOW}


def test_an_alias_whose_server_does_not_answer_is_listed_without_a_window(client: OpenAI) -> None:
    dead = client.models.retrieve(DEAD_MODEL)
    assert dead.id == DEAD_MODEL and "max_model_len" not in (dead.model_extra or {})


def test_one_model_is_retrieved_with_its_window(client: OpenAI) -> None:
    alias = client.models.retrieve(CHAT_MODEL)
    assert alias.id == CHAT_MODEL and (alias.model_extra or {})["max_model_len"] == WINDOW
    with pytest.raises(openai.NotFoundError) as refused:
        client.models.retrieve("no-such-model")
    assert refused.value.code == "model_not_found"


def test_listing_models_needs_a_key(gateway_url: str) -> None:
    for params in ({}, {"client_version": agent_clients.CODEX.version}):
        assert httpx.get(f"{gateway_url}/v1/models", params=params, timeout=30).status_code == 401


# -- Codex's catalog -----------------------------------------------------------------------------------------


def test_codex_gets_its_catalog_with_the_models_real_window(gateway_url: str, auth_headers: dict[str, str]) -> None:
    model = _catalog(gateway_url, auth_headers)[MODEL]
    for name, kind in CODEX_FIELDS.items():
        assert isinstance(model[name], kind), name
    assert model["context_window"] == WINDOW and model["auto_compact_token_limit"] == WINDOW * 90 // 100
    assert model["input_modalities"] == ["text"] and model["visibility"] == "list"


def test_the_codex_catalog_holds_the_aliases_with_their_servers_window(gateway_url: str, auth_headers: dict[str, str]) -> None:
    catalog = _catalog(gateway_url, auth_headers)
    assert catalog[CHAT_MODEL]["context_window"] == WINDOW
    assert "context_window" not in catalog[DEAD_MODEL]  # Codex keeps its own assumption where nothing is known
    assert sorted(model["priority"] for model in catalog.values()) == list(range(len(catalog)))


# -- The real clients ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client_binaries() -> dict[str, Path]:
    return agent_clients.install(ROOT / agent_clients.DEFAULT_DIR)


def _settings(stack: Any, tmp_path: Path) -> ClientSettings:
    return ClientSettings(gateway_url=stack.urls["gateway"], api_key=TENANT_KEYS["tenant-a"], model=MODEL,
                          data_dir=tmp_path / "data")


def _base_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    base = {key: value for key, value in os.environ.items()
            if not key.startswith(("AGENTIC_", "ANTHROPIC_", "OPENAI_", "CLAUDE_CODE_"))}
    base.update(HOME=str(home), NO_COLOR="1")
    return base


def _run(binary: Path, env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(exist_ok=True)
    result = subprocess.run([str(binary), *args], env=env, cwd=cwd, text=True, capture_output=True,
                            stdin=subprocess.DEVNULL, timeout=CLIENT_TIMEOUT_SECONDS)
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr[-6000:]}"
    return result


def _codex_exec(binary: Path, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return _run(binary, env, tmp_path / "work", "exec", "--strict-config", "--skip-git-repo-check", "say hello")


def _windows_codex_used(codex_home: Path) -> set[int]:
    """The `model_context_window` of every token count in the session's rollout (95% of the model's window:
    Codex keeps the rest for its own overhead)."""
    windows = set()
    for rollout in codex_home.glob("sessions/**/rollout-*.jsonl"):
        for line in rollout.read_text().splitlines():
            info = json.loads(line).get("payload", {}).get("info") or {}
            if isinstance(info, dict) and "model_context_window" in info:
                windows.add(info["model_context_window"])
    return windows


def test_codex_started_by_the_launcher_works_with_the_models_real_window(
        stack: Any, tmp_path: Path, client_binaries: dict[str, Path], upstream: FakeUpstream) -> None:
    settings = _settings(stack, tmp_path)
    env = prepare_codex(settings, _base_env(tmp_path))
    upstream.script(Text("hello from the model"), when=declares_tools)

    result = _codex_exec(client_binaries["codex"], env, tmp_path)

    assert "hello from the model" in result.stdout
    assert _windows_codex_used(settings.codex_home) == {WINDOW * 95 // 100}


def test_codex_reading_the_gateways_catalog_accepts_it(
        stack: Any, tmp_path: Path, client_binaries: dict[str, Path], upstream: FakeUpstream) -> None:
    # Codex 0.169.0 asks a provider for its catalog only when the provider's key comes from a command (`auth`),
    # not from `env_key`; and here no `model_context_window` is configured, so the window can only be the catalog's.
    settings = _settings(stack, tmp_path)
    env = prepare_codex(settings, _base_env(tmp_path))
    key_line = f'env_key = "{API_KEY_ENV}"'
    config = codex_config(settings)
    assert key_line in config and "model_context_window" not in config
    command_auth = f'auth = {{ command = "sh", args = ["-c", "printf %s \\"${API_KEY_ENV}\\""] }}'
    (settings.codex_home / "config.toml").write_text(config.replace(key_line, command_auth))
    upstream.script(Text("hello from the catalog"), when=declares_tools)

    result = _codex_exec(client_binaries["codex"], {**env, "RUST_LOG": "codex_models_manager=info"}, tmp_path)

    assert "hello from the catalog" in result.stdout
    assert "failed to decode models response" not in result.stderr, result.stderr[-4000:]
    assert f"Model metadata for `{MODEL}` not found" not in result.stderr, result.stderr[-4000:]
    assert _windows_codex_used(settings.codex_home) == {WINDOW * 95 // 100}
    cached = json.loads((settings.codex_home / "models_cache.json").read_text())  # what Codex kept of our catalog
    assert {model["slug"]: model.get("context_window") for model in cached["models"]}[MODEL] == WINDOW


# Claude Code's full first request (its system prompt and a dozen tools, about 12k tokens) does not fit a
# 4096-token window; trimmed the way tests/vllm runs it against the real SmolLM2, it does.
CLAUDE_TRIMMED_ARGS = ("--system-prompt", "Answer in one short sentence.", "--tools", "Bash", "--max-turns", "2")
CLAUDE_TRIMMED_ENV = {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "256", "MAX_THINKING_TOKENS": "0", "ENABLE_TOOL_SEARCH": "false"}
UNKNOWN_MODEL_NOTICE = "doesn't recognize the model"


def _claude(binary: Path, env: dict[str, str], tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), *args], env=env, cwd=tmp_path / "home", text=True, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=CLIENT_TIMEOUT_SECONDS)


def test_claude_code_started_by_the_launcher_runs_within_the_models_window(
        stack: Any, tmp_path: Path, client_binaries: dict[str, Path], upstream: FakeUpstream) -> None:
    env = prepare_claude(_settings(stack, tmp_path), _base_env(tmp_path))
    assert env["CLAUDE_CODE_MAX_CONTEXT_TOKENS"] == str(WINDOW)
    upstream.script(Text("hello from the model"), when=declares_tools)

    result = _claude(client_binaries["claude"], {**env, **CLAUDE_TRIMMED_ENV}, tmp_path, "-p", "say hello",
                     *CLAUDE_TRIMMED_ARGS)

    assert result.returncode == 0 and "hello from the model" in result.stdout, result.stdout + result.stderr[-4000:]
    assert UNKNOWN_MODEL_NOTICE not in result.stdout + result.stderr


def test_claude_code_refuses_a_prompt_longer_than_the_models_window_before_sending_it(
        stack: Any, tmp_path: Path, client_binaries: dict[str, Path], upstream: FakeUpstream) -> None:
    env = prepare_claude(_settings(stack, tmp_path), _base_env(tmp_path))

    result = _claude(client_binaries["claude"], env, tmp_path, "-p", "say hello")

    assert result.returncode != 0 and "Prompt is too long" in result.stdout + result.stderr
    assert upstream.requests == []  # the fake model server would have answered: it does not check its window


def test_claude_code_without_the_window_assumes_one_of_a_million_tokens(
        stack: Any, tmp_path: Path, client_binaries: dict[str, Path], upstream: FakeUpstream) -> None:
    env = prepare_claude(_settings(stack, tmp_path), _base_env(tmp_path))
    del env["CLAUDE_CODE_MAX_CONTEXT_TOKENS"]
    upstream.script(Text("hello from the model"), when=declares_tools)

    result = _claude(client_binaries["claude"], env, tmp_path, "-p", "say hello")

    assert result.returncode == 0 and "hello from the model" in result.stdout, result.stdout + result.stderr[-4000:]
    assert UNKNOWN_MODEL_NOTICE in result.stdout + result.stderr
