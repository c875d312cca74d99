"""`python -m agentic_local codex|claude [args]`: Codex CLI or Claude Code against the local gateway.

Each client gets a configuration of its own under the data folder (`codex-home/`, `claude-config/`),
rewritten on every start, so nothing in the user's home is read or changed; it carries the model's context
window as the gateway's `GET /v1/models` reports it. When nothing answers at the gateway's address, the stack
is started the way `make run` starts it and stopped when the client exits.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType

import httpx

from agentic_local import agent_clients
from agentic_local.model_server import SERVED_MODEL_NAME
from agentic_local.processes import die_with_parent

API_KEY_ENV = "AGENTIC_API_KEY"  # the variable Codex's provider reads its key from (`env_key`)
OPEN_GATEWAY_KEY = "agentic-local"  # sent when the gateway has no keys: any value is accepted then
STACK_READY_TIMEOUT_SECONDS = 1800.0  # a first `make run` prepares the local model server (minutes)


@dataclass(frozen=True)
class ClientSettings:
    gateway_url: str  # scheme://host:port, without /v1
    api_key: str
    model: str
    data_dir: Path
    gateway_url_given: bool = False  # AGENTIC_GATEWAY_URL named it: never start a stack in its place

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ClientSettings:
        given = env.get("AGENTIC_GATEWAY_URL", "").strip()
        gateway_url = given or f"http://127.0.0.1:{env.get('AGENTIC_PORT') or 8080}"
        return cls(
            gateway_url=gateway_url.rstrip("/").removesuffix("/v1"),
            api_key=api_key_from_env(env),
            model=env.get("AGENTIC_CLIENT_MODEL") or SERVED_MODEL_NAME,
            data_dir=Path(env.get("AGENTIC_DATA_DIR") or ".agentic").resolve(),
            gateway_url_given=bool(given),
        )

    @property
    def codex_home(self) -> Path:
        return self.data_dir / "codex-home"

    @property
    def claude_config_dir(self) -> Path:
        return self.data_dir / "claude-config"


def api_key_from_env(env: Mapping[str, str]) -> str:
    """AGENTIC_API_KEY, else the first key of the gateway's own AGENTIC_GATEWAY_API_KEYS, else a placeholder."""
    if env.get(API_KEY_ENV):
        return env[API_KEY_ENV]
    for pair in env.get("AGENTIC_GATEWAY_API_KEYS", "").split(","):
        key = pair.partition("=")[0].strip()
        if key:
            return key
    return OPEN_GATEWAY_KEY


@dataclass(frozen=True)
class ModelWindow:
    """A model's context window, and the context size at which a client should compact its history."""

    context_window: int
    auto_compact_token_limit: int | None = None


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def gateway_model_window(settings: ClientSettings) -> ModelWindow | None:
    """The model's window from the gateway's catalog (`GET /v1/models?client_version=`, the shape Codex reads:
    the window the model's server reports), or None when the gateway does not know it or does not answer."""
    try:
        reply = httpx.get(settings.gateway_url + "/v1/models", params={"client_version": agent_clients.CODEX.version},
                          headers={"authorization": f"Bearer {settings.api_key}"}, timeout=10.0)
        models = reply.json().get("models") if reply.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    for model in models if isinstance(models, list) else []:
        if isinstance(model, dict) and model.get("slug") == settings.model and _positive_int(model.get("context_window")):
            limit = model.get("auto_compact_token_limit")
            return ModelWindow(model["context_window"], limit if _positive_int(limit) else None)
    return None


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def _codex_window_lines(window: ModelWindow | None) -> list[str]:
    if window is None:  # Codex assumes its own default window for a model it has no metadata for
        return []
    lines = ["# The model's window as the gateway reports it (GET /v1/models).",
             f"model_context_window = {window.context_window}"]
    if window.auto_compact_token_limit is not None:
        lines.append(f"model_auto_compact_token_limit = {window.auto_compact_token_limit}")
    return lines


def codex_config(settings: ClientSettings, window: ModelWindow | None = None) -> str:
    """`config.toml` of Codex's own CODEX_HOME: one Responses provider, the gateway, and the model's window."""
    return "\n".join([
        "# Written by `python -m agentic_local codex` on every start; change a setting for one run with -c key=value.",
        f"model = {_toml_string(settings.model)}",
        *_codex_window_lines(window),
        'model_provider = "agentic"',
        "check_for_update_on_startup = false",
        "",
        "[model_providers.agentic]",
        'name = "agentic"',
        f"base_url = {_toml_string(settings.gateway_url + '/v1')}",
        'wire_api = "responses"',
        f"env_key = {_toml_string(API_KEY_ENV)}",
        # WebSocket mode: one connection for the session, each turn sends only its new input.
        "supports_websockets = true",
        "",
        "[features]",
        "enable_request_compression = false",
        "daemon_auto_start = false",
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[feedback]",
        "enabled = false",
        "",
    ])


def codex_env(settings: ClientSettings, base: Mapping[str, str]) -> dict[str, str]:
    env = dict(base)
    env.update({"CODEX_HOME": str(settings.codex_home), API_KEY_ENV: settings.api_key})
    return env


def prepare_codex(settings: ClientSettings, base: Mapping[str, str]) -> dict[str, str]:
    settings.codex_home.mkdir(parents=True, exist_ok=True)
    (settings.codex_home / "config.toml").write_text(codex_config(settings, gateway_model_window(settings)))
    return codex_env(settings, base)


