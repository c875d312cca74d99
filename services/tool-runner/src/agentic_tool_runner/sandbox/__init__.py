"""The sandbox of the code_interpreter and shell tools: one isolated, limited process group per call.

See docs/sandbox.md for what it guarantees, how, and where it stops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_tool_runner.sandbox._config import SandboxConfig, SandboxLimits
from agentic_tool_runner.sandbox._report import describe_run, run_logs, stop_reason
from agentic_tool_runner.sandbox._sandbox import Sandbox, SandboxError, SandboxResult

if TYPE_CHECKING:
    from agentic_tool_runner.settings import ToolRunnerSettings

__all__ = [
    "Sandbox", "SandboxConfig", "SandboxError", "SandboxLimits", "SandboxResult",
    "describe_run", "run_logs", "shared_sandbox", "stop_reason",
]  # fmt: skip

_shared: dict[SandboxConfig, Sandbox] = {}


def shared_sandbox(settings: ToolRunnerSettings) -> Sandbox:
    """One sandbox per process and configuration: code_interpreter and shell share its slots, so
    two concurrent programs never get the same uid."""
    config = SandboxConfig.from_settings(settings)
    if config not in _shared:
        _shared[config] = Sandbox(config)
    return _shared[config]
