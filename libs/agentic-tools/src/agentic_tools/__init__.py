"""Write tools for agentic's tool runner.

    from agentic_tools import tool, ok, hint, error

    @tool
    def lookup(code: str) -> ...:
        "What the model reads about this tool."

The runner finds tools through the `agentic.tools` entry point group (see docs/operator-tools.md).
"""

from agentic_tools._discovery import ENTRY_POINT_GROUP, entry_point_tools, load_reference, tools_in
from agentic_tools._results import Error, Hint, Ok, Outcome, error, hint, ok, to_tool_result
from agentic_tools._tool import Tool, tool

__all__ = [
    "ENTRY_POINT_GROUP",
    "Error",
    "Hint",
    "Ok",
    "Outcome",
    "Tool",
    "entry_point_tools",
    "error",
    "hint",
    "load_reference",
    "ok",
    "to_tool_result",
    "tool",
    "tools_in",
]
