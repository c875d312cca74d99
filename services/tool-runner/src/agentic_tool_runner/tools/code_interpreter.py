"""The `code_interpreter` tool: the model's Python code, run in a fresh sandbox per call (sandbox/)."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from agentic_core.tools.protocol import ToolCall, ToolResult

from agentic_tool_runner.sandbox import Sandbox, SandboxError, describe_run, run_logs, shared_sandbox, stop_reason
from agentic_tool_runner.settings import ToolRunnerSettings

log = logging.getLogger(__name__)

# Time kept back from the call's deadline, so that a program stopped at it still gets its output back.
DEADLINE_MARGIN_SECONDS = 0.5


class CodeInterpreterTool:
    """Runs `{"code": "<python>"}` REPL-style: stdout, stderr and the repr of a trailing expression.

    A program that raises or exits non-zero is a normal result (ok, traceback included): the model
    reads it and fixes its code, as with OpenAI's hosted tool. A program stopped by a limit, and a
    sandbox that cannot be set up, are errors. Each call gets an empty directory and no network;
    nothing persists between calls, so `container` ids are accepted but name nothing."""

    kind = "code_interpreter"

    def __init__(self, settings: ToolRunnerSettings, sandbox: Sandbox | None = None) -> None:
        self.sandbox = sandbox or shared_sandbox(settings)
        self.max_code_bytes = settings.code_interpreter_max_code_bytes

    async def close(self) -> None:
        await self.sandbox.close()

    async def run(self, call: ToolCall) -> ToolResult:
        container_id, problem = _container_id(call)
        if problem is not None:
            return ToolResult.error(call.call_id, problem)
        code = call.arguments.get("code")
        if not isinstance(code, str) or not code.strip():
            return ToolResult.error(call.call_id, "code_interpreter needs `code`: a non-empty string of Python source.")
        if len(code.encode()) > self.max_code_bytes:
            return ToolResult.error(call.call_id, f"The code is longer than {self.max_code_bytes} bytes; send a shorter program.")
        limits = self.sandbox.config.limits
        wall = min(limits.wall_seconds, call.seconds_left() - DEADLINE_MARGIN_SECONDS)
        if wall <= 0:
            return ToolResult.error(call.call_id, "The code_interpreter call arrived too close to its deadline to run.")
        try:
            result = await self.sandbox.run_python(code, wall_seconds=wall)
        except SandboxError as exc:
            log.error("code_interpreter: sandbox unavailable: %s", exc)
            return ToolResult.error(call.call_id, f"The code did not run: the server could not start its sandbox ({exc}).")
        details: dict[str, Any] = {
            "container_id": container_id,
            "outputs": [{"type": "logs", "logs": run_logs(result, limits)}],
            "exit_code": result.exit_code,
        }
        text = describe_run(result, limits, wall)
        if stop_reason(result, limits, wall) is not None:
            return ToolResult.error(call.call_id, text, **details)
        return ToolResult.ok(call.call_id, text, **details)


def _container_id(call: ToolCall) -> tuple[str, str | None]:
    """`container: {type: auto}` or a container id (treated as auto); anything else is refused."""
    container = call.params.get("container", {"type": "auto"})
    if isinstance(container, str) and container.strip():
        return container, None
    if isinstance(container, dict) and container.get("type") == "auto":
        return "cntr_" + hashlib.sha256(call.call_id.encode()).hexdigest()[:32], None
    return "", 'Unsupported code_interpreter container: use {"type": "auto"} or a container id.'
