"""Codex CLI and Claude Code at pinned versions, installed once with npm into a folder git ignores.

`install()` skips npm when the installed versions already match the pins, and returns each client's
executable. Both packages ship native binaries; npm (with Node.js 20 or newer) only fetches them.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PinnedClient:
    package: str
    version: str
    executable: str

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"


CODEX = PinnedClient("@openai/codex", "0.169.0", "codex")
CLAUDE_CODE = PinnedClient("@anthropic-ai/claude-code", "2.1.328", "claude")
CLIENTS = {"codex": CODEX, "claude": CLAUDE_CODE}

DEFAULT_DIR = Path(".agent-clients")  # relative to the repository root, where `make` runs
INSTALL_TIMEOUT_SECONDS = 600.0


class InstallError(RuntimeError):
    """npm is missing or failed; the message says what to do."""


def clients_dir() -> Path:
    return Path(os.environ.get("AGENTIC_AGENT_CLIENTS_DIR") or DEFAULT_DIR).resolve()


def installed_version(directory: Path, client: PinnedClient) -> str | None:
    manifest = directory / "node_modules" / client.package / "package.json"
    try:
        version = json.loads(manifest.read_text()).get("version")
    except (OSError, ValueError):
        return None
    return version if isinstance(version, str) else None


def executable(directory: Path, client: PinnedClient) -> Path:
    return directory / "node_modules" / ".bin" / client.executable


def _installed(directory: Path, client: PinnedClient) -> bool:
    return installed_version(directory, client) == client.version and executable(directory, client).exists()


def install(directory: Path | None = None, clients: tuple[PinnedClient, ...] = (CODEX, CLAUDE_CODE)) -> dict[str, Path]:
    """`{executable name: path}` of every client, after installing the missing or outdated ones with npm."""
    directory = (directory or clients_dir()).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    # Two test runs or a test run and `make codex` at once install one after the other, not into each other.
    with open(directory / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        missing = [client for client in clients if not _installed(directory, client)]
        if missing:
            _npm_install(directory, missing)
        stale = [client.spec for client in clients if not _installed(directory, client)]
        if stale:
            raise InstallError(f"npm did not install {', '.join(stale)} into {directory}")
    return {client.executable: executable(directory, client) for client in clients}


def _npm_install(directory: Path, clients: list[PinnedClient]) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError("the agent clients are installed with npm: install Node.js 20 or newer")
    # A package.json of our own keeps npm from walking up to one in a parent folder.
    manifest = directory / "package.json"
    if not manifest.exists():
        manifest.write_text('{"name": "agentic-agent-clients", "private": true}\n')
    argv = [npm, "install", "--no-audit", "--no-fund", "--no-update-notifier", "--prefix", str(directory),
            *(client.spec for client in clients)]
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"npm install took longer than {INSTALL_TIMEOUT_SECONDS:.0f}s") from exc
    if result.returncode != 0:
        raise InstallError(f"npm install {' '.join(c.spec for c in clients)} failed ({result.returncode}):\n"
                           f"{(result.stderr or result.stdout).strip()[-2000:]}")
