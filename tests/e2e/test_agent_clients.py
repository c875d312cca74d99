"""The real Codex CLI and Claude Code (pinned versions, installed by the launcher's installer) run whole
sessions through the stack: the fake model asks for their shell tool, they really run the command, send its
output back, and print the answer the model builds from it; later turns of a session carry the earlier ones."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from agentic_local import agent_clients
from agentic_local.client_session import ClientSettings, prepare_claude, prepare_codex
from prometheus_client.parser import text_string_to_metric_families

from conftest import CHAT_MODEL, ROOT, TENANT_KEYS, UNKNOWN_ROUTE_MODELS
from tests.support.fake_upstream import EchoToolOutput, FakeUpstream, FunctionCall, Text, declares_tools

MODEL = "smollm2"
CLIENT_TIMEOUT_SECONDS = 120
# --strict-config: Codex refuses a config.toml key it does not know, so the launcher's config is checked too.
CODEX_FULL_ACCESS = ("--strict-config", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox")


@pytest.fixture(scope="session")
def client_binaries() -> dict[str, Path]:
    """Installed once into the repository's .agent-clients/ (kept between runs: later runs skip npm)."""
    return agent_clients.install(ROOT / agent_clients.DEFAULT_DIR)


@dataclass
class AgentClient:
    """One client with a configuration of its own, the way `python -m agentic_local <client>` sets it up."""

    executable: Path
    env: dict[str, str]
    workdir: Path
    home: Path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        try:
            result = subprocess.run([str(self.executable), *args], env=self.env, cwd=self.workdir, text=True,
                                    capture_output=True, stdin=subprocess.DEVNULL, timeout=CLIENT_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"{self.executable.name} {args} ran past {CLIENT_TIMEOUT_SECONDS}s\n"
                                 f"stdout:\n{exc.stdout!r}\nstderr:\n{exc.stderr!r}") from None
        return result


def _explain(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr[-6000:]}"


def _client_factory(stack: Any, tmp_path: Path, binary: Path,
                    prepare: Callable[[ClientSettings, dict[str, str]], dict[str, str]]) -> Callable[[str], AgentClient]:
    def make(model: str) -> AgentClient:
        settings = ClientSettings(gateway_url=stack.urls["gateway"], api_key=TENANT_KEYS["tenant-a"], model=model,
                                  data_dir=tmp_path / "data")
        home, workdir = tmp_path / "home", tmp_path / "work"
        home.mkdir(exist_ok=True)
        workdir.mkdir(exist_ok=True)
        base = {key: value for key, value in os.environ.items() if not key.startswith(("AGENTIC_", "ANTHROPIC_", "OPENAI_"))}
        base.update(HOME=str(home), NO_COLOR="1")
        env = prepare(settings, base)
        # The fake model server reports a 4096-token window but takes any prompt; Claude Code, told the window,
        # refuses its own 12k-token first request (test_models_catalog.py shows both).
        env.pop("CLAUDE_CODE_MAX_CONTEXT_TOKENS", None)
        return AgentClient(binary, env, workdir, home)
    return make


@pytest.fixture()
def codex(stack, tmp_path: Path, client_binaries: dict[str, Path]) -> Iterator[AgentClient]:
    client = _client_factory(stack, tmp_path, client_binaries["codex"], prepare_codex)(MODEL)
    yield client
    assert list(client.home.iterdir()) == [], "the client wrote into HOME"


@pytest.fixture()
def codex_for(stack, tmp_path: Path, client_binaries: dict[str, Path]) -> Iterator[Callable[[str], AgentClient]]:
    yield _client_factory(stack, tmp_path, client_binaries["codex"], prepare_codex)
    assert list((tmp_path / "home").iterdir()) == [], "the client wrote into HOME"


@pytest.fixture()
def claude_for(stack, tmp_path: Path, client_binaries: dict[str, Path]) -> Iterator[Callable[[str], AgentClient]]:
    yield _client_factory(stack, tmp_path, client_binaries["claude"], prepare_claude)
    assert list((tmp_path / "home").iterdir()) == [], "the client wrote into HOME"


def _token() -> str:
    return f"tok{secrets.token_hex(6)}"


def _shell(token: str) -> tuple[str, str]:
    """A command and what it prints, which its own text does not contain: only running it yields the answer."""
    return f"echo {token} | tr a-z A-Z", token.upper()


def _input_texts(request: dict[str, Any]) -> str:
    return json.dumps(request.get("input") or request.get("messages"))


# -- Codex CLI (Responses API) ----------------------------------------------------------------------------


