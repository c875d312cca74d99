"""The tool handlers this runner serves, chosen by settings."""

from __future__ import annotations

import logging

from agentic_tool_runner.settings import ToolRunnerSettings
from agentic_tool_runner.tools.base import ToolHandler

log = logging.getLogger(__name__)


def enabled_kinds(settings: ToolRunnerSettings) -> set[str]:
    return {kind.strip() for kind in settings.kinds.split(",") if kind.strip()}


def concurrency_for(settings: ToolRunnerSettings, kind: str) -> int:
    for entry in settings.concurrency_overrides.split(","):
        name, _, value = entry.partition("=")
        if name.strip() == kind and value.strip().isdigit():
            return max(1, int(value))
    return settings.concurrency


def build_handlers(settings: ToolRunnerSettings) -> list[ToolHandler]:
    try:
        return _build_handlers(settings)
    except ImportError as exc:  # TODO(issue 4): drop once every tool module has landed
        log.warning("tool modules missing: %s", exc)
        return []


def _build_handlers(settings: ToolRunnerSettings) -> list[ToolHandler]:
    kinds = enabled_kinds(settings)
    handlers: list[ToolHandler] = []
    if "web_search" in kinds:
        from agentic_tool_runner.tools.web_search import WebSearchTool

        handlers.append(WebSearchTool(settings))
    if "code_interpreter" in kinds:
        from agentic_tool_runner.tools.code_interpreter import CodeInterpreterTool

        handlers.append(CodeInterpreterTool(settings))
    if "shell" in kinds and getattr(settings, "shell_enabled", False):
        from agentic_tool_runner.tools.shell import ShellTool

        handlers.append(ShellTool(settings))
    if "operator" in kinds:
        from agentic_tool_runner.tools.operator import OperatorTools

        operator_tools = OperatorTools(settings)
        if operator_tools.definitions():
            handlers.append(operator_tools)
    return handlers
