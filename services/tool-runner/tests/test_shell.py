"""The shell tool: off unless the operator enables it; then one allowlisted argv per call, in the
code_interpreter's sandbox, with OpenAI's shell output shape in `details`."""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import agentic_tool_runner.settings
import pytest
from agentic_core.tools.protocol import ToolCall, render_for_model
from agentic_tool_runner.sandbox import SandboxError
from agentic_tool_runner.settings import ToolRunnerSettings
from agentic_tool_runner.tools.shell import ShellTool

SERVICE_FILE = Path(agentic_tool_runner.settings.__file__).resolve()
SECRET = "s3cr3t-" + uuid.uuid4().hex
ALLOWED = "cat,echo,env,ls,sleep,touch"


@pytest.fixture(scope="module")
async def shell() -> AsyncIterator[ShellTool]:
    settings = ToolRunnerSettings(shell_enabled=True, shell_allowed_commands=ALLOWED, sandbox_wall_seconds=5, sandbox_cpu_seconds=2)
    tool = ShellTool(settings)
    try:
        await tool.sandbox.probe()
    except SandboxError as exc:
        pytest.skip(f"this machine offers no kernel isolation: {exc}")
    yield tool
    await tool.close()


def call(arguments: dict[str, Any], seconds: float = 60.0) -> ToolCall:
    return ToolCall("call_1", "shell", "shell", arguments, deadline=time.time() + seconds)


async def test_the_shell_is_off_by_default() -> None:
    settings = ToolRunnerSettings()
    assert settings.shell_enabled is False
    tool = ShellTool(settings)
    result = await tool.run(call({"command": ["echo", "hi"]}))
    assert result.status == "error" and "disabled" in result.content


async def test_an_allowlisted_command_runs_and_reports_openai_shell_output(shell: ShellTool) -> None:
    result = await shell.run(call({"command": ["echo", "hello", "world"]}))
    assert result.status == "ok" and render_for_model(result) == "[stdout]\nhello world\n[exit status 0]"
    assert result.details["output"] == [{"stdout": "hello world\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]


async def test_a_command_outside_the_allowlist_gets_a_hint_with_the_allowed_ones(shell: ShellTool) -> None:
    result = await shell.run(call({"command": ["rm", "-rf", "/"]}))
    assert result.status == "hint" and result.alternatives == ALLOWED.split(",")


async def test_a_path_counts_only_when_it_is_the_allowlisted_program_itself(shell: ShellTool) -> None:
    echo = shutil.which("echo", path="/usr/bin:/bin")
    assert echo is not None
    assert (await shell.run(call({"command": [echo, "via path"]}))).status == "ok"
    assert (await shell.run(call({"command": ["/tmp/echo", "x"]}))).status == "hint"


@pytest.mark.parametrize("command", ["ls -la", [], [""], [1, 2], None, ["echo", "a\0b"]])
async def test_command_must_be_an_argv_list(shell: ShellTool, command: Any) -> None:
    result = await shell.run(call({"command": command}))
    assert result.status == "error"


async def test_a_command_cannot_read_the_service_files_or_write_outside_its_directory(shell: ShellTool) -> None:
    escape = Path("/tmp") / f"escape-{uuid.uuid4().hex}"
    read = await shell.run(call({"command": ["cat", str(SERVICE_FILE), "/etc/shadow"]}))
    write = await shell.run(call({"command": ["touch", str(escape)]}))
    inside = await shell.run(call({"command": ["touch", "mine.txt"]}))
    assert read.details["exit_code"] == 1 and "ToolRunnerSettings" not in render_for_model(read)
    assert write.details["exit_code"] == 1 and not escape.exists()
    assert inside.details["exit_code"] == 0


async def test_a_command_sees_a_clean_environment(shell: ShellTool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_TOOL_RUNNER_TEST_SECRET", SECRET)
    result = await shell.run(call({"command": ["env"]}))
    names = sorted(line.split("=", 1)[0] for line in result.details["output"][0]["stdout"].splitlines())
    assert names == ["HOME", "LANG", "LC_ALL", "PATH", "TMPDIR"] and SECRET not in render_for_model(result)


async def test_an_allowlisted_program_can_exec_only_allowlisted_programs(shell: ShellTool) -> None:
    layers = await shell.sandbox.probe()
    if not any(layer.startswith("landlock") for layer in layers):
        pytest.skip("Landlock is not available: only the first program is checked against the allowlist")
    allowed = await shell.run(call({"command": ["env", "echo", "nested"]}))
    refused = await shell.run(call({"command": ["env", "id"]}))
    assert allowed.details["output"][0]["stdout"] == "nested\n"
    assert refused.details["exit_code"] == 126 and "Permission denied" in refused.details["output"][0]["stderr"]


async def test_timeout_ms_bounds_a_command_and_reports_a_timeout_outcome(shell: ShellTool) -> None:
    started = time.monotonic()
    result = await shell.run(call({"command": ["sleep", "30"], "timeout_ms": 500}))
    assert time.monotonic() - started < 3
    assert result.status == "error" and "wall-clock limit of 0.5 s" in result.content
    assert result.details["output"][0]["outcome"] == {"type": "timeout"}


def test_the_tool_is_the_shell_kind() -> None:
    assert ShellTool.kind == "shell"
