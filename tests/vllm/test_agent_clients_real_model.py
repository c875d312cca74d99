"""The real Codex CLI and Claude Code (pinned, installed into .agent-clients/ by the launcher's installer), one
prompt each, through the stack backed by the real vLLM, per upstream API.

Their default first requests (about 40 KB / 10k tokens for Codex, 50 KB / 12k tokens for Claude Code) do not fit
SmolLM2's 4096-token context, so both run with options that shrink them to about 6.5 KB: a one-line system
prompt and only the shell tool. A 135M model does not reliably call tools, so only what is robust is checked:
the client exits 0, prints an answer, and the gateway answered its requests (its request counter grew).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx
import pytest
from agentic_local import agent_clients
from agentic_local.client_session import OPEN_GATEWAY_KEY, ClientSettings, prepare_claude, prepare_codex
from agentic_local.model_server import SERVED_MODEL_NAME
from agentic_local.stack import LocalStack

pytestmark = pytest.mark.vllm

ROOT = Path(__file__).resolve().parents[2]
CLIENT_TIMEOUT_SECONDS = 300  # Codex sends no output limit: a tiny model may decode for a while (about 20 tokens/s)
SYSTEM_PROMPT = "You are a helpful assistant. Answer in one short sentence."
PROMPT = "Reply with the single word: hello"  # a prompt the 135M model ends well within Claude Code's 256 tokens
API_KEY = OPEN_GATEWAY_KEY  # the tier's stack has no keys: any value is accepted

# Codex 0.169.0: --strict-config refuses any key it does not know, the -c ones included.
CODEX_ARGS = (
    "exec", "--strict-config", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
    "-c", "web_search=\"disabled\"",  # no web_search tool
    "--disable", "multi_agent",  # no multi_agent_v1 tool (10 KB)
    "--disable", "goals",  # no get_goal/create_goal/update_goal tools
    "-c", "skills.include_instructions=false",  # no <skills_instructions> developer message (2.7 KB)
    "-c", "include_environment_context=false",  # no <environment_context> user message
    "-c", "model_context_window=4096",
)
CLAUDE_ARGS = ("--system-prompt", SYSTEM_PROMPT, "--tools", "Bash", "--max-turns", "2")
CLAUDE_ENV = {
    "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "256",  # max_tokens is 32000 otherwise: more than the whole context
    "MAX_THINKING_TOKENS": "0",  # no `thinking` parameter
    "ENABLE_TOOL_SEARCH": "false",  # no deferred-tool placeholder
}


@pytest.fixture(scope="session")
def client_binaries() -> dict[str, Path]:
    """The pinned clients in the repository's .agent-clients/ (npm the first time, then reused)."""
    try:
        return agent_clients.install(ROOT / agent_clients.DEFAULT_DIR)
    except agent_clients.InstallError as exc:
        pytest.skip(f"cannot install the agent clients ({exc})")


def _gateway_successes(stack: LocalStack) -> float:
    """Requests the gateway answered with a 2xx, over all routes (Prometheus text format)."""
    text = httpx.get(stack.metrics_urls["gateway"], timeout=10).text
    pattern = re.compile(r'^agentic_gateway_requests_total\{[^}]*status="2\d\d"[^}]*\} ([0-9.e+]+)$', re.MULTILINE)
    return sum(float(value) for value in pattern.findall(text))


def _run(stack: LocalStack, tmp_path: Path, executable: Path, args: list[str],
         prepare: Callable[[ClientSettings, Mapping[str, str]], dict[str, str]],
         extra_env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    settings = ClientSettings(gateway_url=stack.urls["gateway"], api_key=API_KEY, model=SERVED_MODEL_NAME,
                              data_dir=tmp_path / "data")
    home, workdir = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    workdir.mkdir()
    base = {key: value for key, value in os.environ.items() if not key.startswith(("AGENTIC_", "ANTHROPIC_", "OPENAI_"))}
    base.update(HOME=str(home), NO_COLOR="1", **(extra_env or {}))
    env = prepare(settings, base)
    before = _gateway_successes(stack)
    try:
        result = subprocess.run([str(executable), *args], env=env, cwd=workdir, text=True, capture_output=True,
                                stdin=subprocess.DEVNULL, timeout=CLIENT_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{executable.name} ran past {CLIENT_TIMEOUT_SECONDS}s\n"
                             f"stdout:\n{exc.stdout!r}\nstderr:\n{exc.stderr!r}") from None
    explain = f"exit {result.returncode}\n--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr[-6000:]}"
    assert result.returncode == 0, explain
    assert result.stdout.strip(), explain
    assert _gateway_successes(stack) > before, explain
    return result


def test_codex_answers_one_prompt(vllm_stack: LocalStack, tmp_path: Path, client_binaries: dict[str, Path]) -> None:
    instructions = tmp_path / "instructions.md"  # replaces Codex's 17 KB of base instructions
    instructions.write_text(SYSTEM_PROMPT + "\n")
    args = [*CODEX_ARGS, "-c", f"model_instructions_file={json.dumps(str(instructions))}", PROMPT]
    _run(vllm_stack, tmp_path, client_binaries["codex"], args, prepare_codex)


def test_claude_code_answers_one_prompt(vllm_stack: LocalStack, tmp_path: Path,
                                        client_binaries: dict[str, Path]) -> None:
    _run(vllm_stack, tmp_path, client_binaries["claude"], ["-p", PROMPT, *CLAUDE_ARGS], prepare_claude, CLAUDE_ENV)