def test_codex_runs_the_command_the_model_asks_for_and_prints_the_answer(codex: AgentClient, upstream: FakeUpstream) -> None:
    command, printed = _shell(_token())
    upstream.script(FunctionCall("exec_command", json.dumps({"cmd": command})), EchoToolOutput("The command said: "),
                    when=declares_tools)

    result = codex.run("exec", *CODEX_FULL_ACCESS, "run the command")

    assert result.returncode == 0, _explain(result)
    assert "The command said: " in result.stdout and printed in result.stdout, _explain(result)
    outputs = [item for item in upstream.requests[-1]["input"] if item.get("type") == "function_call_output"]
    assert outputs and printed in outputs[-1]["output"]


def test_a_codex_session_of_three_turns_carries_the_earlier_turns(codex: AgentClient, upstream: FakeUpstream) -> None:
    first, second, third = _token(), _token(), _token()
    command, printed = _shell(first)
    upstream.script(FunctionCall("exec_command", json.dumps({"cmd": command})), EchoToolOutput("first turn: "),
                    when=declares_tools)
    result = codex.run("exec", *CODEX_FULL_ACCESS, f"turn one {first}")
    assert result.returncode == 0 and printed in result.stdout, _explain(result)

    upstream.script(Text(f"second answer {second}"), when=declares_tools)
    result = codex.run("exec", *CODEX_FULL_ACCESS, "resume", "--last", f"turn two {second}")
    assert result.returncode == 0 and f"second answer {second}" in result.stdout, _explain(result)

    upstream.script(Text(f"third answer {third}"), when=declares_tools)
    result = codex.run("exec", *CODEX_FULL_ACCESS, "resume", "--last", f"turn three {third}")
    assert result.returncode == 0 and f"third answer {third}" in result.stdout, _explain(result)

    history = _input_texts(upstream.requests[-1])
    for earlier in (f"turn one {first}", printed, f"turn two {second}", f"second answer {second}", f"turn three {third}"):
        assert earlier in history


@pytest.mark.parametrize("transport", ["websocket", "http"])
@pytest.mark.parametrize("flavor", list(UNKNOWN_ROUTE_MODELS))
def test_codex_runs_a_tool_round_in_front_of_every_kind_of_responses_server(
        flavor: str, transport: str, codex_for: Callable[[str], AgentClient], upstream: FakeUpstream) -> None:
    """Servers that answer routes they lack as FastAPI, OpenAI's API and llama.cpp do, in both of Codex's modes."""
    codex = codex_for(UNKNOWN_ROUTE_MODELS[flavor])
    command, printed = _shell(_token())
    upstream.script(FunctionCall("exec_command", json.dumps({"cmd": command})), EchoToolOutput("The command said: "),
                    when=declares_tools)
    websockets = "true" if transport == "websocket" else "false"
    result = codex.run("exec", *CODEX_FULL_ACCESS, "-c", f"model_providers.agentic.supports_websockets={websockets}",
                       "run the command")
    assert result.returncode == 0 and printed in result.stdout, _explain(result)
    assert upstream.requests[-1]["model"] == "smollm2"  # the route's name for it, on that server


def _gateway_counter(stack: Any, name: str, **labels: str) -> float:
    text = httpx.get(stack.metrics_urls["gateway"], timeout=10).text
    return sum(sample.value for family in text_string_to_metric_families(text) for sample in family.samples
               if sample.name == name and all(sample.labels.get(key) == value for key, value in labels.items()))


def test_codex_in_websocket_mode_runs_its_tool_loop_as_continuations_on_one_connection(
        stack: Any, codex: AgentClient, upstream: FakeUpstream) -> None:
    command, printed = _shell(_token())
    upstream.script(FunctionCall("exec_command", json.dumps({"cmd": command})), EchoToolOutput("over the socket: "),
                    when=declares_tools)
    before = {source: _gateway_counter(stack, "agentic_gateway_websocket_continuations_total", source=source)
              for source in ("connection", "state")}
    http_turns = _gateway_counter(stack, "agentic_gateway_requests_total", route="create_response")
    socket_turns = _gateway_counter(stack, "agentic_gateway_requests_total", route="responses_websocket")

    result = codex.run("exec", *CODEX_FULL_ACCESS, "run the command")

    assert result.returncode == 0 and printed in result.stdout, _explain(result)
    # Both model calls went over the WebSocket, and the second sent only the tool output: its context
    # (the user's prompt, the call) came from the connection, not from the client nor the database.
    assert _gateway_counter(stack, "agentic_gateway_requests_total", route="responses_websocket") >= socket_turns + 2
    assert _gateway_counter(stack, "agentic_gateway_requests_total", route="create_response") == http_turns
    assert _gateway_counter(stack, "agentic_gateway_websocket_continuations_total", source="connection") \
        >= before["connection"] + 1
    assert printed in json.dumps(upstream.requests[-1]["input"]) and "run the command" in json.dumps(
        upstream.requests[-1]["input"])