def claude_env(settings: ClientSettings, base: Mapping[str, str], window: ModelWindow | None = None) -> dict[str, str]:
    """Claude Code's environment: every model alias is the gateway's model, no traffic but the gateway's, and
    the model's window when the gateway knows it."""
    env = {key: value for key, value in base.items() if key not in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_USE_BEDROCK",
                                                                      "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")}
    env.update({
        "CLAUDE_CONFIG_DIR": str(settings.claude_config_dir),
        "ANTHROPIC_BASE_URL": settings.gateway_url,
        # A bearer token, not ANTHROPIC_API_KEY: Claude Code asks before using an API key from the environment.
        "ANTHROPIC_AUTH_TOKEN": settings.api_key,
        "ANTHROPIC_MODEL": settings.model,
        "ANTHROPIC_SMALL_FAST_MODEL": settings.model,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": settings.model,
        "ANTHROPIC_DEFAULT_SONNET_MODEL": settings.model,
        "ANTHROPIC_DEFAULT_OPUS_MODEL": settings.model,
        "ANTHROPIC_DEFAULT_FABLE_MODEL": settings.model,
        "CLAUDE_CODE_SUBAGENT_MODEL": settings.model,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_BUG_COMMAND": "1",
        "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    })
    if window is not None:
        # The window Claude Code assumes for a model id it does not know (else 1M tokens); its auto-compact
        # window follows it. CLAUDE_CODE_AUTO_COMPACT_WINDOW is not set: below 100k tokens Claude Code reads it
        # as 100k.
        env["CLAUDE_CODE_MAX_CONTEXT_TOKENS"] = str(window.context_window)
    return env


def prepare_claude(settings: ClientSettings, base: Mapping[str, str]) -> dict[str, str]:
    settings.claude_config_dir.mkdir(parents=True, exist_ok=True)
    state = settings.claude_config_dir / ".claude.json"
    if not state.exists():  # skips the first-run theme picker and sign-in screen of an interactive session
        state.write_text(json.dumps({"hasCompletedOnboarding": True}) + "\n")
    return claude_env(settings, base, gateway_model_window(settings))


def gateway_answers(gateway_url: str) -> bool:
    try:
        return httpx.get(gateway_url + "/health", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


class LaunchedStack:
    """`python -m agentic_local` as a child in its own session (a Ctrl-C meant for the client leaves it
    running); its output goes to `logs/launcher.log`, echoed on stderr until the stack is ready."""

    def __init__(self, settings: ClientSettings, env: Mapping[str, str]) -> None:
        self.gateway_url = ""
        self._ready = threading.Event()
        log_path = settings.data_dir / "logs" / "launcher.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log_path, "a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentic_local"], env={**env, "AGENTIC_DATA_DIR": str(settings.data_dir)},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True, preexec_fn=die_with_parent,
        )
        self._reader = threading.Thread(target=self._read, name="launcher-output", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._log.write(line)
            self._log.flush()
            if not self._ready.is_set():
                print(line, end="", file=sys.stderr, flush=True)
            if line.startswith("gateway: "):
                self.gateway_url = line.split(maxsplit=1)[1].strip()
            if line.startswith("agentic is ready"):
                self._ready.set()
        self._ready.set()  # the launcher exited

    def wait_ready(self, timeout: float) -> str:
        try:
            self._ready.wait(timeout)
        except KeyboardInterrupt:
            self.stop()
            raise RuntimeError("interrupted while the local stack was starting") from None
        if self.process.poll() is not None or not self.gateway_url:
            self.stop()
            raise RuntimeError("the local stack did not start (see the lines above)")
        return self.gateway_url

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(90)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(5)
        self._log.close()


def _run_foreground(argv: Sequence[str], env: Mapping[str, str]) -> int:
    """The client owns the terminal: Ctrl-C is its to handle; SIGTERM to us is passed on to it."""
    client = subprocess.Popen(list(argv), env=dict(env))

    def forward(signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGTERM and client.poll() is None:
            client.send_signal(signal.SIGTERM)

    previous = {signum: signal.signal(signum, forward) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        return client.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main(client: str, args: Sequence[str]) -> int:
    settings = ClientSettings.from_env(os.environ)
    try:
        executable = agent_clients.install(clients=(agent_clients.CLIENTS[client],))[agent_clients.CLIENTS[client].executable]
    except agent_clients.InstallError as exc:
        print(f"agentic {client}: {exc}", file=sys.stderr)
        return 1
    stack: LaunchedStack | None = None
    if not gateway_answers(settings.gateway_url):
        if settings.gateway_url_given:
            print(f"agentic {client}: nothing answers at AGENTIC_GATEWAY_URL={settings.gateway_url}", file=sys.stderr)
            return 1
        print(f"agentic {client}: no gateway at {settings.gateway_url}; starting the local stack", file=sys.stderr)
        stack = LaunchedStack(settings, os.environ)
        try:
            settings = replace(settings, gateway_url=stack.wait_ready(STACK_READY_TIMEOUT_SECONDS))
        except RuntimeError as exc:
            print(f"agentic {client}: {exc}", file=sys.stderr)
            return 1
    try:
        prepare = prepare_codex if client == "codex" else prepare_claude
        env = prepare(settings, os.environ)
        print(f"agentic {client}: {settings.gateway_url}, model {settings.model}", file=sys.stderr)
        return _run_foreground([str(executable), *args], env)
    finally:
        if stack is not None:
            print(f"agentic {client}: stopping the local stack", file=sys.stderr)
            stack.stop()
