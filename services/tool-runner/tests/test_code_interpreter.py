"""The code_interpreter tool: arguments and container checks, what the model reads, and what the
public `code_interpreter_call` item gets (`outputs` in OpenAI's shape). It never raises."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agentic_core.tools.protocol import ToolCall, ToolResult, render_for_model
from agentic_tool_runner.sandbox import Sandbox, SandboxConfig, SandboxError
from agentic_tool_runner.settings import ToolRunnerSettings
from agentic_tool_runner.tools.code_interpreter import CodeInterpreterTool

SECRET = "s3cr3t-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
async def tool() -> AsyncIterator[CodeInterpreterTool]:
    settings = ToolRunnerSettings(sandbox_wall_seconds=5, sandbox_cpu_seconds=2, sandbox_output_bytes=2048)
    tool = CodeInterpreterTool(settings)
    try:
        await tool.sandbox.probe()
    except SandboxError as exc:
        pytest.skip(f"this machine offers no kernel isolation: {exc}")
    yield tool
    await tool.close()


def call(code: Any, params: dict[str, Any] | None = None, seconds: float = 60.0) -> ToolCall:
    params = {"container": {"type": "auto"}} if params is None else params
    return ToolCall("call_1", "code_interpreter", "code_interpreter", {"code": code}, params, deadline=time.time() + seconds)


async def test_stdout_stderr_and_the_last_expression_reach_the_model_and_the_public_item(tool: CodeInterpreterTool) -> None:
    result = await tool.run(call("import sys\nprint('hello')\nprint('careful', file=sys.stderr)\n6 * 7"))
    assert result.status == "ok"
    assert render_for_model(result) == "[stdout]\nhello\n[stderr]\ncareful\n[result]\n42\n[exit status 0]"
    assert result.details["outputs"] == [{"type": "logs", "logs": "hello\ncareful\n42\n"}]
    assert result.details["exit_code"] == 0 and result.details["container_id"].startswith("cntr_")
    assert ToolResult.from_json(result.to_json()) == result


async def test_a_program_without_output_says_so(tool: CodeInterpreterTool) -> None:
    result = await tool.run(call("x = 1"))
    assert render_for_model(result) == "[no output]\n[exit status 0]"


async def test_an_exception_is_an_ok_result_with_the_traceback_for_the_model_to_fix(tool: CodeInterpreterTool) -> None:
    result = await tool.run(call("def f():\n    return 1 / 0\nf()"))
    assert result.status == "ok" and result.details["exit_code"] == 1
    text = render_for_model(result)
    assert 'File "<code>", line 2, in f' in text and "ZeroDivisionError: division by zero" in text
    assert text.endswith("[exit status 1]") and "_interpreter" not in text


async def test_a_syntax_error_is_reported_like_python_does(tool: CodeInterpreterTool) -> None:
    result = await tool.run(call("print('unclosed'"))
    assert result.status == "ok" and "SyntaxError" in render_for_model(result)


async def test_a_program_stopped_at_a_limit_is_an_error_with_its_output_so_far(tool: CodeInterpreterTool) -> None:
    result = await tool.run(call("import time\nprint('started', flush=True)\ntime.sleep(60)", seconds=2.0))
    assert result.status == "error"
    text = render_for_model(result)
    assert text.startswith("Error: [stdout]\nstarted") and "wall-clock limit of 1.5 s" in text
    assert result.details["outputs"] == [{"type": "logs", "logs": "started\n"}]


async def test_too_much_output_is_truncated_with_a_marker(tool: CodeInterpreterTool) -> None:
    result = await tool.run(call("for i in range(10**6):\n    print(i)"))
    assert result.status == "error"
    text = render_for_model(result)
    assert "[output truncated at 2048 bytes]" in text and "printed more than 2048 bytes" in text
    assert len(result.details["outputs"][0]["logs"]) < 2048 + 100


async def test_the_runner_environment_is_not_visible(tool: CodeInterpreterTool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_TOOL_RUNNER_TEST_SECRET", SECRET)
    result = await tool.run(call("import os\nsorted(os.environ)"))
    assert result.status == "ok" and SECRET not in render_for_model(result) and "AGENTIC" not in render_for_model(result)


@pytest.mark.parametrize("container", ["cntr_abc123", {"type": "auto", "file_ids": [], "memory_limit": "1g"}])
async def test_an_auto_container_or_a_container_id_is_accepted(tool: CodeInterpreterTool, container: Any) -> None:
    result = await tool.run(call("1 + 1", {"container": container}))
    assert result.status == "ok"
    if isinstance(container, str):
        assert result.details["container_id"] == container


@pytest.mark.parametrize("container", [{"type": "custom"}, 42, ["auto"], ""])
async def test_other_container_shapes_are_refused(tool: CodeInterpreterTool, container: Any) -> None:
    result = await tool.run(call("1 + 1", {"container": container}))
    assert result.status == "error" and "container" in result.content


@pytest.mark.parametrize("code", [None, 42, "", "   \n", ["print(1)"]])
async def test_code_must_be_a_non_empty_string(tool: CodeInterpreterTool, code: Any) -> None:
    result = await tool.run(call(code))
    assert result.status == "error" and "`code`" in result.content


async def test_code_longer_than_the_limit_is_refused_unrun(tool: CodeInterpreterTool) -> None:
    result = await tool.run(call("#" * (tool.max_code_bytes + 1)))
    assert result.status == "error" and "longer than" in result.content


async def test_a_call_at_its_deadline_is_refused_unrun(tool: CodeInterpreterTool) -> None:
    result = await tool.run(call("print('late')", seconds=0.2))
    assert result.status == "error" and "deadline" in result.content


async def test_a_sandbox_that_cannot_start_is_an_error_not_an_exception() -> None:
    settings = ToolRunnerSettings()
    tool = CodeInterpreterTool(settings, sandbox=Sandbox(SandboxConfig(python="/nonexistent/bin/python3")))
    result = await tool.run(call("print('never')"))
    await tool.close()
    assert result.status == "error" and result.content.startswith("The code did not run")


def test_the_tool_is_the_code_interpreter_kind() -> None:
    assert CodeInterpreterTool.kind == "code_interpreter"
