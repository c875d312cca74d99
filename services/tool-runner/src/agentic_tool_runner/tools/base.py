"""The interface every runner tool implements (defined with the consumer in agentic-runtime)."""

from agentic_runtime.tools.consumer import ToolHandler

__all__ = ["ToolHandler"]
