"""Example operator tools for agentic (see docs/operator-tools.md)."""
