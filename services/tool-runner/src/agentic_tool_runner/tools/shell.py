"""The opt-in `shell` tool: one allowlisted command per call, in the code_interpreter's sandbox.

Arguments take OpenAI's `local_shell` exec shape: `{"command": ["ls", "-la"], "timeout_ms": 5000}`.
There is no shell: `command` is an argv, its first element a bare name from the allowlist.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from agentic_core.tools.protocol import ToolCall, ToolResult

from agentic_tool_runner.sandbox import Sandbox, SandboxError, describe_run, shared_sandbox, stop_reason
from agentic_tool_runner.settings import ToolRunnerSettings

log = logging.getLogger(__name__)

DEADLINE_MARGIN_SECONDS = 0.5
MAX_ARGUMENTS = 256
MAX_ARGUMENT_BYTES = 64 * 1024


class ShellTool:
    """Runs `{"command": [argv...]}` when the operator enabled the shell; refuses otherwise.

    Only executables named in `shell_allowed_commands` start; where Landlock is available the kernel
    also refuses any other exec from inside (so `xargs` or `find -exec` reach allowlisted programs only)."""

    kind = "shell"

    def __init__(self, settings: ToolRunnerSettings, sandbox: Sandbox | None = None) -> None:
        self.enabled = settings.shell_enabled
        self.allowed = tuple(sorted({name.strip() for name in settings.shell_allowed_commands.split(",") if name.strip()}))
        self.sandbox = sandbox or shared_sandbox(settings)

    async def close(self) -> None:
        await self.sandbox.close()

    async def run(self, call: ToolCall) -> ToolResult:
        if not self.enabled:
            return ToolResult.error(call.call_id, "The shell tool is disabled on this server.")
        argv, problem = _argv(call.arguments)
        if problem is not None:
            return ToolResult.error(call.call_id, problem)
        name = self._allowed_name(argv[0])
        if name is None:
            return ToolResult.hint(call.call_id, f"`{argv[0]}` is not an allowed command here.", list(self.allowed))
        executable = self.sandbox.resolve_command(name)
        if executable is None:
            return ToolResult.error(call.call_id, f"`{name}` is allowed but not installed on this server.")
        others = [path for other in self.allowed if other != name and (path := self.sandbox.resolve_command(other))]
        limits = self.sandbox.config.limits
        wall = min(limits.wall_seconds, call.seconds_left() - DEADLINE_MARGIN_SECONDS)
        timeout_ms = call.arguments.get("timeout_ms")
        if isinstance(timeout_ms, int) and not isinstance(timeout_ms, bool) and timeout_ms > 0:
            wall = min(wall, timeout_ms / 1000)
        if wall <= 0:
            return ToolResult.error(call.call_id, "The shell call arrived too close to its deadline to run.")
        try:
            result = await self.sandbox.run_command(executable, [name, *argv[1:]], executables=others, wall_seconds=wall)
        except SandboxError as exc:
            log.error("shell: sandbox unavailable: %s", exc)
            return ToolResult.error(call.call_id, f"The command did not run: the server could not start its sandbox ({exc}).")
        outcome: dict[str, Any] = (
            {"type": "timeout"}
            if result.stopped == "wall_time"
            else {"type": "exit", "exit_code": _exit_code(result.exit_code, result.signal)}
        )
        details: dict[str, Any] = {
            "output": [{"stdout": result.stdout, "stderr": result.stderr, "outcome": outcome}],
            "exit_code": result.exit_code,
        }
        text = describe_run(result, limits, wall)
        if stop_reason(result, limits, wall) is not None:
            return ToolResult.error(call.call_id, text, **details)
        return ToolResult.ok(call.call_id, text, **details)

    def _allowed_name(self, command: str) -> str | None:
        """A bare allowlisted name, or a path that is the very file that name resolves to."""
        if "/" not in command:
            return command if command in self.allowed else None
        name = os.path.basename(command)
        resolved = self.sandbox.resolve_command(name) if name in self.allowed else None
        if resolved and os.path.realpath(resolved) == os.path.realpath(command):
            return name
        return None


def _argv(arguments: dict[str, Any]) -> tuple[list[str], str | None]:
    command = arguments.get("command")
    if isinstance(command, str):
        return [], 'shell needs `command` as a list of strings, e.g. ["ls", "-la"]; there is no shell to parse a command line.'
    if not isinstance(command, list) or not command or not all(isinstance(part, str) for part in command):
        return [], 'shell needs `command`: a non-empty list of strings, e.g. ["ls", "-la"].'
    if len(command) > MAX_ARGUMENTS or sum(len(part.encode()) for part in command) > MAX_ARGUMENT_BYTES:
        return [], f"The command is too long (at most {MAX_ARGUMENTS} arguments, {MAX_ARGUMENT_BYTES} bytes)."
    if any("\0" in part for part in command) or not command[0]:
        return [], "The command contains an empty program name or a NUL byte."
    return list(command), None


def _exit_code(exit_code: int | None, signal_number: int | None) -> int:
    return exit_code if exit_code is not None else 128 + (signal_number or 0)
