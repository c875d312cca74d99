"""The interface every runner tool implements (defined with the consumer in agentic-runtime)."""

from agentic_runtime.tool_consumer import ToolHandler

__all__ = ["ToolHandler"]
