"""Which tools a runner serves follows its settings, and a wrong setting stops it."""

from __future__ import annotations

import pytest
from agentic_tool_runner.handlers import build_handlers, concurrency_for, enabled_kinds
from agentic_tool_runner.settings import ToolRunnerSettings


def test_shell_is_served_only_when_enabled() -> None:
    assert "shell" not in enabled_kinds(ToolRunnerSettings(kinds="web_search,shell"))
    assert "shell" in enabled_kinds(ToolRunnerSettings(kinds="web_search,shell", shell_enabled=True))


def test_an_unknown_kind_stops_the_runner() -> None:
    with pytest.raises(ValueError, match="teleport"):
        build_handlers(ToolRunnerSettings(kinds="teleport"))


def test_operator_tools_are_served_only_when_some_are_installed() -> None:
    assert [handler.kind for handler in build_handlers(ToolRunnerSettings(kinds="operator"))] == []
    served = build_handlers(ToolRunnerSettings(kinds="operator", operator_modules="tests.support.operator_tools"))
    assert [handler.kind for handler in served] == ["operator"]


def test_per_kind_concurrency_overrides() -> None:
    settings = ToolRunnerSettings(concurrency=4, concurrency_overrides="code_interpreter=1, web_search=8")
    assert [concurrency_for(settings, kind) for kind in ("code_interpreter", "web_search", "operator")] == [1, 8, 4]