def test_codex_over_plain_http_still_works(codex: AgentClient, upstream: FakeUpstream) -> None:
    upstream.script(Text("answered over SSE"), when=declares_tools)
    result = codex.run("exec", *CODEX_FULL_ACCESS, "-c", "model_providers.agentic.supports_websockets=false", "hello")
    assert result.returncode == 0 and "answered over SSE" in result.stdout, _explain(result)


def test_codex_searches_the_web_through_the_gateway(codex: AgentClient, upstream: FakeUpstream) -> None:
    query = f"agentic {_token()}"
    upstream.script(FunctionCall("web_search", json.dumps({"queries": [query]})), EchoToolOutput("From the web: "),
                    when=declares_tools)

    result = codex.run("exec", *CODEX_FULL_ACCESS, "--json", "-c", 'web_search="live"', "search the web")

    assert result.returncode == 0, _explain(result)
    declared = [tool for tool in upstream.requests[0].get("tools", []) if tool.get("name") == "web_search"]
    assert declared, upstream.requests[0].get("tools")
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    items = [event["item"] for event in events if event.get("type") == "item.completed"]
    searches = [item for item in items if item.get("type") == "web_search"]
    assert searches and query in json.dumps(searches), _explain(result)
    answers = [item["text"] for item in items if item.get("type") == "agent_message"]
    assert answers and answers[-1].startswith("From the web: ") and query in answers[-1], _explain(result)


# -- Claude Code (Messages API) ---------------------------------------------------------------------------


# Native pass-through (vLLM serves /v1/messages); the translation in front of a Chat Completions server; and in
# front of Responses servers that answer /v1/messages as FastAPI, OpenAI's API and llama.cpp do.
@pytest.mark.parametrize("model", [MODEL, CHAT_MODEL, *UNKNOWN_ROUTE_MODELS.values()],
                         ids=["native-messages", "translated-to-chat", *(f"translated-{flavor}-like" for flavor in UNKNOWN_ROUTE_MODELS)])
def test_claude_code_runs_bash_and_prints_the_answer(model: str, claude_for: Callable[[str], AgentClient],
                                                     upstream: FakeUpstream) -> None:
    claude = claude_for(model)
    command, printed = _shell(_token())
    upstream.script(FunctionCall("Bash", json.dumps({"command": command, "description": "echo the token"})),
                    EchoToolOutput("Bash said: "), when=declares_tools)

    result = claude.run("-p", "run the command", "--allowedTools", "Bash")

    assert result.returncode == 0, _explain(result)
    assert "Bash said: " in result.stdout and printed in result.stdout, _explain(result)
    assert printed in _input_texts(upstream.requests[-1])
    # Native pass-through relays Claude Code's own request to /v1/messages; the translation runs the round loop,
    # which reaches this route's server as Chat Completions, the tool result as a `tool` message.
    if model == CHAT_MODEL:
        assert upstream.requests[-1]["messages"][-1]["role"] == "tool"
    elif model != MODEL:
        assert upstream.requests[-1]["input"][-1]["type"] == "function_call_output"
    else:
        assert upstream.requests[-1]["messages"][-1]["content"][0]["type"] == "tool_result"


def test_a_claude_code_session_continues_with_its_tool_results(claude_for: Callable[[str], AgentClient],
                                                             upstream: FakeUpstream) -> None:
    claude = claude_for(MODEL)
    first, second, third = _token(), _token(), _token()
    command, printed = _shell(first)
    upstream.script(FunctionCall("Bash", json.dumps({"command": command})), EchoToolOutput("first: "), when=declares_tools)
    result = claude.run("-p", f"turn one {first}", "--allowedTools", "Bash")
    assert result.returncode == 0 and printed in result.stdout, _explain(result)

    command, printed_second = _shell(second)
    upstream.script(FunctionCall("Bash", json.dumps({"command": command})), EchoToolOutput("second: "), when=declares_tools)
    result = claude.run("-p", "--continue", f"turn two {second}", "--allowedTools", "Bash")
    assert result.returncode == 0 and printed_second in result.stdout, _explain(result)

    upstream.script(Text(f"third answer {third}"), when=declares_tools)
    result = claude.run("-p", "--continue", f"turn three {third}", "--allowedTools", "Bash")
    assert result.returncode == 0 and f"third answer {third}" in result.stdout, _explain(result)

    history = _input_texts(upstream.requests[-1])
    for earlier in (f"turn one {first}", printed, f"turn two {second}", printed_second, f"turn three {third}"):
        assert earlier in history


