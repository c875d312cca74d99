"""The interface every runner tool implements."""

from __future__ import annotations

from typing import Protocol

from agentic_core.tools.protocol import ToolCall, ToolResult


class ToolHandler(Protocol):
    """Runs one kind of call. Must not raise for a tool-level failure: return `ToolResult.error`.

    `run` is awaited with the call's deadline as a timeout by the runner; a
    handler that needs a process or the network cleans up when cancelled.
    """

    kind: str

    async def run(self, call: ToolCall) -> ToolResult: ...

    async def close(self) -> None: ...
