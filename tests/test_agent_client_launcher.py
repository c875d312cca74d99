"""`python -m agentic_local codex|claude`: the pinned installer and the configuration each client gets,
which points at the gateway and lives only inside the data folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from agentic_local import agent_clients
from agentic_local.agent_clients import CLAUDE_CODE, CODEX, PinnedClient
from agentic_local.client_session import (
    ClientSettings,
    ModelWindow,
    api_key_from_env,
    gateway_model_window,
    prepare_claude,
    prepare_codex,
)
from agentic_local.processes import free_port


def _settings(tmp_path: Path, **overrides: Any) -> ClientSettings:
    values: dict[str, Any] = {"gateway_url": "http://127.0.0.1:9999", "api_key": "sk-team", "model": "my-model",
                              "data_dir": tmp_path / "data"}
    return ClientSettings(**{**values, **overrides})


def _inside(path: str | Path, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def test_defaults_are_the_local_gateway_and_the_local_model(tmp_path: Path) -> None:
    settings = ClientSettings.from_env({"AGENTIC_DATA_DIR": str(tmp_path)})
    assert settings.gateway_url == "http://127.0.0.1:8080"
    assert settings.model == "smollm2"
    assert settings.data_dir == tmp_path.resolve() and not settings.gateway_url_given


def test_the_gateway_url_and_port_and_model_come_from_the_environment(tmp_path: Path) -> None:
    assert ClientSettings.from_env({"AGENTIC_PORT": "9090"}).gateway_url == "http://127.0.0.1:9090"
    given = ClientSettings.from_env({"AGENTIC_GATEWAY_URL": "https://agentic.example/v1/", "AGENTIC_CLIENT_MODEL": "big"})
    assert given.gateway_url == "https://agentic.example" and given.gateway_url_given and given.model == "big"


def test_the_api_key_is_the_given_one_else_the_gateways_first_else_a_placeholder() -> None:
    assert api_key_from_env({"AGENTIC_API_KEY": "sk-mine", "AGENTIC_GATEWAY_API_KEYS": "sk-a=team-a"}) == "sk-mine"
    assert api_key_from_env({"AGENTIC_GATEWAY_API_KEYS": " sk-a=team-a,sk-b=team-b"}) == "sk-a"
    assert api_key_from_env({"AGENTIC_GATEWAY_API_KEYS": "sk-bare"}) == "sk-bare"
    assert api_key_from_env({}) == "agentic-local"


def test_codex_gets_a_responses_provider_at_the_gateway_in_its_own_home(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    env = prepare_codex(settings, {"HOME": "/home/someone", "PATH": "/usr/bin"})

    assert _inside(env["CODEX_HOME"], settings.data_dir) and env["HOME"] == "/home/someone"
    config = tomllib.loads((Path(env["CODEX_HOME"]) / "config.toml").read_text())
    assert config["model"] == "my-model" and config["model_provider"] == "agentic"
    provider = config["model_providers"]["agentic"]
    assert provider["base_url"] == "http://127.0.0.1:9999/v1" and provider["wire_api"] == "responses"
    assert env[provider["env_key"]] == "sk-team"
    assert provider["supports_websockets"] is True  # WebSocket mode: only new input per request
    assert config["features"]["enable_request_compression"] is False
    assert config["analytics"]["enabled"] is False


def test_claude_code_gets_the_gateway_for_every_model_and_no_other_traffic(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    env = prepare_claude(settings, {"HOME": "/home/someone", "ANTHROPIC_API_KEY": "sk-ant-real"})

    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9999" and env["ANTHROPIC_AUTH_TOKEN"] == "sk-team"
    assert "ANTHROPIC_API_KEY" not in env  # the user's own key is never sent to the gateway
    models = [name for name in env if name.startswith("ANTHROPIC_") and name.endswith("_MODEL")]
    assert {"ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL"} <= set(models)
    assert {env[name] for name in models} == {"my-model"} and env["CLAUDE_CODE_SUBAGENT_MODEL"] == "my-model"
    for switch in ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY", "DISABLE_AUTOUPDATER"):
        assert env[switch] == "1"
    assert _inside(env["CLAUDE_CONFIG_DIR"], settings.data_dir)
    assert json.loads((Path(env["CLAUDE_CONFIG_DIR"]) / ".claude.json").read_text())["hasCompletedOnboarding"] is True


def _fake_installed(directory: Path, client: PinnedClient, version: str) -> None:
    package = directory / "node_modules" / client.package
    package.mkdir(parents=True, exist_ok=True)
    (package / "package.json").write_text(json.dumps({"name": client.package, "version": version}))
    executable = directory / "node_modules" / ".bin" / client.executable
    executable.parent.mkdir(parents=True, exist_ok=True)
    executable.write_text("#!/bin/sh\n")
    executable.chmod(0o755)


def test_installed_pinned_versions_are_used_without_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for client in (CODEX, CLAUDE_CODE):
        _fake_installed(tmp_path, client, client.version)
    monkeypatch.setattr(agent_clients, "_npm_install", lambda *args: pytest.fail("npm ran"))

    binaries = agent_clients.install(tmp_path)

    assert binaries == {"codex": tmp_path / "node_modules/.bin/codex", "claude": tmp_path / "node_modules/.bin/claude"}


def test_another_version_is_replaced_by_the_pinned_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_installed(tmp_path, CODEX, "0.1.0")
    _fake_installed(tmp_path, CLAUDE_CODE, CLAUDE_CODE.version)
    calls: list[list[str]] = []

    def npm(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        _fake_installed(tmp_path, CODEX, CODEX.version)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(agent_clients.shutil, "which", lambda name: "/usr/bin/npm")
    monkeypatch.setattr(agent_clients.subprocess, "run", npm)

    agent_clients.install(tmp_path)

    (argv,) = calls
    assert argv[:2] == ["/usr/bin/npm", "install"] and argv[argv.index("--prefix") + 1] == str(tmp_path)
    assert argv[-1] == "@openai/codex@0.169.0" and "@anthropic-ai/claude-code@2.1.328" not in argv


def test_without_npm_the_installer_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_clients.shutil, "which", lambda name: None)
    with pytest.raises(agent_clients.InstallError, match="Node.js"):
        agent_clients.install(tmp_path)


def test_a_named_gateway_that_does_not_answer_fails_clearly(tmp_path: Path) -> None:
    _fake_installed(tmp_path / "clients", CODEX, CODEX.version)
    url = f"http://127.0.0.1:{free_port()}"
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTIC_")}
    env.update(AGENTIC_GATEWAY_URL=url, AGENTIC_AGENT_CLIENTS_DIR=str(tmp_path / "clients"),
               AGENTIC_DATA_DIR=str(tmp_path / "data"), PYTHONWARNINGS="ignore")

    result = subprocess.run([sys.executable, "-m", "agentic_local", "codex", "exec", "hi"], env=env, capture_output=True,
                            text=True, timeout=60)

    assert result.returncode == 1 and f"nothing answers at AGENTIC_GATEWAY_URL={url}" in result.stderr


# -- The model's window, read from the gateway's catalog at client start -----------------------------------


class _FakeGateway(ThreadingHTTPServer):
    """Answers `GET /v1/models?client_version=` with `catalog` (Codex's shape) to the key `sk-team` only."""

    def __init__(self, catalog: Any) -> None:
        super().__init__(("127.0.0.1", 0), _CatalogHandler)
        self.catalog = catalog
        self.asked: list[dict[str, list[str]]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _CatalogHandler(BaseHTTPRequestHandler):
    server: _FakeGateway

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        self.server.asked.append(parse_qs(url.query))
        authorized = self.headers.get("authorization") == "Bearer sk-team"
        status, body = (200, json.dumps(self.server.catalog).encode()) if url.path == "/v1/models" and authorized \
            else (401, b"{}")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture()
def gateway_with() -> Iterator[Any]:
    servers: list[_FakeGateway] = []

    def start(catalog: Any) -> _FakeGateway:
        server = _FakeGateway(catalog)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


CATALOG = {"models": [
    {"slug": "other-model", "context_window": 8192, "auto_compact_token_limit": 7372},
    {"slug": "my-model", "context_window": 32768, "auto_compact_token_limit": 29491},
    {"slug": "unmeasured-model"},
]}


def test_the_window_is_the_one_the_gateways_catalog_gives_the_model(tmp_path: Path, gateway_with: Any) -> None:
    gateway = gateway_with(CATALOG)
    settings = _settings(tmp_path, gateway_url=gateway.url)

    assert gateway_model_window(settings) == ModelWindow(32768, 29491)
    assert gateway.asked == [{"client_version": [CODEX.version]}]  # the catalog as Codex itself asks for it
    assert gateway_model_window(_settings(tmp_path, gateway_url=gateway.url, model="unmeasured-model")) is None
    assert gateway_model_window(_settings(tmp_path, gateway_url=gateway.url, model="absent")) is None


@pytest.mark.parametrize("catalog", [{"object": "list", "data": []}, {"models": "no"}, [1, 2],
                                     {"models": [{"slug": "my-model", "context_window": True}]},
                                     {"models": [{"slug": "my-model", "context_window": -1}]}])
def test_a_catalog_without_a_usable_window_gives_none(tmp_path: Path, gateway_with: Any, catalog: Any) -> None:
    assert gateway_model_window(_settings(tmp_path, gateway_url=gateway_with(catalog).url)) is None


def test_a_refused_or_absent_gateway_gives_no_window(tmp_path: Path, gateway_with: Any) -> None:
    gateway = gateway_with(CATALOG)
    assert gateway_model_window(_settings(tmp_path, gateway_url=gateway.url, api_key="sk-wrong")) is None
    assert gateway_model_window(_settings(tmp_path, gateway_url=f"http://127.0.0.1:{free_port()}")) is None


def test_codex_gets_the_models_window_and_compaction_limit(tmp_path: Path, gateway_with: Any) -> None:
    config = _codex_config_at(tmp_path, gateway_with(CATALOG).url)
    assert config["model_context_window"] == 32768 and config["model_auto_compact_token_limit"] == 29491


def _codex_config_at(tmp_path: Path, gateway_url: str) -> dict[str, Any]:
    env = prepare_codex(_settings(tmp_path, gateway_url=gateway_url), {})
    return tomllib.loads((Path(env["CODEX_HOME"]) / "config.toml").read_text())


def test_codex_gets_no_compaction_limit_where_the_catalog_gives_none(tmp_path: Path, gateway_with: Any) -> None:
    config = _codex_config_at(tmp_path, gateway_with({"models": [{"slug": "my-model", "context_window": 4096}]}).url)
    assert config["model_context_window"] == 4096 and "model_auto_compact_token_limit" not in config


def test_codex_without_a_known_window_gets_neither_key(tmp_path: Path) -> None:
    config = _codex_config_at(tmp_path, f"http://127.0.0.1:{free_port()}")
    assert "model_context_window" not in config and "model_auto_compact_token_limit" not in config
    assert config["model"] == "my-model"  # the rest is written all the same


def test_claude_code_gets_the_models_window_as_its_max_context_tokens(tmp_path: Path, gateway_with: Any) -> None:
    env = prepare_claude(_settings(tmp_path, gateway_url=gateway_with(CATALOG).url), {})
    assert env["CLAUDE_CODE_MAX_CONTEXT_TOKENS"] == "32768"
    assert "CLAUDE_CODE_AUTO_COMPACT_WINDOW" not in env  # it follows the window; below 100k it would be read as 100k


def test_claude_code_without_a_known_window_keeps_what_the_user_set(tmp_path: Path) -> None:
    settings = _settings(tmp_path, gateway_url=f"http://127.0.0.1:{free_port()}")
    assert "CLAUDE_CODE_MAX_CONTEXT_TOKENS" not in prepare_claude(settings, {})
    assert prepare_claude(settings, {"CLAUDE_CODE_MAX_CONTEXT_TOKENS": "65536"})["CLAUDE_CODE_MAX_CONTEXT_TOKENS"] == "65536"
