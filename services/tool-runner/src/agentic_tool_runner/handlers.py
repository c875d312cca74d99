"""The tool handlers this runner serves, chosen by settings."""

from __future__ import annotations

import importlib

from agentic_tool_runner.settings import ToolRunnerSettings
from agentic_tool_runner.tools.base import ToolHandler

# kind → (module, class); each class is constructed with the runner's settings.
HANDLERS = {
    "web_search": ("agentic_tool_runner.tools.web_search", "WebSearchTool"),
    "code_interpreter": ("agentic_tool_runner.tools.code_interpreter", "CodeInterpreterTool"),
    "shell": ("agentic_tool_runner.tools.shell", "ShellTool"),
    "operator": ("agentic_tool_runner.tools.operator", "OperatorTools"),
}


def enabled_kinds(settings: ToolRunnerSettings) -> set[str]:
    kinds = {kind.strip() for kind in settings.kinds.split(",") if kind.strip()}
    if not getattr(settings, "shell_enabled", False):
        kinds.discard("shell")
    return kinds


def concurrency_for(settings: ToolRunnerSettings, kind: str) -> int:
    for entry in settings.concurrency_overrides.split(","):
        name, _, value = entry.partition("=")
        if name.strip() == kind and value.strip().isdigit():
            return max(1, int(value))
    return settings.concurrency


def build_handlers(settings: ToolRunnerSettings) -> list[ToolHandler]:
    handlers: list[ToolHandler] = []
    for kind in sorted(enabled_kinds(settings)):
        if kind not in HANDLERS:
            raise ValueError(f"unknown tool kind {kind!r} in AGENTIC_TOOL_RUNNER_KINDS")
        module_name, class_name = HANDLERS[kind]
        # A configured kind that cannot load stops the runner: serving the others would hide the mistake.
        handler = getattr(importlib.import_module(module_name), class_name)(settings)
        if kind == "operator" and not handler.definitions():
            continue  # no operator tools installed
        handlers.append(handler)
    return handlers
