"""The tools a runner executes, each behind the `ToolHandler` interface."""
