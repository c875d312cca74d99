"""Operator-written tools (library `agentic-tools`): found through the `agentic.tools` entry points and
the modules the settings name, described to executors by `definitions()`, run under ok / hint / error."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable
from typing import Any

from agentic_core.tools.protocol import ToolCall, ToolResult
from agentic_tools import ENTRY_POINT_GROUP, Tool, entry_point_tools, load_reference

from agentic_tool_runner.settings import ToolRunnerSettings


class OperatorTools:
    """The `operator` handler: every loaded tool, by name. Loading fails loudly (a start-up error) when a
    module or entry point cannot be imported or two different tools share a name."""

    kind = "operator"

    def __init__(self, settings: ToolRunnerSettings, *, entry_point_group: str = ENTRY_POINT_GROUP) -> None:
        tools = entry_point_tools(entry_point_group)
        for reference in settings.operator_modules.split(","):
            if reference.strip():
                tools += load_reference(reference)
        self.tools = _by_name(tools)

    @classmethod
    def from_tools(cls, tools: Iterable[Tool]) -> OperatorTools:
        """A handler over exactly these tools (no discovery)."""
        handler = cls.__new__(cls)
        handler.tools = _by_name(tools)
        return handler

    def definitions(self) -> list[dict[str, Any]]:
        """Responses function tools (`type`, `name`, `description`, `parameters`, `strict: true`), plus
        `parallel_safe`, which the executor's registry reads."""
        return [{**tool.definition(), "parallel_safe": tool.parallel_safe} for tool in self.tools.values()]

    async def run(self, call: ToolCall) -> ToolResult:
        tool = self.tools.get(call.tool)
        if tool is None:
            return ToolResult.hint(call.call_id, f"There is no tool named {call.tool!r} on this server.", sorted(self.tools))
        seconds_left = call.seconds_left()
        if seconds_left <= 0:
            return ToolResult.error(call.call_id, f"The {tool.name} call arrived after its deadline.")
        try:
            # A sync tool runs in a worker thread: on timeout the call answers, the thread runs on to its end.
            return await asyncio.wait_for(tool.run(call.call_id, call.arguments), None if math.isinf(seconds_left) else seconds_left)
        except TimeoutError:
            return ToolResult.error(call.call_id, f"The {tool.name} tool did not finish within {seconds_left:.3g} s.")

    async def close(self) -> None:
        return None


def _by_name(tools: Iterable[Tool]) -> dict[str, Tool]:
    named: dict[str, Tool] = {}
    for tool in tools:
        existing = named.get(tool.name)
        if existing is not None and existing is not tool:
            raise ValueError(
                f"two operator tools are named {tool.name!r}: {_origin(existing)} and {_origin(tool)}; rename one with @tool(name=...)"
            )
        named[tool.name] = tool
    return named


def _origin(tool: Tool) -> str:
    return f"{getattr(tool.function, '__module__', '?')}.{getattr(tool.function, '__qualname__', tool.name)}"
